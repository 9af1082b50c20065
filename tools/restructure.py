#!/usr/bin/env python3
"""Replayable codemod for issue 25: the flat ``rag_metrics/`` library regrouped into packages by concern.

Run from the repository root, on a clean work tree (it uses ``git mv``)::

    python tools/restructure.py            # apply (idempotent: a second run changes nothing)
    python tools/restructure.py --check    # exit 1 when something is still to do (no changes made)

What it does, in order (every step is a no-op when already done):

1. **Moves modules** (``MODULE_MOVES``, old dotted name -> new dotted name) with ``git mv`` and writes
   each new package's ``__init__.py`` (one docstring line says what lives there).
2. **Moves a few symbols** between modules (``SYMBOL_MOVES``) to break import cycles; each move is
   found by name with :mod:`ast` and fails loudly when the symbol is missing.
3. **Rewrites references** in every tracked text file (Python, Markdown, TOML, ``lab``, ``.ci/run``):
   ``import`` / ``from ... import`` statements (``from rag_metrics import evaluate`` becomes
   ``from rag_metrics import evaluation as evaluate``), dotted strings (``mock.patch`` targets,
   ``monkeypatch.setattr("rag_metrics.x.y", ...)``, ``-m rag_metrics.x``, ``:mod:`` references) and
   paths (``rag_metrics/x.py``).  Modules it does not know stay where they are; their references
   to moved modules are rewritten too.
4. **Compatibility**: ``rag_metrics/_compat.py`` (generated) installs an import hook, so every old
   module path still imports, warns ``DeprecationWarning`` naming the new path, and is the *same*
   module object (``sys.modules`` alias: monkeypatching through either name patches both).  Where an
   old module became a package (``io``, ``compare``, ``report``, ``workspace``) the package
   ``__init__`` forwards the old module's names lazily, with the same warning.
5. Writes the curated public API (``rag_metrics/__init__.py``, lazy), notes in the docstring of each
   module over 500 lines why it is longer, and runs ``ruff --fix`` (import order, unused imports
   left by the moves) on the files it changed.
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import re
import subprocess
import sys
from pathlib import Path

PKG = "rag_metrics"

# ---- 1. module moves: old dotted name -> new dotted name ------------------------------------------
# A key that is a package (drafting) moves with all its modules.
MODULE_MOVES: dict[str, str] = {
    # engine at the root: evaluate.py is renamed (``evaluate`` was the name of three modules)
    "rag_metrics.evaluate": "rag_metrics.evaluation",
    # metrics: options (split out of evaluate.py, see SYMBOL_MOVES), explain, presets
    "rag_metrics.explain": "rag_metrics.metrics.explain",
    "rag_metrics.presets": "rag_metrics.metrics.presets",
    # io: formats and user files
    "rag_metrics.io": "rag_metrics.io.trec",
    "rag_metrics.golden": "rag_metrics.io.golden",
    "rag_metrics.corpus": "rag_metrics.io.corpus",
    "rag_metrics.files": "rag_metrics.io.files",
    # the RAG log and trace export readers are file readers that the qrels reader (io.trec) and the one reader
    # (formats) use; in systems/ they made io <-> systems cycles (uploads still turns a log into a system)
    "rag_metrics.systems.logrows": "rag_metrics.io.logrows",
    "rag_metrics.systems.traces": "rag_metrics.io.traces",
    "rag_metrics.systems.raglog": "rag_metrics.io.raglog",
    # compare: paired tests, A/B, runs over time
    "rag_metrics.compare": "rag_metrics.compare.paired",
    "rag_metrics.ab": "rag_metrics.compare.ab",
    "rag_metrics.history": "rag_metrics.compare.history",
    # insights: what a golden set and a result say
    "rag_metrics.health": "rag_metrics.insights.health",
    "rag_metrics.projection": "rag_metrics.insights.projection",
    "rag_metrics.ragas": "rag_metrics.insights.ragas",
    "rag_metrics.provenance": "rag_metrics.insights.provenance",
    "rag_metrics.readouts": "rag_metrics.insights.readouts",
    # report: the HTML report, the presenter's story, chart conventions
    "rag_metrics.report": "rag_metrics.report.html",
    "rag_metrics.story": "rag_metrics.report.story",
    "rag_metrics.chart_style": "rag_metrics.report.chart_style",
    # authoring: golden editing, labelling, drafting, judge agreement
    "rag_metrics.golden_edit": "rag_metrics.authoring.golden_edit",
    "rag_metrics.golden_session": "rag_metrics.authoring.golden_session",
    "rag_metrics.label_queue": "rag_metrics.authoring.label_queue",
    "rag_metrics.label_suggest": "rag_metrics.authoring.label_suggest",
    "rag_metrics.relevance_judge": "rag_metrics.authoring.relevance_judge",
    "rag_metrics.agreement": "rag_metrics.authoring.judge_agreement",  # ``agreement`` was two modules
    # the judge endpoint's calls and replies serve drafting and the relevance judge alike (drafting <-> judge)
    "rag_metrics.drafting.calls": "rag_metrics.authoring.judge_calls",
    "rag_metrics.drafting.parse": "rag_metrics.authoring.judge_replies",
    "rag_metrics.drafting": "rag_metrics.authoring.drafting",
    # workspace: the user's files on disk
    "rag_metrics.workspace": "rag_metrics.workspace.store",
    "rag_metrics.corpus_store": "rag_metrics.workspace.corpora",
    # every setting (environment and the [lab] table), read once: at the root beside errors and types, because
    # io and workspace read their settings from it too (in server/ it would make io <-> server cycles)
    "rag_metrics.server_config": "rag_metrics.config",
    # server: the class server's rules
    "rag_metrics.access": "rag_metrics.server.access",
    "rag_metrics.seats": "rag_metrics.server.seats",
    "rag_metrics.policy": "rag_metrics.server.policy",
    # whose corpora and systems: reads the system stores, so it sits above server (systems -> server)
    "rag_metrics.ownership": "rag_metrics.systems.ownership",
    "rag_metrics.outbound": "rag_metrics.server.outbound",
    "rag_metrics.folders": "rag_metrics.server.folders",
    "rag_metrics.connections": "rag_metrics.server.connections",
    "rag_metrics.deploy": "rag_metrics.server.deploy",
    "rag_metrics.systems.secrets": "rag_metrics.server.secrets",
    # lesson
    "rag_metrics.sandbox": "rag_metrics.lesson.sandbox",
    # answers: ``evaluate`` was the name of three modules
    "rag_metrics.answers.evaluate": "rag_metrics.answers.scoring",
    # names and labels of the answer metrics, read by compare and report without the answers package
    "rag_metrics.answers.registry": "rag_metrics.metrics.answer_registry",
}

# One docstring line per package (written when the package's __init__ is created).
PACKAGE_DOCS: dict[str, str] = {
    "rag_metrics.io": "Formats and user files: TREC and BEIR, golden sets, corpora, RAG logs, traces, safe reads and "
    "atomic writes.",
    "rag_metrics.compare": "Comparing results: paired tests of two runs, A/B of two configurations, runs over time.",
    "rag_metrics.insights": "What a golden set and a result say: health, corpus map, RAGAS, provenance, readouts.",
    "rag_metrics.report": "Presenting results: the self-contained HTML report, the presenter's story, chart style.",
    "rag_metrics.authoring": "Writing golden sets: editing, labelling, label suggestions, drafting, judge agreement.",
    "rag_metrics.workspace": "The user's files on disk: golden sets (saves, undo, checks, archives) and corpora.",
    "rag_metrics.server": "The class server: access, seats, outbound, folders, secrets, connections, the deployment.",
}
PACKAGE_DOCS = {k: v for k, v in PACKAGE_DOCS.items() if v}

# Old modules whose name is now a package: the package's __init__ forwards the old names.
# (filled in below: every MODULE_MOVES key that is also a package afterwards)

# ---- 2. symbol moves that break import cycles ------------------------------------------------------
# (old module, names, new module, reimport into the old module?, docstring when the new module is new,
#  which importers are redirected to the new module: "all", or "package" = only the modules of the new module's
#  package, when the old module keeps the names as its public API)
# Names are given in their module *after* step 1.
SYMBOL_MOVES: list[tuple[str, list[str], str, bool, str, str]] = [
    # evaluation <-> metrics.registry (registry needs EvalOptions for its kernels' signature)
    ("rag_metrics.evaluation", ["EvalOptions", "_check_gains", "parse_gains"], "rag_metrics.metrics.options", True,
     "Evaluation options: :class:`EvalOptions` (the conventions, typed and validated on creation) and "
     "``--gains`` parsing.", "all"),
    # cli._common <-> cli._systems (_systems needs the messages and the progress counter)
    ("rag_metrics.cli._common", ["PROG", "stderr", "Progress", "counter_progress"], "rag_metrics.cli._output", True,
     "What the ``rag-metrics`` subcommands print: the program name, messages on stderr, progress.", "all"),
    # server.connections <-> systems.store <-> backends (building a named connection's system is the store's job)
    ("rag_metrics.server.connections", ["build_named"], "rag_metrics.systems.store", False, "", "all"),
    # answers.embed <-> answers.offline / answers.reference (writing the shipped vectors needs both judges)
    ("rag_metrics.answers.embed", ["ship_answer_embeddings"], "rag_metrics.answers.shipped", False,
     "The shipped vectors of the sample answers: every text the offline and reference judges embed.", "all"),
    # raglog <-> traces (a trace export is read into RAG-log rows; a RAG log may be a trace export); both were in
    # systems/ then (see MODULE_MOVES)
    ("rag_metrics.io.raglog",
     ["RAG_LOG_SUFFIXES", "MAX_RAG_LOG_BYTES", "MAX_REPORTED", "QUESTION_KEYS", "CONTEXT_KEYS", "CONTEXT_ID_KEYS",
      "ANSWER_KEYS", "GROUND_TRUTH_KEYS", "ID_KEYS", "_WRAPPER_KEYS", "_TEXT_KEYS", "_LIST_EXAMPLE", "RagLogRow",
      "RagLog", "_missing", "_first_key", "_text", "_parse_list_cell", "_string_list", "_Limiter", "_build",
      "_header_problem", "_WS", "_skip_ws", "_DEPTH_MSG", "_rows_jsonl", "_json_list_with_lines", "_columnar",
      "_rows_json", "_rows_csv", "_object_list", "_split_objects", "_OBJ_ID_KEYS"],
     "rag_metrics.io.logrows", True,
     "RAG-log rows: the row types and the tolerant JSON, JSONL and CSV row readers that RAG logs and trace "
     "exports share (the format itself is described in :mod:`rag_metrics.io.raglog`).", "package"),
    # budgets <-> config <-> workspace.store (config reads the [lab.budgets] table; the spending ledger lives in the
    # workspace folder): the table and its parser move below config, the ledger stays
    ("rag_metrics.budgets", ["_MAX", "Budgets", "parse_budgets"], "rag_metrics.budget_limits", True,
     "The budgets' table (:class:`Budgets`, ``[lab.budgets]``) and its parser: what the one configuration module "
     "reads; the limiter and the spending ledger are :mod:`rag_metrics.budgets`.", "all"),
    # ui.drafting <-> ui.labelling ("accept and label" opens the labelling queue; labelling shows drafts)
    ("ui.labelling", ["QUEUE", "queue"], "ui.label_session", True,
     "The labelling queue of each corpus, kept in the session: shared by the Label and the Draft views.", "all"),
    # retrieval (package) <-> retrieval.sample_index (the sample index builds its retriever)
    ("rag_metrics.retrieval", ["Progress", "Retriever", "_ENCODERS", "_ENCODERS_LOCK", "get_encoder", "make_retriever"],
     "rag_metrics.retrieval.factory", True,
     "The :class:`Retriever` protocol and its one factory: a kind name (``dense``, ``bm25``, ``hybrid``) to a "
     "retriever, and the encoders loaded once per process.", "package"),
]

# ---- 3. extra textual patches (strings the generic rewrite cannot read) ----------------------------
# (file, old, new): applied when ``old`` is there; an error when neither ``old`` nor ``new`` is.
TEXT_PATCHES: list[tuple[str, str, str]] = [
    # paths relative to rag_metrics/ in a grep-guard test
    ("tests/test_hostile_input.py", '{"files.py", ', '{"io/files.py", '),
    ("tests/test_hostile_input.py", '"retrieval/cache.py", "ragas.py",', '"retrieval/cache.py", "insights/ragas.py",'),
    ("tests/test_hostile_input.py", '"corpus_store.py", "answers/llm_cache.py"',
     '"workspace/corpora.py", "answers/llm_cache.py"'),
    # relative module references in the drafting package's docstring
    ("rag_metrics/authoring/drafting/__init__.py",
     "with a judge: tolerant reply parsing (:mod:`.parse`), cached text\ncalls (:mod:`.calls`), question drafting "
     "(:mod:`.questions`), the lab's badges (:mod:`.badges`)\nand",
     "with a judge (its cached calls: :mod:`rag_metrics.authoring.judge_calls`,\nits replies read: "
     ":mod:`rag_metrics.authoring.judge_replies`): question drafting (:mod:`.questions`), the lab's\nbadges "
     "(:mod:`.badges`) and"),
    # ui.drafting read the queue through the labelling module (attribute access: not an import to rewrite)
    ("ui/drafting.py", "        from ui import labelling\n\n        labelling.queue(corpus, session.golden)",
     "        from ui.label_session import queue\n\n        queue(corpus, session.golden)"),
    # the design page: EvalOptions moved out of evaluation.py
    ("docs/design.md", "`rag_metrics/evaluation.py` (`EvalOptions`)",
     "`rag_metrics/metrics/options.py` (`EvalOptions`)"),
    # relative module references in package docstrings
    ("rag_metrics/answers/__init__.py", ":mod:`.evaluate` (aggregation)", ":mod:`.scoring` (aggregation)"),
    ("rag_metrics/metrics/__init__.py",
     '"""Metric engine: judging (ids -> grades), kernels (every k at once) and the metric registry."""',
     '"""Metric engine: judging (ids -> grades), kernels (every k), registry, options, explain, presets."""'),
    # lines the longer names made too long (E501), wrapped
    ("tests/test_cli.py",
     'rag_metrics.io.golden, rag_metrics.compare.paired, "\n            "rag_metrics.cli,',
     'rag_metrics.io.golden, "\n            "rag_metrics.compare.paired, rag_metrics.cli,'),
    ("tests/test_seats.py",
     "(rag_metrics.server.access, rag_metrics.systems.ownership) and\ncopy-on-write",
     "(rag_metrics.server.access,\nrag_metrics.systems.ownership) and\ncopy-on-write"),
    ("ui/state.py", 'KEY_PRESET = "conventions_preset"   # the sidebar\'s one switch: trec_eval / as in the lesson '
     '(rag_metrics.metrics.presets)',
     'KEY_PRESET = "conventions_preset"   # the sidebar\'s one switch: trec_eval / as in the lesson (metrics.presets)'),
]

# ---- 5. modules over 500 lines: why (added to their docstring) -------------------------------------
LONG_NOTES: dict[str, str] = {
    "rag_metrics.answers.llm": "Over 500 lines: the judge's client, its retry and budget rules and the ragas "
    "prompt flow are one protocol with the endpoint.",
    "rag_metrics.server.outbound": "Over 500 lines: every rule about where the server may connect (hosts, "
    "resolved addresses, redirects, sizes) is kept in one place on purpose.",
    "rag_metrics.metrics.judge": "Over 500 lines: the one place where retrieved ids meet relevance labels; its "
    "conventions are read together.",
    "rag_metrics.evaluation": "Over 500 lines: the evaluation result and its readers (means, categories, CIs, "
    "failures) are one object.",
    "rag_metrics.io.traces": "Over 500 lines: one reader per trace tool (Phoenix, Langfuse, LangSmith) sharing "
    "the span walk and the refusal messages.",
    "rag_metrics.systems.uploads": "Over 500 lines: the uploaded systems' kinds (runs, RAG logs, traces) share one "
    "matching and provenance path.",
    # split since (issue 25, by job): workspace.store (layout, golden_store, history, checks, archive, spaces),
    # io.trec (trec_runs), report.html (content), evidence (evidence_locate), formats (io.containers, io.sniff,
    # io.llamaindex)
}
LONG_LIMIT = 500
WARNINGS: list[str] = []

TEXT_SUFFIXES = {".py", ".md", ".toml", ".cfg", ".ini", ".yml", ".yaml", ".sh", ".txt"}
TEXT_NAMES = {"lab", "run", ".importlinter"}
SKIP_PREFIXES = ("benchmarks/results/", "sample_corpus/docs/", "tools/restructure.py", "rag_metrics/_compat.py",
                 "tests/test_import_compat.py", "rag_metrics/__init__.py",
                 ".git/", "node_modules/", "rag_metrics/io/__init__.py", "rag_metrics/compare/__init__.py",
                 "rag_metrics/report/__init__.py", "rag_metrics/workspace/__init__.py")

DOTTED = re.compile(r"(?<![\w.])rag_metrics(?:\.[A-Za-z_]\w*)+")
PATH_PY = re.compile(r"(?<![\w/.])rag_metrics(?:/[A-Za-z_]\w*)+\.py\b")
PATH_DIR = re.compile(r"(?<![\w/.])rag_metrics(?:/[A-Za-z_]\w*)+/(?![\w.])")  # a package folder: rag_metrics/x/
FROM_IMPORT_TEXT = re.compile(
    r"^(?P<indent>[ \t>]*)from[ \t]+(?P<mod>rag_metrics[\w.]*)[ \t]+import[ \t]+"
    r"(?P<names>\([^)]*\)|[^\n#]*)", re.M)
#: a from-import in a doctest (``>>> from rag_metrics.x import y``), one line
DOCTEST_FROM = re.compile(
    r"^(?P<indent>[ \t]*>>> )from[ \t]+(?P<mod>rag_metrics[\w.]*)[ \t]+import[ \t]+(?P<names>[^\n#(]*)", re.M)


def run(cmd: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, check=check, text=True, capture_output=True)


def mod_path(dotted: str) -> Path:
    """File of a module (``a/b.py``) or package (``a/b/__init__.py``) that exists, or the .py path."""
    p = Path(*dotted.split("."))
    if (p / "__init__.py").exists():
        return p / "__init__.py"
    return p.with_suffix(".py")


def module_exists(dotted: str) -> bool:
    p = Path(*dotted.split("."))
    return (p / "__init__.py").exists() or p.with_suffix(".py").exists()


class Plan:
    """The mapping, with the lookups the rewriters need."""

    def __init__(self) -> None:
        self.moves = dict(MODULE_MOVES)
        self.new_modules = set(self.moves.values()) | set(PACKAGE_DOCS)
        for _, _, dst, _, _, _ in SYMBOL_MOVES:
            self.new_modules.add(dst)
        # symbol moves as dotted names: rag_metrics.evaluation.EvalOptions -> rag_metrics.metrics.options.EvalOptions
        self.symbols: dict[str, tuple[str, str]] = {}
        for src, names, dst, _, _, scope in SYMBOL_MOVES:
            for n in names:
                self.symbols[f"{src}.{n}"] = (f"{dst}.{n}", "all" if scope == "all" else dst.rpartition(".")[0])
        self.where: Path | None = None  # the file being rewritten (for "package" redirects)
        self.became_packages = {k for k in self.moves if k in PACKAGE_DOCS}

    def rewrite(self, dotted: str) -> str:
        """The new dotted name of ``dotted`` (a module, or a name inside one)."""
        parts = dotted.split(".")
        out = dotted
        for i in range(len(parts), 1, -1):
            key = ".".join(parts[:i])
            if key in self.moves:
                if key in self.became_packages and i < len(parts):
                    nxt = ".".join(parts[: i + 1])
                    if nxt in self.new_modules or module_exists(nxt):
                        break  # already a module of the new package
                out = ".".join([self.moves[key], *parts[i:]])
                break
            if key in self.new_modules and key != dotted:
                break  # inside a new module: nothing to do
        for old, (new, scope) in self.symbols.items():
            if out == old or out.startswith(old + "."):
                if scope != "all" and not (self.where and self.where.as_posix().startswith(scope.replace(".", "/"))):
                    break
                out = new + out[len(old):]
                break
        return out


# ---- step 1 --------------------------------------------------------------------------------------
def ensure_package(dotted: str, plan: Plan, changed: set[Path]) -> None:
    parts = dotted.split(".")
    for i in range(2, len(parts) + 1):
        pkg = ".".join(parts[:i])
        d = Path(*parts[:i])
        init = d / "__init__.py"
        if init.exists():
            continue
        d.mkdir(parents=True, exist_ok=True)
        init.write_text(package_init(pkg, plan), encoding="utf-8")
        run(["git", "add", str(init)])
        changed.add(init)


def package_init(pkg: str, plan: Plan) -> str:
    doc = PACKAGE_DOCS.get(pkg, f"The {pkg.rsplit('.', 1)[-1]} package.")
    if pkg not in plan.became_packages:
        return f'"""{doc}"""\n'
    target = plan.moves[pkg]
    note = _wrap(f"``{pkg}`` was a module until issue 25; its names now live in :mod:`{target}`.  Reading "
                 f"them here still works for one release and warns (``DeprecationWarning``) with the new path.")
    return f'''"""{doc}

