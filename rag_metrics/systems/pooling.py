"""Unjudged results: judged@K beside every system's metrics, and the pooled labelling queue.

A new system returns chunks nobody has labelled, and every metric counts them as non-relevant.
``judged@k`` (the registry's ``judged`` metric: share of the top k that carry a label, grade 0
included) says how far to trust the numbers; :func:`pooled_queue` lists what to label next, the
way TREC builds its pools: the union of every system's top K per question, minus what is already
judged, the chunks retrieved by the most systems first.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from rag_metrics.errors import InputError
from rag_metrics.metrics.judge import judge
from rag_metrics.metrics.kernels import check_k
from rag_metrics.systems.textmatch import UNMATCHED_PREFIX
from rag_metrics.types import GoldenSet, Run

__all__ = ["JUDGED_WARNING", "POOL_COLUMNS", "judged_warning", "pooled_queue", "system_table"]

#: Below this mean judged@K the metrics of a system are flagged as likely underestimates.
JUDGED_WARNING = 0.7
POOL_COLUMNS = ("query_id", "question", "chunk_id", "n_systems", "systems", "best_rank", "text")


def judged_warning(value: float, k: int, name: str) -> str | None:
    """A sentence when ``value`` (mean judged@k) is below :data:`JUDGED_WARNING`, else None."""
    if value != value or value >= JUDGED_WARNING:
        return None
    return (f"only {value:.0%} of {name}'s top {k} carry a label; unlabelled chunks count as non-relevant, so its "
            "metrics are likely underestimates. Label the pooled queue to fix it")


def system_table(results: Mapping[str, object], metrics: Sequence[str], k: int) -> pd.DataFrame:
    """One row per system: the mean of each metric at ``k`` and ``judged@k`` beside them.

    Parameters
    ----------
    results
        ``{system name: EvaluationResult}``.
    metrics
        Metric names (``"ndcg"``, ``"mrr"``...); ``judged`` is always added last.
    k
        Cutoff.

    Returns
    -------
    DataFrame
        Columns ``system``, one per ``name@k``, ``judged@k`` and ``warning`` (text or None).
    """
    k = check_k(k)
    names = [m for m in metrics if m != "judged"] + ["judged"]
    rows = []
    for sname, res in results.items():
        row: dict[str, object] = {"system": sname}
        for m in names:
            row[f"{m}@{k}"] = res.mean(m, k)  # type: ignore[attr-defined]
        row["warning"] = judged_warning(float(row[f"judged@{k}"]), k, sname)  # type: ignore[arg-type]
        rows.append(row)
    return pd.DataFrame(rows, columns=["system"] + [f"{m}@{k}" for m in names] + ["warning"])


def pooled_queue(golden: GoldenSet, runs: Mapping[str, Run], k: int,
                 texts: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The unjudged chunks in the top ``k`` of every system, grouped by question.

    Parameters
    ----------
    golden
        The golden set; an id is *judged* for a question when it has a label there (any grade).
    runs
        ``{system name: Run}`` keyed by golden query ids.
    k
        Pool depth (each system contributes its top ``k``, trec_eval order).
    texts
        Optional ``{chunk_id: text}`` for the ``text`` column.

    Returns
    -------
    DataFrame
        Columns :data:`POOL_COLUMNS`: one row per (question, unjudged chunk), questions in golden
        order, inside a question the chunks retrieved by the most systems first, then by best
        rank, then by id.  Contexts of RAG logs that match no corpus chunk (``unmatched:`` ids)
        are left out: they cannot be labelled as chunks.
    """
    k = check_k(k)
    if not runs:
        raise InputError("pooled_queue needs at least one system's run")
    qrels = golden.qrels()
    pool: dict[tuple[str, str], dict[str, object]] = {}
    for sname, run in runs.items():
        j = judge(qrels, run, depth=k)
        for qi, qid in enumerate(j.query_ids):
            ids, _, _ = j.ranking(qi)
            labelled = qrels[qid]
            for r, cid in enumerate(ids[:k], 1):
                if cid in labelled or cid.startswith(UNMATCHED_PREFIX):
                    continue
                entry = pool.setdefault((qid, cid), {"systems": [], "best_rank": r})
                entry["systems"].append(sname)  # type: ignore[union-attr]
                entry["best_rank"] = min(int(entry["best_rank"]), r)  # type: ignore[call-overload]
    order = {q: n for n, q in enumerate(golden.ids)}
    questions = golden.questions()
    rows = [{"query_id": q, "question": questions.get(q, ""), "chunk_id": c,
             "n_systems": len(e["systems"]), "systems": ", ".join(e["systems"]),  # type: ignore[arg-type]
             "best_rank": e["best_rank"], "text": (texts or {}).get(c, "")}
            for (q, c), e in pool.items()]
    rows.sort(key=lambda r: (order[r["query_id"]], -r["n_systems"], r["best_rank"], r["chunk_id"]))
    return pd.DataFrame(rows, columns=list(POOL_COLUMNS))
