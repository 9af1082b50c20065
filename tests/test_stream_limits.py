"""Streamlit's own limits for a class (issue 50): a widget message over ``server.maxWidgetStateSize`` (the lab's
2 MB, not Streamlit's 25 MB) is refused by a real class app process before it is parsed; uploads are capped
at the same size in ``./lab app`` and ``./lab class``; a flood of reruns gets a short message, not its page."""
from __future__ import annotations

import asyncio
import concurrent.futures
import shutil
import socket
from collections import deque
from pathlib import Path
from typing import Any

import tomllib

from rag_metrics.server import deploy
from rag_metrics.server.deploy import APP_LIMITS, ClassDeployment

ROOT = Path(__file__).resolve().parents[1]


def test_the_class_command_and_the_config_file_say_the_same_limits(monkeypatch):
    conf = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))["server"]
    assert {f"server.{k}": v for k, v in conf.items() if k in ("maxUploadSize", "maxWidgetStateSize")} == APP_LIMITS
    assert APP_LIMITS["server.maxWidgetStateSize"] <= 2  # Streamlit's default is 25
    seen: list[list[str]] = []
    monkeypatch.setattr(deploy.subprocess, "Popen", lambda cmd, **kw: seen.append(cmd))
    ClassDeployment(1, 8501, "127.0.0.1", app_args=("--theme.base", "dark"))._app("127.0.0.1", 8501)
    cmd = seen[0]
    for key, value in APP_LIMITS.items():
        assert cmd[cmd.index(f"--{key}") + 1] == str(value)
    assert cmd.index("--server.maxWidgetStateSize") < cmd.index("--theme.base")  # the operator's options win


def _in_own_loop(coro: Any) -> Any:
    """``asyncio.run`` on a thread of its own: a browser test earlier in this process (Playwright's sync API)
    may have left an event loop running on this one."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


async def _close_code(port: int, size: int) -> int | None:
    import websockets

    uri = f"ws://127.0.0.1:{port}/_stcore/stream"
    async with websockets.connect(uri, subprotocols=["streamlit"], max_size=None) as ws:
        await ws.send(b"\x00" * size)
        try:
            await asyncio.wait_for(ws.wait_closed(), 30)
        except TimeoutError:
            return None
        return ws.close_code


def test_a_widget_message_just_over_the_limit_is_refused_by_a_class_app_process(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    from app_helpers import class_app_user, class_dirs

    ws, cache, made = class_dirs(tmp_path, tmp_path / "cache")  # as root: folders the app's user can reach
    env = {"RAG_METRICS_WORKSPACE": str(ws), "RAG_METRICS_CACHE": str(cache), "RAG_METRICS_WARM": "0",
           "HF_HUB_OFFLINE": "1", "RAG_METRICS_TEACHER_KEY": "a-teacher-key-for-the-test"}
    limit = APP_LIMITS["server.maxWidgetStateSize"] * 1_000_000  # Streamlit's MB
    try:
        with ClassDeployment(1, port, "127.0.0.1", env=env, app_user=class_app_user()) as dep:
            dep.start(timeout=120)
            assert _in_own_loop(_close_code(port, limit + 1)) == 1009  # Message Too Big, never parsed
            assert _in_own_loop(_close_code(port, limit)) == 1002  # within the limit: parsed (and not a message)
    finally:
        for folder in made:
            shutil.rmtree(folder, ignore_errors=True)


def test_a_flood_of_reruns_gets_a_message_not_its_page(monkeypatch):
    from streamlit.testing.v1 import AppTest

    import ui.rerun_rate as rate

    clock = iter(i * 0.01 for i in range(1000))  # 100 reruns a second
    monkeypatch.setattr(rate.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(rate.st.runtime, "exists", lambda: True)
    monkeypatch.setenv("RAG_METRICS_CLASS_MODE", "1")

    def script():
        import streamlit as st

        from ui import rerun_rate

        rerun_rate.guard()
        st.write("the page")

    at = AppTest.from_function(script)
    pages = []
    for _ in range(rate.RERUNS + 2):
        at.run()
        pages.append(bool(at.markdown) and at.markdown[0].value == "the page")
    assert pages == [True] * (rate.RERUNS - 1) + [False] * 3
    assert f"more than {rate.RERUNS} redraws" in at.warning[0].value
    assert rate.allowed(deque([0.0] * rate.RERUNS, maxlen=rate.RERUNS), rate.WINDOW_S + 1)  # after a pause
