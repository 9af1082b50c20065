"""The view in the URL: page, K, corpus and system (older links: retriever) round-trip through
st.query_params; bad values are ignored with a warning, never a traceback."""
from __future__ import annotations

from pathlib import Path

import pytest

from app_helpers import library_result
from rag_metrics.metrics.registry import DEFAULT_METRICS, METRICS

ROOT = Path(__file__).resolve().parents[1]


def open_link(params: dict):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def cards(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric if "@" in m.label}


def expected_cards(kind: str, k: int) -> dict[str, str]:
    r = library_result(kind)
    return {f"{METRICS[m].label}@{k}": f"{r.mean(m, k):.3f}" for m in DEFAULT_METRICS}


def params(at) -> dict[str, str]:
    return {k: v for k, v in dict(at.query_params).items() if k in ("page", "k", "system")}


def test_link_sets_k_and_retriever(app_env):
    at = open_link({"k": "3", "retriever": "bm25"})
    assert at.slider(key="k").value == 3
    assert at.selectbox(key="system").value == "bm25"
    assert cards(at) == expected_cards("bm25", 3)
    assert not any("Ignored" in w.value for w in at.warning)
    assert params(at) == {"page": "dashboard", "k": "3", "system": "bm25"}
    assert "retriever" not in dict(at.query_params)   # an older link's retriever= becomes system=
    assert dict(at.query_params)["corpus"] in ("sample_corpus", ["sample_corpus"])


def test_link_opens_a_page(app_env):
    at = open_link({"page": "health", "k": "7"})
    assert at.title[0].value == "Golden-set health"
    assert at.slider(key="k").value == 7
    assert params(at) == {"page": "health", "k": "7", "system": "dense"}


@pytest.mark.parametrize("bad,expect", [
    ({"k": "abc"}, "k='abc'"),
    ({"k": "0"}, "k='0'"),
    ({"k": "1000"}, "k='1000'"),
    ({"k": "2.5"}, "k='2.5'"),
    ({"retriever": "foo"}, "retriever='foo'"),
    ({"system": "foo"}, "system='foo'"),
    ({"corpus": "elsewhere"}, "corpus='elsewhere'"),
    ({"page": "nope"}, "page='nope'"),
    ({"retriever": "<script>alert(1)</script>"}, "retriever="),
    ({"retriever": "[click](http://example.com)"}, "retriever='[click](http://example.com)'"),
])
def test_invalid_params_are_ignored_with_a_warning(app_env, bad, expect):
    at = open_link(bad)
    warnings = [w.value.replace("\\", "") for w in at.warning]  # values are markdown-escaped
    assert any(expect in w and "Ignored" in w for w in warnings), warnings
    assert not at.error
    # the defaults are used, and the URL now says so
    assert at.slider(key="k").value == 5
    assert at.selectbox(key="system").value == "dense"
    assert at.title[0].value == "Dashboard"
    assert params(at) == {"page": "dashboard", "k": "5", "system": "dense"}
    assert cards(at) == expected_cards("dense", 5)
    # shown once, not on every rerun
    at.run()
    assert not any("Ignored" in w.value for w in at.warning)


def test_mixed_valid_and_invalid(app_env):
    at = open_link({"k": "abc", "retriever": "hybrid"})
    assert at.selectbox(key="system").value == "hybrid"
    assert at.slider(key="k").value == 5
    assert len([w for w in at.warning if "Ignored" in w.value]) == 1


def test_state_is_written_back_and_round_trips(app_env):
    at = open_link({})
    assert params(at) == {"page": "dashboard", "k": "5", "system": "dense"}
    at.slider(key="k").set_value(8).run()
    at.selectbox(key="system").set_value("bm25").run()
    at.switch_page("pages/ragas.py").run()
    assert not at.exception
    link = params(at)
    assert link == {"page": "ragas", "k": "8", "system": "bm25"}
    shown = [(m.label, m.value) for m in at.metric]
    # a new session opened with that link reproduces the view
    again = open_link(link)
    assert again.title[0].value == "RAGAS context metrics"
    assert again.slider(key="k").value == 8 and again.selectbox(key="system").value == "bm25"
    assert [(m.label, m.value) for m in again.metric] == shown


def test_url_is_read_only_on_the_first_run(app_env):
    at = open_link({"k": "4"})
    at.slider(key="k").set_value(9).run()
    assert at.slider(key="k").value == 9          # the old k=4 in the URL does not fight the slider
    assert params(at)["k"] == "9"


def test_link_values_are_shown_as_text(app_env):
    at = open_link({"retriever": "[click](http://example.com) **bold**"})
    w = next(w.value for w in at.warning if "Ignored" in w.value)
    assert "\\[click\\]\\(http" in w and "\\*\\*bold\\*\\*" in w   # escaped: no link, no bold