{note}
"""
from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    from rag_metrics._compat import forward

    return forward(__name__, "{target}", name)
'''


def move_modules(plan: Plan, changed: set[Path]) -> list[str]:
    done = []
    # packages that take a moved module's old name first (io.py -> io/trec.py needs io/)
    for old, new in plan.moves.items():
        old_dir = Path(*old.split("."))
        old_file = old_dir.with_suffix(".py")
        new_parts = new.split(".")
        new_dir = Path(*new_parts)
        new_file = new_dir.with_suffix(".py")
        if old_dir.is_dir() and (old_dir / "__init__.py").exists() and old not in plan.became_packages:
            # a package moves whole
            if new_dir.exists():
                raise SystemExit(f"restructure: both {old_dir} and {new_dir} exist; merge them by hand")
            ensure_package(".".join(new_parts[:-1]), plan, changed)
            run(["git", "mv", str(old_dir), str(new_dir)])
            changed.update(new_dir.rglob("*.py"))
            done.append(f"{old_dir}/ -> {new_dir}/")
        elif old_file.exists():
            if new_file.exists():
                raise SystemExit(f"restructure: both {old_file} and {new_file} exist; merge them by hand")
            ensure_package(".".join(new_parts[:-1]), plan, changed)
            run(["git", "mv", str(old_file), str(new_file)])
            changed.add(new_file)
            done.append(f"{old_file} -> {new_file}")
        elif not (new_file.exists() or (new_dir / "__init__.py").exists()):
            raise SystemExit(f"restructure: neither {old_file} nor {new_file} exists")
    for pkg in PACKAGE_DOCS:
        ensure_package(pkg, plan, changed)
    return done


# ---- step 2 --------------------------------------------------------------------------------------
def _top_level_names(tree: ast.Module) -> dict[str, ast.stmt]:
    out: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
    return out


def _span(lines: list[str], node: ast.stmt) -> tuple[int, int]:
    """0-based [start, end) lines of ``node`` with its decorators and the ``#`` comments just above."""
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
    while start > 0 and lines[start - 1].lstrip().startswith("#") and not lines[start - 1].startswith("# ----"):
        start -= 1
    assert node.end_lineno is not None
    return start, node.end_lineno


