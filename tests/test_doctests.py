"""The docstring examples of ``rag_metrics`` run as doctests (library tier).

Only modules whose source shows an example (``>>>``) are imported, so the tier never imports what
a module without examples would pull in (torch, the model).  ``__main__`` is never imported.
"""
from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "rag_metrics"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _modules_with_examples() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "__main__.py" or ">>>" not in path.read_text(encoding="utf-8"):
            continue
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


MODULES = _modules_with_examples()


def test_the_package_has_examples() -> None:
    assert "rag_metrics.evaluation" in MODULES, MODULES


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples(module: str) -> None:
    mod = importlib.import_module(module)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report: list[str] = []
    for test in doctest.DocTestFinder().find(mod, module):
        runner.run(test, out=report.append)
    assert runner.failures == 0, f"{runner.failures} of {runner.tries} examples failed:\n" + "".join(report)
