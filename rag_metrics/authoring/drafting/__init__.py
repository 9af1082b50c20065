"""Drafting golden questions with a judge (its cached calls: :mod:`rag_metrics.authoring.judge_calls`,
its replies read: :mod:`rag_metrics.authoring.judge_replies`): question drafting (:mod:`.questions`), the lab's
badges (:mod:`.badges`) and the person's review (:mod:`.review`).  Importing this package imports nothing heavy."""
