"""The sweep (issue 30): grid parsing, labels under any chunking, the held-out split, the frontier and
tie logic on hand-made points, no re-embedding on a second run (counted), cancelling, sweep.json, CLI.

The test-only hashing encoder (``hashing-<dim>``) stands in for the model, so the tier stays fast.
"""
from __future__ import annotations

import json
import math
import threading
from collections import Counter

import numpy as np
import pytest

from rag_metrics.cli import main
from rag_metrics.errors import InputError
from rag_metrics.io.corpus import load_corpus
from rag_metrics.io.golden import load_golden
from rag_metrics.retrieval.cache import EmbeddingCache
from rag_metrics.retrieval.chunking import chunk_corpus
from rag_metrics.sample import sample_paths
from rag_metrics.tuning import (
    as_evidence,
    load_labels,
    parse_grid,
    parse_sweep,
    run_sweep,
    save_sweep,
    stratified_split,
)
from rag_metrics.tuning.grid import DEFAULT_GRID_TOML, SweepConfig
from rag_metrics.tuning.run import ConfigResult, SweepResult
from rag_metrics.tuning.select import best, best_of_n, held_out_check, pareto_frontier, rows, ties, wins_losses

MODEL = "hashing-64"


@pytest.fixture(scope="module")
def sample():
    p = sample_paths()
    corpus = load_corpus(str(p.docs))
    return p, corpus, load_golden(p.root / "golden_evidence.jsonl")


def small_grid(**over):
    data = {"metric": "ndcg@10", "chunk_size": [300, 500], "chunk_overlap": [100], "models": [MODEL],
            "retriever": [{"kind": "dense"}, {"kind": "bm25"}, {"kind": "hybrid", "fusion": "rrf"},
                          {"kind": "hybrid", "fusion": "weighted", "weight": [0.3]}]}
    data.update(over)
    return parse_grid(data)


# ---- grid ------------------------------------------------------------------------------------
def test_default_grid_is_the_issues_twelve():
    import tomllib

    g = parse_grid(tomllib.loads(DEFAULT_GRID_TOML))
    assert len(g.configs) == 12
    assert Counter(c.kind for c in g.configs) == {"dense": 3, "bm25": 3, "hybrid": 6}
    assert g.chunkings == [(300, 100), (500, 100), (800, 100)]
    assert len({c.label for c in g.configs}) == 12  # labels are unique


@pytest.mark.parametrize("data, needle", [
    ({"chunk_size": [500], "colour": 1}, "unknown key(s) colour"),
    ({"retriever": [{"kind": "sparse"}]}, "kind must be one of dense, bm25, hybrid"),
    ({"retriever": [{"kind": "dense", "k1": 1.2}]}, "k1 do(es) not apply to kind = 'dense'"),
    ({"retriever": [{"kind": "bm25", "b": 2}]}, "b must be between 0 and 1"),
    ({"retriever": [{"kind": "hybrid", "fusion": "rrf", "normalisation": "minmax"}]}, "normalisation applies"),
    ({"chunk_size": [100], "chunk_overlap": [100]}, "no chunk_size is larger than a chunk_overlap"),
    ({"metric": "ndcg@50", "depth": [10]}, "deeper than every depth"),
    ({"held_out": 0.95}, "held_out must be a share"),
    ({"chunk_size": "big"}, "chunk_size must be int"),
])
def test_grid_errors_name_the_key_and_the_fix(data, needle):
    with pytest.raises(InputError, match=None) as e:
        parse_grid(data, source="grid.toml")
    assert needle in str(e.value) and "grid.toml" in str(e.value)


def test_bm25_is_not_repeated_per_model():
    g = parse_grid({"models": ["a", "b"], "retriever": [{"kind": "bm25"}, {"kind": "dense"}]})
    assert Counter(c.kind for c in g.configs) == {"bm25": 1, "dense": 2}


def test_config_toml_round_trips():
    import tomllib

    for c in small_grid().configs:
        assert parse_grid(tomllib.loads(c.toml())).configs == (c,)


# ---- labels ----------------------------------------------------------------------------------
def test_chunk_labels_as_evidence_judge_as_the_chunk_labels_on_their_chunking(sample):
    from app_helpers import sample_index
    from rag_metrics.evaluation import evaluate
    from rag_metrics.metrics.evidence import CorpusIndex, EvidenceJudge

    p, corpus, _ = sample
    gold = load_golden(p.golden)
    chunks = chunk_corpus(corpus)
    ev = as_evidence(gold, chunks, corpus)
    assert all(not q.relevant for q in ev) and [q.in_scope for q in ev] == [q.in_scope for q in gold]
    run = sample_index("bm25").retriever.retrieve(gold.questions(), k=20)
    by_ids = evaluate(gold, run)
    by_evidence = evaluate(ev, run, evidence=EvidenceJudge(CorpusIndex.of(corpus), chunks))
    for key in ("hit_rate@5", "mrr@10", "ndcg@10", "precision@5", "recall@10"):
        assert by_evidence.mean(key) == pytest.approx(by_ids.mean(key)), key