def _all_names(tree: ast.Module) -> set[str]:
    """The strings listed in ``__all__`` (``=`` and ``+=``)."""
    out: set[str] = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AugAssign, ast.AnnAssign)) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            value = getattr(node, "value", None)
            for c in ast.walk(value) if value is not None else []:
                if isinstance(c, ast.Constant) and isinstance(c.value, str):
                    out.add(c.value)
    return out


def _annotations(tree: ast.AST) -> list[ast.expr]:
    """Every annotation in ``tree`` (arguments, returns, annotated assignments), and subscripted aliases."""
    out: list[ast.expr] = []
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = n.args
            out += [x.annotation for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]
                    if x is not None and x.annotation is not None]
            if n.returns is not None:
                out.append(n.returns)
        elif isinstance(n, ast.AnnAssign):
            out.append(n.annotation)
        elif isinstance(n, ast.Assign) and isinstance(n.value, ast.Subscript):
            out.append(n.value)  # Kernel = Callable[["Kernels", ...], ...]
    return out


def _bound(alias: ast.alias) -> str:
    return alias.asname or alias.name.split(".")[0]


def _imports_for(tree: ast.Module, used: set[str], skip: set[str], bound: set[str], plan: Plan) -> str:
    """Import lines for the names in ``used`` that ``tree``'s top-level imports (and ``if TYPE_CHECKING:``
    blocks) bind, leaving out names already ``bound`` in the target and imports of the ``skip`` modules."""
    plain: list[str] = []
    typing_only: list[str] = []

    def take(node: ast.stmt, out: list[str]) -> None:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "__future__" or plan.rewrite(node.module) in skip:
                return
            for a in node.names:
                if _bound(a) in used and _bound(a) not in bound:
                    out.append(f"from {node.module} import {_alias_text(a.name, a.asname)}")
        elif isinstance(node, ast.Import):
            for a in node.names:
                if _bound(a) in used and _bound(a) not in bound:
                    out.append(f"import {_alias_text(a.name, a.asname)}")

    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for sub in node.body:
                take(sub, typing_only)
        else:
            take(node, plain)
    text = "".join(line + "\n" for line in dict.fromkeys(plain))
    if typing_only:
        text += "from typing import TYPE_CHECKING\n" if "TYPE_CHECKING" not in bound else ""
        text += "\nif TYPE_CHECKING:\n" + "".join(f"    {line}\n" for line in dict.fromkeys(typing_only))
    return text


