"""``./lab class`` started as root runs every app process unprivileged (issue 27): the operator's
``RAG_METRICS_RUN_AS``, else the system user ``rag-metrics`` (made when missing), given the class
workspace; nginx's worker runs as nobody.  A real two-process deployment, checked in /proc."""
from __future__ import annotations

import os
import shutil
import urllib.request
from pathlib import Path

import pytest

from app_helpers import class_app_user, class_dirs

pytestmark = [pytest.mark.serial,
              pytest.mark.skipif(not (hasattr(os, "geteuid") and os.geteuid() == 0), reason="only as root")]


def _uid(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])  # the real uid (effective, saved and fs follow on the same line)
    raise AssertionError(f"no Uid in /proc/{pid}/status")


def _children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = next(int(ln.split()[1]) for ln in (d / "status").read_text().splitlines()
                            if ln.startswith("PPid:"))
            except (OSError, StopIteration):
                continue
            if ppid == pid:
                out.append(int(d.name))
    return out


def test_started_as_root_every_app_process_and_the_nginx_worker_is_unprivileged(tmp_path, app_cache_dir,
                                                                                 monkeypatch):
    if not any(Path(p).exists() for p in ("/usr/sbin/nginx", "/usr/bin/nginx")):
        pytest.skip("nginx is not installed (apt-get install nginx-light); ./lab test installs it")
    from rag_metrics.server.deploy import SYSTEM_USER, ClassDeployment, free_port

    monkeypatch.delenv("RAG_METRICS_RUN_AS", raising=False)
    ws, cache, made = class_dirs(tmp_path, app_cache_dir)
    if class_app_user() == "current":  # a clone closed to other users: no unprivileged user can run it
        dep = ClassDeployment(procs=2, port=free_port(), address="127.0.0.1",
                              env={"RAG_METRICS_WORKSPACE": str(ws), "RAG_METRICS_CACHE": str(cache)})
        try:  # so it never runs as root: the start stops, naming the folder and the way out
            with pytest.raises(SystemExit, match=r"run as rag-metrics, who cannot use .*--app-user current"):
                dep.prepare()
            assert not dep.children
        finally:
            for folder in made:
                shutil.rmtree(folder, ignore_errors=True)
        return
    ws.mkdir(parents=True)
    (ws / "left-by-root.txt").write_text("a file root wrote earlier\n")  # the workspace is given to the app's user
    env = {"HF_HUB_OFFLINE": "1", "RAG_METRICS_WORKSPACE": str(ws), "RAG_METRICS_CACHE": str(cache),
           "RAG_METRICS_TEACHER_KEY": "a teacher key for the run-as test", "RAG_METRICS_WARM": "0",
           "RAG_METRICS_CONFIG": str(ws.parent / "none.toml")}
    ws.parent.mkdir(parents=True, exist_ok=True)
    (ws.parent / "none.toml").write_text("[lab]\n")  # readable by the app's user (beside the workspace)
    dep = ClassDeployment(procs=2, port=free_port(), address="127.0.0.1", env=env)
    try:
        dep.start()
        import pwd

        assert dep.user is not None and dep.user.name == SYSTEM_USER and dep.user.uid != 0
        assert pwd.getpwnam(SYSTEM_USER).pw_shell.endswith("nologin")
        apps, nginx = dep.children[:2], dep.children[2]
        for proc in apps:
            assert _uid(proc.pid) == dep.user.uid, f"app process {proc.pid} runs as uid {_uid(proc.pid)}"
        workers = _children(nginx.pid)
        assert _uid(nginx.pid) == 0 and workers  # the master binds the port; its worker serves
        assert all(_uid(w) != 0 for w in workers), [(w, _uid(w)) for w in workers]
        assert (ws / "left-by-root.txt").stat().st_uid == dep.user.uid
        url = f"http://127.0.0.1:{dep.port}"
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=30) as r:
            assert r.status == 200
        with urllib.request.urlopen(f"{url}/", timeout=30) as r:
            assert r.status == 200 and b"<html" in r.read().lower()
    finally:
        dep.stop()
        for folder in made:
            shutil.rmtree(folder, ignore_errors=True)


def test_a_workspace_the_user_cannot_reach_stops_the_start_with_a_message(tmp_path, monkeypatch):
    from rag_metrics.server.deploy import ClassDeployment, free_port

    monkeypatch.delenv("RAG_METRICS_RUN_AS", raising=False)
    closed = tmp_path / "closed"  # pytest's tmp folders are closed to other users (0700)
    env = {"RAG_METRICS_WORKSPACE": str(closed / "workspace"), "RAG_METRICS_CACHE": str(closed / "cache")}
    dep = ClassDeployment(procs=1, port=free_port(), address="127.0.0.1", env=env)
    with pytest.raises(SystemExit, match=r"cannot use \S*closed/workspace: .*RAG_METRICS_WORKSPACE"):
        dep.prepare()
    assert not dep.children
