"""The codemod of issue 51 (the codebase, step two): a library root of about ten modules.

Replayable and idempotent: run it on any tree of this project (``python tools/restructure_step2.py``), then
``./lab lint`` and ``./lab test``.  ``--now`` does what can be done while other work is under way: it leaves
the files with uncommitted changes, and the modules of :data:`LATER_MOVES`, for the run without it.  It

1. moves the modules of :data:`MOVES` with ``git mv`` (evidence judging next to the metric engine's judging,
   proposals to authoring, the gate to compare, the class's budgets and teacher sessions to server, the
   parsing worker to io);
2. folds :data:`FOLDS` into their new home (``budget_limits`` into ``config``: the one module that reads the
   operator's settings now holds the budgets' table too);
3. rewrites every import and dotted reference in the project's Python, Markdown and configuration files
   (``from rag_metrics import gate`` becomes ``from rag_metrics.compare import gate``);
4. keeps each old path importable for one release, with a warning, through ``rag_metrics._compat.MOVED``.

It is removed from the tree once it has run (it stays in the history), as the codemod of issue 25 was.
"""
from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

#: old dotted module -> new dotted module (a file moved whole)
MOVES: dict[str, str] = {
    "rag_metrics.evidence": "rag_metrics.metrics.evidence",
    "rag_metrics.evidence_locate": "rag_metrics.metrics.evidence_locate",
    "rag_metrics.evidence_proposals": "rag_metrics.authoring.evidence_proposals",
    "rag_metrics.gate": "rag_metrics.compare.gate",
    "rag_metrics.budgets": "rag_metrics.server.budgets",
    "rag_metrics.teacher_sessions": "rag_metrics.server.teacher_sessions",
    "rag_metrics.worker": "rag_metrics.io.worker",
}
#: old dotted module -> the module its code is appended to (the old file goes)
FOLDS: dict[str, str] = {
    "rag_metrics.budget_limits": "rag_metrics.config",
}
#: files the rewrite reads (tracked by git)
SUFFIXES = (".py", ".md", ".yml", ".yaml", ".toml", ".cfg", ".ini", ".importlinter")
#: never rewritten: the table of old paths itself
KEEP = ("rag_metrics/_compat.py", "tools/restructure_step2.py")


def _path(dotted: str) -> Path:
    return ROOT / (dotted.replace(".", "/") + ".py")


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout


def _tracked() -> list[Path]:
    names = _git("ls-files").splitlines()
    return [ROOT / n for n in names if n.endswith(SUFFIXES) and n not in KEEP and (ROOT / n).is_file()]


def _rename_all(text: str, table: dict[str, str]) -> str:
    """Every dotted reference and every ``from PARENT import NAME`` of a moved module, rewritten."""
    for old, new in table.items():
        text = re.sub(rf"(?<![\w.]){re.escape(old)}(?![\w])", new, text)
        old_parent, old_name = old.rsplit(".", 1)
        new_parent, new_name = new.rsplit(".", 1)
        if old_name != new_name:
            continue

        def split(m: re.Match[str], old_parent: str = old_parent, old_name: str = old_name,
                  new_parent: str = new_parent) -> str:
            indent, names = m.group(1), [n.strip() for n in m.group(2).split(",") if n.strip()]
            if not any(n.split(" as ")[0].strip() == old_name for n in names):
                return m.group(0)
            moved = [n for n in names if n.split(" as ")[0].strip() == old_name]
            rest = [n for n in names if n not in moved]
            lines = [f"{indent}from {new_parent} import {', '.join(moved)}"]
            if rest:
                lines.insert(0, f"{indent}from {old_parent} import {', '.join(rest)}")
            return "\n".join(lines)

        text = re.sub(rf"^([ \t]*)from {re.escape(old_parent)} import ([\w ,]+)$", split, text, flags=re.M)
    return text