def _bound_names(tree: ast.Module) -> set[str]:
    out = set(_top_level_names(tree))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update(_bound(a) for a in node.names)
    return out


def move_symbols(plan: Plan, changed: set[Path], log: list[str], symbol_files: set[Path]) -> None:
    for src_mod, names, dst_mod, reimport, doc, _ in SYMBOL_MOVES:
        src_p, dst_p = mod_path(src_mod), mod_path(dst_mod)
        src = src_p.read_text(encoding="utf-8")
        tree = ast.parse(src)
        defined = _top_level_names(tree)
        dst_defined = _top_level_names(ast.parse(dst_p.read_text(encoding="utf-8"))) if dst_p.exists() else {}
        missing = [n for n in names if n not in defined]
        if missing and all(n in dst_defined for n in names):
            continue  # already moved
        if missing:
            raise SystemExit(f"restructure: {src_p} no longer defines {', '.join(missing)}; "
                             f"update SYMBOL_MOVES in tools/restructure.py")
        lines = src.splitlines(keepends=True)
        spans = sorted({_span(lines, defined[n]) for n in names})
        moved_src = "\n\n".join("".join(lines[a:b]).rstrip("\n") + "\n" for a, b in spans)
        # names of the old module the moved code still uses: imported from there (checked for cycles by lint)
        moved_trees = [ast.parse("".join(lines[a:b])) for a, b in spans]
        used = {n.id for t in moved_trees for n in ast.walk(t) if isinstance(n, ast.Name)}
        used |= {w for t in moved_trees for ann in _annotations(t) for n in ast.walk(ann)
                 if isinstance(n, ast.Constant) and isinstance(n.value, str)
                 for w in re.findall(r"[A-Za-z_]\w*", n.value)}  # names in string annotations
        moved_names = set(names)
        back = sorted(n for n in used if n in defined and n not in moved_names and not n.startswith("__"))
        if back and reimport:
            raise SystemExit(f"restructure: moving {names} out of {src_mod} needs {back} too (a cycle); "
                             f"add them to SYMBOL_MOVES")
        keep = lines[:]
        for a, b in reversed(spans):
            del keep[a:b]
            while a < len(keep) and a > 0 and keep[a].strip() == "" and keep[a - 1].strip() == "" \
                    and (a + 1 >= len(keep) or keep[a + 1].strip() == ""):
                del keep[a]
        new_src = "".join(keep)
        dst_bound = _bound_names(ast.parse(dst_p.read_text(encoding="utf-8"))) if dst_p.exists() else set()
        imports = _imports_for(tree, used, {dst_mod}, dst_bound, plan)
        if back:  # the moved code uses names of the module it leaves (which must not import it back)
            imports += f"from {src_mod} import {', '.join(back)}\n"
        if dst_p.exists():
            dst = dst_p.read_text(encoding="utf-8")
            dst_tree = ast.parse(dst)
            last_import = max((n.end_lineno or 0) for n in dst_tree.body
                              if isinstance(n, (ast.Import, ast.ImportFrom, ast.If)) and n.lineno < 200)
            dl = dst.splitlines(keepends=True)
            dst = "".join(dl[:last_import]) + imports + "".join(dl[last_import:])
            dst = dst.rstrip("\n") + "\n\n\n" + moved_src
        else:
            dst = f'"""{_wrap(doc)}"""\nfrom __future__ import annotations\n\n{imports}\n\n{moved_src}'
        if reimport:
            # after the old module's last top-level import
            ntree = ast.parse(new_src)
            last = max(n.end_lineno or 0 for n in ntree.body if isinstance(n, (ast.Import, ast.ImportFrom, ast.If))
                       and n.lineno < 200)
            nl = new_src.splitlines(keepends=True)
            still = {n.id for n in ast.walk(ntree) if isinstance(n, ast.Name)} | _all_names(ntree)
            re_names = ", ".join(n for n in names if n in still)
            if re_names:
                new_src = "".join(nl[:last]) + f"from {dst_mod} import {re_names}\n" + "".join(nl[last:])
        else:  # the names leave the old module's __all__ and join the new one's
            for n in names:
                new_src = re.sub(rf'(__all__[^\]]*?)"{n}",\s*', r"\1", new_src, count=1)
                new_src = re.sub(rf'(__all__[^\]]*?),\s*"{n}"', r"\1", new_src, count=1)
            if _all_names(ast.parse(dst)):
                dst = dst.rstrip("\n") + f"\n\n\n__all__ += [{', '.join(repr(n) for n in names)}]\n"
        src_p.write_text(new_src, encoding="utf-8")
        dst_p.parent.mkdir(parents=True, exist_ok=True)
        dst_p.write_text(dst, encoding="utf-8")
        run(["git", "add", str(dst_p)])
        changed.update({src_p, dst_p})
        symbol_files.update({src_p, dst_p})
        log.append(f"{', '.join(names)}: {src_mod} -> {dst_mod}")


