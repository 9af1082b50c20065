"""Answer metrics next to the retrieval metrics (library): golden matching, summary rows, the
answer-system comparison (the one decision rule), plain lines, the report section and the CLI."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

from rag_metrics.answers.data import load_sample_answers, sample_answers_path
from rag_metrics.answers.offline import OfflineJudge
from rag_metrics.answers.scoring import AnswerEvaluation, evaluate_answers
from rag_metrics.answers.summary import (
    answer_section,
    answers_for_golden,
    combine,
    compare_systems,
    plain_lines,
    restrict,
    summary_rows,
)
from rag_metrics.answers.types import AnswerItem, MetricScore
from rag_metrics.compare.paired import compare_paired
from rag_metrics.errors import InputError
from rag_metrics.evaluation import CI_RESAMPLES, bootstrap_ci
from rag_metrics.io.golden import load_golden
from rag_metrics.sample import sample_paths
from rag_metrics.types import GoldenQuery, GoldenSet


@pytest.fixture(scope="module")
def sample():
    items, _ = load_sample_answers()
    golden = load_golden(sample_paths().golden)
    ev = evaluate_answers(items, [OfflineJudge()])
    return items, golden, ev


def _ev(rows):
    """rows: (item id, question id, system, value or status)."""
    items, scores = [], {}
    for iid, qid, system, v in rows:
        items.append(AnswerItem(iid, f"question {qid}", "an answer.", ("ctx",), system=system, question_id=qid))
        scores[iid] = {"context_support": MetricScore(v) if not isinstance(v, str) else MetricScore.failed(v)}
    return AnswerEvaluation(tuple(items), "offline:test", scores)


def test_answers_match_the_golden_set_by_question_text():
    g = GoldenSet((GoldenQuery("q1", "How do I sync?", "procedural", {"c1": 1}),
                   GoldenQuery("q2", "What is a stack?", "factual", {"c2": 1})))
    items = [AnswerItem("a", "How do I sync?", "x", question_id="q1"),
             AnswerItem("b", "a different question", "x", question_id="q2"),   # same id, other set
             AnswerItem("c", "  what is A STACK? ", "x"),                        # no id: matched by text
             AnswerItem("d", "unrelated", "x")]
    got = answers_for_golden(items, g)
    assert [(it.id, it.question_id, it.category) for it in got] == [("a", "q1", ""), ("c", "q2", "factual")]
    assert answers_for_golden(items, GoldenSet(())) == []


def test_sample_answers_all_answer_the_sample_golden_set(sample):
    items, golden, ev = sample
    matched = answers_for_golden(items, golden)
    assert len(matched) == 128 and {it.system for it in matched} == {"careful", "sloppy"}
    sub = restrict(ev, matched[:10])
    ids = [it.id for it in matched[:10]]
    assert [it.id for it in sub.items] == ids and set(sub.scores) == set(ids)


def test_summary_rows_are_means_with_the_library_ci(sample):
    items, golden, ev = sample
    rows = summary_rows(ev)
    assert list(rows.system) == ["careful", "careful", "sloppy", "sloppy"]
    assert list(rows.metric) == ["context_support", "answer_question_similarity"] * 2
    assert not rows.label.str.startswith(("Faithfulness", "Answer relevancy")).any()
    t = ev.table()
    v = t[(t.system == "sloppy") & (t.metric == "context_support") & (t.status == "ok")]["value"].to_numpy()
    r = rows[(rows.system == "sloppy") & (rows.metric == "context_support")].iloc[0]
    assert r["mean"] == pytest.approx(v.mean()) and r["n"] == 64 == v.size
    assert (r["ci_low"], r["ci_high"]) == pytest.approx(bootstrap_ci(v, n_resamples=CI_RESAMPLES))
    # careful answers are better supported by their context than sloppy ones (the shipped design)
    cs = rows[rows.metric == "context_support"].set_index("system")["mean"]
    assert cs["careful"] > cs["sloppy"]


def test_compare_systems_hand_computed():
    ev = _ev([("a1", "q1", "A", 0.5), ("b1", "q1", "B", 0.6),
              ("a2", "q2", "A", 0.6), ("b2", "q2", "B", 0.8),
              ("a3", "q3", "A", 0.7), ("b3", "q3", "B", 0.7),
              ("a4", "q4", "A", 0.9), ("b4", "q4", "B", "empty_answer"),   # B not scored: not paired
              ("a5", "q5", "A", 0.1)])                                      # only A answered
    t = compare_systems(ev, "A", "B")
    r = t.iloc[0]
    assert r["n"] == 3 and (r["wins"], r["losses"], r["ties"]) == (2, 0, 1)
    assert r["delta"] == pytest.approx(0.1)
    # d = (0.1, 0.2, 0); t = 0.1 / (0.1 / sqrt 3) = sqrt 3 with 2 df: p = 1 - t / sqrt(2 + t^2)
    assert r["p_ttest"] == pytest.approx(1 - math.sqrt(3) / math.sqrt(5))
    half = 4.302652729911275 * 0.1 / math.sqrt(3)  # t(0.975, 2) * sd / sqrt(n)
    assert (r["ci_low"], r["ci_high"]) == pytest.approx((0.1 - half, 0.1 + half))
    assert not r["significant"] and r["verdict"] == "too small to tell"
    assert r["sentence"].startswith("Context support (offline approximation): no significant difference")
    with pytest.raises(InputError, match="no answer system 'C'"):
        compare_systems(ev, "A", "C")
    with pytest.raises(InputError, match="two different"):
        compare_systems(ev, "A", "A")


def test_compare_systems_is_the_one_decision_rule(sample):
    items, golden, ev = sample
    t = compare_systems(ev, "careful", "sloppy")
    tab = ev.table()
    pairs = []
    for m in ("context_support", "answer_question_similarity"):
        g = tab[(tab.metric == m) & (tab.status == "ok")]
        a = g[g.system == "careful"].set_index("question_id")["value"]
        b = g[g.system == "sloppy"].set_index("question_id")["value"]
        q = sorted(set(a.index) & set(b.index))
        pairs.append((m, None, a.loc[q].to_numpy(), b.loc[q].to_numpy()))
    ref = compare_paired(pairs, name_a="careful", name_b="sloppy")
    assert np.allclose(t[["delta", "ci_low", "ci_high", "p_ttest_adj", "mde"]].to_numpy(dtype=float),
                       ref[["delta", "ci_low", "ci_high", "p_ttest_adj", "mde"]].to_numpy(dtype=float))
    cs = t.set_index("metric").loc["context_support"]
    assert cs["verdict"] == "A better" and cs["ci_high"] < 0  # careful better; the interval excludes 0
    for r in t.to_dict("records"):  # the interval excludes 0 exactly when the verdict says "better"
        assert (r["ci_low"] > 0 or r["ci_high"] < 0) == r["verdict"].endswith("better")


def test_plain_lines_name_the_approximations_and_no_p_values(sample):
    _, _, ev = sample
    rows = summary_rows(ev)
    lines = plain_lines(rows)
    assert len(lines) == 2
    assert lines[0].startswith("Context support (offline approximation)") and "not faithfulness" in lines[0]
    r = rows.iloc[0]
    assert f"careful {r['mean']:.2f}, likely between {r['ci_low']:.2f} and {r['ci_high']:.2f} (64 answers)" in lines[0]
    assert not any(re.search(r"\bp\b|p-value|t-test", x) for x in lines)


def test_combine_keeps_llm_metrics_first():
    a = _ev([("x", "q1", "S", 0.4)])
    llm = AnswerEvaluation(a.items, "llm:m", {"x": {"faithfulness": MetricScore(1.0)}})
    both = combine([llm, None, a])
    assert both.judge == "llm:m + offline:test" and both.metrics == ["faithfulness", "context_support"]
    assert combine([None]) is None


def test_report_answer_section(sample):
    from rag_metrics import Run
    from rag_metrics.evaluation import evaluate
    from rag_metrics.report.html import render_report, report_content

    items, golden, ev = sample
    run = Run.from_dict({q.id: {next(iter(q.relevant), "x"): 1.0} for q in golden})
    result = evaluate(golden, run)
    sec = answer_section(ev, "Shipped sample answers")
    html = render_report(report_content(result, k=5, answers=sec, generated_at="now"))
    body = html[html.index('<section id="answers">'):]
    body = body[:body.index("</section>")]
    rows = sec.summary
    for r in rows.to_dict("records"):
        assert f"<td>{r['system']}</td><td>{r['label']}</td><td class=\"num\">{r['mean']:.3f}</td>" in body
    assert "careful vs sloppy" in body and "careful better" in body
    assert ">Faithfulness<" not in body and ">Answer relevancy<" not in body
    assert 'href="#answers"' in html  # the RAGAS section points to it
    plain = render_report(report_content(result, k=5, generated_at="now"))
    assert 'id="answers"' not in plain


def test_cli_report_with_answers(tmp_path, capsys, sample):
    from rag_metrics.cli import main

    _, _, ev = sample
    out = tmp_path / "r.html"
    p = sample_paths()
    rc = main(["report", "--corpus", str(p.docs), "--golden", str(p.golden), "--retriever", "bm25",
               "--answers", str(sample_answers_path()), "--out", str(out)])
    assert rc == 0
    html = out.read_text(encoding="utf-8")
    mean = summary_rows(ev).set_index(["system", "metric"]).loc[("sloppy", "context_support"), "mean"]
    assert f"<td>sloppy</td><td>Context support (offline approximation)</td><td class=\"num\">{mean:.3f}</td>" in html
    assert "128 of 128 answers match golden questions" in html
    # answers to another golden set: a clear error, exit 2
    other = tmp_path / "other.jsonl"
    other.write_text('{"question": "which colour is the tenth moon of Neptune in this notes app?", '
                     '"answer": "Blue.", "contexts": ["Blue."]}\n')
    rc = main(["report", "--corpus", str(p.docs), "--golden", str(p.golden), "--retriever", "bm25",
               "--answers", str(other), "--out", str(tmp_path / "x.html")])
    assert rc == 2 and "none of its 1 answers is to a question of the golden set" in capsys.readouterr().err
    rc = main(["report", "--corpus", str(p.docs), "--golden", str(p.golden), "--answers", str(tmp_path / "no.jsonl"),
               "--out", str(tmp_path / "y.html")])
    assert rc == 2 and "--answers" in capsys.readouterr().err
