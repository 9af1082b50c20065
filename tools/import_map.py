"""The import map of the code, as a newcomer would draw it (issue 51): rooms, floors and the longest chain.

A *room* is a package of the library (``rag_metrics.metrics``; a module directly in ``rag_metrics/`` is a room of
its own) or a module of ``ui``; a room's *floor* is one more than the highest floor it imports (a room that imports
no other room is on floor 1); the longest chain is the longest path of imports between modules.  Deferred and
``TYPE_CHECKING`` imports count, as in ``tools/check_imports.py``.

``python tools/import_map.py`` prints the figures; ``--rooms`` lists every room with its floor.
"""
from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]


def room(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "rag_metrics":
        return ".".join(parts[:2])
    return ".".join(parts[:2]) if len(parts) > 1 else module


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    graph = grimp.build_graph("rag_metrics", "ui", cache_dir=None)
    modules = sorted(graph.modules)
    deps = {m: {d for d in graph.find_modules_directly_imported_by(m) if d in graph.modules and d != m}
            for m in modules}
    rooms: dict[str, set[str]] = {}
    for m, ds in deps.items():
        rooms.setdefault(room(m), set()).update(room(d) for d in ds if room(d) != room(m))

    @cache
    def floor(r: str) -> int:
        return 1 + max((floor(d) for d in rooms[r]), default=0)

    @cache
    def chain(m: str) -> int:
        return 1 + max((chain(d) for d in deps[m]), default=0)

    sys.setrecursionlimit(10_000)
    root_modules = sorted(m.split(".")[1] for m in modules if m.count(".") == 1 and m.startswith("rag_metrics.")
                          and not graph.find_children(m))
    ui_rooms = [r for r in rooms if r.startswith("ui.")]
    print(f"modules {len(modules)}; rooms {len(rooms)} on {max(floor(r) for r in rooms)} floors "
          f"(library {len(rooms) - len(ui_rooms) - 1}, ui {len(ui_rooms)} on "
          f"{max(floor(r) for r in ui_rooms)} floors); longest import chain {max(chain(m) for m in modules)} modules")
    print(f"library root: {len(root_modules)} modules: {', '.join(root_modules)}")
    if "--rooms" in argv:
        for r in sorted(rooms, key=lambda r: (floor(r), r)):
            print(f"  floor {floor(r):2d}  {r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
