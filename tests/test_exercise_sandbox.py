"""The exercise sandbox locks Python out of JavaScript before a student's code runs (issue 50): in Pyodide
(``sys.platform == "emscripten"``) the harness drops the bridge's modules and refuses to import them again.
Here the harness runs in a separate CPython process told it is Pyodide (the browser tier runs the real one:
tests/test_browser_exercises.py)."""
from __future__ import annotations

import json
import subprocess
import sys

from rag_metrics.exercises import HARNESS

PROBE = '''
import sys, types
sys.platform = "emscripten"
sys.modules["js"] = types.ModuleType("js")          # what Pyodide has loaded before any student code
sys.modules["pyodide"] = types.ModuleType("pyodide")
sys.modules["pyodide.ffi"] = types.ModuleType("pyodide.ffi")
sys.modules["js"].secret = "the worker's global scope"
kept = sys.modules["js"]
code = """
import sys
def f():
    out = []
    for name in ("js", "pyodide.ffi", "pyodide_js", "_pyodide_core"):
        try:
            __import__(name)
            out.append(name + ":imported")
        except ImportError as e:
            out.append(name + ":" + str(e))
    out.append("loaded:" + ",".join(n for n in sys.modules if n.split(".")[0] in ("js", "pyodide")))
    import math, statistics
    out.append("stdlib:" + str(statistics.mean([1, 3])))
    return out
"""
payload = {"function": "f", "checks": [{"id": "c", "args": {"function": "f", "params": []}}]}
print(run_checks(code, __import__("json").dumps(payload)))
print(kept.__dict__.get("secret", "emptied"))
'''


def test_the_bridge_to_javascript_is_gone_before_student_code_runs():
    out = subprocess.run([sys.executable, "-I", "-c", HARNESS + PROBE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    report, kept = out.stdout.strip().splitlines()
    value = json.loads(report)["results"]["c"]["value"]
    assert [v.split(":")[0] for v in value[:4]] == ["js", "pyodide.ffi", "pyodide_js", "_pyodide_core"], value
    assert all("is not available in the exercise sandbox" in v for v in value[:4]), value  # not imported
    assert value[4] == "loaded:" and value[5] == "stdlib:2", value
    assert kept == "emptied"  # functions of the bridge keep no way to JavaScript through their globals