def _fold(old: str, new: str) -> None:
    """Put module ``old``'s code into ``new`` and remove ``old``: its imports where ``new`` imported it, its
    definitions before ``new``'s first definition (``new`` may use them at import time)."""
    src, dst = _path(old), _path(new)
    if not src.exists():
        return
    body = src.read_text()
    doc = re.match(r'\s*(\"\"\"[\s\S]*?\"\"\")\n', body)
    body = body[doc.end():] if doc else body
    lines = [ln for ln in body.splitlines() if ln != "from __future__ import annotations"]
    imports = [ln for ln in lines if ln.startswith(("from ", "import ")) and "import" in ln]
    code = "\n".join(ln for ln in lines if ln not in imports).strip("\n")
    text = dst.read_text()
    self_import = re.compile(rf"^from {re.escape(new)} import [^\n]+\n", re.M)
    m = self_import.search(text)
    own = []
    for ln in imports:   # an import of a module ``new`` already imports from joins that line
        fm = re.fullmatch(r"from ([\w.]+) import ([\w, ]+)", ln)
        there = re.search(rf"^from {re.escape(fm.group(1))} import ([\w, ]+)$", text, flags=re.M) if fm else None
        if fm and there:
            names = sorted({n.strip() for n in (there.group(1) + "," + fm.group(2)).split(",") if n.strip()})
            text = text[:there.start()] + f"from {fm.group(1)} import {', '.join(names)}" + text[there.end():]
        elif ln not in text:
            own.append(ln)
    m = self_import.search(text)
    text = self_import.sub("", text, count=1) if m else text
    if m:
        text = text[:m.start()] + "".join(ln + "\n" for ln in own) + text[m.start():]
    first_def = re.search(r"^(class |def |@)", text, flags=re.M)
    at = first_def.start() if first_def else len(text)
    block = f"# ---- the budgets' table (folded in from {old}, issue 51) " + "-" * 30 + "\n" + code + "\n\n\n"
    dst.write_text(text[:at] + block + text[at:])
    _git("rm", "-q", "-f", str(src.relative_to(ROOT)))


def _compat(table: dict[str, str]) -> None:
    path = ROOT / "rag_metrics" / "_compat.py"
    text = path.read_text()
    add = "".join(f"    {old!r}: {new!r},\n" for old, new in table.items() if f"{old!r}:" not in text)
    if add:
        text = text.replace("\n}\n", "\n" + add.rstrip("\n") + "\n}\n", 1)
        path.write_text(text)


#: pages whose body moves into a ui feature module of the same name, which it then calls (``render()``)
THIN_PAGES: tuple[str, ...] = (
    "bring_your_system", "compare", "corpus_explorer", "corpus_map", "dashboard", "failures", "golden_set", "health",
    "presenter", "ragas", "history", "tune", "systems", "learn", "answers", "class_progress")


def _string_lines(source: str) -> set[int]:
    """Line numbers (1-based) inside a multi-line string after its first line: never re-indented."""
    inside: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
            inside.update(range(tok.start[0] + 1, tok.end[0] + 1))
    return inside


def _without_prefix(source: str, alias: str) -> str:
    """``source`` with every ``alias.`` (a NAME token followed by ``.``) removed: the body of a page that called
    its feature module through ``alias`` now runs inside that module."""
    toks = list(tokenize.generate_tokens(io.StringIO(source).readline))
    cuts = [(t.start, nxt.end) for t, nxt in zip(toks, toks[1:])
            if t.type == tokenize.NAME and t.string == alias and nxt.string == "."
            and not (toks[toks.index(t) - 1].string == "." if toks.index(t) else False)]
    lines = source.splitlines(keepends=True)
    for (r0, c0), (r1, c1) in reversed(cuts):
        assert r0 == r1
        lines[r0 - 1] = lines[r0 - 1][:c0] + lines[r0 - 1][c1:]
    return "".join(lines)


def _render_binds(fn: ast.FunctionDef) -> set[str]:
    """Names ``render`` binds in its own scope (not in the functions it defines): they are local to it."""
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(ch.name)
            elif isinstance(ch, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                pass
            else:
                if isinstance(ch, ast.Name) and isinstance(ch.ctx, ast.Store):
                    out.add(ch.id)
                if isinstance(ch, (ast.Import, ast.ImportFrom)):
                    out.update((a.asname or a.name).split(".")[0] for a in ch.names)
                visit(ch)

    visit(fn)
    return out


def _shadowed(module_source: str) -> set[str]:
    """Names of the module that ``render`` also binds: in a page's body they were one global, in a function
    they become local to ``render`` everywhere in it (a use before the binding would fail)."""
    tree = ast.parse(module_source)
    names: set[str] = set()
    for n in tree.body:
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name != "render":
            names.add(n.name)
        elif isinstance(n, ast.Assign):
            names.update(t.id for t in n.targets if isinstance(t, ast.Name))
    render = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "render"), None)
    return _render_binds(render) & names if render else set()


