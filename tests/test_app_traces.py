"""One upload, everything (AppTest): a Phoenix-shaped trace export added once as a system shows its
retrieval on the Dashboard (equal to the CLI), its absent questions as "not in the log" on Failures,
its answers on the Dashboard and on the Answers page without a second upload, remembered on return."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app_helpers import goto, library_result, no_exception, sample_golden
from rag_metrics.cli import main
from rag_metrics.metrics.registry import DEFAULT_METRICS, METRICS
from rag_metrics.systems.store import SystemStore
from tests.test_systems_traces import DOCS, phoenix_flat

ROOT = Path(__file__).resolve().parents[1]
GOLDEN_PATH = ROOT / "sample_corpus" / "golden.jsonl"
N_LOGGED = 40


def _chunks():
    from rag_metrics.io.corpus import load_corpus
    from rag_metrics.retrieval.chunking import chunk_corpus

    return chunk_corpus(load_corpus(ROOT / "sample_corpus" / "docs"))


def _export(chunks) -> str:
    """The dense top 5 of the first 40 golden questions as Phoenix spans (ids, contents, answers)."""
    text = {c.id: c.text for c in chunks}
    res = library_result("dense")
    recs = []
    for n, q in enumerate(list(sample_golden())[:N_LOGGED]):
        ids = res.ranking(q.id)["id"].tolist()[:5]
        docs = [(i, text.get(i, ""), 1.0 - r / 10) for r, i in enumerate(ids)]
        answer = text.get(ids[0], "No answer.").split(". ")[0] + "."
        recs += phoenix_flat(f"trace-{n:03d}", q.question, docs, answer)
    return "\n".join(json.dumps(r) for r in recs) + "\n"


@pytest.fixture
def traced(app_env, tmp_path):
    chunks = _chunks()
    data = _export(chunks)
    path = tmp_path / "phoenix_spans.jsonl"
    path.write_text(data, encoding="utf-8")
    spec, rep = SystemStore.for_corpus("sample_corpus").add_upload("my traces", "phoenix_spans.jsonl", data.encode(),
                                                                   chunks)
    assert spec is not None, rep.lines()
    return path


def _open(params: dict | None = None):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    for name, value in (params or {}).items():
        at.query_params[name] = value
    at.run()
    no_exception(at)
    return at


def _cli(path: Path, capsys, *extra: str) -> dict:
    keys = ",".join(f"{m}@5" for m in DEFAULT_METRICS)
    capsys.readouterr()
    assert main(["evaluate", "--qrels", str(GOLDEN_PATH), "--run", str(path), "--metrics", keys, "--format", "json",
                 *extra]) == 0
    return json.loads(capsys.readouterr().out)


def _cards(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric if "@" in m.label}


def test_dashboard_shows_the_export_with_counts_and_answers(traced, capsys):
    at = _open({"system": "my traces"})
    cli = _cli(traced, capsys)
    assert _cards(at) == {f"{METRICS[m].label}@5": f"{cli['metrics'][f'{m}@5']:.3f}" for m in DEFAULT_METRICS}
    captions = " ".join(c.value for c in at.caption)
    assert cli["n_answered"] == N_LOGGED - sum(1 for q in list(sample_golden())[:N_LOGGED] if not q.in_scope)
    assert f"{cli['n_answered']} answered · {cli['n_absent']} not in the log (counted as 0, trec_eval -c)" in captions
    # the answers of the same upload, beside the retrieval metrics
    assert "System my traces" in captions and "40 answers" in captions
    # only the answered questions: a labelled sidebar option, equal to the CLI's --only-answered
    at.radio(key="missing_queries").set_value("skip").run()
    no_exception(at)
    only = _cli(traced, capsys, "--only-answered")
    assert _cards(at) == {f"{METRICS[m].label}@5": f"{only['metrics'][f'{m}@5']:.3f}" for m in DEFAULT_METRICS}
    assert "left out of the means" in " ".join(c.value for c in at.caption)


def test_failures_lists_absent_questions_as_not_in_the_log(traced):
    at = goto(_open({"system": "my traces"}), "pages/failures.py")
    golden = sample_golden()
    absent = [q for q in list(golden)[N_LOGGED:] if q.in_scope]
    md = " ".join(m.value for m in at.subheader)
    assert f"Not in the log: {len(absent)} question(s)" in md
    titles = [e.label for e in at.expander]
    assert any(f"The {len(absent)} question(s) not in the log" in t for t in titles)
    # no absent question is listed as a retrieval failure
    failure_titles = [t for t in titles if " · " in t]
    assert not any(t.startswith(f"{q.id} · ") for q in absent for t in failure_titles)
    table = next(d.value for d in at.dataframe if list(d.value.columns) == ["query_id", "category", "question"])
    assert table["query_id"].tolist() == [q.id for q in absent]
    # misses are counted over the answered questions
    from rag_metrics.evaluation import evaluate
    from rag_metrics.systems.store import SystemStore as _Store

    store = _Store.for_corpus("sample_corpus")
    res = evaluate(golden, store.system(store.get("my traces")).rank(golden.questions(), 100).run)
    assert any(m.value == f"{len(res.failures(5))} / {res.n_answered}" for m in at.metric)


def test_answers_page_judges_the_stored_export_and_remembers_it(traced):
    at = goto(_open({"system": "my traces"}), "pages/answers.py")
    assert not at.error, [e.value for e in at.error]
    radio = at.radio(key="answers_source")
    assert radio.value == "A system added on Systems"
    assert at.selectbox(key="answers_system").value == "my traces"
    items = at.selectbox(key="answers_item").options
    assert len(items) == N_LOGGED and items[0].startswith("trace-000")
    # leave and come back: the source is remembered
    goto(at, "pages/dashboard.py")
    goto(at, "pages/answers.py")
    assert at.radio(key="answers_source").value == "A system added on Systems"
    at.radio(key="answers_source").set_value("Shipped sample answers").run()
    goto(at, "pages/dashboard.py")
    goto(at, "pages/answers.py")
    assert at.radio(key="answers_source").value == "Shipped sample answers"


def test_drill_down_shows_unmatched_contexts_with_the_closest_chunk(app_env):
    chunks = _chunks()
    golden = sample_golden()
    q = next(q for q in golden if q.in_scope)
    near = chunks[3].text[: len(chunks[3].text) // 2]  # half a chunk: below the 90 threshold
    docs = [(None, chunks[0].text, 0.9), (None, near, 0.8), (None, "Text from another product entirely.", 0.7)]
    recs = phoenix_flat("t-1", q.question, docs, "An answer.")
    for d in recs[1]["attributes.retrieval.documents"]:
        d.pop("document.id")
    data = "\n".join(json.dumps(r) for r in recs) + "\n"
    spec, rep = SystemStore.for_corpus("sample_corpus").add_upload("texts only", "spans.jsonl", data.encode(), chunks)
    assert spec is not None, rep.lines()
    at = goto(_open({"system": "texts only"}), "pages/failures.py")
    at.selectbox(key="drill_query").set_value(q.id).run()
    no_exception(at)
    assert any("Contexts that match no chunk (2 in the top 5)" in m.value for m in at.markdown)
    table = next(d.value for d in at.dataframe if "closest_chunk" in d.value.columns)
    assert table["context"].tolist() == [near, "Text from another product entirely."]
    assert table["closest_chunk"].iloc[0] == chunks[3].id
    assert 50 < table["similarity"].iloc[0] < 90
    assert table["closest_text"].iloc[0] == chunks[3].text


def test_reference_answers_propose_labels_saved_only_after_accepting(app_env):
    from rag_metrics.workspace.store import Workspace

    golden = sample_golden()
    unlabelled = {"q001", "q002"}
    rows = [{"id": q.id, "question": q.question, "category": q.category,
             "relevant": {} if q.id in unlabelled else q.relevant, "expected_answer": q.expected_answer}
            for q in golden]
    path = Workspace("sample_corpus", app_env).folder / "golden.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    before = path.read_text(encoding="utf-8")
    at = goto(_open(), "pages/golden_set.py")
    at.segmented_control(key="golden_view").set_value("label").run()
    at.selectbox(key="label_go").set_value("q001").run()
    no_exception(at)
    assert any("Proposed from the reference answer" in m.value for m in at.markdown)
    queue = at.session_state["_label_queue"]["sample_corpus"]
    proposed = [i for i, _ in queue.current_proposals()]
    assert len(proposed) == 5
    # the chunks people labelled for q001 rank among the proposals
    assert set(proposed) & {i for i in golden.queries[0].relevant}
    assert queue.current_ticks() == {} and path.read_text(encoding="utf-8") == before  # nothing saved
    accept = [b for b in at.button if b.label == "Accept"]
    accept[0].click().run()
    no_exception(at)
    queue = at.session_state["_label_queue"]["sample_corpus"]
    assert queue.current_ticks() == {proposed[0]: 1}
    assert path.read_text(encoding="utf-8") == before  # accepted, still not saved
    at.button(key="label_save").click().run()
    no_exception(at)
    saved = {json.loads(line)["id"]: json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()}
    assert saved["q001"]["relevant"] == {proposed[0]: 1} and saved["q002"]["relevant"] == {}


def test_systems_table_has_answered_and_absent_beside_the_metrics(traced, capsys):
    at = goto(_open(), "pages/systems.py")
    df = next(d.value for d in at.dataframe if "absent" in d.value.columns).set_index("system")
    cli = _cli(traced, capsys)
    assert (df.loc["my traces", "answered"], df.loc["my traces", "absent"]) == (cli["n_answered"], cli["n_absent"])
    assert df.loc["bundled dense", "absent"] == 0
    assert df.loc["my traces", "mrr@5"] == pytest.approx(cli["metrics"]["mrr@5"])


def test_one_upload_on_systems_then_every_page(app_env, capsys, tmp_path):
    data = _export(_chunks())
    at = goto(_open(), "pages/systems.py")
    at.text_input(key="systems_upload_name").set_value("uploaded traces")
    at.file_uploader(key="systems_upload").set_value(("phoenix_spans.jsonl", data.encode(), "application/json"))
    next(b for b in at.button if b.label == "Add system").click().run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    df = next(d.value for d in at.dataframe if "absent" in d.value.columns).set_index("system")
    path = tmp_path / "phoenix_spans.jsonl"
    path.write_text(data, encoding="utf-8")
    cli = _cli(path, capsys)
    assert df.loc["uploaded traces", "ndcg@5"] == pytest.approx(cli["metrics"]["ndcg@5"])
    # the same upload is the sidebar's system on every page, and its answers are on the Answers page
    at.selectbox(key="system").set_value("uploaded traces").run()
    goto(at, "pages/dashboard.py")
    assert _cards(at)["NDCG@5"] == f"{cli['metrics']['ndcg@5']:.3f}"
    goto(at, "pages/failures.py")
    assert any("Not in the log" in h.value for h in at.subheader)
    goto(at, "pages/answers.py")
    assert at.radio(key="answers_source").value == "A system added on Systems"
    assert at.selectbox(key="answers_system").value == "uploaded traces"


def test_upload_with_malformed_traces_keeps_the_rest_and_says_which(app_env):
    golden = sample_golden()
    q = next(iter(golden))
    recs = phoenix_flat("good", q.question, DOCS) + [phoenix_flat("broken", "Q?", DOCS)[0]]
    data = "\n".join(json.dumps(r) for r in recs) + "\n"
    at = goto(_open(), "pages/systems.py")
    at.text_input(key="systems_upload_name").set_value("partial")
    at.file_uploader(key="systems_upload").set_value(("spans.jsonl", data.encode(), "application/json"))
    next(b for b in at.button if b.label == "Add system").click().run()
    no_exception(at)
    assert SystemStore.for_corpus("sample_corpus").names() == ["partial"]
    captions = " ".join(c.value for c in at.caption).replace("\\", "")  # captions are markdown-escaped
    assert "1 malformed trace(s) or record(s) left out" in captions and "broken" in captions
    # a file with nothing readable is refused with the reader's messages
    at.text_input(key="systems_upload_name").set_value("nothing")
    at.file_uploader(key="systems_upload").set_value(("bad.jsonl", b"{not json\n", "application/json"))
    next(b for b in at.button if b.label == "Add system").click().run()
    no_exception(at)
    assert any("was not added" in e.value for e in at.error)


def test_compare_pairs_the_answers_of_two_stored_exports(app_env):
    chunks = _chunks()
    store = SystemStore.for_corpus("sample_corpus")
    good = _export(chunks)
    vague = "\n".join(json.dumps(r) for r in
                      [{**rec, "attributes.output.value": "I am not sure.",
                        "attributes.llm.output_messages": [{"message.role": "assistant",
                                                            "message.content": "I am not sure."}]}
                       if rec.get("span_kind") in ("LLM", "CHAIN") else rec
                       for rec in map(json.loads, good.splitlines())]) + "\n"
    for name, data in (("v1", good), ("v2", vague)):
        spec, rep = store.add_upload(name, f"{name}.jsonl", data.encode(), chunks)
        assert spec is not None, rep.lines()
    at = goto(_open({"system": "v1"}), "pages/compare.py")
    assert not at.error, [e.value for e in at.error]
    a, b = at.selectbox(key="cmp_answers_a"), at.selectbox(key="cmp_answers_b")
    assert set(a.options) == {"v1", "v2"} and (a.value, b.value) == ("v1", "v2")
    table = next(d.value for d in at.dataframe if "Verdict" in d.value.columns and
                 any("support" in str(m).lower() for m in d.value["Metric"]))
    assert len(table) >= 2


def test_health_page_points_to_the_proposals(app_env):
    from rag_metrics.workspace.store import Workspace

    golden = sample_golden()
    rows = [{"id": q.id, "question": q.question, "category": q.category,
             "relevant": {} if q.id == "q001" else q.relevant, "expected_answer": q.expected_answer} for q in golden]
    path = Workspace("sample_corpus", app_env).folder / "golden.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    at = goto(_open(), "pages/health.py")
    assert any("1 question(s) have a reference answer and no chunk label" in i.value for i in at.info), \
        [i.value for i in at.info]
