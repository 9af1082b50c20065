"""Bring your system (AppTest): when sniffing cannot decide, the user says it (issue 47).  A log whose
field names the readers do not know is refused; its mapping form shows the first rows as the mapping
reads them; "Read with this mapping" reads it (the verdict equals the library's for the same mapping); the
mapping is kept in the workspace settings and reads the next file of the same shape by itself."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from app_helpers import no_exception, sample_golden
from rag_metrics.evaluation import evaluate
from rag_metrics.systems.uploads import parse_upload

ROOT = Path(__file__).resolve().parents[1]
SPEC = "question=query_text,ids=hits[].cid,scores=hits[].s"


def _odd_log(shift: int = 0) -> bytes:
    """A home-made log in names no reader knows: query_text, hits[{cid, s}] (lowest score first)."""
    golden = sample_golden().queries
    labelled = [i for q in golden for i in sorted(q.relevant)]
    rows = []
    for n, q in enumerate(golden):
        other = labelled[(7 * n + 3) % len(labelled)]  # a chunk of the corpus, mostly another question's
        ids = [other, *sorted(q.relevant)[:1]][: 1 + (n + shift) % 2]
        rows.append({"query_text": q.question, "hits": [{"cid": i, "s": r / 10} for r, i in enumerate(ids)]})
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


@pytest.fixture
def page(app_env):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.switch_page("pages/bring_your_system.py").run()
    no_exception(at)
    return at


def test_a_mapping_reads_a_refused_log_and_is_kept_for_the_same_shape(page, app_env):
    log = _odd_log()
    page.file_uploader(key="bring_files").set_value([("odd.jsonl", log, "application/json")]).run()
    no_exception(page)
    assert page.error and not page.success  # refused as it is
    digest = hashlib.sha256(log).hexdigest()[:12]
    assert "hits[].cid" in page.selectbox(key=f"bring_map_{digest}_ids").options
    for target, path in (("question", "query_text"), ("ids", "hits[].cid"), ("scores", "hits[].s")):
        page.selectbox(key=f"bring_map_{digest}_{target}").set_value(path)
    page.run()
    no_exception(page)
    preview = next(d.value for d in page.dataframe if "context_ids" in d.value.columns)
    assert preview["question"].iloc[0] == sample_golden().queries[0].question
    next(b for b in page.button if b.label == "Read with this mapping").click().run()
    page.run()
    no_exception(page)
    read = " ".join(s.value.replace("\\", "") for s in page.success)
    assert "odd.jsonl (mapped).jsonl: a RAG log" in read and not page.error
    page.text_input(key="bring_name").input("odd")
    next(b for b in page.button if b.label == "Bring in and evaluate").click().run()
    page.run()
    no_exception(page)
    cards = {m.label: m.value for m in page.metric if "@" in m.label}
    system, report = parse_upload(log, "odd.jsonl", mapping=SPEC)
    golden = sample_golden()
    res = evaluate(golden, system.rank(golden.questions(), 100).run)
    k = page.session_state["k"]
    assert cards[f"MRR@{k}"] == f"{res.mean('mrr', k):.3f}" != "0.000"
    kept = [json.loads(p.read_text()).get("column_maps", {}) for p in app_env.rglob("settings.json")]
    assert any(SPEC in maps.values() for maps in kept), kept
    # the next file of the same shape: read with the kept mapping, nothing to choose
    page.file_uploader(key="bring_files").set_value([("odd2.jsonl", _odd_log(1), "application/json")]).run()
    no_exception(page)
    read = " ".join(s.value.replace("\\", "") for s in page.success)
    assert "odd2.jsonl (mapped).jsonl: a RAG log" in read and not page.error


def test_in_class_mode_the_mapping_reads_in_a_worker(monkeypatch):
    """As every dropped file in class mode, a mapped file is read in a worker process with a memory limit."""
    import rag_metrics.config
    import rag_metrics.io.worker
    from rag_metrics.io.mapping import apply_mapping
    from ui.bring_mapping import limited

    calls = []  # the routing only: the worker itself is tested with rag_metrics.io.worker
    monkeypatch.setattr(rag_metrics.config, "class_mode_on", lambda: True)
    monkeypatch.setattr(rag_metrics.io.worker, "run_limited", lambda fn, *a, **kw: calls.append(fn) or fn(*a))
    got = limited(apply_mapping, _odd_log(), "odd.jsonl", SPEC, what="odd.jsonl")
    assert calls == [apply_mapping] and got == apply_mapping(_odd_log(), "odd.jsonl", SPEC)
