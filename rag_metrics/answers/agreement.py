"""Judge vs people on the shipped labelled answers.

- **Sentence level** (offline judge only: its statements are the answer's sentences, so they align
  with the human labels one to one): agreement over the three verdicts, and precision / recall of
  "unsupported".
- **Answer level** (every judge; an LLM judge's statements are its own rewording, so they cannot
  be aligned with sentences): an answer is "unsupported" when at least one statement is; precision /
  recall of that call against the people's labels.
- **Ordering**: for each question, does the metric score the careful answer above the sloppy one?
- **Relevancy**: mean score per human relevancy label.

Precision is ``tp / (tp + fp)``, recall ``tp / (tp + fn)``, with "unsupported" as the positive
class; both are NaN when their denominator is 0.
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from rag_metrics.answers.data import RELEVANCY_LABELS, HumanLabels
from rag_metrics.answers.scoring import AnswerEvaluation
from rag_metrics.answers.types import UNSUPPORTED, VERDICTS

__all__ = ["agreement_stats", "answer_table", "ordering_table", "relevancy_table", "sentence_table"]


def _ratio(a: int, b: int) -> float:
    return a / b if b else math.nan


def sentence_table(ev: AnswerEvaluation, labels: Mapping[str, HumanLabels],
                   metric: str = "context_support") -> pd.DataFrame:
    """item_id, system, question_id, sentence, human, judge, similarity, evidence: one row per
    labelled sentence the judge gave a verdict on (sentences are matched by text)."""
    rows = []
    for it in ev.items:
        lab = labels.get(it.id)
        score = ev.scores.get(it.id, {}).get(metric)
        if lab is None or score is None or not score.statements:
            continue
        human = dict(lab.sentences)
        for st in score.statements:
            if st.statement in human:
                rows.append({"item_id": it.id, "system": it.system, "question_id": it.question_id,
                             "sentence": st.statement, "human": human[st.statement],
                             "judge": st.verdict, "similarity": st.similarity, "evidence": st.evidence})
    return pd.DataFrame(rows, columns=["item_id", "system", "question_id", "sentence", "human", "judge",
                                       "similarity", "evidence"])


def answer_table(ev: AnswerEvaluation, labels: Mapping[str, HumanLabels], metric: str) -> pd.DataFrame:
    """item_id, system, question_id, value, human_unsupported, judge_unsupported: one row per
    labelled answer the judge scored."""
    rows = []
    for it in ev.items:
        lab = labels.get(it.id)
        score = ev.scores.get(it.id, {}).get(metric)
        if lab is None or score is None or not score.statements:
            continue
        rows.append({"item_id": it.id, "system": it.system, "question_id": it.question_id,
                     "value": score.value, "human_unsupported": lab.has_unsupported,
                     "judge_unsupported": any(s.verdict == UNSUPPORTED for s in score.statements)})
    return pd.DataFrame(rows, columns=["item_id", "system", "question_id", "value", "human_unsupported",
                                       "judge_unsupported"])


def agreement_stats(table: pd.DataFrame) -> dict[str, float | int]:
    """n, agreement, precision and recall of "unsupported" (with tp, fp, fn) for a
    :func:`sentence_table` (columns human/judge) or an :func:`answer_table`
    (human_unsupported/judge_unsupported)."""
    if "human" in table:
        h = table["human"].to_numpy() == UNSUPPORTED
        j = table["judge"].to_numpy() == UNSUPPORTED
        agree = int((table["human"] == table["judge"]).sum())
    else:
        h = table["human_unsupported"].to_numpy(dtype=bool)
        j = table["judge_unsupported"].to_numpy(dtype=bool)
        agree = int((h == j).sum())
    tp, fp, fn = int((h & j).sum()), int((~h & j).sum()), int((h & ~j).sum())
    n = len(table)
    return {"n": n, "agreement": _ratio(agree, n), "precision_unsupported": _ratio(tp, tp + fp),
            "recall_unsupported": _ratio(tp, tp + fn), "tp": tp, "fp": fp, "fn": fn}


def confusion(table: pd.DataFrame) -> pd.DataFrame:
    """Counts of (human label, judge verdict) for a :func:`sentence_table`."""
    return pd.crosstab(pd.Categorical(table["human"], VERDICTS), pd.Categorical(table["judge"], VERDICTS),
                       rownames=["people"], colnames=["judge"], dropna=False)


def ordering_table(ev: AnswerEvaluation, metric: str = "context_support", better: str = "careful",
                   worse: str = "sloppy", labels: Mapping[str, HumanLabels] | None = None) -> pd.DataFrame:
    """question_id, question, <better>, <worse>, ordered (better scored strictly higher; NaN when
    either failed), worse_has_unsupported (people's labels, when given)."""
    by_q: dict[str, dict[str, tuple[str, float]]] = {}
    questions: dict[str, str] = {}
    for it in ev.items:
        s = ev.scores.get(it.id, {}).get(metric)
        if s is None or not it.question_id:
            continue
        by_q.setdefault(it.question_id, {})[it.system] = (it.id, float(s.value) if s.value is not None else math.nan)
        questions[it.question_id] = it.question
    rows = []
    for qid, sys in by_q.items():
        if better not in sys or worse not in sys:
            continue
        b, w = sys[better][1], sys[worse][1]
        ordered = float(b > w) if not (math.isnan(b) or math.isnan(w)) else math.nan
        row = {"question_id": qid, "question": questions[qid], better: b, worse: w, "ordered": ordered}
        if labels is not None:
            lab = labels.get(sys[worse][0])
            row["worse_has_unsupported"] = bool(lab and lab.has_unsupported)
            row["worse_relevancy"] = lab.relevancy if lab else ""
        rows.append(row)
    return pd.DataFrame(rows).sort_values("question_id").reset_index(drop=True) if rows else pd.DataFrame(
        columns=["question_id", "question", better, worse, "ordered"])


def relevancy_table(ev: AnswerEvaluation, labels: Mapping[str, HumanLabels], metric: str) -> pd.DataFrame:
    """relevancy (human label), mean, n: the metric's mean per human relevancy label."""
    vals: dict[str, list[float]] = {}
    for it in ev.items:
        lab = labels.get(it.id)
        s = ev.scores.get(it.id, {}).get(metric)
        if lab is not None and s is not None and s.ok:
            vals.setdefault(lab.relevancy, []).append(float(s.value))  # type: ignore[arg-type]  # s.ok: value is not None

    return pd.DataFrame([{"relevancy": r, "mean": float(np.mean(vals[r])), "n": len(vals[r])}
                         for r in RELEVANCY_LABELS if r in vals], columns=["relevancy", "mean", "n"])


def catch_and_miss(ev: AnswerEvaluation, labels: Mapping[str, HumanLabels], metric: str = "context_support",
                   relevancy_metric: str = "answer_question_similarity", n: int = 5) -> dict[str, pd.DataFrame]:
    """Examples from the labelled answers of what an offline approximation catches and misses.

    Returns ``{"caught": ..., "missed": ..., "false_alarms": ..., "noncommittal": ...}``:
    sentences people labelled unsupported that the judge flagged (lowest similarity first) and did
    not flag (highest first), supported sentences it flagged, and noncommittal / off-topic answers
    by their answer-question similarity (highest first: the ones it cannot tell from real answers).
    """
    st = sentence_table(ev, labels, metric)
    claims = st[st.judge != "not a claim"]
    caught = claims[(claims.human == UNSUPPORTED) & (claims.judge == UNSUPPORTED)].sort_values("similarity")
    missed = claims[(claims.human == UNSUPPORTED) & (claims.judge != UNSUPPORTED)].sort_values(
        "similarity", ascending=False)
    false_alarms = claims[(claims.human == "supported") & (claims.judge == UNSUPPORTED)].sort_values("similarity")
    rows = []
    for it in ev.items:
        lab = labels.get(it.id)
        s = ev.scores.get(it.id, {}).get(relevancy_metric)
        if lab is not None and lab.relevancy in ("noncommittal", "off-topic") and s is not None and s.ok:
            rows.append({"item_id": it.id, "question": it.question, "answer": it.answer,
                         "relevancy": lab.relevancy, "value": s.value})
    nc = pd.DataFrame(rows, columns=["item_id", "question", "answer", "relevancy", "value"])
    nc = nc.sort_values("value", ascending=False)
    cols = ["item_id", "sentence", "similarity", "evidence"]
    return {"caught": caught[cols].head(n).reset_index(drop=True),
            "missed": missed[cols].head(n).reset_index(drop=True),
            "false_alarms": false_alarms[cols].head(n).reset_index(drop=True),
            "noncommittal": nc.head(n).reset_index(drop=True)}


def ordering_summary(table: pd.DataFrame, only_unsupported: bool = False) -> dict[str, object]:
    """``{"n", "ordered", "fraction", "failures"}`` of an :func:`ordering_table`: questions where
    both answers were scored, how many the metric orders as expected, and the other rows.
    ``only_unsupported`` keeps the questions whose worse answer people labelled as holding an
    unsupported claim (the table must come with ``labels``)."""
    scored = table[table["ordered"].notna()] if "ordered" in table else table
    if only_unsupported:
        scored = scored[scored["worse_has_unsupported"].astype(bool)]
    n = len(scored)
    k = int((scored["ordered"] == 1.0).sum()) if n else 0
    return {"n": n, "ordered": k, "fraction": _ratio(k, n),
            "failures": scored[scored["ordered"] != 1.0].reset_index(drop=True)}
