"""Trace exports read as RAG logs: OpenInference/Phoenix spans (nested and flattened attributes),
Langfuse observations and LangSmith runs, malformed traces named by file:line and trace id, and
the CLI's evaluation of a Phoenix export equal per query to the equivalent TREC run."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rag_metrics.cli import main
from rag_metrics.evaluation import evaluate
from rag_metrics.io.golden import load_golden
from rag_metrics.io.raglog import looks_like_rag_log, parse_rag_log
from rag_metrics.io.traces import looks_like_trace_export, trace_format
from rag_metrics.io.trec import load_run
from rag_metrics.systems.uploads import RagLogSystem, parse_upload

ROOT = Path(__file__).resolve().parents[1]
GOLDEN_PATH = ROOT / "sample_corpus" / "golden.jsonl"

DOCS = [("doc-a#0", "Alpha text.", 0.9), ("doc-b#1", "Beta text.", 0.7), ("doc-c#2", "Gamma text.", 0.5)]


# ---- builders in the tools' documented shapes ---------------------------------------------------
def phoenix_flat(trace: str, question: str, docs, answer: str | None = "The answer.") -> list[dict]:
    """Spans as ``px.Client().get_spans_dataframe()`` rows (flattened ``context.*`` / ``attributes.*``)."""
    root = {"name": "query", "span_kind": "CHAIN", "parent_id": None, "start_time": "2024-05-01T10:00:00Z",
            "context.span_id": f"{trace}-root", "context.trace_id": trace, "status_code": "OK",
            "attributes.input.value": question, "attributes.output.value": answer,
            "attributes.openinference.span.kind": "CHAIN"}
    retr = {"name": "retrieve", "span_kind": "RETRIEVER", "parent_id": f"{trace}-root",
            "start_time": "2024-05-01T10:00:01Z", "context.span_id": f"{trace}-r", "context.trace_id": trace,
            "attributes.input.value": question, "attributes.openinference.span.kind": "RETRIEVER",
            "attributes.retrieval.documents": [{"document.id": i, "document.content": t, "document.score": s}
                                               for i, t, s in docs]}
    llm = {"name": "llm", "span_kind": "LLM", "parent_id": f"{trace}-root", "start_time": "2024-05-01T10:00:02Z",
           "context.span_id": f"{trace}-l", "context.trace_id": trace, "attributes.output.value": answer,
           "attributes.llm.output_messages": [{"message.role": "assistant", "message.content": answer}],
           "attributes.openinference.span.kind": "LLM"}
    return [root, retr, llm] if answer is not None else [root, retr]


def phoenix_nested(trace: str, question: str, docs, answer: str = "The answer.") -> list[dict]:
    """Spans with nested ``context`` and ``attributes`` objects (OpenInference semantic conventions)."""
    return [
        {"name": "query", "context": {"trace_id": trace, "span_id": f"{trace}-root"}, "parent_id": None,
         "span_kind": "CHAIN", "start_time": "2024-05-01T10:00:00Z",
         "attributes": {"input": {"value": question}, "output": {"value": answer},
                        "openinference": {"span": {"kind": "CHAIN"}}}},
        {"name": "retrieve", "context": {"trace_id": trace, "span_id": f"{trace}-r"}, "parent_id": f"{trace}-root",
         "span_kind": "RETRIEVER", "start_time": "2024-05-01T10:00:01Z",
         "attributes": {"input": {"value": question}, "openinference": {"span": {"kind": "RETRIEVER"}},
                        "retrieval": {"documents": [{"document": {"id": i, "content": t, "score": s}}
                                                    for i, t, s in docs]}}},
    ]


def phoenix_otlp(trace: str, question: str, docs, answer: str = "The answer.") -> list[dict]:
    """Spans with OTLP-style dotted attribute keys (``retrieval.documents.<i>.document.id``), root last."""
    attrs = {"openinference.span.kind": "RETRIEVER", "input.value": question}
    for n, (i, t, s) in enumerate(docs):
        attrs.update({f"retrieval.documents.{n}.document.id": i, f"retrieval.documents.{n}.document.content": t,
                      f"retrieval.documents.{n}.document.score": s})
    root = {"openinference.span.kind": "CHAIN", "input.value": json.dumps({"question": question}),
            "input.mime_type": "application/json", "output.value": answer}
    return [{"name": "retrieve", "context": {"trace_id": trace, "span_id": f"{trace}-r"}, "parent_id": f"{trace}-c",
             "attributes": attrs},
            {"name": "chain", "context": {"trace_id": trace, "span_id": f"{trace}-c"}, "parent_id": None,
             "attributes": root}]


def langfuse(trace: str, question: str, docs, answer: str = "The answer.") -> list[dict]:
    """Observations as the Langfuse API (GET /api/public/observations) returns them."""
    return [
        {"id": f"{trace}-r", "traceId": trace, "type": "RETRIEVER", "name": "retrieve", "parentObservationId": None,
         "startTime": "2024-05-01T10:00:01.000Z", "input": {"query": question},
         "output": [{"id": i, "content": t, "score": s} for i, t, s in docs]},
        {"id": f"{trace}-g", "traceId": trace, "type": "GENERATION", "name": "generate", "parentObservationId": None,
         "startTime": "2024-05-01T10:00:02.000Z", "model": "gpt-4o-mini",
         "input": [{"role": "user", "content": question}], "output": {"role": "assistant", "content": answer}},
    ]


def langsmith(trace: str, question: str, docs, answer: str = "The answer.") -> list[dict]:
    """Runs as ``Client().list_runs()`` exports them (run_type, inputs, outputs, LangChain documents)."""
    return [
        {"id": f"{trace}-root", "trace_id": trace, "parent_run_id": None, "run_type": "chain", "name": "RAG",
         "start_time": "2024-05-01T10:00:00", "inputs": {"question": question}, "outputs": {"output": answer}},
        {"id": f"{trace}-r", "trace_id": trace, "parent_run_id": f"{trace}-root", "run_type": "retriever",
         "name": "VectorStoreRetriever", "start_time": "2024-05-01T10:00:01", "inputs": {"query": question},
         "outputs": {"documents": [{"page_content": t, "metadata": {"chunk_id": i, "source": "doc.md"},
                                    "type": "Document"} for i, t, _ in docs]}},
        {"id": f"{trace}-l", "trace_id": trace, "parent_run_id": f"{trace}-root", "run_type": "llm",
         "name": "ChatOpenAI", "start_time": "2024-05-01T10:00:02", "inputs": {"messages": []},
         "outputs": {"generations": [[{"text": answer, "type": "ChatGeneration"}]]}},
    ]


BUILDERS = {"phoenix_flat": phoenix_flat, "phoenix_nested": phoenix_nested, "phoenix_otlp": phoenix_otlp,
            "langfuse": langfuse, "langsmith": langsmith}


def _jsonl(records: list[dict]) -> str:
    return "\n".join(json.dumps(r) for r in records) + "\n"


@pytest.mark.parametrize("shape", list(BUILDERS))
@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_each_format_reads_one_row_per_trace(shape, suffix):
    build = BUILDERS[shape]
    recs = build("t1", "What is alpha?", DOCS, "Alpha is a letter.") + build("t2", "What is beta?", DOCS[1:],
                                                                            "Beta is second.")
    text = _jsonl(recs) if suffix == ".jsonl" else json.dumps(recs, indent=1)
    assert looks_like_trace_export(text) and looks_like_rag_log(text, f"x{suffix}")
    log, rep = parse_rag_log(text, f"export{suffix}")
    assert rep.ok, [str(p) for p in rep.problems]
    assert [r.id for r in log] == ["t1", "t2"]
    r1, r2 = log.rows
    assert r1.question == "What is alpha?" and r1.context_ids == ("doc-a#0", "doc-b#1", "doc-c#2")
    assert r1.contexts == ("Alpha text.", "Beta text.", "Gamma text.")
    assert r1.answer == "Alpha is a letter." and r2.answer == "Beta is second."
    assert r2.context_ids == ("doc-b#1", "doc-c#2") and r1.line is not None


def test_format_detection():
    assert trace_format(phoenix_flat("t", "q", DOCS)) == "phoenix"
    assert trace_format(phoenix_nested("t", "q", DOCS)) == "phoenix"
    assert trace_format(phoenix_otlp("t", "q", DOCS)) == "phoenix"
    assert trace_format(langfuse("t", "q", DOCS)) == "langfuse"
    assert trace_format(langsmith("t", "q", DOCS)) == "langsmith"
    assert trace_format([{"question": "q", "contexts": []}]) is None
    assert not looks_like_trace_export(json.dumps({"question": "q", "contexts": ["a span_kind"]}))


def test_langfuse_api_wrapper_and_document_order_kept():
    docs = [("z", "Zed.", 0.1), ("a", "Ay.", 0.9)]  # rank order, not score order
    text = json.dumps({"data": langfuse("t9", "Q?", docs), "meta": {"page": 1, "totalItems": 2}})
    log, rep = parse_rag_log(text, "observations.json")
    assert rep.ok and log.rows[0].context_ids == ("z", "a")


def test_langsmith_without_trace_id_joins_root():
    recs = langsmith("t1", "Q?", DOCS)
    for r in recs:
        r.pop("trace_id")
    log, rep = parse_rag_log(_jsonl(recs), "runs.jsonl")
    assert rep.ok and [r.id for r in log] == ["t1-root"] and log.rows[0].answer == "The answer."


def test_contexts_without_ids_are_text_matched():
    docs = [(None, "Alpha text.", 0.9), (None, "Beta text!", 0.5)]
    recs = [{**s} for s in phoenix_flat("t1", "What is alpha?", docs)]
    for d in recs[1]["attributes.retrieval.documents"]:
        d.pop("document.id")
    log, rep = parse_rag_log(_jsonl(recs), "spans.jsonl")
    assert rep.ok and log.rows[0].context_ids is None and log.rows[0].contexts == ("Alpha text.", "Beta text!")
    system = RagLogSystem(log, {"c1": "Alpha text.", "c2": "Beta text."})
    sr = system.rank({"q1": "what is alpha?"}, 10)
    assert sr.context_match.exact == 1 and sr.context_match.fuzzy == 1
    assert sorted(sr.run.ids.tolist()) == ["c1", "c2"]


def test_malformed_traces_named_and_rest_kept():
    good = phoenix_flat("good", "What is alpha?", DOCS)
    no_retriever = [phoenix_flat("noret", "Q2?", DOCS)[0]]
    no_question = phoenix_flat("noq", "", DOCS)
    no_docs = phoenix_flat("nodocs", "Q4?", DOCS)
    del no_docs[1]["attributes.retrieval.documents"]
    bad_doc = phoenix_flat("baddoc", "Q5?", [("x", "t", 1.0)])
    bad_doc[1]["attributes.retrieval.documents"] = [{"document.score": 0.3}]
    lines = _jsonl(good + no_retriever + no_question + no_docs + bad_doc).splitlines()
    lines.insert(2, "{not json")
    log, rep = parse_rag_log("\n".join(lines), "spans.jsonl")
    assert [r.id for r in log] == ["good"]
    msgs = [str(p) for p in rep.errors]
    assert any("spans.jsonl:3" in m and "invalid JSON" in m for m in msgs)  # a damaged file is an error
    by_trace = {p.query_id: p for p in rep.warnings if p.query_id}  # a malformed trace is left out
    assert set(by_trace) == {"noret", "noq", "nodocs", "baddoc"}
    assert "no RETRIEVER span" in by_trace["noret"].message and by_trace["noret"].line == 5
    assert "no question" in by_trace["noq"].message and by_trace["noq"].line == 7
    assert "no document list" in by_trace["nodocs"].message
    assert "neither an id nor a text" in by_trace["baddoc"].message
    assert all(p.file == "spans.jsonl" and "left out" in p.message for p in by_trace.values())
    assert len(log.skipped) == 4 and log.skipped[0].startswith("spans.jsonl:5: trace 'noret'")


def test_record_without_trace_id_and_not_objects():
    recs = phoenix_flat("t1", "Q?", DOCS)
    recs[0].pop("context.trace_id")
    text = _jsonl(recs) + "[1, 2]\n"
    log, rep = parse_rag_log(text, "s.jsonl")
    assert rep.ok  # the readable trace is kept; what was left out is a warning
    msgs = [str(p) for p in rep.warnings]
    assert any("s.jsonl:1" in m and "no trace id" in m for m in msgs)
    assert any("s.jsonl:4" in m and "not an object" in m for m in msgs)
    assert [r.id for r in log] == ["t1"]


def test_malformed_traces_do_not_block_an_upload_and_are_noted(tmp_path, capsys):
    recs = phoenix_flat("good", "What is alpha?", DOCS) + [phoenix_flat("noret", "Q2?", DOCS)[0]]
    system, rep = parse_upload(_jsonl(recs).encode(), "phoenix.jsonl")
    assert system is not None and rep.ok and len(rep.warnings) == 1
    notes = system.rank({"g1": "What is alpha?"}, 10).notes
    assert any("1 malformed trace(s) or record(s) left out" in n and "phoenix.jsonl:4: trace 'noret'" in n
               for n in notes)
    only_bad = _jsonl([phoenix_flat("noret", "Q2?", DOCS)[0]]).encode()
    system, rep = parse_upload(only_bad, "bad.jsonl")
    assert system is None and any("no trace could be read (1 left out" in p.message for p in rep.errors)


def test_upload_of_phoenix_export_is_a_rag_log_system():
    data = _jsonl(phoenix_flat("t1", "What is alpha?", DOCS)).encode()
    system, rep = parse_upload(data, "phoenix.jsonl")
    assert rep.ok and isinstance(system, RagLogSystem) and system.log.has_answers


# ---- CLI parity: a Phoenix export equals the equivalent TREC run -------------------------------
def _cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("builder", list(BUILDERS.values()), ids=list(BUILDERS))
def test_cli_trace_export_equals_trec_run_per_query(tmp_path, capsys, builder):
    golden = load_golden(GOLDEN_PATH)
    rng = np.random.default_rng(7)
    pool = sorted({i for q in golden for i in q.relevant})
    recs, trec = [], []
    for n, q in enumerate(list(golden)[:-5]):  # five golden questions are absent from the export
        ids = list(dict.fromkeys([*q.relevant][:1] + list(rng.choice(pool, 6, replace=False))))
        rng.shuffle(ids)
        docs = [(i, f"text of {i}", 1.0 - r / 10) for r, i in enumerate(ids)]
        recs += builder(f"trace-{n}", q.question, docs, f"answer {n}")
        trec += [f"{q.id} Q0 {i} {r + 1} {len(ids) - r} t" for r, i in enumerate(ids)]
    (tmp_path / "spans.jsonl").write_text(_jsonl(recs), encoding="utf-8")
    (tmp_path / "run.trec").write_text("\n".join(trec) + "\n", encoding="utf-8")
    keys = "hit_rate@5,mrr@10,precision@3,recall@10,ndcg@10,map@10"
    out = {}
    for name in ("spans.jsonl", "run.trec"):
        code, text, err = _cli(capsys, "evaluate", "--qrels", GOLDEN_PATH, "--run", tmp_path / name, "--metrics",
                               keys, "--format", "json", "--per-query")
        assert code == 0, err
        out[name] = json.loads(text)
    a, b = out["spans.jsonl"]["per_query"], out["run.trec"]["per_query"]
    assert set(a) == set(b) and len(a) == out["run.trec"]["n_queries"]
    for q in b:
        for k in b[q]:
            assert abs(a[q][k] - b[q][k]) <= 1e-12, (q, k)
    lib = evaluate(golden, load_run(tmp_path / "run.trec"))
    assert abs(out["spans.jsonl"]["metrics"]["ndcg@10"] - lib.mean("ndcg@10")) <= 1e-12


def test_cli_answers_reads_a_trace_export(tmp_path, capsys):
    p = tmp_path / "runs.jsonl"
    p.write_text(_jsonl(langsmith("t1", "What is alpha?", DOCS, "Alpha text.")), encoding="utf-8")
    code, out, err = _cli(capsys, "answers", "--data", p, "--format", "json")
    assert code == 0, err
    assert "context_support" in out


def test_unmatched_contexts_named_with_the_closest_chunk():
    chunks = {"c1": "Alpha text about the first thing.", "c2": "Beta text about the second thing entirely."}
    recs = phoenix_flat("t1", "What is alpha?", [(None, "Alpha text about the first thing.", 1.0),
                                                 (None, "Beta text about", 0.5), (None, "zzz", 0.1)])
    for d in recs[1]["attributes.retrieval.documents"]:
        d.pop("document.id")
    log, rep = parse_rag_log(_jsonl(recs), "spans.jsonl")
    system = RagLogSystem(log, chunks)
    ids = system.rank({"q": "What is alpha?"}, 10).run.ids.tolist()
    df = system.unmatched_contexts(ids)
    assert df["context"].tolist() == ["Beta text about", "zzz"]
    assert df["closest_chunk"].iloc[0] == "c2" and 0 < df["similarity"].iloc[0] < 90
    assert (df["threshold"] == 90).all() and df["id"].str.startswith("unmatched:").all()


def test_detection_reads_the_first_record_not_just_field_names():
    recs = langsmith("t1", "Q?", DOCS)
    recs[0]["outputs"] = {"answer": "A.", "contexts": ["x"]}  # a chain that returns its contexts
    assert looks_like_trace_export(_jsonl(recs)) and looks_like_trace_export(json.dumps(recs))
    log, rep = parse_rag_log(json.dumps({"runs": recs}, indent=2), "runs.json")
    assert rep.ok and log.rows[0].answer == "The answer."
    rag_row = {"question": "q", "contexts": ["see run_type and span_kind"], "answer": "a"}
    assert not looks_like_trace_export(json.dumps(rag_row) + "\n")
    log, rep = parse_rag_log(json.dumps(rag_row) + "\n", "log.jsonl")
    assert rep.ok and log.rows[0].contexts == ("see run_type and span_kind",)


@pytest.mark.parametrize("text", [
    '[{"span_kind": "RETRIEVER", "context.trace_id": "t", "x": ' + "1" * 5000 + "}]",
    '[{"span_kind": "RETRIEVER", "context.trace_id": "t", "x": ' + "[" * 3000 + "]" * 3000 + "}]",
    '{"span_kind": "RETRIEVER", "context.trace_id": "t", "attributes": "not an object"}\n',
    '{"span_kind": "RETRIEVER", "context.trace_id": "t", "attributes.input.value": "q", '
    '"attributes.retrieval.documents": [{"document.id": {"a": 1}}]}\n',
    '{"run_type": "retriever", "id": "r", "inputs": 5, "outputs": {"documents": "nope"}}\n',
    '{"traceId": "t", "type": "RETRIEVER", "input": null, "output": [[1, 2]]}\n',
])
def test_hostile_exports_give_messages_not_tracebacks(text):
    log, rep = parse_rag_log(text, "hostile.jsonl" if text.endswith("\n") else "hostile.json")
    assert not rep.ok and len(log) == 0
    assert all(p.file.startswith("hostile") for p in rep.errors)


def test_answers_of_two_exports_merge_with_their_system_names():
    from rag_metrics.answers.data import merge_answer_sets, parse_answers

    a, _ = parse_answers(_jsonl(phoenix_flat("t1", "Q?", DOCS, "A1.")), "a.jsonl", "first")
    b, _ = parse_answers(_jsonl(langfuse("t1", "Q?", DOCS, "B1.")), "b.jsonl", "second")
    assert [it.system for it in a] == ["first"]
    merged = merge_answer_sets([("first", a), ("second", b)])
    assert [(it.id, it.system, it.answer) for it in merged] == [("first:t1", "first", "A1."),
                                                               ("second:t1", "second", "B1.")]
    assert merge_answer_sets([("first", a)]) == a


def test_epoch_start_times_order_the_retriever_steps():
    recs = phoenix_flat("t1", "Q?", DOCS)
    second = {**recs[1], "context.span_id": "t1-r2", "start_time": 1714557600000 + 10_000,
              "attributes.retrieval.documents": [{"document.id": "late", "document.content": "x"}]}
    recs[1]["start_time"] = 1714557600000 + 900  # ms since the epoch, as pandas' to_json writes them
    log, rep = parse_rag_log(_jsonl([recs[0], second, recs[1]] + recs[2:]), "spans.jsonl")
    assert log.rows[0].context_ids == ("doc-a#0", "doc-b#1", "doc-c#2")
    assert any("2 retriever steps; the first one is used" in p.message for p in rep.warnings)


def test_ids_on_some_documents_and_texts_on_others_is_named():
    recs = phoenix_flat("mix", "Q?", DOCS)
    recs[1]["attributes.retrieval.documents"] = [{"document.id": "a"}, {"document.content": "text only"}]
    log, rep = parse_rag_log(_jsonl(recs), "spans.jsonl")
    msg = next(p.message for p in rep.warnings if p.query_id == "mix")
    assert "document 1 has an id but no text and document 2 a text but no id" in msg