def thin_page(name: str) -> bool:
    """Move ``pages/<name>.py``'s body into ``ui/<name>.py`` as ``render()`` (appended when the module exists);
    the page keeps its docstring and calls it.  Imports go with the body; the lines of multi-line strings keep
    their text.  A page whose body would shadow a name of its module is left for a person (it says so)."""
    page, feature = ROOT / "pages" / f"{name}.py", ROOT / "ui" / f"{name}.py"
    if not page.exists() or (feature.exists() and re.search(r"^def render\(", feature.read_text(), re.M)):
        return False
    source = page.read_text()
    tree = ast.parse(source)
    doc = ast.get_docstring(tree, clean=False)
    lines = source.splitlines()
    imports, first_body, alias = [], None, None
    for node in tree.body[1 if doc is not None else 0:]:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.ImportFrom) and node.module == "ui" and feature.exists():
                mine = [a for a in node.names if a.name == name]
                if mine:
                    alias = mine[0].asname or name
                    rest = [a for a in node.names if a.name != name]
                    if rest:
                        imports.append("from ui import " + ", ".join(
                            a.name + (f" as {a.asname}" if a.asname else "") for a in rest))
                    continue
            text = "\n".join(lines[node.lineno - 1:node.end_lineno])
            if "from __future__" not in text and text != "from ui.shell import ensure_shell":
                imports.append(text)
            continue
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                and getattr(node.value.func, "id", "") == "ensure_shell"):
            continue
        first_body = node
        break
    if first_body is None:
        return False
    start = first_body.lineno
    while start > 1 and lines[start - 2].lstrip().startswith("#"):   # the comments just above the body
        start -= 1
    body_src = "\n".join(lines[start - 1:]) + "\n"
    if alias:
        body_src = _without_prefix(body_src, alias)
    keep = _string_lines(body_src)
    body = [ln if (i in keep or not ln.strip()) else "    " + ln
            for i, ln in enumerate(body_src.splitlines(), 1)]
    render = ("def render() -> None:\n    \"\"\"Draw the page (its script's body, run on every rerun).\"\"\"\n"
              + "\n".join(body).rstrip() + "\n")
    text = (doc or name).strip()
    if feature.exists():
        mod = feature.read_text()
        mtree = ast.parse(mod)
        last_import = max(n.end_lineno or n.lineno for n in mtree.body if isinstance(n, (ast.Import, ast.ImportFrom)))
        mlines = mod.splitlines()
        mlines[last_import:last_import] = imports
        new_text = "\n".join(mlines).rstrip() + "\n\n\n" + render
    else:
        new_text = (f'"""{text}\n\n``pages/{name}.py`` is its thin script: it only calls :func:`render`.\n"""\n'
                    'from __future__ import annotations\n\n' + "\n".join(imports) + "\n\n\n" + render)
    clash = _shadowed(new_text)
    if clash:
        print(f"pages/{name}.py left as it is: in render() {', '.join(sorted(clash))} would be local names")
        return False
    feature.write_text(new_text)
    page.write_text((f'"""{doc}"""\n' if doc is not None else "") + "from __future__ import annotations\n\n"
                    f"from ui import {name}\nfrom ui.shell import ensure_shell\n\nensure_shell()\n\n{name}.render()\n")
    _git("add", str(feature.relative_to(ROOT)))
    return True


# ---- one door to session state ---------------------------------------------------------------------------
#: the session module, the one place that reads ``st.session_state``
SESSION_MODULE = "ui/session.py"


def _is_ss(node: ast.AST) -> bool:
    """``st.session_state``."""
    return (isinstance(node, ast.Attribute) and node.attr == "session_state" and isinstance(node.value, ast.Name)
            and node.value.id == "st")


def _door_edits(tree: ast.AST, src: str, door: str = "session") -> list[tuple[int, int, str]]:
    """The outermost uses of ``st.session_state`` and their rewrites through ``door`` (offsets into ``src``); the
    uses inside them are copied as they are, and rewritten in the next round."""
    lines = src.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def off(node: Any, end: bool = False) -> int:   # ast positions are UTF-8 byte columns
        row, col = (node.end_lineno, node.end_col_offset) if end else (node.lineno, node.col_offset)
        return starts[row - 1] + len(lines[row - 1].encode()[:col].decode())

    def seg(node: ast.AST) -> str:
        return src[off(node):off(node, True)]

    found: list[tuple[ast.AST, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript) \
                and _is_ss(node.targets[0].value):
            found.append((node, f"{door}.set_value({seg(node.targets[0].slice)}, {seg(node.value)})"))
        elif isinstance(node, ast.Delete) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript) \
                and _is_ss(node.targets[0].value):
            found.append((node, f"{door}.pop({seg(node.targets[0].slice)})"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _is_ss(node.func.value) \
                and node.func.attr in ("get", "setdefault", "pop") and not node.keywords:
            name = {"get": "value", "setdefault": "default", "pop": "pop"}[node.func.attr]
            found.append((node, f"{door}.{name}({', '.join(seg(a) for a in node.args)})"))
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)) \
                and _is_ss(node.comparators[0]):
            neg = "not " if isinstance(node.ops[0], ast.NotIn) else ""
            found.append((node, f"{neg}{door}.has({seg(node.left)})"))
        elif isinstance(node, ast.Subscript) and _is_ss(node.value) and isinstance(node.ctx, ast.Load):
            found.append((node, f"{door}.item({seg(node.slice)})"))
        elif _is_ss(node):
            found.append((node, f"{door}.store()"))
    nodes = [n for n, _ in found]

    def inside(a: ast.AST, b: ast.AST) -> bool:   # a strictly inside b
        return a is not b and off(b) <= off(a) and off(a, True) <= off(b, True)

    outermost = [(n, t) for n, t in found if not any(inside(n, m) for m in nodes)]
    return [(off(n), off(n, True), t) for n, t in outermost]


