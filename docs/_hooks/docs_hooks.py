"""MkDocs hooks for the documentation site (configured in ``mkdocs.yml``).

- **The CLI reference is generated.** A page holding the marker ``<!-- cli-help -->`` gets the output of
  ``rag-metrics --help`` and of ``rag-metrics COMMAND --help`` for every command that help lists, run
  from this checkout (``python -m rag_metrics``) at build time. Nothing of it is kept by hand.
- **Pages name only what exists.** A project path in backticks (``rag_metrics/server/seats.py``, ``tests/...``,
  ``benchmarks/results/...``) must exist, and a dotted ``rag_metrics.x.y`` must name a module (or a name
  its package defines); otherwise a warning, which fails ``mkdocs build --strict``.
"""
from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from pathlib import Path

log = logging.getLogger("mkdocs.plugins.rag_metrics_docs")
ROOT = Path(__file__).resolve().parents[2]
CLI_MARKER = "<!-- cli-help -->"
HELP_COLUMNS = "88"  # argparse wraps to $COLUMNS: fixed, so the page does not depend on the terminal
_COMMAND_LINE = re.compile(r"^ {4}([a-z][a-z0-9-]*)(?:\s|$)")
_PATH = re.compile(r"`((?:rag_metrics|ui|pages|tests|benchmarks|sample_corpus|docs)/[A-Za-z0-9_./-]*)`")
_PATH_ROOT_FILES = re.compile(r"`((?:app\.py|lab|mkdocs\.yml|pyproject\.toml|requirements(?:-test)?\.txt|\.ci/run))`")
_DOTTED = re.compile(r"\brag_metrics(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


def _help(*args: str) -> str:
    env = {**os.environ, "COLUMNS": HELP_COLUMNS, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-m", "rag_metrics", *args, "--help"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"`rag-metrics {' '.join(args)} --help` failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout.rstrip()


def cli_reference() -> str:
    """Markdown for the whole CLI: the top-level help, then one section per command it lists."""
    top = _help()
    commands: list[str] = []
    in_commands = False
    for line in top.splitlines():
        if line.strip() == "COMMAND":
            in_commands = True
            continue
        if in_commands:
            if line and not line.startswith(" "):
                break
            m = _COMMAND_LINE.match(line)
            if m:
                commands.append(m.group(1))
    if not commands:
        raise RuntimeError("`rag-metrics --help` lists no commands; the CLI reference cannot be generated")
    parts = ["## rag-metrics {#rag-metrics}", "", "```text", top, "```", ""]
    for name in commands:
        parts += [f"## rag-metrics {name} {{#{name}}}", "", "```text", _help(name), "```", ""]
    return "\n".join(parts)


def _module_exists(dotted: str) -> bool:
    parts = dotted.split(".")
    here = ROOT / parts[0]
    for part in parts[1:]:
        if (here / part).is_dir() and (here / part / "__init__.py").exists():
            here = here / part
            continue
        if (here / f"{part}.py").exists():
            return True  # a module; the rest are attributes
        init = here / "__init__.py"
        # a name the package defines or re-exports (rag_metrics.GoldenSet, rag_metrics.systems.System)
        return init.exists() and re.search(rf"\b{re.escape(part)}\b", init.read_text("utf-8")) is not None
    return True


def _check_names(markdown: str, src: str) -> None:
    for path in set(_PATH.findall(markdown)) | set(_PATH_ROOT_FILES.findall(markdown)):
        clean = path.rstrip("/.")
        if "<" in clean or "*" in clean:
            continue
        if not (ROOT / clean).exists():
            log.warning("%s names `%s`, which does not exist in the repository", src, path)
    for dotted in set(_DOTTED.findall(markdown)):
        if not _module_exists(dotted):
            log.warning("%s names `%s`, which is not a module of this repository (or a name its package "
                        "defines)", src, dotted)


def on_page_markdown(markdown: str, page, config, files) -> str:
    src = page.file.src_uri
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_reference())
    else:
        _check_names(markdown, src)
    return markdown
