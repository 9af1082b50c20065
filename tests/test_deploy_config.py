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
