"""Drafting golden questions with a judge: tolerant reply parsing (:mod:`.parse`), cached text
calls (:mod:`.calls`), question drafting (:mod:`.questions`), the lab's badges (:mod:`.badges`)
and the person's review (:mod:`.review`).  Importing this package imports nothing heavy."""
