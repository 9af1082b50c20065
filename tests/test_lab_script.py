"""The ``lab`` script: ``./lab app`` serves loopback only; ``./lab class`` needs a teacher key, and says
where students connect.  ``LAB_DRY_RUN=1`` prints the command instead of starting it (nothing is
installed); one test starts that command for real and checks where it listens."""
from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KEY = "a teacher key long enough"


def lab(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items()
            if k not in ("RAG_METRICS_TEACHER_KEY", "RAG_METRICS_CONFIG", "STREAMLIT_SERVER_ADDRESS")}
    full = {**base, "LAB_DRY_RUN": "1", "RAG_METRICS_VENV": str(Path(sys.executable).parents[1]), **(env or {})}
    return subprocess.run([str(ROOT / "lab"), *args], cwd=ROOT, env=full, capture_output=True, text=True, timeout=60)


def command(out: subprocess.CompletedProcess) -> list[str]:
    assert out.returncode == 0, out.stderr
    return shlex.split(out.stdout.strip().splitlines()[-1])


def option(argv: list[str], name: str) -> str | None:
    """The value of ``--name value`` / ``--name=value`` among streamlit's options (before ``--``)."""
    argv = argv[: argv.index("--")] if "--" in argv else argv
    for i, a in enumerate(argv):
        if a == name:
            return argv[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


@pytest.mark.parametrize("args", [(), ("--server.port", "9999"), ("--theme.base", "dark"), ("--", "--server.address",
                                                                                           "0.0.0.0")])
def test_lab_app_listens_on_loopback(args):
    argv = command(lab("app", *args))
    assert argv[1:3] == ["-m", "ui.launch"]  # streamlit run app.py, its modules imported while the page loads
    assert option(argv, "--server.address") == "127.0.0.1"
    for a in args:
        assert a in argv


@pytest.mark.parametrize("args,address", [(("--server.address", "0.0.0.0"), "0.0.0.0"),
                                          (("--server.address=192.0.2.9",), "192.0.2.9")])
def test_lab_app_keeps_an_address_the_user_gives(args, address):
    argv = command(lab("app", *args))
    assert option(argv, "--server.address") == address
    assert argv.count("--server.address") + sum(a.startswith("--server.address=") for a in argv) == 1


def test_the_config_file_says_loopback_too():
    import tomllib

    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert cfg["server"]["address"] == "127.0.0.1"


@pytest.mark.parametrize("key", [None, "", "short", "   "])
def test_lab_class_refuses_without_a_teacher_key(tmp_path, key):
    env = {"RAG_METRICS_CONFIG": str(tmp_path / "none.toml")} if key is None else {"RAG_METRICS_TEACHER_KEY": key}
    if key is None:
        (tmp_path / "none.toml").write_text("[lab]\nmax_private_spaces = 5\n")
    out = lab("class", env=env)
    assert out.returncode != 0 and "streamlit" not in out.stdout
    assert "teacher key" in out.stderr and "RAG_METRICS_TEACHER_KEY" in out.stderr


def test_lab_class_refuses_a_broken_config(tmp_path):
    bad = tmp_path / "lab.toml"
    bad.write_text("[lab\n")
    out = lab("class", env={"RAG_METRICS_CONFIG": str(bad)})
    assert out.returncode != 0 and "not valid TOML" in out.stderr


@pytest.mark.parametrize("args,address,port", [((), "0.0.0.0", "8501"), (("--port", "9000"), "0.0.0.0", "9000"),
                                               (("--port=9001", "--address", "192.0.2.7"), "192.0.2.7", "9001"),
                                               (("--address=::", "--theme.base", "dark"), "::", "8501")])
def test_lab_class_starts_class_mode_and_prints_the_address(args, address, port):
    out = lab("class", *args, env={"RAG_METRICS_TEACHER_KEY": KEY})
    argv = command(out)
    assert argv[1:4] == ["-m", "rag_metrics.server.deploy", "--procs"]   # the class deployment (N processes + nginx)
    assert option(argv, "--address") == address and option(argv, "--port") == port
    assert "Students open" in out.stderr
    if address not in ("0.0.0.0", "::"):
        assert f"http://{address}:{port}" in out.stderr
    else:
        ips = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
        for ip in ips:
            if not ip.startswith("127.") and ":" not in ip:
                assert f"http://{ip}:{port}" in out.stderr
    if "--theme.base" in args:
        assert argv[-2:] == ["--theme.base", "dark"]


def test_lab_class_with_the_key_in_the_config_file(tmp_path):
    cfg = tmp_path / "lab.toml"
    cfg.write_text(f'[lab]\nteacher_key = "{KEY}"\n')
    assert command(lab("class", env={"RAG_METRICS_CONFIG": str(cfg)}))


@pytest.mark.parametrize("procs,expected", [("1", "1"), ("3", "3"), ("--procs=2", "2")])
def test_lab_class_runs_the_processes_asked_for(procs, expected):
    args = [procs] if procs.startswith("--") else ["--procs", procs]
    argv = command(lab("class", *args, env={"RAG_METRICS_TEACHER_KEY": KEY}))
    assert option(argv, "--procs") == expected


@pytest.mark.parametrize("bad", ["abc", "0", ""])
def test_lab_class_refuses_a_bad_procs(bad):
    out = lab("class", "--procs", bad, env={"RAG_METRICS_TEACHER_KEY": KEY})
    assert out.returncode == 2 and "--procs" in out.stderr


@pytest.mark.parametrize("bad", ["abc", "0", "70000", ""])
def test_lab_class_refuses_a_bad_port(bad):
    out = lab("class", "--port", bad, env={"RAG_METRICS_TEACHER_KEY": KEY})
    assert out.returncode == 2 and "--port" in out.stderr


def test_lab_help_names_class():
    out = subprocess.run([str(ROOT / "lab"), "help"], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert "./lab class" in out.stdout and "127.0.0.1" in out.stdout


def _other_address() -> str | None:
    """An address of this machine that is not loopback (None when it has none)."""
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=10).stdout.split()
    except OSError:
        return None
    return next((ip for ip in out if ":" not in ip and not ip.startswith("127.")), None)


def test_lab_app_is_not_reachable_from_the_network(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = command(lab("app", "--server.port", str(port)))
    argv[0] = sys.executable
    env = {**os.environ, "RAG_METRICS_WORKSPACE": str(tmp_path / "ws"), "RAG_METRICS_WARM": "0"}
    env.pop("STREAMLIT_SERVER_ADDRESS", None)
    with open(tmp_path / "log", "w") as log:
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(120):
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1).status == 200:
                    break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("streamlit did not start: " + (tmp_path / "log").read_text()[-2000:])
        other = _other_address()
        if other is not None:
            with pytest.raises(OSError), socket.create_connection((other, port), timeout=2):
                pass
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_lab_class_on_loopback_still_prints_a_url():
    """Issue 27: ``--address 127.0.0.1`` printed "Students open:" followed by nothing."""
    out = lab("class", "--address", "127.0.0.1", "--port", "8555", env={"RAG_METRICS_TEACHER_KEY": KEY})
    command(out)
    after = out.stderr.split("Students open:", 1)[1]
    assert "http://127.0.0.1:8555" in after and "only this machine" in after


def test_uv_is_given_pips_own_indexes_wheels_and_constraints():
    """./lab installs with uv, which reads no pip.conf: tools/pip_to_uv.py hands it pip's settings, the
    environment's winning over the files' as in pip (a folder of wheels holding the CPU build of torch)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("pip_to_uv", ROOT / "tools" / "pip_to_uv.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    listed = ("global.index-url='https://mirror.example/simple'\n"
              "global.extra-index-url='file:///opt/a/simple file:///opt/b/simple'\n"
              "global.find-links='/opt/wheels'\nglobal.constraint='/etc/c.txt'\n:env:.find-links='/srv/wheels'\n")
    assert mod.uv_arguments(listed) == [
        "--index-strategy", "unsafe-best-match", "--index-url", "https://mirror.example/simple",
        "--extra-index-url", "file:///opt/a/simple", "--extra-index-url", "file:///opt/b/simple",
        "--find-links", "/srv/wheels", "--constraint", "/etc/c.txt"]
    assert mod.uv_arguments("") == ["--index-strategy", "unsafe-best-match"]


def test_lab_class_passes_the_state_and_the_shared_workspace_to_the_app_processes(monkeypatch, tmp_path):
    """Issue 52: ``./lab class --state postgresql://... --workspace /shared/path`` runs one host of several."""
    from rag_metrics.server import deploy

    dsn = "postgresql://lab:${LAB_PG_PASSWORD}@10.0.0.8/lab"
    argv = command(lab("class", "--state", dsn, "--workspace", str(tmp_path / "shared"),
                       env={"RAG_METRICS_TEACHER_KEY": KEY}))
    assert option(argv, "--state") == dsn and option(argv, "--workspace") == str(tmp_path / "shared")
    seen: dict = {}

    class Stop(Exception):
        pass

    class Fake:
        def __init__(self, *a, env=None, **kw):
            seen.update(env or {})

        def prepare(self):
            raise Stop

    monkeypatch.setattr(deploy, "ClassDeployment", Fake)
    monkeypatch.setattr(deploy, "check_state", lambda env: seen.setdefault("checked", env["RAG_METRICS_STATE"]))
    with pytest.raises(Stop):
        deploy.main(argv[argv.index("--procs"):])
    assert seen["RAG_METRICS_STATE"] == dsn == seen["checked"]  # checked before any process starts
    assert seen["RAG_METRICS_WORKSPACE"] == str(tmp_path / "shared")
