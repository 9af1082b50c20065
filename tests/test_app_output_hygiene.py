"""Output hygiene (issue 27): a system's title (its URL or file name) is user text and renders
literally, never as markdown (a markdown image in a URL rendered on every student's page)."""
from __future__ import annotations

from rag_metrics.systems.store import SystemStore
from tests.test_app_systems import _open, _sample_chunks, _trec_run


def test_a_markdown_image_in_a_systems_name_renders_as_text(app_env):
    store = SystemStore.for_corpus("sample_corpus")
    spec, rep = store.add_upload("mine", "![x](evil.png).trec", _trec_run().encode(),
                                 _sample_chunks())
    assert spec is not None, rep.lines()
    at = _open(app_env)
    labels = [e.label for e in at.expander if "mine" in e.label]
    assert labels and all("![x](" not in label for label in labels), labels
    assert any(r"\!\[x\]\(evil" in label for label in labels), labels
