"""Real browsers against the real class deployment: two app processes behind nginx
(:class:`rag_metrics.server.deploy.ClassDeployment`), several students at once in Chromium.

Checks what a reverse proxy can break: every browser's websocket session, its uploads (``POST
/_stcore/upload_file`` must reach the process that holds the session) and its downloads work
through nginx, for several browsers spread over both processes; and what one student adds is not
listed for another.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from app_helpers import chromium
from tests.test_browser import CHROMIUM, _wait_idle
from tests.test_browser_systems import _run_file, add_run_system

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium not installed at /usr/bin/chromium"),
]
TEACHER_KEY = "teacher-key-for-the-browser-test"


def _nginx_present() -> bool:
    return any(Path(p).exists() for p in ("/usr/sbin/nginx", "/usr/bin/nginx"))


@pytest.fixture(scope="module")
def deployment(tmp_path_factory, app_cache_dir):
    """One class behind nginx for the module's tests (the second only reads its configuration)."""
    tmp_path = tmp_path_factory.mktemp("class_deployment")
    if not _nginx_present():
        pytest.skip("nginx is not installed (apt-get install nginx-light); ./lab test installs it")
    import shutil

    from app_helpers import class_app_user, class_dirs
    from rag_metrics.server.deploy import ClassDeployment, free_port

    ws, cache, made = class_dirs(tmp_path, app_cache_dir)  # reachable by the app's unprivileged user
    env = {"HF_HUB_OFFLINE": "1", "RAG_METRICS_WORKSPACE": str(ws),
           "RAG_METRICS_CACHE": str(cache), "RAG_METRICS_TEACHER_KEY": TEACHER_KEY,
           "RAG_METRICS_WARM": "0", "RAG_METRICS_CONFIG": str(ws.parent / "none.toml")}
    ws.parent.mkdir(parents=True, exist_ok=True)
    (ws.parent / "none.toml").write_text("[lab]\n")  # readable by the app's user (beside the workspace)
    dep = ClassDeployment(procs=2, port=free_port(), address="127.0.0.1", env=env, show_upstream=True,
                          app_user=class_app_user())
    dep.start()
    try:
        yield dep, f"http://127.0.0.1:{dep.port}"
    finally:
        dep.stop()
        for folder in made:
            shutil.rmtree(folder, ignore_errors=True)


def test_students_through_nginx_upload_and_see_only_their_own(deployment, tmp_path):
    dep, url = deployment
    run = _run_file(tmp_path)
    out = Path(os.environ.get("RAG_METRICS_SCREENSHOT_DIR") or tmp_path / "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    with chromium() as browser:
        students: dict[str, list] = {}   # upstream "127.0.0.1:port" -> [(context, page)]
        routes = set()
        for _ in range(24):  # open browsers until both processes hold sessions (nginx hashes the cookie)
            ctx = browser.new_context(viewport={"width": 1280, "height": 2000})
            page = ctx.new_page()
            # nginx gives a browser its route cookie on its first request, a random id: a cheap first request
            # shows which process the browser is routed to, so that only the browsers still needed (at most
            # two on one process, and one on the other) load the app
            probe = page.goto(f"{url}/_stcore/health")
            assert probe is not None and probe.ok
            upstream = probe.headers.get("x-lab-upstream", "")
            if len(students.get(upstream, [])) >= 2 and len(students) < 2:
                ctx.close()  # this process has its two: another browser, for the other process
                continue
            resp = page.goto(url)
            assert resp is not None and resp.ok
            assert resp.headers.get("x-lab-upstream", "") == upstream  # the cookie keeps it on its process
            _wait_idle(page, "Dashboard")
            page.get_by_text("Hit rate@5").first.wait_for(timeout=120_000)
            assert page.locator('[data-testid="stException"]').count() == 0
            routes.add(next(c["value"] for c in ctx.cookies() if c["name"] == "rml_route"))
            students.setdefault(upstream, []).append((ctx, page))
            if len(students) == 2 and sum(map(len, students.values())) >= 3:
                break
        assert len(students) == 2, f"browsers all landed on {list(students)}"
        assert {u.rsplit(":", 1)[1] for u in students} == {str(p) for p in dep.backends}
        assert len(routes) == sum(map(len, students.values())), "every browser gets its own route cookie"
        # one student on each process: the uploader on the second, the onlooker on the first
        (_, on_first), (_, on_second) = list(students.items())
        order = [on_second[0], on_first[0]]

        # student 0 uploads a run through the proxy (the upload must reach its own process)
        ctx0, page0 = order[0]
        page0.goto(f"{url}/systems")
        _wait_idle(page0, "Systems")
        add_run_system(page0, "student zero run", run)
        assert page0.locator('[data-testid="stException"]').count() == 0
        page0.screenshot(path=str(out / "class_student0_systems.png"))

        # a reload keeps the same process and session state on disk (the route cookie is kept)
        page0.reload()
        _wait_idle(page0, "Systems")
        assert page0.get_by_text("student zero run").count() >= 1

        # another student does not see it
        _, page1 = order[-1]
        page1.goto(f"{url}/systems")
        _wait_idle(page1, "Systems")
        assert page1.get_by_text("student zero run").count() == 0
        assert page1.locator('[data-testid="stException"]').count() == 0


def test_nginx_serves_no_metrics_and_its_worker_is_not_root(deployment):
    """Issue 27: /_stcore/metrics (live session counts, cache statistics) was served to anyone."""
    import urllib.error
    import urllib.request

    dep, url = deployment
    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=30) as r:
        assert r.status == 200
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(f"{url}/_stcore/metrics", timeout=30)
    assert err.value.code == 404
    assert "user root" not in (dep.tmp / "nginx.conf").read_text()