# ---- step 3 --------------------------------------------------------------------------------------
def _alias_text(name: str, asname: str | None) -> str:
    return f"{name} as {asname}" if asname and asname != name else name


def rewrite_from(plan: Plan, module: str, names: list[tuple[str, str | None]]) -> list[tuple[str, list[str]]]:
    """``from module import names`` as [(module, ["a", "b as c"])], grouped in order of first use."""
    groups: dict[str, list[str]] = {}
    for name, asname in names:
        if name == "*":
            groups.setdefault(plan.rewrite(module), []).append("*")
            continue
        full = plan.rewrite(f"{module}.{name}")
        new_mod, _, new_name = full.rpartition(".")
        if new_name != name and not asname:
            asname = name
        groups.setdefault(new_mod, []).append(_alias_text(new_name, asname))
    return list(groups.items())


def rewrite_python(path: Path, text: str, plan: Plan) -> str:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        WARNINGS.append(f"{path}: not valid Python; only its dotted names and paths were rewritten")
        return rewrite_text(text, plan, DOCTEST_FROM, public=False)
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for ln in lines:
        offsets.append(offsets[-1] + len(ln))
    edits: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                (node.module == PKG or node.module.startswith(PKG + ".")):
            groups = rewrite_from(plan, node.module, [(a.name, a.asname) for a in node.names])
            old_names = [_alias_text(a.name, a.asname) for a in node.names]
            if groups == [(node.module, old_names)]:
                continue
            indent = " " * node.col_offset
            stmts = [f"from {m} import {', '.join(ns)}" for m, ns in groups]
            assert node.end_lineno is not None and node.end_col_offset is not None
            tail = lines[node.end_lineno - 1][node.end_col_offset:].rstrip("\n")
            comment = tail if tail.lstrip().startswith("#") else ""
            new = (comment + "\n" + indent).join(stmts)
        elif isinstance(node, ast.Import) and any(a.name.startswith(PKG + ".") for a in node.names):
            parts = [_alias_text(plan.rewrite(a.name), a.asname) for a in node.names]
            new = "import " + ", ".join(parts)
            if parts == [_alias_text(a.name, a.asname) for a in node.names]:
                continue
        else:
            continue
        assert node.end_lineno is not None and node.end_col_offset is not None
        start = offsets[node.lineno - 1] + node.col_offset
        end = offsets[node.end_lineno - 1] + node.end_col_offset
        edits.append((start, end, new))
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return rewrite_text(text, plan, DOCTEST_FROM, public=False)  # doctests, then dotted names and paths


