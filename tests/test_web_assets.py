"""The code exercises' browser assets (issue 26): pinned from the npm registry, built by ./lab into a
git-ignored folder, served by the app (never a CDN), and a clear message when npm is missing."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
WEB = ROOT / "web"


def test_every_package_is_pinned_exactly_and_locked():
    pkg = json.loads((WEB / "package.json").read_text())
    lock = json.loads((WEB / "package-lock.json").read_text())
    deps = pkg["devDependencies"]
    assert {"pyodide", "@codemirror/view", "@codemirror/lang-python", "esbuild"} <= set(deps)
    assert "codemirror" not in deps  # the npm package "codemirror" 6.65.x is CodeMirror 5, not 6
    for name, version in deps.items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), (name, version)
        assert lock["packages"][f"node_modules/{name}"]["version"] == version, name
    assert lock["packages"][""]["devDependencies"] == deps
    assert all("integrity" in v for k, v in lock["packages"].items() if k and not v.get("link"))


def test_installed_files_are_ignored_and_served_by_the_app():
    ignored = (ROOT / ".gitignore").read_text().split()
    assert "web/node_modules/" in ignored and "static/vendor/" in ignored
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert cfg["server"]["enableStaticServing"] is True  # static/ at /app/static/


def test_no_cdn_and_no_outside_address_in_the_browser_code():
    for path in [*(ROOT / "ui" / "exercise_editor_assets").iterdir(), WEB / "editor.js", WEB / "build.mjs"]:
        text = path.read_text()
        assert not re.search(r"https?://", text), path.name


def test_lab_says_what_to_install_when_npm_is_missing(tmp_path):
    """``./lab``'s asset step with no npm on PATH: exit 1 and a message naming what to install."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("cat", "sha256sum", "cut"):
        os.symlink(shutil.which(tool), bin_dir / tool)
    work = tmp_path / "tree"
    shutil.copytree(WEB, work / "web", ignore=shutil.ignore_patterns("node_modules"))
    script = ('set -euo pipefail; eval "$(sed -n "/^web_assets() {/,/^}/p" ' + str(ROOT / "lab") + ')"; '
              f'cd {work}; PATH={bin_dir}; web_assets')
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert "npm and Node.js" in out.stderr and "apt-get install nodejs npm" in out.stderr
    assert not (work / "static").exists()


def test_the_app_never_runs_student_code_on_the_server():
    """The pages and the UI hand student code to the browser and grade reported values: no exec, eval,
    compile or subprocess on it, and not the CLI's runner (``rag-metrics exercise check``)."""
    files = [ROOT / "pages" / "exercises.py", ROOT / "ui" / "exercises.py", ROOT / "ui" / "exercise_editor.py"]
    for path in files:
        text = path.read_text()
        for word in ("exec(", "eval(", "compile(", "subprocess", "exercises.runner", "run_harness", "os.system"):
            assert word not in text, (path.name, word)
    for path in [*(ROOT / "ui").glob("*.py"), *(ROOT / "pages").glob("*.py")]:
        assert "exercises.runner" not in path.read_text() and "run_harness" not in path.read_text(), path.name
