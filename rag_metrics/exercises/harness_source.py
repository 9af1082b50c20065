"""The exercise harness: runs a student's function on the checks of one exercise.

This file is **sent as source text** (:data:`rag_metrics.exercises.HARNESS`) and runs in Pyodide in
the student's browser, and in a separate ``python -I`` process for ``rag-metrics exercise check``.
It uses the Python standard library only (no NumPy, nothing of ``rag_metrics``), and never sees an
expected value: it reports what the student's function returned, and the server compares.

Entry point: ``run_checks(student_code, payload_json) -> str`` (JSON)::

    {"ok": bool,
     "error": null | {"kind": "syntax" | "exception" | "missing", "line": int | null, "message": str},
     "results": {check_id: {"value": <json>} | {"error": {"kind", "line", "message"}}},
     "stdout": str}

A check's ``args`` (JSON) are either a data check ``{"k": K, "dataset": [...], "rankings": {...}}``,
called as ``function(golden_dataset, retriever, K)``, or a direct call ``{"function": NAME,
"params": [...]}``, called as ``NAME(*params)``.
"""
import builtins
import io
import json
import math
import sys
import traceback

FILENAME = "<your code>"
#: The command-line argument that makes this file, run as a script, read a request on stdin (the CLI's
#: process).  Pyodide runs the source as ``__main__`` too, without it, so it only defines functions there.
STDIN_FLAG = "--rag-metrics-harness-stdin"
MAX_OUTPUT_CHARS = 10000
MAX_VALUE_ITEMS = 2000
MAX_STRING_CHARS = 2000
MAX_DEPTH = 8


class _CappedOutput(io.TextIOBase):
    """A stdout that keeps the first ``limit`` characters and drops the rest."""

    def __init__(self, limit):
        self.limit = limit
        self.parts = []
        self.size = 0
        self.dropped = False

    def writable(self):
        return True

    def write(self, s):
        s = str(s)
        room = self.limit - self.size
        if room > 0:
            self.parts.append(s[:room])
            self.size += min(len(s), room)
        if len(s) > room:
            self.dropped = True
        return len(s)

    def text(self):
        out = "".join(self.parts)
        return out + ("\n[output cut]" if self.dropped else "")


class Retriever:
    """The current system's rankings: ``retrieve(question, top_k)`` returns ``[{'id', 'score'}]``, best first."""

    def __init__(self, rankings):
        self._rankings = rankings

    def retrieve(self, question, top_k=5, **kwargs):
        if "k" in kwargs:
            top_k = kwargs["k"]
        ranked = self._rankings.get(question, [])
        try:
            n = int(top_k)
        except (TypeError, ValueError):
            n = len(ranked)
        return [{"id": i, "score": s} for i, s in ranked[:max(n, 0)]]


