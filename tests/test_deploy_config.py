"""The class's nginx configuration serves only what a browser needs (issue 27): no
/_stcore/metrics, uploads rate-limited per address, never a root worker."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from rag_metrics.server.deploy import UPLOADS_PER_MINUTE, nginx_config


def test_metrics_are_not_served_and_uploads_are_rate_limited():
    conf = nginx_config("0.0.0.0:8501", [9001, 9002], Path("/tmp/x"))
    assert "location = /_stcore/metrics { return 404; }" in conf
    assert f"zone=uploads:1m rate={UPLOADS_PER_MINUTE}r/m" in conf
    upload = conf.split("location /_stcore/upload_file/ {", 1)[1].split("}", 1)[0]
    assert "limit_req zone=uploads" in upload and "proxy_pass http://lab;" in upload
    assert "client_max_body_size" in conf


def test_the_worker_is_never_root():
    assert "user root" not in nginx_config("0.0.0.0:8501", [9001], Path("/tmp/x"))
    conf = nginx_config("0.0.0.0:8501", [9001], Path("/tmp/x"), run_as=("nobody", "nogroup"))
    assert conf.startswith("user nobody nogroup;\n")


@pytest.mark.skipif(not (hasattr(os, "geteuid") and os.geteuid() == 0), reason="only as root")
def test_started_as_root_the_app_runs_as_the_named_user(monkeypatch):
    import pwd

    from rag_metrics.server import deploy

    nobody = pwd.getpwnam("nobody")
    assert deploy.app_user({"RAG_METRICS_RUN_AS": "nobody"}) == (nobody.pw_uid, nobody.pw_gid, nobody.pw_dir)
    assert deploy.app_user({}) is None
    for bad in ("root", "no-such-user-here"):
        with pytest.raises(SystemExit):
            deploy.app_user({"RAG_METRICS_RUN_AS": bad})
    seen = {}
    monkeypatch.setattr(deploy.subprocess, "Popen", lambda cmd, **kw: seen.update(kw))
    monkeypatch.setenv("RAG_METRICS_RUN_AS", "nobody")
    deploy.ClassDeployment(1, 8501)._app("127.0.0.1", 8501)
    assert seen["user"] == nobody.pw_uid and seen["group"] == nobody.pw_gid and seen["env"]["HOME"] == nobody.pw_dir


def test_keeping_root_for_the_app_is_for_a_loopback_class_only(monkeypatch, tmp_path):
    """``--app-user current`` (tests from a clone closed to other users, issue 51): root keeps root on a
    loopback address only; a class on the network stops with a message; as another user it changes nothing."""
    from rag_metrics.server import deploy

    monkeypatch.setattr(deploy.os, "geteuid", lambda: 0)
    for address in ("127.0.0.1", "::1", "[::1]", "localhost", "127.0.0.2"):
        assert deploy.check_app_user("current", address) is True
    assert deploy.check_app_user("unprivileged", "127.0.0.1") is False
    for address in ("0.0.0.0", "::", "10.0.0.5", "lab.example.org"):
        with pytest.raises(SystemExit, match="loopback address only"):
            deploy.check_app_user("current", address)
        with pytest.raises(SystemExit, match="loopback address only"):  # before any user or folder is touched
            deploy.ClassDeployment(2, 8501, address, app_user="current").prepare()
    with pytest.raises(SystemExit, match="--app-user must be one of"):
        deploy.check_app_user("root", "127.0.0.1")
    seen = {}
    monkeypatch.setattr(deploy.subprocess, "Popen", lambda cmd, **kw: seen.update(kw))
    monkeypatch.setenv("RAG_METRICS_RUN_AS", "nobody")  # even a named user is not taken: the switch is explicit
    dep = deploy.ClassDeployment(1, 8501, "127.0.0.1", app_user="current")
    assert dep.prepare() is None
    dep._app("127.0.0.1", 8501)
    assert "user" not in seen
    monkeypatch.setattr(deploy.os, "geteuid", lambda: 1000)
    assert deploy.check_app_user("current", "0.0.0.0") is False  # not root: the processes are the user's anyway


def test_a_folder_closed_to_other_users_is_named(tmp_path):
    import stat

    from rag_metrics.server.deploy import closed_to_others

    assert closed_to_others(Path("/usr/bin")) is None
    closed = tmp_path / "closed"
    (closed / "code").mkdir(parents=True)
    closed.chmod(0o700)
    got = closed_to_others(closed / "code")
    assert got is not None and got in (closed / "code").parents and not got.stat().st_mode & stat.S_IXOTH
    closed.chmod(0o755)
    assert closed_to_others(closed / "code") != closed
