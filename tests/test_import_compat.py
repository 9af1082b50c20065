"""Old module paths (before issue 25) still import, warn with the new path, and are the same module.

Written with rag_metrics/_compat.py by the codemod of issue 25 (in the history); remove both in release
_compat.GOES_IN.
"""
from __future__ import annotations

import importlib
import re
import subprocess
import sys

import pytest

import rag_metrics
from rag_metrics import _compat

OLD = sorted(_compat.MOVED)
PACKAGES_NOW = sorted(_compat._PACKAGES_NOW)


@pytest.mark.parametrize("old", OLD)
def test_old_path_is_the_new_module_with_a_warning(old):
    new = _compat.new_name(old)
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=re.escape(new)):
        mod = importlib.import_module(old)
    assert mod is importlib.import_module(new)
    assert sys.modules[old] is sys.modules[new]


def test_readme_import_keeps_working_and_keeps_the_verb(monkeypatch):
    sys.modules.pop("rag_metrics.evaluate", None)
    with pytest.warns(DeprecationWarning, match=re.escape("rag_metrics.evaluation")):
        from rag_metrics.evaluate import EvalOptions, evaluate
    from rag_metrics.evaluation import evaluate as new_evaluate
    from rag_metrics.metrics.options import EvalOptions as NewEvalOptions

    assert evaluate is new_evaluate and EvalOptions is NewEvalOptions
    assert rag_metrics.evaluate is new_evaluate  # the public verb, not the old module
    # one module object: patching through the old path patches the new one
    old = sys.modules["rag_metrics.evaluate"]
    monkeypatch.setattr(old, "CI_SEED", 12345)
    assert importlib.import_module("rag_metrics.evaluation").CI_SEED == 12345


@pytest.mark.parametrize("package", PACKAGES_NOW)
def test_a_module_that_became_a_package_forwards_its_names(package):
    target = importlib.import_module(_compat.MOVED_PACKAGES[package])
    name = next(n for n in getattr(target, "__all__", dir(target)) if not n.startswith("_"))
    pkg = importlib.import_module(package)
    with pytest.warns(DeprecationWarning, match=re.escape(target.__name__)):
        value = getattr(pkg, name)
    assert value is getattr(target, name)
    with pytest.raises(AttributeError):
        pkg.no_such_name  # noqa: B018


def test_public_api_resolves_and_import_stays_light():
    for name in rag_metrics.__all__:
        assert getattr(rag_metrics, name) is not None, name
    code = ("import sys, rag_metrics; "
            "print(','.join(m for m in ('pandas', 'streamlit', 'torch', 'scipy') if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == ""


def test_no_warning_from_the_new_paths():
    code = ("import warnings; warnings.simplefilter('error'); import rag_metrics, rag_metrics.evaluation, "
            "rag_metrics.io.trec, rag_metrics.workspace.store, rag_metrics.config, rag_metrics.cli")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
