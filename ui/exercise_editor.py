"""The code exercises' editor and browser runner: a Streamlit components-v2 component.

The component (``ui/exercise_editor_assets/component.js``) shows a CodeMirror 6 editor, a "Run checks"
button and a result line.  On "Run checks" it posts the code, the exercise's payload and the harness
to a sandboxed iframe (``sandbox="allow-scripts"``: an opaque origin; ``sandbox.html``) whose
Content-Security-Policy lets it fetch the Pyodide folder and nothing else; there a module Web
Worker started from a ``data:`` URL (``worker.js``) runs the harness's ``run_checks`` in Pyodide.  A
watchdog stops a run after the time limit.  What comes back (the harness's JSON string, capped,
and the code) reaches Python as the trigger value ``report``; :func:`on_report` puts it into
``st.session_state[REPORT]``, where the page picks it up and grades it (tests set that key
directly).  Student code never runs on the server.

While the student types, the editor sends the code as the trigger value ``draft`` (``{"doc", "code"}``),
debounced (:data:`DRAFT_MS` after the last key stroke, only when it changed, never over the code size
limit); :func:`on_draft` puts it into ``st.session_state[DRAFT]``, and the page keeps it in the student's
own space, so a reload opens the editor on what they typed.  What was typed within the debounce before the
page was left would be lost: every change is also kept in the browser's localStorage under :func:`keep_key`
(the seat's space and the exercise, hashed: another seat's key never opens it), and the editor opens on it
(and sends it as a draft) when it was typed on top of the copy the server sends.

The browser assets (Pyodide, the bundled editor) are installed by ``./lab`` from ``web/`` into
``static/vendor/`` and served by Streamlit's static serving at ``/app/static/vendor/``.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import streamlit as st

from rag_metrics.exercises.attempts import MAX_CODE_CHARS
from ui import session
from ui.keys import EX_DRAFT as DRAFT
from ui.keys import EX_EDITOR
from ui.keys import EX_REPORT as REPORT

__all__ = ["DRAFT", "DRAFT_MS", "REPORT", "LIMITS", "TIMEOUT_S", "asset_url", "assets_ready", "editor",
           "MAX_CODE_CHARS", "keep_key", "on_draft"]

_HERE = Path(__file__).resolve().parent
_ASSETS = _HERE / "exercise_editor_assets"
#: Where ``./lab`` puts the built browser assets (git-ignored).
VENDOR = _HERE.parent / "static" / "vendor"
#: The editor sends a draft this many milliseconds after the student's last change.
DRAFT_MS = 1500
#: The watchdog: a run of the checks is stopped after this many seconds (Pyodide's load not counted).
TIMEOUT_S = 5
#: The runner's limits: the watchdog (ms; :data:`TIMEOUT_S`), the largest result accepted from the sandbox (characters),
#: the interpreter's memory cap (bytes), and how long Pyodide may take to load before the page's own
#: watchdog gives up on the sandbox (ms).
LIMITS = {"timeout_ms": TIMEOUT_S * 1000, "max_result": 400_000, "max_memory": 512 * 1024 * 1024, "load_ms": 90_000,
          "max_code": MAX_CODE_CHARS, "draft_ms": DRAFT_MS}

_CSS = """
.ex-root { font-family: inherit; }
.ex-fallback { width: 100%; min-height: 14em; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 14px; }
.ex-bar { display: flex; align-items: center; gap: 0.8rem; margin-top: 0.5rem; flex-wrap: wrap; }
.ex-run { background: #2F6DB5; color: #fff; border: 0; border-radius: 0.5rem; padding: 0.45rem 1rem;
  font: inherit; font-weight: 600; cursor: pointer; }
.ex-run:disabled { opacity: 0.6; cursor: progress; }
.ex-run:focus-visible { outline: 3px solid #1F2933; outline-offset: 2px; }
.ex-status { font-weight: 600; }
.ex-status[data-kind="pass"] { color: #1b7a3a; }
.ex-status[data-kind="fail"], .ex-status[data-kind="error"], .ex-status[data-kind="stopped"] { color: #b3261e; }
"""


def assets_ready() -> bool:
    """Whether ``./lab`` has installed the browser assets (Pyodide and the editor bundle)."""
    return (VENDOR / "pyodide" / "pyodide.mjs").is_file() and (VENDOR / "editor.mjs").is_file()


def asset_url() -> str:
    """The URL path of ``static/vendor/`` (under ``server.baseUrlPath`` when one is set)."""
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}/app/static/vendor/" if base else "/app/static/vendor/"


@functools.cache
def _component() -> Any:
    js = (_ASSETS / "component.js").read_text(encoding="utf-8")
    sandbox = (_ASSETS / "sandbox.html").read_text(encoding="utf-8")
    worker = (_ASSETS / "worker.js").read_text(encoding="utf-8")
    js = js.replace("__SANDBOX_HTML__", json.dumps(sandbox), 1).replace("__WORKER_SOURCE__", json.dumps(worker), 1)
    return st.components.v2.component("rag_metrics_exercise_editor", js=js, css=_CSS)


def on_report(key: str) -> None:
    """The component's ``report`` trigger fired: keep it for the page (a dict, else nothing)."""
    value = session.value(key)
    report = value.get("report") if hasattr(value, "get") else None
    if isinstance(report, dict):
        session.set_value(REPORT, report)


def on_draft(key: str) -> None:
    """The component's ``draft`` trigger fired: keep it for the page (``{"doc": str, "code": str}``, else nothing;
    code over :data:`MAX_CODE_CHARS` characters is dropped here)."""
    value = session.value(key)
    draft = value.get("draft") if hasattr(value, "get") else None
    if isinstance(draft, dict) and isinstance(draft.get("doc"), str) and isinstance(draft.get("code"), str) \
            and len(draft["code"]) <= MAX_CODE_CHARS:
        session.set_value(DRAFT, {"doc": draft["doc"][:200], "code": draft["code"]})


def keep_key(space: str, name: str) -> str:
    """The localStorage key of the text typed in exercise ``name`` in the space ``space`` (a seat's): a hash, so
    neither the space's name nor another seat's key can be read from it.

    >>> keep_key("seat-a", "hit_rate_at_k") != keep_key("seat-b", "hit_rate_at_k")
    True
    """
    import hashlib

    digest = hashlib.sha256(f"rag-metrics exercise draft\0{space}\0{name}".encode()).hexdigest()[:32]
    return f"rag-metrics-draft:{digest}"


def editor(*, doc_id: str, code: str, payload: dict[str, Any], harness: str, labels: dict[str, str],
           verdict: dict[str, str] | None, key: str = EX_EDITOR, keep: str = "") -> None:
    """Mount the editor.  ``doc_id`` names what the editor holds (the exercise; a new id loads
    ``code``, the same id keeps what the student typed); ``verdict`` is the result line
    (``{"text", "kind"}``, kind ``pass``/``fail``/``error``/``stopped``); ``keep``: the localStorage key that
    keeps every change in the browser (:func:`keep_key`; ``""``: nothing kept, e.g. the teacher's re-run)."""
    payload = {k: v for k, v in payload.items() if k != "harness"}  # sent once, as ``harness``
    data = {"doc_id": doc_id, "code": code, "payload": json.dumps(payload), "harness": harness, "labels": labels,
            "verdict": verdict, "assets": asset_url(), "limits": dict(LIMITS), "keep": keep}
    _component()(key=key, data=data, on_report_change=functools.partial(on_report, key),
                 on_draft_change=functools.partial(on_draft, key))
