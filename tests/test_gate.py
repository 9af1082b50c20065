"""The regression gate answers pass, fail or inconclusive (exit 0, 1, 3), and says the smallest change
the set can detect and about how many more questions are needed."""
from __future__ import annotations

import json

import numpy as np
import pytest

from rag_metrics.cli import main
from rag_metrics.compare.gate import EXIT_CODES, gate_checks, gate_verdict, questions_needed
from rag_metrics.compare.paired import compare_paired, minimum_detectable_effect


def _table(a, b, key="ndcg@10"):
    t = compare_paired([("ndcg", 10, np.asarray(a, float), np.asarray(b, float))], name_a="base", name_b="cur")
    t.insert(0, "key", [key])
    return t


@pytest.mark.parametrize("sd", [0.05, 0.2, 0.45])
@pytest.mark.parametrize("min_change", [0.02, 0.05, 0.1])
def test_questions_needed_is_the_smallest_n_that_detects_the_change(sd, min_change):
    n = questions_needed(sd, min_change, 0.05)
    assert minimum_detectable_effect(sd, n, 0.05) <= min_change
    if n > 3:
        assert minimum_detectable_effect(sd, n - 1, 0.05) > min_change
    # normal approximation ((1.96 + 0.84) * sd / d)^2, a little larger with t quantiles
    assert n >= ((1.959964 + 0.841621) * sd / min_change) ** 2 - 1


def test_unknown_spread_gives_no_count():
    assert questions_needed(0.0, 0.05, 0.05) is None and questions_needed(float("nan"), 0.05, 0.05) is None


def test_small_noisy_set_is_inconclusive_with_the_detectable_change():
    rng = np.random.default_rng(1)
    a = rng.random(10)
    b = np.clip(a + rng.normal(0, 0.3, 10), 0, 1)
    (c,) = gate_checks(_table(a, b))
    if c.verdict == "fail":  # the noise happened to look like a drop: the draw above does not
        pytest.fail("seeded draw changed")
    assert c.verdict == "inconclusive" and c.detectable > 0.05
    assert c.needed is not None and c.needed > 10 and c.more == c.needed - 10
    assert "cannot tell" in c.sentence and f"about {c.needed} questions ({c.more} more)" in c.sentence
    assert "smallest change this set can detect" in c.sentence and "power 80%" in c.sentence


def test_a_large_set_without_a_drop_passes_and_a_real_drop_fails():
    rng = np.random.default_rng(2)
    a = rng.random(2000)
    b = np.clip(a + rng.normal(0, 0.05, 2000), 0, 1)
    (c,) = gate_checks(_table(a, b))
    assert c.verdict == "pass" and c.detectable <= 0.05
    (c,) = gate_checks(_table(a, np.clip(a - 0.2, 0, 1)))
    assert c.verdict == "fail"
    assert gate_verdict([c]) == "fail"


def test_two_questions_are_inconclusive_not_a_pass():
    (c,) = gate_checks(_table([0.2, 0.9], [0.9, 0.1]))
    assert c.verdict == "inconclusive" and "too few" in c.sentence


def test_gate_verdict_order():
    class C:
        def __init__(self, v):
            self.verdict = v
    assert gate_verdict([C("pass"), C("inconclusive")]) == "inconclusive"
    assert gate_verdict([C("inconclusive"), C("fail")]) == "fail"
    assert gate_verdict([C("pass")]) == "pass" and EXIT_CODES == {"pass": 0, "fail": 1, "inconclusive": 3}


# ---- the CLI --------------------------------------------------------------------------------------
def _write(tmp_path, n, shift, noise, seed=0):
    """n queries, one relevant id each; the baseline ranks it at a random rank 1-5, the current run
    moves it by ``shift`` ranks (+ noise)."""
    rng = np.random.default_rng(seed)
    qrels = "".join(f"q{i} 0 d{i} 1\n" for i in range(n))
    base_rank = rng.integers(1, 6, n)
    cur_rank = np.clip(base_rank + shift + rng.integers(-noise, noise + 1, n), 1, 9)

    def run(ranks, tag):
        lines = []
        for i, r in enumerate(ranks):
            ids = [f"x{i}_{j}" for j in range(9)]
            ids.insert(int(r) - 1, f"d{i}")
            lines += [f"q{i} Q0 {d} {j + 1} {10 - j} {tag}\n" for j, d in enumerate(ids[:10])]
        return "".join(lines)

    (tmp_path / "qrels.txt").write_text(qrels)
    (tmp_path / "base.trec").write_text(run(base_rank, "base"))
    (tmp_path / "cur.trec").write_text(run(cur_rank, "cur"))
    return [str(tmp_path / f) for f in ("qrels.txt", "base.trec", "cur.trec")]


def _gate(capsys, q, cur, base, *extra):
    capsys.readouterr()
    code = main(["gate", "--qrels", q, "--run", cur, "--baseline", base, "--metrics", "mrr", "--k", "10", *extra])
    out = capsys.readouterr()
    return code, out.out + out.err


def test_cli_gate_pass_fail_inconclusive(tmp_path, capsys):
    q, base, cur = _write(tmp_path, 12, 0, 2)
    code, text = _gate(capsys, q, cur, base)
    assert code == 3, text
    assert "INCONCLUSIVE" in text and "smallest change this set can detect" in text and "more)" in text
    q, base, cur = _write(tmp_path, 400, 3, 0, seed=1)
    code, text = _gate(capsys, q, cur, base)
    assert code == 1 and "FAIL" in text and "significantly worse" in text
    q, base, _ = _write(tmp_path, 400, 0, 0, seed=2)
    code, text = _gate(capsys, q, base, base)
    assert code == 0 and "gate: PASS" in text


def test_cli_gate_against_a_saved_baseline_and_json(tmp_path, capsys):
    q, base, cur = _write(tmp_path, 12, 0, 2)
    saved = str(tmp_path / "baseline.json")
    assert main(["evaluate", "--qrels", q, "--run", base, "--metrics", "mrr", "--k", "10", "--save-run", saved]) == 0
    capsys.readouterr()
    code = main(["gate", "--qrels", q, "--run", cur, "--baseline", saved, "--metrics", "mrr", "--k", "10",
                 "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 3 and doc["verdict"] == "inconclusive" and doc["exit_code"] == 3
    (c,) = doc["checks"]
    assert c["key"] == "mrr@10" and c["questions_needed"] > 12 and c["detectable"] > 0.05
    # the same gate through evaluate --fail-on-regression
    code = main(["evaluate", "--qrels", q, "--run", cur, "--metrics", "mrr", "--k", "10", "--baseline", saved,
                 "--fail-on-regression"])
    assert code == 3 and "gate: INCONCLUSIVE" in capsys.readouterr().err


def test_gate_help_documents_the_exit_codes(capsys):
    assert main(["gate", "--help"]) == 0
    out = capsys.readouterr().out
    for line in ("0  pass", "1  fail", "2  bad input", "3  inconclusive"):
        assert line in out