def rewrite_text(text: str, plan: Plan, pattern: re.Pattern[str] = FROM_IMPORT_TEXT, public: bool = True) -> str:
    """Markdown, shell and TOML: ``from rag_metrics.x import ...`` lines, then dotted names and paths."""
    def from_sub(m: re.Match[str]) -> str:
        raw = m.group("names")
        body = raw.strip()
        paren = body.startswith("(")
        inner = body.strip("()")
        items = [i.strip() for i in inner.replace("\n", " ").split(",") if i.strip()]
        names = []
        for it in items:
            bits = it.split()
            if len(bits) == 3 and bits[1] == "as":
                names.append((bits[0], bits[2]))
            elif len(bits) == 1 and re.fullmatch(r"\w+|\*", bits[0]):
                names.append((bits[0], None))
            else:
                return m.group(0)  # not an import we can read (prose): leave it
        if public and all(a is None and n in PUBLIC_API for n, a in names):  # docs show the public API
            return f"{m.group('indent')}from {PKG} import {', '.join(n for n, _ in names)}"
        groups = rewrite_from(plan, m.group("mod"), names)
        old = [_alias_text(n, a) for n, a in names]
        if groups == [(m.group("mod"), old)]:
            return m.group(0)
        indent = m.group("indent")
        trail = raw[len(raw.rstrip()):] if not paren else ""
        return "\n".join(f"{indent}from {mod} import {', '.join(ns)}" for mod, ns in groups) + trail

    text = pattern.sub(from_sub, text)
    return rewrite_dotted(text, plan)


def rewrite_dotted(text: str, plan: Plan) -> str:
    def dotted_sub(m: re.Match[str]) -> str:
        after = text[m.end(): m.end() + 12]
        if re.match(r"[ \t]+import\b", after):
            return m.group(0)  # the module of a from-import: rewritten with its names
        return plan.rewrite(m.group(0))

    def path_sub(m: re.Match[str]) -> str:
        dotted = m.group(0)[:-3].replace("/", ".")
        new = plan.rewrite(dotted)
        if new == dotted:
            return m.group(0)
        if Path(*new.split(".")).is_dir():
            return new.replace(".", "/") + "/__init__.py"
        return new.replace(".", "/") + ".py"

    def dir_sub(m: re.Match[str]) -> str:
        dotted = m.group(0).rstrip("/").replace("/", ".")
        if dotted in plan.moves and dotted not in plan.became_packages:  # a package that moved whole
            return plan.moves[dotted].replace(".", "/") + "/"
        return m.group(0)

    text = DOTTED.sub(dotted_sub, text)
    text = PATH_PY.sub(path_sub, text)
    text = PATH_DIR.sub(dir_sub, text)
    return text


def tracked_text_files() -> list[Path]:
    out = []
    files = run(["git", "ls-files", "--cached", "--others", "--exclude-standard"]).stdout.splitlines()
    for f in files:
        if f.startswith(SKIP_PREFIXES):
            continue
        p = Path(f)
        if (p.suffix in TEXT_SUFFIXES or p.name in TEXT_NAMES) and p.is_file():
            out.append(p)
    return out


def rewrite_all(plan: Plan, changed: set[Path]) -> None:
    for p in tracked_text_files():
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if "rag_metrics" not in text:
            continue
        plan.where = p
        new = rewrite_python(p, text, plan) if p.suffix == ".py" else rewrite_text(text, plan, public=p.suffix == ".md")
        if new != text:
            p.write_text(new, encoding="utf-8")
            changed.add(p)
    for f, old, new in TEXT_PATCHES:
        p = Path(f)
        text = p.read_text(encoding="utf-8") if p.exists() else ""
        if old in text:
            p.write_text(text.replace(old, new), encoding="utf-8")
            changed.add(p)
        elif new not in text:
            WARNINGS.append(f"{f}: a text patch did not apply (the file changed); do by hand: {old!r} -> {new!r}")


# ---- step 4 --------------------------------------------------------------------------------------
COMPAT = '''"""Old module paths (before the packages of issue 25) kept importable for one release.

Generated by ``tools/restructure.py``: do not edit by hand.  ``import rag_metrics.evaluate`` warns
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

#: old dotted module name -> new one (a package entry covers its modules)
MOVED: dict[str, str] = {
%(moved)s
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
    warnings.warn(f"{old} moved to {new} (issue 25); import it from there, the old path goes away in the "
                  f"next release", DeprecationWarning, stacklevel=stacklevel)


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
%(moved_packages)s
}
_PACKAGES_NOW = frozenset(MOVED_PACKAGES)
_FINDER = _Finder()


def install() -> None:
    """First on ``sys.meta_path``: an old path must never find a stale copy (an editable install elsewhere)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
'''


def ruff_canonical(text: str, folder: Path) -> str:
    """``text`` as ``ruff check --fix`` (import order) leaves it, so a second run compares equal."""
    tmp = folder / "_restructure_tidy.py"
    tmp.write_text(text, encoding="utf-8")
    try:
        run([sys.executable, "-m", "ruff", "check", "--quiet", "--fix", "--select", "I001", str(tmp)], check=False)
        return tmp.read_text(encoding="utf-8")
    finally:
        tmp.unlink()


def write_compat(plan: Plan, changed: set[Path]) -> None:
    moved = "\n".join(f"    {k!r}: {v!r}," for k, v in plan.moves.items() if k not in plan.became_packages)
    pk = "\n".join(f"    {k!r}: {plan.moves[k]!r}," for k in sorted(plan.became_packages))
    text = ruff_canonical(COMPAT % {"moved": moved, "moved_packages": pk}, Path(PKG))
    p = Path(PKG, "_compat.py")
    if not p.exists() or p.read_text(encoding="utf-8") != text:
        p.write_text(text, encoding="utf-8")
        run(["git", "add", str(p)])
        changed.add(p)


COMPAT_TEST = """\"\"\"Old module paths (before issue 25) still import, warn with the new path, and are the same module.

Generated by tools/restructure.py (with rag_metrics/_compat.py); remove both when the old paths go.
\"\"\"
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
"""


def write_compat_test(changed: set[Path]) -> None:
    p = Path("tests", "test_import_compat.py")
    text = ruff_canonical(COMPAT_TEST, Path("tests"))
    if not p.exists() or p.read_text(encoding="utf-8") != text:
        p.write_text(text, encoding="utf-8")
        run(["git", "add", str(p)])
        changed.add(p)


