"""Answer metrics: sentence rules, offline approximations, reference metrics, aggregation."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rag_metrics.answers.offline import OfflineJudge
from rag_metrics.answers.reference import ReferenceMetrics, string_similarity
from rag_metrics.answers.scoring import evaluate_answers
from rag_metrics.answers.text import carries_claim, split_sentences
from rag_metrics.answers.types import AnswerItem
from rag_metrics.errors import InputError


class TableEncoder:
    """Encoder with hand-set unit vectors (cosines are written out in the tests)."""

    name = "table-encoder"

    def __init__(self, table: dict[str, tuple[float, ...]]) -> None:
        self.table = table
        self.dim = len(next(iter(table.values())))

    def encode(self, texts, progress=None):
        rows = np.array([self.table[t] for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_split_sentences_rules():
    assert split_sentences("Free has 2 GB. Plus has 100 GB, e.g. for 1.5 GB files!\n- Sync is on.") == \
        ["Free has 2 GB.", "Plus has 100 GB, e.g. for 1.5 GB files!", "Sync is on."]
    assert split_sentences("## Plans\n\nVersion v5.0 ships. See example.com now.") == \
        ["Plans", "Version v5.0 ships.", "See example.com now."]
    assert split_sentences("Is it on? \"Yes.\" Then stop.") == ["Is it on?", "\"Yes.\"", "Then stop."]
    assert split_sentences("   \n ... \n") == []


@pytest.mark.parametrize("sentence, claim", [
    ("The Free plan includes 2 GB of storage.", True),
    ("Does the Free plan include storage?", False),
    ("Hope this helps!", False),
    ("Let me know if you need more.", False),
    ("Yes.", False),
    ("It depends on your setup.", True),  # hedges count as claims: a documented limit
])
def test_carries_claim(sentence, claim):
    assert carries_claim(sentence) is claim


def _offline_items():
    table = {
        "C one.": (1, 0, 0), "C two.": (0, 1, 0),
        "A is near one.": (0.8, 0.6, 0), "B is far away.": (0, 0.28, 0.96), "Hope this helps!": (0, 0, 1),
        "q?": (0, 0, 1), "A is near one. B is far away. Hope this helps!": (0.6, 0, 0.8),
    }
    item = AnswerItem("x", "q?", "A is near one. B is far away. Hope this helps!", ("C one. C two.",))
    return table, item


def test_context_support_arithmetic():
    table, item = _offline_items()
    judge = OfflineJudge(TableEncoder(table), cache=False, threshold=0.6)
    [res] = judge.judge([item])
    cs = res.scores["context_support"]
    # claim sentences: "A is near one." best cos = max(0.8, 0.6) = 0.8 -> supported;
    # "B is far away." best cos = max(0, 0.28) = 0.28 -> unsupported; filler not averaged.
    assert cs.value == pytest.approx((0.8 + 0.28) / 2, abs=1e-6)
    assert [v.verdict for v in cs.statements] == ["supported", "unsupported", "not a claim"]
    assert cs.statements[0].evidence == "C one."
    assert cs.statements[1].evidence == "C two."
    aq = res.scores["answer_question_similarity"]
    assert aq.value == pytest.approx(0.8, abs=1e-6)  # (0,0,1) . (0.6,0,0.8)


def test_offline_statuses_never_silent_zero():
    table, item = _offline_items()
    judge = OfflineJudge(TableEncoder(table), cache=False)
    items = [AnswerItem("empty", "q?", "  "), AnswerItem("noctx", "q?", "A is near one."),
             AnswerItem("noclaim", "q?", "Hope this helps!", ("C one.",)), item]
    res = {r.item_id: r.scores for r in judge.judge(items)}
    assert res["empty"]["context_support"].status == "empty_answer"
    assert res["noctx"]["context_support"].status == "missing_contexts"
    assert res["noclaim"]["context_support"].status == "no_claims"
    assert all(res[i]["context_support"].value is None for i in ("empty", "noctx", "noclaim"))
    assert res["x"]["context_support"].ok


def test_threshold_validated():
    with pytest.raises(InputError, match="threshold"):
        OfflineJudge(TableEncoder({"a": (1, 0)}), cache=False, threshold=2)


def test_string_similarity_is_rapidfuzz_indel_ratio():
    # "2 GB" vs "2 GB on Free": default_process lower-cases; Indel distance = 8 insertions,
    # lengths 4 + 12 -> 1 - 8/16 = 0.5
    assert string_similarity("2 GB", "2 gb on free") == pytest.approx(0.5)
    assert string_similarity("Same!", "same") == pytest.approx(1.0)


def test_reference_metrics_and_missing_ground_truth():
    enc = TableEncoder({"ref": (1, 0), "ans": (0.6, 0.8)})
    items = [AnswerItem("a", "q", "ans", ground_truth="ref"), AnswerItem("b", "q", "ans")]
    res = {r.item_id: r.scores for r in ReferenceMetrics(enc, cache=False).judge(items)}
    assert res["a"]["semantic_similarity"].value == pytest.approx(0.6, abs=1e-6)
    assert res["b"]["semantic_similarity"].status == "no_ground_truth"
    assert res["b"]["string_similarity"].value is None


def test_evaluate_means_exclude_failures_and_json_shape():
    table, item = _offline_items()
    enc = TableEncoder(table)
    items = [item, AnswerItem("empty", "q?", "", ("C one.",), system="s2")]
    ev = evaluate_answers(items, [OfflineJudge(enc, cache=False), ReferenceMetrics(enc, cache=False)])
    js = ev.to_json()
    assert js["n_items"] == 2
    assert js["metrics"]["context_support"] == pytest.approx(0.54, abs=1e-6)
    assert js["metrics"]["semantic_similarity"] is None
    assert js["per_item"]["empty"]["context_support"] is None
    assert js["not_scored"]["empty"]["context_support"] == "empty_answer"
    s = ev.summary()
    row = s[s.metric == "context_support"].iloc[0]
    assert (row["n"], row["n_failed"]) == (1, 1)
    assert math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])  # one scored answer: too few for an interval
    assert list(ev.failures("context_support").item_id) == ["x", "empty"]
    assert math.isnan(ev.summary("system").query("system == 's2' and metric == 'context_support'")["mean"].iloc[0])


def test_duplicate_ids_rejected():
    with pytest.raises(InputError, match="'a' is used by items 1 and 2"):
        evaluate_answers([AnswerItem("a", "q", "x"), AnswerItem("a", "q", "y")], [])
