"""Docstrings and comments cite only files that exist (issue 25).

Every ``something.md`` or ``some/path.py`` named in a docstring or a comment of the library, the app
(``ui/``, ``pages/``, ``app.py``) or the benchmarks must resolve: from the repository root or from the
citing file's folder.  The conventions are ``docs/conventions.md`` (there is no ``CONVENTIONS.md`` in
the repository).  Example file names and other projects' sources are listed below, by name.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("rag_metrics", "ui", "pages", "benchmarks")
#: a path ending in .md or .py, optionally with folders (``docs/evidence.md``, ``rag_metrics/io/trec.py``)
REFERENCE = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.(?:md|py))(?![\w/])")
#: names that stand for a file the user gives, not a file of this repository
EXAMPLES = {"FILE.py", "guides/setup.md", "notes.md"}
#: other projects' sources, cited for what they compute
ELSEWHERE = ("ragas/", "streamlit/")


def _texts(path: Path) -> Iterator[tuple[int, str]]:
    """``(line, text)`` of every docstring and comment of a Python file."""
    src = path.read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield node.body[0].lineno, doc
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string


def _files() -> list[Path]:
    out = [ROOT / "app.py"]
    for top in SCANNED:
        out += sorted((ROOT / top).rglob("*.py"))
    return [p for p in out if p.is_file()]


def test_the_scan_finds_references():
    found = {m.group(1) for p in _files() for _, text in _texts(p) for m in REFERENCE.finditer(text)}
    assert {"docs/conventions.md", "app.py"} <= found


def test_every_cited_file_exists():
    missing = []
    for p in _files():
        for line, text in _texts(p):
            for m in REFERENCE.finditer(text):
                ref = m.group(1)
                if ref in EXAMPLES or ref.startswith(ELSEWHERE):
                    continue
                if not ((ROOT / ref).exists() or (p.parent / ref).exists()):
                    missing.append(f"{p.relative_to(ROOT)}:{line + text.count(chr(10), 0, m.start())}: {ref}")
    assert not missing, "cited files that do not exist (fix the path, or list an example name in EXAMPLES):\n" + \
        "\n".join(missing)
