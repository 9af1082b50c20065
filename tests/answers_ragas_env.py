"""A throwaway virtual environment with ragas 0.4.3 for the equality test (never the project's venv).

ragas 0.4.3 imports only with ``langchain-community<0.4``.  The environment lives in
``$RAG_METRICS_RAGAS_VENV`` or ``~/.cache/rag-metrics/ragas-venv`` and is built on first use with
``python -m venv`` + ``pip install ragas==0.4.3 'langchain-community<0.4'`` (needs PyPI access).

When it cannot be built the test is skipped, except under ``CI=true``, where it fails.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

RAGAS_PINS = ("ragas==0.4.3", "langchain-community<0.4")


def venv_dir() -> Path:
    env = os.environ.get("RAG_METRICS_RAGAS_VENV")
    return Path(env) if env else Path.home() / ".cache" / "rag-metrics" / "ragas-venv"


def _python(d: Path) -> Path:
    return d / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _works(py: Path) -> bool:
    if not py.exists():
        return False
    r = subprocess.run([str(py), "-c", "import ragas, sys; sys.exit(0 if ragas.__version__ == '0.4.3' else 1)"],
                       capture_output=True, timeout=300, check=False)
    return r.returncode == 0


def ragas_python() -> Path:
    """Python of the ragas environment, building it if needed; skip (fail on CI) when impossible."""
    d = venv_dir()
    py = _python(d)
    if _works(py):
        return py
    log = []
    try:
        d.parent.mkdir(parents=True, exist_ok=True)
        for cmd in ([sys.executable, "-m", "venv", "--clear", str(d)],
                    [str(py), "-m", "pip", "install", "-q", *RAGAS_PINS]):
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
            log.append(f"$ {' '.join(cmd)}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
            if r.returncode != 0:
                break
    except (OSError, subprocess.SubprocessError) as err:
        log.append(repr(err))
    if _works(py):
        return py
    msg = "cannot build the ragas 0.4.3 environment:\n" + "\n".join(log)
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(msg)
    pytest.skip(msg)
    raise AssertionError("unreachable")