def test_load_labels_reads_evidence_and_chunk_sets(sample):
    p, corpus, ev = sample
    assert load_labels(p.root / "golden_evidence.jsonl", corpus, (500, 100)).fingerprint() == ev.fingerprint()
    assert all(not q.relevant for q in load_labels(p.golden, corpus, (500, 100)))
    with pytest.raises(InputError, match="cannot be placed"):
        load_labels(p.golden, corpus, (4000, 100))


# ---- split -----------------------------------------------------------------------------------
def test_split_is_stratified_and_seeded():
    cats = ["a"] * 10 + ["b"] * 6 + ["c"] * 1 + ["oos"] * 3
    inc = [True] * 17 + [False] * 3
    ids = [f"q{i}" for i in range(20)]
    t1 = stratified_split(ids, cats, inc, 0.3, seed=7)
    assert t1 == stratified_split(ids, cats, inc, 0.3, seed=7)
    assert t1 != stratified_split(ids, cats, inc, 0.3, seed=8)
    held = Counter(c for c, t, i in zip(cats, t1, inc) if i and not t)
    assert held == {"a": 3, "b": 2}         # round(0.3 * 10), round(0.3 * 6); a lone "c" stays tuning
    assert not any(t for t, i in zip(t1, inc) if not i)  # out of scope: neither side


# ---- selection on hand-made points --------------------------------------------------------------
def test_pareto_frontier_by_hand():
    # quality up, cost down: (0.9, 10) and (0.5, 1) and (0.7, 5) are not dominated; (0.6, 8) is by (0.7, 5)
    q = [0.9, 0.5, 0.7, 0.6, 0.9]
    c = [10, 1, 5, 8, 12]
    assert pareto_frontier(q, c) == [True, True, True, False, False]
    assert pareto_frontier([0.5, 0.5], [1, 1]) == [True, True]   # equal points are both kept


def _hand_result(per_config: dict[str, list[float]], tuning: list[bool]) -> SweepResult:
    from rag_metrics.tuning.grid import Grid

    configs = tuple(SweepConfig(chunk_size=100 * (i + 1), kind="dense", model=MODEL) for i in range(len(per_config)))
    n = len(tuning)
    res = SweepResult(grid=Grid(configs=configs, metric="ndcg@10"), query_ids=tuple(f"q{i}" for i in range(n)),
                      categories=("x",) * n, included=(True,) * n, tuning=tuple(tuning))
    for cfg, vals in zip(configs, per_config.values()):
        res.results.append(ConfigResult(cfg, {"ndcg@10": tuple(vals)}, 1, 0.1, 100, (1.0, 2.0), 0))
    return res


def test_ties_and_losers_by_a_paired_test():
    rng = np.random.default_rng(0)
    base = rng.uniform(0.3, 0.9, 40)
    res = _hand_result({"best": list(base + 0.01), "close": list(base + rng.normal(0, 0.02, 40)),
                        "far": list(base - 0.3)}, [True] * 40)
    chosen = best(res)
    assert chosen is res.results[0]
    st = ties(res, chosen)
    assert st[res.results[1].config][0] == "tied"
    assert st[res.results[2].config][0] == "worse"
    table = rows(res)
    assert [r.status for r in table] == ["best", "tied", "worse"]
    assert all(r.ci_low <= r.tuning <= r.ci_high for r in table)


def test_too_few_questions_gives_no_interval_and_no_test():
    res = _hand_result({"a": [1.0, 0.0], "b": [0.0, 0.0]}, [True, True])
    table = rows(res)
    assert all(math.isnan(r.ci_low) for r in table)
    assert table[1].status == ""
    assert best_of_n(res, best(res)) is None


def test_best_of_n_optimism_is_zero_for_a_clear_winner_and_positive_for_noise():
    clear = _hand_result({"a": [1.0] * 20, "b": [0.0] * 20}, [True] * 20)
    b = best_of_n(clear, best(clear))
    assert b.optimism == 0 and b.stable == 1
    rng = np.random.default_rng(1)
    noise = _hand_result({str(i): list(rng.uniform(0, 1, 20)) for i in range(8)}, [True] * 20)
    n = best_of_n(noise, best(noise))
    assert n.optimism > 0 and n.stable < 1 and "may be luck" in n.note()


def test_wins_and_losses_against_the_current_system():
    res = _hand_result({"a": [1.0, 0.5, 0.2], "b": [0.5, 0.5, 0.4]}, [True] * 3)
    wl = wins_losses(res, res.results[0], res.results[1])
    assert [(q, s) for q, s, *_ in wl] == [("q0", "win"), ("q2", "loss"), ("q1", "same")]