# ---- step 5 --------------------------------------------------------------------------------------
#: The public API: name -> module it lives in (after the moves), or ``module:attribute`` for another name.
#: No public name is a subpackage's name (``compare``, ``report``, ``io``): ``from rag_metrics import compare``
#: keeps giving the package.
PUBLIC_API: dict[str, str] = {
    # data types and errors (eager: light)
    "Chunk": "rag_metrics.types", "Corpus": "rag_metrics.types", "Document": "rag_metrics.types",
    "GoldenQuery": "rag_metrics.types", "GoldenSet": "rag_metrics.types", "Run": "rag_metrics.types",
    "OUT_OF_SCOPE": "rag_metrics.types",
    "InputError": "rag_metrics.errors", "Problem": "rag_metrics.errors", "ValidationReport": "rag_metrics.errors",
    # evaluate
    "evaluate": "rag_metrics.evaluation", "EvaluationResult": "rag_metrics.evaluation",
    "EvalOptions": "rag_metrics.metrics.options", "bootstrap_ci": "rag_metrics.evaluation",
    "METRICS": "rag_metrics.metrics.registry", "parse_metric": "rag_metrics.metrics.registry",
    "explain_ranking": "rag_metrics.metrics.explain",
    # load and save
    "load_qrels": "rag_metrics.io.trec", "load_run": "rag_metrics.io.trec", "load_beir": "rag_metrics.io.trec",
    "write_trec_run": "rag_metrics.io.trec", "validate_run": "rag_metrics.io.trec",
    "load_golden": "rag_metrics.io.golden", "save_golden": "rag_metrics.io.golden",
    "validate_golden": "rag_metrics.io.golden", "load_corpus": "rag_metrics.io.corpus",
    # compare
    "compare_results": "rag_metrics.compare.paired:compare", "paired_tests": "rag_metrics.compare.paired",
    # retrieve
    "chunk_corpus": "rag_metrics.retrieval.chunking", "make_retriever": "rag_metrics.retrieval.factory",
    # report
    "build_report": "rag_metrics.report.html",
}
EAGER = {"rag_metrics.types", "rag_metrics.errors"}

INIT = """\"\"\"rag_metrics: exact, trec_eval-compatible retrieval metrics for RAG systems.

The public API is what this module exports (``__all__``): the data types, :func:`evaluate` with
its options, the loaders, the paired comparison, retrieval and the report.  Everything else lives
in packages by concern: ``metrics`` (judge, kernels, registry, options, explain, presets), ``io``,
``compare``, ``insights``, ``report``, ``authoring``, ``workspace``, ``server``, ``retrieval``,
``systems``, ``answers``, ``lesson``, ``cli``.

``import rag_metrics`` is light: it never imports streamlit, torch, sentence-transformers or faiss;
the verbs are imported on first use.
\"\"\"
from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

from rag_metrics import _compat
%(eager)s

if TYPE_CHECKING:
%(lazy_tc)s

__version__ = "0.1.0"

#: public name -> (module, attribute), imported on first use
_LAZY: dict[str, tuple[str, str]] = {
%(lazy)s
}

__all__ = [
%(all)s
]


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'rag_metrics' has no attribute {name!r}")
    value = getattr(importlib.import_module(where[0]), where[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


class _Package(ModuleType):
    \"\"\"Keeps a public verb when an old module of the same name is imported (``rag_metrics.evaluate``).\"\"\"

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _LAZY and isinstance(value, ModuleType) and value.__name__ != f"{__name__}.{name}":
            return  # the import system names the old path's module here; the verb stays
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
_compat.install()
"""


def public_init() -> str:
    by_mod: dict[str, list[str]] = {}
    lazy = []
    for name, where in PUBLIC_API.items():
        mod, _, attr = where.partition(":")
        attr = attr or name
        by_mod.setdefault(mod, []).append(_alias_text(attr, name))
        if mod not in EAGER:
            lazy.append(f"    {name!r}: ({mod!r}, {attr!r}),")
    eager = "\n".join(f"from {m} import {', '.join(sorted(ns))}" for m, ns in sorted(by_mod.items()) if m in EAGER)
    lazy_tc = "\n".join(f"    from {m} import {', '.join(sorted(ns))}" for m, ns in sorted(by_mod.items())
                        if m not in EAGER)
    rows, row = [], "   "
    for n in PUBLIC_API:
        item = f" {n!r},"
        if len(row) + len(item) > 110:
            rows.append(row)
            row = "   "
        row += item
    rows.append(row)
    return INIT % {"eager": eager, "lazy_tc": lazy_tc, "lazy": "\n".join(lazy), "all": "\n".join(rows)}


#: sha256 (first 16 hex digits) of rag_metrics/__init__.py as main had it when this script was written
ORIGINAL_INIT = "739d81014ca26e9a"


def write_init(changed: set[Path]) -> None:
    p = Path(PKG, "__init__.py")
    text = ruff_canonical(public_init(), Path(PKG))
    old = p.read_text(encoding="utf-8")
    if old != text and hashlib.sha256(old.encode()).hexdigest()[:16] != ORIGINAL_INIT:
        extra = sorted(_all_names(ast.parse(old)) - set(PUBLIC_API))
        WARNINGS.append(f"rag_metrics/__init__.py had changed since this script was written; it is replaced by the "
                        f"curated API: add to PUBLIC_API what it should keep (names not in it: {extra or 'none'}); "
                        f"the old file is in git (git show HEAD:rag_metrics/__init__.py)")
    if old != text:
        p.write_text(text, encoding="utf-8")
        changed.add(p)


def add_long_notes(changed: set[Path]) -> list[str]:
    report = []
    for p in sorted(Path(PKG).rglob("*.py")):
        n = len(p.read_text(encoding="utf-8").splitlines())
        if n <= LONG_LIMIT:
            continue
        dotted = ".".join(p.with_suffix("").parts)
        dotted = dotted.removesuffix(".__init__")
        note = LONG_NOTES.get(dotted)
        text = p.read_text(encoding="utf-8")
        tree = ast.parse(text)
        doc = ast.get_docstring(tree, clean=False)
        if doc and "Over 500 lines" in doc:
            report.append(f"{p} ({n} lines): noted")
            continue
        if note is None:
            report.append(f"{p} ({n} lines): NO NOTE (add one to LONG_NOTES)")
            continue
        node = tree.body[0]
        assert isinstance(node, ast.Expr) and node.end_lineno is not None
        lines = text.splitlines(keepends=True)
        first_blank = next((i for i in range(node.lineno - 1, node.end_lineno) if lines[i].strip() == ""), None)
        wrapped = _wrap(note)
        if first_blank is None:  # a one-paragraph docstring: the note goes before its closing quotes
            last = node.end_lineno - 1
            body = lines[last].rstrip("\n")
            q = body.rfind('"""')
            lines[last] = body[:q].rstrip() + "\n\n" + wrapped + '\n"""' + body[q + 3:] + "\n"
        else:
            lines.insert(first_blank + 1, wrapped + "\n\n")
        p.write_text("".join(lines), encoding="utf-8")
        changed.add(p)
        report.append(f"{p} ({n} lines): note added")
    return report