def _line_of(exc):
    """The line of the student's code where ``exc`` happened (the innermost frame in it), else None."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == FILENAME:
            line = frame.lineno
    return line


def _error(kind, line, message):
    return {"kind": kind, "line": line, "message": str(message)[:MAX_STRING_CHARS]}


def _exception(exc):
    text = str(exc)
    name = type(exc).__name__
    return _error("exception", _line_of(exc), name + (": " + text if text else ""))


def _jsonable(value, depth=0):
    """The value as JSON-safe data (tuples and sets as lists, NaN and infinities as strings), capped."""
    if depth > MAX_DEPTH:
        return "<too deep>"
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2 ** 53 else float(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, str):
        return value[:MAX_STRING_CHARS]
    if isinstance(value, dict):
        out = {}
        for n, (k, v) in enumerate(value.items()):
            if n >= MAX_VALUE_ITEMS:
                break
            out[str(k)[:MAX_STRING_CHARS]] = _jsonable(v, depth + 1)
        return out
    if isinstance(value, (list, tuple, set, frozenset)):
        items = list(value)
        if isinstance(value, (set, frozenset)):
            try:
                items = sorted(items)
            except TypeError:
                pass
        return [_jsonable(v, depth + 1) for v in items[:MAX_VALUE_ITEMS]]
    try:  # numbers of other types (Fraction, Decimal, a NumPy scalar in a local run)
        f = float(value)
    except (TypeError, ValueError, OverflowError):
        return "<" + type(value).__name__ + ">"
    return f if math.isfinite(f) else repr(f)


def _dataset(items):
    """A fresh copy of the golden questions (the student's code may change them)."""
    return [dict(item, relevant_chunk_ids=list(item.get("relevant_chunk_ids", []))) for item in items]


def _rankings(rankings):
    return {q: [(str(p[0]), float(p[1])) for p in ranked] for q, ranked in rankings.items()}


#: What the sandbox takes away before a student's code runs in Pyodide: the bridges from Python to the
#: browser's JavaScript (``js`` is the worker's global scope; through it, or any JavaScript object, code could
#: make new WebAssembly memories or JavaScript buffers past the interpreter's memory cap).
SANDBOX_BLOCKED = ("js", "pyodide_js", "pyodide", "_pyodide", "_pyodide_core", "micropip")
SANDBOX_MESSAGE = ("{name} is not available in the exercise sandbox: your code runs in Python only, without the "
                   "browser's JavaScript (write the function with the standard library)")


_SLOW_BUILTINS = ("_zoneinfo", "_elementtree")


def _blocked(name):
    return str(name).split(".")[0] in SANDBOX_BLOCKED


class _SandboxGuard:
    """First on ``sys.meta_path``: an import of a blocked module fails with a plain message."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if _blocked(name):
            raise ImportError(SANDBOX_MESSAGE.format(name=name), name=name)
        return None


def _refuse_builtin(spec, *_args):
    raise ImportError(SANDBOX_MESSAGE.format(name=getattr(spec, "name", "that module")))


def _lock_down():
    """In Pyodide only (``sys.platform == "emscripten"``), once per interpreter, before any student code:
    every loaded module of the JavaScript bridge (``js``, ``pyodide_js``, ``pyodide`` and ``pyodide.ffi``,
    ``_pyodide``, ``_pyodide_core``) is emptied (its functions keep no way to JavaScript through their
    globals) and dropped from ``sys.modules``; the importer that makes ``js`` is removed; importing any of
    them again fails (a guard first on ``sys.meta_path``); and no built-in module can be created any more
    (every other one is loaded first, but time zones' and XML trees' C modules), so the bridge's C module
    cannot be loaded again around the guard.  The worker also unregisters the JavaScript modules and takes
    away WebAssembly's constructors."""
    if sys.platform != "emscripten" or getattr(builtins, "_rag_metrics_locked", False):
        return
    import _imp
    import gc
    import importlib.machinery

    for name in sys.builtin_module_names:  # loaded now: none is created after the lock (but two slow ones
        # no exercise needs: time zones, and XML trees' C speed-up, which falls back to Python)
        if not _blocked(name) and name not in sys.modules and name not in _SLOW_BUILTINS:
            try:
                __import__(name)
            except Exception:  # noqa: BLE001 - one that cannot load stays unloaded
                pass
    for name in [n for n in sys.modules if _blocked(n)]:
        module = sys.modules.pop(name, None)
        try:
            module.__dict__.clear()
        except Exception:  # noqa: BLE001
            pass

    def bridge(hook):  # an importer of the bridge's own (the one that makes ``js``, Pyodide's package finders)
        owner = hook if isinstance(hook, type) else type(hook)
        return _blocked(getattr(owner, "__module__", "") or "")

    sys.meta_path[:] = [f for f in sys.meta_path if not bridge(f)]
    sys.path_hooks[:] = [h for h in sys.path_hooks if not bridge(h)]
    sys.meta_path.insert(0, _SandboxGuard)
    sys.path_importer_cache.clear()
    _imp.create_builtin = _refuse_builtin
    importlib.machinery.BuiltinImporter.create_module = classmethod(_refuse_builtin)
    for name in [n for n in sys.modules if n.startswith("asyncio")]:  # its loop is Pyodide's (JavaScript timers)
        sys.modules.pop(name, None)
    gc.collect()
    _scrub_js_references(gc)
    builtins._rag_metrics_locked = True


def _scrub_js_references(gc):
    """Drop the references the bridge's own live objects (an import loader, a dropped module's
    helpers) still hold to JavaScript objects: their attributes are emptied."""
    for obj in gc.get_objects():
        try:
            if _blocked(type(obj).__module__):
                obj.__dict__.clear()
        except Exception:  # noqa: BLE001 - no __dict__ (or a read-only one): nothing to empty
            pass
    gc.collect()


def run_checks(student_code, payload_json):
    """Compile ``student_code``, run each check of ``payload_json``; the report as a JSON string."""
    _lock_down()
    payload = json.loads(payload_json)
    function = str(payload.get("function", ""))
    limits = payload.get("limits") or {}
    out = _CappedOutput(int(limits.get("max_output_chars", MAX_OUTPUT_CHARS)))
    report: dict = {"ok": False, "error": None, "results": {}, "stdout": ""}
    old_out, old_err = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = out
    try:
        _run(student_code, payload, function, report)
    finally:
        sys.stdout, sys.stderr = old_out, old_err
        report["stdout"] = out.text()
    return json.dumps(report, allow_nan=False)


def _run(student_code, payload, function, report):
    try:
        code = compile(student_code, FILENAME, "exec")
    except SyntaxError as e:
        report["error"] = _error("syntax", e.lineno, e.msg or "invalid syntax")
        return
    namespace: dict = {"__name__": "__main__", "__builtins__": builtins}
    try:
        exec(code, namespace)
    except (Exception, SystemExit) as e:  # noqa: BLE001 - anything the student's module does
        report["error"] = _exception(e)
        return
    names = {function} | {str(c.get("args", {}).get("function", function)) for c in payload.get("checks", [])}
    missing = sorted(n for n in names if not callable(namespace.get(n)))
    if missing:
        report["error"] = _error("missing", None, "no function named " + ", ".join(missing))
        return
    for check in payload.get("checks", []):
        cid = str(check.get("id"))
        args = check.get("args") or {}
        fn = namespace[str(args.get("function", function))]
        try:
            if "params" in args:
                value = fn(*args["params"])
            else:
                value = fn(_dataset(args["dataset"]), Retriever(_rankings(args["rankings"])), int(args["k"]))
            report["results"][cid] = {"value": _jsonable(value)}
        except (Exception, SystemExit) as e:  # noqa: BLE001
            report["results"][cid] = {"error": _exception(e)}
    report["ok"] = True


if __name__ == "__main__" and STDIN_FLAG in sys.argv:  # the CLI's process: {"code", "payload"} on stdin
    _request = json.loads(sys.stdin.read())
    sys.stdout.write(run_checks(_request["code"], _request["payload"]))