def session_door(path: Path) -> int:
    """Rewrite every ``st.session_state`` of ``path`` through :mod:`ui.session`; returns how many.  The module is
    imported as ``session``, or as ``ui_session`` where the file uses the name ``session`` for something else."""
    src = path.read_text()
    tree = ast.parse(src)
    taken = any((isinstance(n, ast.Name) and n.id == "session" and isinstance(n.ctx, ast.Store))
                or (isinstance(n, ast.arg) and n.arg == "session") for n in ast.walk(tree))
    door = "ui_session" if taken else "session"
    count = 0
    while True:
        edits = _door_edits(ast.parse(src), src, door)
        if not edits:
            break
        for a, b, text in sorted(edits, reverse=True):
            src = src[:a] + text + src[b:]
        count += len(edits)
    if count:
        tree = ast.parse(src)
        line = "from ui import session" + (" as ui_session" if taken else "")
        if not re.search(rf"^{re.escape(line)}$", src, flags=re.M):
            last = max(n.end_lineno or n.lineno for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)))
            lines = src.splitlines(keepends=True)
            lines.insert(last, line + "\n")
            src = "".join(lines)
        if not any(isinstance(n, ast.Name) and n.id == "st" for n in ast.walk(ast.parse(src))):
            # streamlit was imported for its session state only
            src = re.sub(r"^import streamlit as st\n\n?", "", src, count=1, flags=re.M)
        path.write_text(src)
    return count


#: ``--now``: what can move while other work is under way (those modules and pages are being changed elsewhere)
LATER_MOVES = ("rag_metrics.budgets", "rag_metrics.teacher_sessions")
LATER_PAGES = ("class_progress",)


def _dirty() -> set[str]:
    """Files with changes not committed (someone is working on them): ``--now`` leaves them alone."""
    return {line[3:] for line in _git("status", "--porcelain").splitlines() if line[:2].strip()}


def main(argv: list[str]) -> int:
    global MOVES, FOLDS, THIN_PAGES
    now = "--now" in argv
    dirty = _dirty() if now else set()
    if now:
        MOVES = {o: n for o, n in MOVES.items() if o not in LATER_MOVES}
        FOLDS = {}
        THIN_PAGES = tuple(p for p in THIN_PAGES if p not in LATER_PAGES and f"pages/{p}.py" not in dirty
                           and f"ui/{p}.py" not in dirty)
    for old, new in MOVES.items():
        if _path(old).exists() and not _path(new).exists():
            _git("mv", str(_path(old).relative_to(ROOT)), str(_path(new).relative_to(ROOT)))
    table = {**MOVES, **FOLDS}
    for f in _tracked():
        if str(f.relative_to(ROOT)) in dirty:
            continue
        text = f.read_text()
        out = _rename_all(text, table)
        if out != text:
            f.write_text(out)
    for old, new in FOLDS.items():
        _fold(old, new)
    _compat(table)
    thinned = [n for n in THIN_PAGES if thin_page(n)]
    doors = 0
    if "--session" in argv:
        for f in sorted((ROOT / "ui").glob("*.py")) + sorted((ROOT / "pages").glob("*.py")):
            if str(f.relative_to(ROOT)) not in dirty and str(f.relative_to(ROOT)) != SESSION_MODULE:
                doors += session_door(f)
    changed = [n for n in _git("diff", "--name-only", "HEAD").splitlines()
               if n.endswith(".py") and (ROOT / n).exists() and n not in dirty]
    subprocess.run([sys.executable, "-m", "ruff", "check", "-q", "--fix", "--select", "I", *changed], cwd=ROOT)
    print(f"moved {len(MOVES)} modules, folded {len(FOLDS)}; the old paths warn through rag_metrics/_compat.py; "
          f"{len(thinned)} pages thin ({', '.join(thinned)}); {doors} uses of st.session_state through ui.session")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