def _wrap(text: str, width: int = 100) -> str:
    out, line = [], ""
    for w in text.split():
        if line and len(line) + 1 + len(w) > width:
            out.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    out.append(line)
    return "\n".join(out)


def tidy_imports(files: set[Path]) -> None:
    """Drop the imports a symbol move left unused (ruff, also in ``__init__`` files), then empty
    ``if TYPE_CHECKING:`` blocks."""
    py = sorted(str(p) for p in files)
    if not py:
        return
    # ruff does not remove unused imports from an __init__.py: it tidies a copy under another name
    copies = {f: f.with_name("_restructure_tidy.py") for f in files if f.name == "__init__.py"}
    for f, c in copies.items():
        c.write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    py = [str(copies.get(f, f)) for f in sorted(files)]
    ruff = [sys.executable, "-m", "ruff", "check", "--quiet", "--fix", "--unsafe-fixes", "--select", "F401", *py]
    run(ruff, check=False)
    for f in [copies.get(f, f) for f in files]:
        text = f.read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)
        for node in reversed(ast.parse(text).body):  # `if TYPE_CHECKING: pass [else: pass]` left by ruff
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING" \
                    and all(isinstance(b, ast.Pass) for b in node.body + node.orelse):
                del lines[node.lineno - 1: node.end_lineno]
        new = "".join(lines)
        if new != text:
            f.write_text(new, encoding="utf-8")
    run(ruff, check=False)
    for f, c in copies.items():
        f.write_text(c.read_text(encoding="utf-8"), encoding="utf-8")
        c.unlink()


def _first_line(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return " ".join(doc.split("\n\n")[0].split())


def layout_lines(width: int = 118) -> list[str]:
    """The library's layout, one line per root module and per package (from their docstrings)."""
    def line(indent: int, name: str, text: str) -> str:
        head = f"{' ' * indent}{name} ".ljust(20)
        if len(head) + len(text) > width:
            text = text[: width - len(head) - 3]
            if text.count("`") % 2:  # never cut a reference in two (mkdocs --strict checks the names)
                text = re.sub(r":\w+:$", "", text[: text.rfind("`")])
            text = text.rstrip(" ,;:(") + "..."
        return head + text

    out = [line(0, "rag_metrics/", "the library: never imports streamlit, ui or pages (.importlinter, ./lab lint)")]
    root = Path(PKG)
    for f in sorted(root.glob("*.py")):
        if f.name == "__init__.py":
            out.append(line(2, f.name, "the public API (__all__): the types, evaluate and its options, the loaders, "
                                       "compare_results, make_retriever, build_report"))
        elif f.name != "__main__.py":
            out.append(line(2, f.name, _first_line(f)))

    def walk(d: Path, indent: int) -> None:
        for sub in sorted(x for x in d.iterdir() if (x / "__init__.py").exists()):
            mods = " ".join(sorted(m.stem for m in sub.glob("*.py") if m.name != "__init__.py"))
            out.append(line(indent, sub.name + "/", _first_line(sub / "__init__.py")))
            out.append(line(indent, "", f"({mods})"))
            walk(sub, indent + 2)
    walk(root, 2)
    return out


def write_layout(changed: set[Path]) -> None:
    """The library part of the layout block of docs/design.md, when the page has one."""
    p = Path("docs", "design.md")
    if not p.exists():
        return
    lines = p.read_text(encoding="utf-8").splitlines(keepends=True)
    try:
        sec = next(i for i, x in enumerate(lines) if x.startswith("## The layout"))
        start = next(i for i in range(sec, len(lines)) if lines[i].startswith("rag_metrics/"))
        end = next(i for i in range(start + 1, len(lines)) if lines[i][:1] not in (" ", ""))
    except StopIteration:
        WARNINGS.append("docs/design.md has no layout block starting with `rag_metrics/`; paste "
                        "`python tools/restructure.py --layout` into it")
        return
    new = lines[:start] + [x + "\n" for x in layout_lines()] + lines[end:]
    if new != lines:
        p.write_text("".join(new), encoding="utf-8")
        changed.add(p)


def ruff_fix(changed: set[Path]) -> None:
    py = sorted(str(p) for p in changed if p.suffix == ".py" and p.exists())
    if not py:
        return
    ruff = [sys.executable, "-m", "ruff"]
    run([*ruff, "check", "--fix", "--select", "I001,F401", "--quiet", *py], check=False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="report what is still to do; change nothing")
    ap.add_argument("--layout", action="store_true", help="print the library's layout, one line per package")
    args = ap.parse_args()
    if args.layout:
        print("\n".join(layout_lines()))
        return 0
    if not (Path(PKG, "__init__.py").exists() and Path("lab").exists()):
        print("restructure: run me from the repository root", file=sys.stderr)
        return 2
    plan = Plan()
    if args.check:
        todo = [o for o in plan.moves if (Path(*o.split(".")).with_suffix(".py").exists()
                                          or (Path(*o.split(".")) / "__init__.py").exists()
                                          and o not in plan.became_packages)]
        print("\n".join(todo) or "nothing to do")
        return 1 if todo else 0
    changed: set[Path] = set()
    try:
        return apply(plan, changed)
    except SystemExit:
        print("restructure: stopped half way; undo with `git reset --hard && git clean -fd` (commit your work "
              "first), fix the table named above, and run again", file=sys.stderr)
        raise


def apply(plan: Plan, changed: set[Path]) -> int:
    moved = move_modules(plan, changed)
    log: list[str] = []
    symbol_files: set[Path] = set()
    move_symbols(plan, changed, log, symbol_files)
    tidy_imports(symbol_files)
    rewrite_all(plan, changed)
    write_compat(plan, changed)
    write_init(changed)
    write_compat_test(changed)
    ruff_fix(changed)
    longs = add_long_notes(changed)
    write_layout(changed)
    for line in moved + log:
        print("moved:", line)
    for line in longs:
        print("long:", line)
    for w in WARNINGS:
        print("WARNING:", w)
    run(["git", "add", "-A", PKG], check=False)
    print(f"restructure: {len(moved)} modules moved, {len(log)} symbol moves, {len(changed)} files changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