# ---- running -----------------------------------------------------------------------------------
def test_a_second_sweep_embeds_nothing_and_a_new_size_only_new_texts(sample, tmp_path):
    _, corpus, ev = sample
    cache = EmbeddingCache(tmp_path / "cache")
    first = run_sweep(small_grid(), corpus, ev, cache=cache)
    assert len(first.results) == 8 and not first.cancelled
    assert first.embedded == first.embed_requested > 0
    again = run_sweep(small_grid(retriever=[{"kind": "bm25", "k1": [0.9]}, {"kind": "dense"},
                                            {"kind": "hybrid", "fusion": "rrf", "rrf_k": [10]}]),
                      corpus, ev, cache=cache)
    assert again.embedded == 0 and again.cache_hit_ratio == 1.0
    bigger = run_sweep(small_grid(chunk_size=[500, 800]), corpus, ev, cache=cache)
    n800 = {c.text for c in chunk_corpus(corpus, 800, 100)}
    old = {c.text for s in (300, 500) for c in chunk_corpus(corpus, s, 100)}
    assert bigger.embedded == len(n800 - old)
    # every configuration of a chunking is scored on the same questions, in golden order
    for r in first.results:
        assert len(r.values["ndcg@10"]) == len(ev)
        assert len(r.latency_ms) == len(ev) and r.index_bytes > 0


def test_cancelling_keeps_the_finished_configurations(sample, tmp_path):
    _, corpus, ev = sample
    cancel = threading.Event()
    seen = []

    def on_result(r):
        seen.append(r)
        if len(seen) == 3:
            cancel.set()

    res = run_sweep(small_grid(), corpus, ev, cache=EmbeddingCache(tmp_path), cancel=cancel, on_result=on_result)
    assert res.cancelled and [r.config for r in res.results] == [r.config for r in seen] and len(seen) == 3
    # and what was finished is still a valid sweep: saved, loaded, ranked
    save_sweep(res, tmp_path / "s.json")
    back = parse_sweep((tmp_path / "s.json").read_text())
    assert back.cancelled and [r.config for r in back.results] == [r.config for r in seen]
    assert best(back) is not None


def test_held_out_check_and_baseline(sample, tmp_path):
    _, corpus, ev = sample
    current = SweepConfig(chunk_size=500, chunk_overlap=100, kind="bm25")
    res = run_sweep(small_grid(retriever=[{"kind": "dense"}]), corpus, ev, cache=EmbeddingCache(tmp_path),
                    baseline=current)
    assert res.result(current) is not None and len(res.results) == 3
    assert best(res).config != current  # the baseline is scored, never chosen
    table = rows(res)
    assert [r.is_baseline for r in table] == [False, False, True]
    ho = held_out_check(res, best(res))
    assert ho.n_tuning + ho.n_held_out == sum(res.included) and ho.n_held_out > 0
    tuned = np.asarray(best(res).values["ndcg@10"])[np.asarray(res.tuning)]
    assert ho.tuning == pytest.approx(tuned.mean())


def test_sweep_file_refusals_are_clear(tmp_path):
    with pytest.raises(InputError, match="not a sweep file"):
        parse_sweep(json.dumps({"kind": "other"}), "x.json")
    with pytest.raises(InputError, match=r"x.json:1: not valid JSON"):
        parse_sweep("{", "x.json")


def test_cli_sweep_writes_results_and_a_baseline(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RAG_METRICS_CACHE", str(tmp_path / "cache"))
    grid = tmp_path / "grid.toml"
    grid.write_text(f'chunk_size = [400]\nmodels = ["{MODEL}"]\n[[retriever]]\nkind = "dense"\n'
                    '[[retriever]]\nkind = "bm25"\n')
    p = sample_paths()
    rc = main(["sweep", "--corpus", str(p.docs), "--golden", str(p.root / "golden_evidence.jsonl"),
               "--grid", str(grid), "--out", str(tmp_path / "sweep.json"),
               "--save-baseline", str(tmp_path / "base.json")])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "2 configurations over 1 chunking" in err and "chosen: 400/100" in out and "held-out" in out
    data = json.loads((tmp_path / "sweep.json").read_text())
    assert len(data["results"]) == 2
    from rag_metrics.compare.history import load_saved_run

    assert load_saved_run(tmp_path / "base.json").system.startswith("sweep: 400/100")
    rc = main(["sweep", "--corpus", str(p.docs), "--golden", str(p.golden), "--grid", str(grid),
               "--out", str(tmp_path / "nope" / "s.json")])
    assert rc == 2 and "does not exist" in capsys.readouterr().err


def test_a_students_sweep_is_bounded_by_the_policy_place():
    from rag_metrics.config import Budgets
    from rag_metrics.server.access import STUDENT, Caller, operator
    from rag_metrics.server.policy import budget_message

    student = Caller(STUDENT, space="seat-1", seat="1")
    assert budget_message(student, "sweep_configs", Budgets(), 12, "configurations") is None
    msg = budget_message(student, "sweep_configs", Budgets(), 13, "configurations")
    assert msg is not None and "lab.budgets.sweep_configs" in msg
    assert budget_message(operator(), "sweep_configs", Budgets(), 200, "configurations") is None
