"""Old module paths (before the packages of issues 25 and 51) kept importable until release :data:`GOES_IN`.

Written by the codemods of issues 25 and 51 (issue 25's left the tree once it had run: it is in the history);
remove this module, its test and the finder's installation in ``rag_metrics/__init__.py`` in release
:data:`GOES_IN`.  ``import rag_metrics.evaluate`` warns
``DeprecationWarning`` naming the new path and gives the *same* module object as the new path (an
alias in ``sys.modules``), so monkeypatching through either name patches both.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType
from typing import Any

#: The release in which the old paths go.
GOES_IN = "0.3.0"

#: old dotted module name -> new one (a package entry covers its modules)
MOVED: dict[str, str] = {
    'rag_metrics.evaluate': 'rag_metrics.evaluation',
    'rag_metrics.explain': 'rag_metrics.metrics.explain',
    'rag_metrics.presets': 'rag_metrics.metrics.presets',
    'rag_metrics.golden': 'rag_metrics.io.golden',
    'rag_metrics.corpus': 'rag_metrics.io.corpus',
    'rag_metrics.files': 'rag_metrics.io.files',
    'rag_metrics.systems.logrows': 'rag_metrics.io.logrows',
    'rag_metrics.systems.traces': 'rag_metrics.io.traces',
    'rag_metrics.systems.raglog': 'rag_metrics.io.raglog',
    'rag_metrics.ab': 'rag_metrics.compare.ab',
    'rag_metrics.history': 'rag_metrics.compare.history',
    'rag_metrics.health': 'rag_metrics.insights.health',
    'rag_metrics.projection': 'rag_metrics.insights.projection',
    'rag_metrics.ragas': 'rag_metrics.insights.ragas',
    'rag_metrics.provenance': 'rag_metrics.insights.provenance',
    'rag_metrics.readouts': 'rag_metrics.insights.readouts',
    'rag_metrics.story': 'rag_metrics.report.story',
    'rag_metrics.chart_style': 'rag_metrics.report.chart_style',
    'rag_metrics.golden_edit': 'rag_metrics.authoring.golden_edit',
    'rag_metrics.golden_session': 'rag_metrics.authoring.golden_session',
    'rag_metrics.label_queue': 'rag_metrics.authoring.label_queue',
    'rag_metrics.label_suggest': 'rag_metrics.authoring.label_suggest',
    'rag_metrics.relevance_judge': 'rag_metrics.authoring.relevance_judge',
    'rag_metrics.agreement': 'rag_metrics.authoring.judge_agreement',
    'rag_metrics.drafting.calls': 'rag_metrics.authoring.judge_calls',
    'rag_metrics.drafting.parse': 'rag_metrics.authoring.judge_replies',
    'rag_metrics.drafting': 'rag_metrics.authoring.drafting',
    'rag_metrics.corpus_store': 'rag_metrics.workspace.corpora',
    'rag_metrics.server_config': 'rag_metrics.config',
    'rag_metrics.access': 'rag_metrics.server.access',
    'rag_metrics.seats': 'rag_metrics.server.seats',
    'rag_metrics.policy': 'rag_metrics.server.policy',
    'rag_metrics.ownership': 'rag_metrics.systems.ownership',
    'rag_metrics.outbound': 'rag_metrics.server.outbound',
    'rag_metrics.folders': 'rag_metrics.server.folders',
    'rag_metrics.connections': 'rag_metrics.server.connections',
    'rag_metrics.deploy': 'rag_metrics.server.deploy',
    'rag_metrics.systems.secrets': 'rag_metrics.server.secrets',
    'rag_metrics.sandbox': 'rag_metrics.lesson.sandbox',
    'rag_metrics.answers.evaluate': 'rag_metrics.answers.scoring',
    'rag_metrics.answers.registry': 'rag_metrics.metrics.answer_registry',
    'rag_metrics.evidence': 'rag_metrics.metrics.evidence',
    'rag_metrics.evidence_locate': 'rag_metrics.metrics.evidence_locate',
    'rag_metrics.evidence_proposals': 'rag_metrics.authoring.evidence_proposals',
    'rag_metrics.gate': 'rag_metrics.compare.gate',
    'rag_metrics.worker': 'rag_metrics.io.worker',
    'rag_metrics.budgets': 'rag_metrics.server.budgets',
    'rag_metrics.teacher_sessions': 'rag_metrics.server.teacher_sessions',
    'rag_metrics.budget_limits': 'rag_metrics.config',
}


def new_name(old: str) -> str | None:
    """The new dotted name of the old module ``old``, or None when it did not move."""
    parts = old.split(".")
    for i in range(len(parts), 1, -1):
        key = ".".join(parts[:i])
        if key in MOVED:
            return ".".join([MOVED[key], *parts[i:]])
    return None


def _warn(old: str, new: str, stacklevel: int = 3) -> None:
    warnings.warn(f"{old} moved to {new}; import it from there, the old path goes away in "
                  f"release {GOES_IN}", DeprecationWarning, stacklevel=stacklevel)


def forward(package: str, target: str, name: str) -> Any:
    """A name of the old module ``package`` (now a package) read from ``target``, with the warning."""
    if name.startswith("__"):
        raise AttributeError(name)
    module = importlib.import_module(target)
    try:
        value = getattr(module, name)
    except AttributeError:
        raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
    _warn(f"{package}.{name}", f"{target}.{name}", stacklevel=4)  # the line that read the name
    return value


class _Alias(importlib.abc.Loader):
    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        _warn(spec.name, self.new)
        return importlib.import_module(self.new)

    def exec_module(self, module: ModuleType) -> None:
        return None

    def get_code(self, fullname: str) -> Any:  # ``python -m old.path`` runs the new module
        _warn(fullname, self.new)
        return compile(f"import runpy; runpy.run_module({self.new!r}, run_name='__main__', alter_sys=True)",
                       f"<{fullname} moved to {self.new}>", "exec")


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        new = new_name(fullname)
        if new is None or fullname in _PACKAGES_NOW:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(new))


#: old module names that are packages now -> the module their old names live in (forwarded by the __init__)
MOVED_PACKAGES: dict[str, str] = {
    'rag_metrics.compare': 'rag_metrics.compare.paired',
    'rag_metrics.io': 'rag_metrics.io.trec',
    'rag_metrics.report': 'rag_metrics.report.html',
    'rag_metrics.workspace': 'rag_metrics.workspace.store',
}
_PACKAGES_NOW = frozenset(MOVED_PACKAGES)
_FINDER = _Finder()


def install() -> None:
    """First on ``sys.meta_path``: an old path must never find a stale copy (an editable install elsewhere)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
