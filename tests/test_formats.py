"""Golden sets, TREC qrels/runs and BEIR folders: parsing, round trips, validation reports."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rag_metrics import GoldenQuery, GoldenSet, InputError, Run
from rag_metrics.evaluation import evaluate
from rag_metrics.io.golden import load_golden, parse_golden, read_golden, save_golden, stable_query_id, validate_golden
from rag_metrics.io.trec import (
    load_beir,
    load_run,
    parse_trec_qrels,
    parse_trec_run,
    qrels_to_text,
    read_qrels,
    validate_run,
    write_trec_run,
)

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"

SAMPLE = GoldenSet((
    GoldenQuery("q1", "How do I reset my password?", "procedural", {"acct#2": 3, "acct#3": 1}, "Settings > Security"),
    GoldenQuery("q2", 'Quotes "and", commas', "factual", {"faq#0": 1}),
    GoldenQuery("q3", "Capital of France?", "out_of_scope", {}, "Not covered."),
))


def test_lesson_shape_loads_as_is(tmp_path):
    lesson = [
        {"question": "What is the refund window?", "relevant_chunk_ids": ["refunds#0", "refunds#1"],
         "category": "factual"},
        {"question": "What is the capital of France?", "relevant_chunk_ids": [], "category": "out_of_scope"},
    ]
    p = tmp_path / "golden.json"
    p.write_text(json.dumps(lesson))
    g = load_golden(p)
    assert [q.question for q in g] == [row["question"] for row in lesson]
    assert g.queries[0].relevant == {"refunds#0": 1, "refunds#1": 1}
    assert g.queries[0].id == stable_query_id("What is the refund window?")
    assert load_golden(p).ids == g.ids  # stable
    assert not g.queries[1].in_scope


@pytest.mark.parametrize("fmt", ["csv", "json", "jsonl"])
def test_round_trip(fmt, tmp_path):
    p = tmp_path / f"g.{fmt}"
    save_golden(SAMPLE, p)
    back = load_golden(p)
    assert [(q.id, q.question, q.category, dict(q.relevant), q.expected_answer) for q in back] == \
           [(q.id, q.question, q.category, dict(q.relevant), q.expected_answer) for q in SAMPLE]


def test_csv_list_separator_and_grades():
    text = "question,category,relevant_chunk_ids,grades\nHow?,procedural,a#0|b#1,3|1\n"
    g, rep = parse_golden(text, "csv", "g.csv")
    assert rep.ok and g.queries[0].relevant == {"a#0": 3, "b#1": 1}


def test_golden_report_collects_every_problem():
    text = "\n".join([
        json.dumps({"id": "q1", "question": "ok", "relevant": {"a": 1}}),
        "{not json",
        json.dumps({"id": "q1", "question": "dup", "relevant": {"a": 1}}),
        json.dumps({"id": "q3", "question": "  ", "relevant": {"a": 1}}),
        json.dumps({"id": "q4", "question": "bad grade", "relevant": {"a": 1.5}}),
        json.dumps({"id": "q5", "question": "neg grade", "relevant": {"a": -1}}),
        json.dumps({"id": "q6", "question": "text grade", "relevant_chunk_ids": ["a"], "grades": ["high"]}),
    ])
    _g, rep = parse_golden(text, "jsonl", "g.jsonl")
    msgs = [str(p) for p in rep.problems]
    assert any("g.jsonl:2" in m and "invalid JSON" in m for m in msgs)
    assert any("g.jsonl:3" in m and "duplicate query id 'q1' (first at line 1)" in m for m in msgs)
    assert any("g.jsonl:4" in m and "empty question" in m for m in msgs)
    assert any("g.jsonl:5" in m and "grade 1.5 is not an integer" in m for m in msgs)
    assert any(p.severity == "warning" and "grade -1 is negative" in p.message for p in rep.problems)
    assert any("g.jsonl:7" in m and "grade 'high' is not an integer" in m for m in msgs)
    assert len(rep.errors) == 5


def test_validate_golden_unknown_ids_and_unlabelled():
    rep = validate_golden(SAMPLE.__class__((GoldenQuery("q1", "x", "factual", {"nope#9": 1}),
                                            GoldenQuery("q2", "y", "factual", {}))), known_ids={"a#0"})
    msgs = [str(p) for p in rep.problems]
    assert any("'nope#9' is not in the corpus" in m and "query 'q1'" in m for m in msgs)
    assert any("no relevant id" in m and "query 'q2'" in m for m in msgs)


def test_load_golden_raises_first_error_with_location(tmp_path):
    p = tmp_path / "g.csv"
    p.write_text("question,relevant_chunk_ids,grades\nok,a,1\n,b,1\nz,c,x\n")
    with pytest.raises(InputError) as e:
        load_golden(p)
    assert f"{p}:3" in str(e.value) and "empty question" in str(e.value) and "1 more error" in str(e.value)


def test_non_utf8_golden(tmp_path):
    p = tmp_path / "g.csv"
    p.write_bytes(b"question\nna\xefve\n")
    with pytest.raises(InputError, match=r"g.csv:2: not UTF-8 \(byte 0xef"):
        read_golden(p)


def test_trec_qrels_and_run_round_trip(tmp_path):
    qp = tmp_path / "q.qrels"
    qp.write_text(qrels_to_text(SAMPLE))
    g = read_qrels(qp)
    assert g.qrels() == {"q1": {"acct#2": 3, "acct#3": 1}, "q2": {"faq#0": 1}}
    run = Run.from_dict({"q1": {"acct#3": 2.0, "acct#2": 2.0, "x": 1.5}, "q2": {"faq#0": 0.25}})
    rp = tmp_path / "r.trec"
    write_trec_run(run, rp, tag="mine")
    lines = rp.read_text().splitlines()
    assert lines[0] == "q1 Q0 acct#3 1 2.0 mine"  # tie: 'acct#3' > 'acct#2'
    back = load_run(rp)
    assert back.rankings() == run.rankings()


def test_trec_run_problems_listed_with_lines():
    text = "q1 Q0 a 1 1.0 t\nq1 Q0 b 2\nq1 Q0 c 3 high t\nq1 Q0 d 4 nan t\n"
    _run, rep = parse_trec_run(text, "r.trec")
    msgs = [str(p) for p in rep.errors]
    assert "r.trec:2" in msgs[0] and "expected 6 fields" in msgs[0]
    assert "r.trec:3" in msgs[1] and "score 'high' is not a number" in msgs[1]
    assert "r.trec:4" in msgs[2] and "NaN" in msgs[2]


def test_trec_qrels_problems():
    _qrels, rep = parse_trec_qrels("1 0 a 1\n1 0 b\n1 0 c 2.5\n", "x.qrels")
    msgs = [str(p) for p in rep.errors]
    assert "x.qrels:2" in msgs[0] and "expected 4 fields" in msgs[0]
    assert "x.qrels:3" in msgs[1] and "not an integer" in msgs[1]


def test_validate_run_reports_nan_duplicates_unknown_queries():
    run = Run(np.array(["q1", "q1", "q1", "zz"], dtype=object), np.array(["a", "a", "b", "a"], dtype=object),
              np.array([1.0, 0.5, np.nan, 1.0]))
    rep = validate_run(run, SAMPLE, known_ids={"a"})
    msgs = [str(p) for p in rep.problems]
    assert any("NaN" in m and "query 'q1'" in m for m in msgs)
    assert any("'a' appears more than once" in m for m in msgs)
    assert any("not in the golden set" in m and "'zz'" in m for m in msgs)
    assert any("no line in the run" in m and "'q2'" in m for m in msgs)
    assert any("not in the corpus" in m and "'b'" in m for m in msgs)


def test_interop_dicts():
    res = evaluate({"q": {"a": 1}}, {"q": {"a": 0.2, "b": 0.9}})
    assert res.mean("mrr") == 0.5


def test_beir_qrels_header(tmp_path):
    p = tmp_path / "test.tsv"
    p.write_text("query-id\tcorpus-id\tscore\n1\t10\t2\n1\t11\t0\n")
    assert read_qrels(p).qrels() == {"1": {"10": 2, "11": 0}}


@pytest.mark.parametrize("name", ["adi", "cisi", "cacm", "med", "cranfield"])
def test_shared_collections_load(name):
    folder = DATASETS / name
    if not folder.exists():
        pytest.skip("shared datasets not present")
    stats = json.loads((folder / "stats.json").read_text())
    corpus, golden = load_beir(folder)
    rows = [json.loads(line) for line in (folder / "corpus.jsonl").open(encoding="utf-8")]
    assert len(rows) == stats["docs"]
    # documents with neither title nor text are skipped (Cranfield has two); title-only ones are kept (CACM)
    assert len(corpus) == sum(1 for r in rows if (r.get("title") or "").strip() or r["text"].strip())
    assert all(q.question for q in golden)
    assert sum(len(q.relevant) for q in golden) == stats["qrels_rows"]
    assert len(golden) == stats["queries_judged"]


def _big_run_text(n_queries=600, depth=80, sep=" "):
    rng = np.random.default_rng(3)
    lines = []
    for q in range(n_queries):
        docs = rng.choice(5000, size=depth, replace=False)
        scores = np.round(rng.random(depth), 2)  # real ties
        for r, (d, s) in enumerate(zip(docs, scores), 1):
            lines.append(sep.join([f"q{q}", "Q0", f"D{d}", str(r), repr(float(s)), "tagX"]))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("sep", [" ", "\t"])
def test_streaming_fast_path_equals_careful_parser(tmp_path, sep):
    text = _big_run_text(sep=sep)
    p = tmp_path / "big.trec"
    p.write_text(text)
    assert p.stat().st_size > 1 << 20  # large enough for the fast path
    fast = load_run(p)
    assert fast._qids is None, "expected the streaming fast path (ids kept as codes)"
    slow, rep = parse_trec_run(text.encode(), "x")
    assert rep.ok
    assert fast.name == "tagX"
    assert fast.rankings() == slow.rankings()
    golden = GoldenSet.from_qrels({f"q{q}": {f"D{d}": 1 for d in range(q, 5000, 97)} for q in range(600)})
    a, b = evaluate(golden, fast), evaluate(golden, slow)
    for m in ("ndcg", "map", "recall"):
        np.testing.assert_array_equal(a.values(m, 10), b.values(m, 10))


def test_irregular_big_run_falls_back_and_reports_lines(tmp_path):
    text = _big_run_text().replace("q5 Q0", "q5  Q0", 1)  # a double space: not for the fast path
    text += "q9 Q0 bad 1\n"
    p = tmp_path / "big.trec"
    p.write_text(text)
    _run, rep = read_run_file(p)
    assert not rep.ok and f"{p}:{text.count(chr(10))}" in str(rep.errors[0])


def read_run_file(p):
    from rag_metrics.io.trec import read_run

    return read_run(p)


# ---- trec_eval corners in run files (issue 12) ----------------------------------------------

def test_text_after_the_tag_is_ignored_with_one_warning_counting_lines():
    # trec_eval reads six fields and ignores the rest of the line (its own test files do this)
    text = ("q1 Q0 a 1 3.0 tag extra words here\n"
            "q1 Q0 b 2 2.0 tag\n"
            "q1 Q0 c 3 1.0 tag more\n"
            "q2 Q0 a 1 1.0 tag x\n")
    run, rep = parse_trec_run(text, "r.trec")
    assert rep.ok and len(rep.warnings) == 1
    w = str(rep.warnings[0])
    assert "r.trec" in w and "3 lines have text after the sixth field" in w and "first at line 1" in w
    assert run.rankings() == {"q1": [("a", 3.0), ("b", 2.0), ("c", 1.0)], "q2": [("a", 1.0)]}


def test_text_after_the_tag_in_a_big_file_falls_back_and_warns(tmp_path):
    from rag_metrics.io.trec import read_run

    text = _big_run_text()
    lines = text.splitlines()
    lines[100] += " trailing"  # one line in the middle of the file
    p = tmp_path / "big.trec"
    p.write_text("\n".join(lines) + "\n")
    run, rep = read_run(p)
    assert rep.ok and len(rep.warnings) == 1 and "1 line has text after the sixth field" in str(rep.warnings[0])
    assert "first at line 101" in str(rep.warnings[0])
    assert len(run) == len(lines)


@pytest.mark.parametrize("big", [False, True])
def test_rank_column_is_ignored_order_follows_scores_then_ids(tmp_path, big):
    # ranks say a, b, c, 10, 9; scores say c (3.0), then b and a tied (2.0: b before a), then the
    # tie 9 / 10 at 1.0 ("9" > "10" byte-wise)
    text = ("rq Q0 a 1 2.0 t\n"
            "rq Q0 b 2 2.0 t\n"
            "rq Q0 c 3 3.0 t\n"
            "rq Q0 10 4 1.0 t\n"
            "rq Q0 9 5 1.0 t\n")
    if big:  # large enough for the streaming reader: the same query block after many others
        text = _big_run_text() + text
    p = tmp_path / "r.trec"
    p.write_text(text)
    run = load_run(p)
    if big:
        assert run._qids is None, "expected the streaming fast path"
    assert [i for i, _ in run.rankings()["rq"]] == ["c", "b", "a", "9", "10"]
    res = evaluate(GoldenSet.from_qrels({"rq": {"a": 1}}), run)
    assert res.judged.ranking(res.query_ids.index("rq"))[0] == ["c", "b", "a", "9", "10"]
    assert res.mean("mrr") == 1 / 3  # a is third by score, first by the rank column


def test_comment_lines_skipped_and_ids_may_contain_hash(tmp_path):
    run_text = "# produced by a test\nq1 Q0 doc#1 1 2.0 t\n  # indented comment\nq1 Q0 doc#2 2 1.0 t#x\n"
    run, rep = parse_trec_run(run_text, "r.trec")
    assert rep.ok and run.rankings() == {"q1": [("doc#1", 2.0), ("doc#2", 1.0)]}
    qrels, rep = parse_trec_qrels("# header\nq1 0 doc#2 1\nq1 0 a#b#c 2\n", "x.qrels")
    assert rep.ok and qrels == {"q1": {"doc#2": 1, "a#b#c": 2}}


def test_big_run_with_a_six_field_comment_line_skips_it(tmp_path):
    text = _big_run_text() + "# q0 Q0 x 1 9.0 t\n"  # a comment that looks like a run line
    p = tmp_path / "big.trec"
    p.write_text(text)
    run = load_run(p)
    assert "#" not in set(run.qids.tolist())
    assert len(run) == text.count("\n") - 1


# ---- bounds at the edge (issue 11, classes 1-2) ---------------------------------------------

@pytest.mark.parametrize("grade, kind", [
    ("99999999999999999999999", "outside the accepted range"),
    ("3000000000", "outside the accepted range"),
    ("-3000000000", "outside the accepted range"),
    ("1001", "outside the accepted range"),
    ("1e308", "outside the accepted range"),
    ("4" * 5000, "outside the accepted range"),
    ("1e999", "not an integer"),
    ("inf", "not an integer"),
    ("nan", "not an integer"),
    ("²", "not an integer"),
    ("٣", "not an integer"),  # Arabic-Indic three: int() would accept it, trec_eval would not
    ("1_000", "not an integer"),
    ("2.5", "not an integer"),
])
@pytest.mark.parametrize("fmt", ["trec", "beir"])
def test_grades_outside_the_range_are_reported_with_file_and_line(tmp_path, grade, kind, fmt):
    p = tmp_path / ("q.qrels" if fmt == "trec" else "q.tsv")
    if fmt == "trec":
        p.write_text(f"q1 0 a 1\nq1 0 b {grade}\nq2 0 c 2\n", encoding="utf-8")
    else:
        p.write_text(f"query-id\tcorpus-id\tscore\nq1\ta\t1\nq1\tb\t{grade}\nq2\tc\t2\n", encoding="utf-8")
    golden, rep = read_qrels(p, with_report=True)
    assert len(rep.errors) == 1
    msg = str(rep.errors[0])
    assert f"{p}:{2 if fmt == 'trec' else 3}" in msg and kind in msg and "-1000 to 1000" in msg
    assert len(msg) < 300  # a 5000-digit grade is not echoed whole
    assert golden.qrels() == {"q1": {"a": 1}, "q2": {"c": 2}}  # the bad line is left out, nothing wrapped
    with pytest.raises(InputError, match=kind):
        read_qrels(p)


@pytest.mark.parametrize("grade, value", [("1000", 1000), ("-1000", -1000), ("+3", 3), ("007", 7), ("2.0", 2),
                                          ("0", 0), ("1e2", 100)])
def test_grades_inside_the_range_are_read(grade, value):
    qrels, rep = parse_trec_qrels(f"q 0 a {grade}\n")
    assert rep.ok and qrels == {"q": {"a": value}}


@pytest.mark.parametrize("score, kind", [
    ("inf", "not a finite number"), ("-inf", "not a finite number"), ("nan", "NaN"), ("NaN", "NaN"),
    ("1e999", "outside the float64 range"), ("-1e400", "outside the float64 range"),
    ("²", "not a number"), ("0x10", "not a number"), ("1_0", "not a number"), ("high", "not a number"),
])
@pytest.mark.parametrize("big", [False, True])
def test_scores_must_be_finite_float64(tmp_path, score, kind, big):
    from rag_metrics.io.trec import read_run

    text = (_big_run_text() if big else "") + f"zq Q0 a 1 2.0 t\nzq Q0 b 2 {score} t\n"
    p = tmp_path / "r.trec"
    p.write_text(text, encoding="utf-8")
    _run, rep = read_run(p)
    assert len(rep.errors) == 1
    msg = str(rep.errors[0])
    assert f"{p}:{text.count(chr(10))}" in msg and kind in msg
    with pytest.raises(InputError, match=kind):
        load_run(p)


def test_extreme_finite_scores_are_kept_and_ranked():
    run, rep = parse_trec_run("q Q0 a 1 1.7e308 t\nq Q0 b 2 -1.7e308 t\nq Q0 c 3 5e-324 t\n")
    assert rep.ok
    assert [i for i, _ in run.rankings()["q"]] == ["a", "c", "b"]


def test_large_trec_files_are_read_and_judged_without_pandas(tmp_path):
    """pandas costs about 0.3 s of CPU to import; the CLI's path over large TREC files never needs it."""
    import subprocess
    import sys

    runp, qrelp = tmp_path / "big.trec", tmp_path / "big.qrels"
    runp.write_text(_big_run_text())
    qrelp.write_text("".join(f"q{q} 0 D{d} {1 + d % 3}\n" for q in range(600) for d in range(q, 5000, 7)))
    assert qrelp.stat().st_size > 1 << 20
    code = ("import sys; from rag_metrics.io import read_qrels, read_run, validate_run; "
            "from rag_metrics.evaluate import evaluate; "
            f"g = read_qrels({str(qrelp)!r}); r, rep = read_run({str(runp)!r}); validate_run(r, g); "
            "res = evaluate(g, r); print(res.mean('ndcg', 10) > 0, 'pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.split() == ["True", "False"]


@pytest.mark.parametrize("sep", [" ", "\t"])
def test_large_qrels_fast_path_equals_careful_parser(tmp_path, sep):
    # queries interleaved (not grouped), ids with '#', grades 0-3: same dicts, same order
    rng = np.random.default_rng(11)
    lines = [sep.join([f"q{q}", "0", f"d#{d}", str(int(rng.integers(0, 4)))])
             for d in range(16_000) for q in rng.choice(40, size=5, replace=False)]
    text = "\n".join(lines) + "\n"
    p = tmp_path / "big.qrels"
    p.write_text(text)
    assert p.stat().st_size > 1 << 20
    from rag_metrics.io.trec import _arrow_qrels

    fast = _arrow_qrels(p)
    assert fast is not None, "expected the Arrow fast path"
    slow, rep = parse_trec_qrels(text)
    assert rep.ok
    assert list(fast.items()) == list(slow.items())
    assert [list(r) for r in fast.values()] == [list(r) for r in slow.values()]  # id order kept
    assert read_qrels(p).qrels() == slow


@pytest.mark.parametrize("change", ["negative grade", "judged twice", "comment", "fraction"])
def test_large_qrels_irregular_lines_take_the_careful_parser(tmp_path, change):
    from rag_metrics.io.trec import _arrow_qrels

    lines = [f"q{i % 50} 0 d{i} {i % 3}" for i in range(80_000)]
    if change == "negative grade":
        lines[500] = "q0 0 dneg -1"
    elif change == "judged twice":
        lines.append(lines[10])
    elif change == "comment":
        lines.insert(300, "# q1 0 x 1")
    else:
        lines[7] = "q7 0 d7 2.0"
    p = tmp_path / "big.qrels"
    p.write_text("\n".join(lines) + "\n")
    assert p.stat().st_size > 1 << 20
    assert _arrow_qrels(p) is None
    golden, rep = read_qrels(p, with_report=True)
    assert rep.ok
    if change == "negative grade":
        assert any("grade -1 is negative" in w.message for w in rep.warnings)
    if change == "judged twice":
        assert any("judged twice" in w.message for w in rep.warnings)
    if change == "fraction":
        assert golden.qrels()["q7"]["d7"] == 2
