"""Uploaded corpora kept in the workspace: round trip, size cap, damaged files, and the app reading
them back after a restart (the sidebar lists them; a link with ?corpus= opens one)."""
from __future__ import annotations

from pathlib import Path

import pytest

from app_helpers import no_exception
from rag_metrics.errors import InputError
from rag_metrics.types import Corpus, Document, GoldenQuery, GoldenSet
from rag_metrics.workspace import corpora as corpus_store
from rag_metrics.workspace.corpora import load_corpus, remove_corpus, save_corpus, stored_corpora

ROOT = Path(__file__).resolve().parents[1]

DOCS = Corpus((Document("a", "Alpha text about keys.\nSecond line.", "A", "a.md"),
               Document("b", "Beta: ünïcode ✓ and \"quotes\".", "", "")), name="mine")
SEED = GoldenSet((GoldenQuery("q1", "what about keys?", "facts", {"a": 2}, ""),))


def test_round_trip_with_seed_golden(tmp_path):
    folder = save_corpus("my docs", DOCS, level="document", label="Upload: my docs", seed_golden=SEED, root=tmp_path)
    assert not list(folder.glob("*.pkl")) and not list(folder.glob("*.tmp"))
    corpus, info, seed = load_corpus("my docs", root=tmp_path)
    assert [(d.id, d.text, d.title, d.source) for d in corpus] == [(d.id, d.text, d.title, d.source) for d in DOCS]
    assert corpus.fingerprint() == DOCS.fingerprint()
    assert (info.name, info.label, info.level) == ("my docs", "Upload: my docs", "document")
    assert seed is not None and seed.get("q1").relevant == {"a": 2}
    assert [c.name for c in stored_corpora(tmp_path)] == ["my docs"]
    assert remove_corpus("my docs", root=tmp_path)
    assert stored_corpora(tmp_path) == []


def test_size_cap_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(corpus_store, "MAX_CORPUS_BYTES", 50)
    with pytest.raises(InputError, match="keeps corpora up to 50 bytes"):
        save_corpus("big", DOCS, root=tmp_path)
    assert stored_corpora(tmp_path) == []


def test_damaged_documents_name_the_line(tmp_path):
    folder = save_corpus("x", DOCS, root=tmp_path)
    (docs,) = folder.glob("documents*.jsonl")   # named by its content's hash (meta.json names it)
    docs.write_text('{"id": "a", "text": "ok"}\nnot json\n')
    with pytest.raises(InputError, match=r"documents-[0-9a-f]{16}\.jsonl:2"):
        load_corpus("x", root=tmp_path)
    (folder / "meta.json").write_text("{broken")
    assert stored_corpora(tmp_path) == []     # a damaged folder reads as absent


def test_kept_corpus_comes_back_after_a_restart(app_env):
    from streamlit.testing.v1 import AppTest

    save_corpus("my docs", DOCS, label="Upload: my docs", seed_golden=SEED, root=app_env)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params["corpus"] = "my docs"
    at.run()
    no_exception(at)
    box = at.selectbox(key="corpus")
    assert box.value == "my docs" and "Upload: my docs" in box.options
    assert not any("Ignored" in w.value for w in at.warning)
    q = at.query_params["corpus"]
    assert (q[-1] if isinstance(q, list) else q) == "my docs"
