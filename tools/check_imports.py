"""Import contracts of issues 25 and 51, run by ``./lab lint``: the contracts in ``.importlinter`` (import-linter),
then no import cycle between any two modules of ``rag_metrics`` and ``ui`` (grimp, which import-linter uses), then
the layout: every page a thin script that imports only ``ui`` (:data:`PAGE_MAX_LINES`), and the library root
holding only the modules of :data:`LIBRARY_ROOT`.

A deferred import inside a function, and an ``if TYPE_CHECKING:`` import, count as dependencies.
``python tools/check_imports.py --list`` prints every cycle (strongly connected component) found.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import grimp
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("rag_metrics", "ui")

#: Cycles known when the check was written, each to be broken by moving code (issue 25, ``ui/``): a known cycle
#: may shrink or go; a new cycle, or a known one that grows, fails the check.  Empty it as they go.
KNOWN_CYCLES: list[frozenset[str]] = [
]


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    adj = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in adj:
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on.add(v)
            for j in range(i, len(adj[v])):
                w = adj[v][j]
                if w not in index:
                    work.append((v, j + 1))
                    work.append((w, 0))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[v])
    return sorted(out)


#: A page is a thin script: its docstring, ``ui`` imports and a call or two (issue 51).
PAGE_MAX_LINES = 40
#: The modules directly in ``rag_metrics/`` (issue 51): the rest lives in the package of its concern.
LIBRARY_ROOT = {"__init__", "__main__", "_compat", "config", "errors", "evaluation", "formats", "jobs", "lazy",
                "limits", "ordering", "sample", "types", "verdict"}
#: Moves still waiting for a codemod run (none: the codemod of issue 51 ran, and is in the history).
ROOT_PENDING: set[str] = set()


#: ui in two tiers (issue 51).  The core: what every page stands on (keys, context, the session's one door, the
#: caches, who the browser is, the state, the shared views, the shell and the navigation).  It never imports the
#: other tier: one feature module per page (``ui/<page>.py``, named after ``pages/<page>.py``) and the parts of a
#: feature (:data:`UI_PARTS`).
UI_CORE = {
    "keys", "context", "session", "widgets", "cache", "workers", "cache_insights", "cache_answers", "budget",
    "class_budgets", "embed_budget", "upload_budget", "identity", "server", "spaces", "stored_systems", "corpora",
    "golden", "state", "encoding", "paging", "views", "answer_views", "compare_views", "report_ui", "workspace_ui",
    "tutor", "sidebar", "url_state", "rerun_rate", "navigation", "shell", "prewarm", "teacher_route", "launch",
}
#: A feature's parts: module -> the pages whose feature uses it.
UI_PARTS = {
    "bring": ("bring_your_system",), "bring_mapping": ("bring_your_system",),
    "drafting": ("golden_set", "answers"), "judge_settings": ("golden_set", "answers"),
    "labelling": ("golden_set",), "label_editor": ("golden_set",), "label_session": ("golden_set",),
    "evidence_review": ("golden_set",), "exercise_editor": ("exercises",),
}
#: The modules of ``ui`` that are a page's feature module although no page has their name (the lesson's
#: lessons are drawn by the Lesson page's module).
UI_PAGE_PREFIXES = ("lesson_",)


def ui_tier_problems(graph: grimp.ImportGraph) -> list[str]:
    """What breaks the two tiers of ui: a core module importing a feature, or a module in neither tier."""
    pages = {p.stem for p in (ROOT / "pages").glob("*.py")}
    out = []
    for path in sorted((ROOT / "ui").glob("*.py")):
        name = path.stem
        if name == "__init__":
            continue
        if name not in UI_CORE and name not in pages and name not in UI_PARTS and not name.startswith(UI_PAGE_PREFIXES):
            out.append(f"ui/{path.name}: in neither tier: name it after its page, or add it to UI_CORE or UI_PARTS "
                       "in tools/check_imports.py")
        if name in UI_CORE:
            above = sorted(m for m in graph.find_modules_directly_imported_by(f"ui.{name}")
                           if m.startswith("ui.") and m.split(".")[1] not in UI_CORE)
            if above:
                out.append(f"ui/{path.name}: the core imports the feature tier ({', '.join(above)}): move what it "
                           "needs into the core")
    return out


#: The one module that touches ``st.session_state`` (issue 51); every other module goes through it.
SESSION_DOOR = "ui/session.py"


def session_state_uses(path: Path) -> list[int]:
    """Lines of ``path`` that use ``st.session_state`` (or ``streamlit.session_state``) in code (not in text)."""
    tree = ast.parse(path.read_text())
    return sorted({n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "session_state"
                   and isinstance(n.value, ast.Name) and n.value.id in ("st", "streamlit")})


def layout_problems() -> list[str]:
    """What breaks the layout rules, one line each (file, what, the fix)."""
    out = []
    for page in sorted((ROOT / "pages").glob("*.py")):
        text = page.read_text()
        n = len(text.splitlines())
        if n > PAGE_MAX_LINES:
            out.append(f"pages/{page.name}: {n} lines (at most {PAGE_MAX_LINES}): move its body into ui/{page.stem}.py "
                       "as render() and call that")
        for line in text.splitlines():
            if line.startswith(("import ", "from ")) and not line.startswith(("from ui", "import ui",
                                                                              "from __future__")):
                out.append(f"pages/{page.name}: imports something other than ui ({line.strip()}): import it in "
                           f"ui/{page.stem}.py")
    for path in sorted((ROOT / "ui").glob("*.py")) + sorted((ROOT / "pages").glob("*.py")) + [ROOT / "app.py"]:
        rel = str(path.relative_to(ROOT))
        lines = session_state_uses(path) if rel != SESSION_DOOR else []
        if lines:
            out.append(f"{rel}: st.session_state on line(s) {', '.join(map(str, lines[:5]))}"
                       f"{' ...' if len(lines) > 5 else ''}: read and write it through ui.session (value, item, has, "
                       "default, set_value, pop, store)")
    for module in sorted((ROOT / "rag_metrics").glob("*.py")):
        if module.stem not in LIBRARY_ROOT | ROOT_PENDING:
            out.append(f"rag_metrics/{module.name}: a new module in the library root; put it in the package of its "
                       "concern (rag_metrics/<package>/) or add it to LIBRARY_ROOT in tools/check_imports.py")
    return out


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    rc = lint_imports(config_filename=str(ROOT / ".importlinter"), no_cache=True, no_logo=True)
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    found = cycles(graph)
    new = [c for c in found if not any(set(c) <= k for k in KNOWN_CYCLES)]
    print(f"import cycles between modules of {', '.join(PACKAGES)}: {len(found)} "
          f"({len(found) - len(new)} known, {len(new)} new)")
    for c in found if "--list" in argv else new:
        print("  cycle:", " <-> ".join(c))
    if new:
        print("Break the new cycle: move the shared code into a lower module (`git show fd46f26` shows how "
              "the library's last cycle was broken).")
    layout = layout_problems() + ui_tier_problems(graph)
    print(f"layout: {len(layout)} problem(s)")
    for problem in layout:
        print("  " + problem)
    return 1 if (rc or new or layout) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
