"""The class deployment: several Streamlit processes behind nginx, on one machine.

    python -m rag_metrics.server.deploy [--procs N] [--port 8501] [--address 0.0.0.0] [--dry-run]

(``./lab class`` runs this.)  Why: one Streamlit server runs every session's script in threads of
one Python process, so it uses about one core.  Here ``--procs`` app processes (default: one per
core) listen on loopback ports, and nginx, the one public listener, spreads browsers over them.

Routing
-------
A browser's websocket session lives in one process, and its uploads (``POST
/_stcore/upload_file``) must reach the same process.  nginx therefore routes by a cookie it sets
itself, ``rml_route``: the first request of a browser has none, so nginx takes its
``$request_id`` (128 random bits), routes by it and sets it as the cookie; every later request of
that browser (the websocket, uploads, downloads, a reload, a new tab) carries the same value and
reaches the same process (``hash $rml_route consistent``).  The cookie only routes: it grants
nothing (identity is the seat cookie, checked by the app).

Consistency
-----------
Every process works on the same workspace folder; every write there is atomic and locked
(``flock``), and every process re-reads what another may have changed (seat registry, golden
files, systems), so a student reaching another process after a restart sees the same work.

Why nginx: the most deployed reverse proxy, in Debian's packages (``apt-get install nginx-light``),
with websocket proxying and consistent hashing built in, and nothing to write ourselves.

Over 500 lines: the deployment (nginx, the app processes, the unprivileged user and its Python) is one start-
up sequence, read together.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from rag_metrics.config import environment, setting

__all__ = ["APP_LIMITS", "APP_USERS", "HOST_COOKIE", "ClassDeployment", "check_app_user", "check_state",
           "closed_to_others", "hosts_nginx_config", "limit_args", "main", "nginx_config"]

ROOT = Path(__file__).resolve().parents[2]
ROUTE_COOKIE = "rml_route"
#: Streamlit's own limits in every app process of a class, on its command line (over
#: ``.streamlit/config.toml``, which says the same for ``./lab app``): the largest file a browser may
#: upload (MB; the bounded reader, :mod:`rag_metrics.io.containers`, unwraps no more than this), and the
#: largest message a browser may send (MB: a widget's or a component's value, parsed before the app sees
#: it; Streamlit's default is 25, the lab's largest real value about 400 KB).
APP_LIMITS = {"server.maxUploadSize": 20, "server.maxWidgetStateSize": 2}
#: Largest upload nginx passes on (the app checks its own, smaller limits).
MAX_BODY_MB = APP_LIMITS["server.maxUploadSize"] + 5


def limit_args() -> list[str]:
    """:data:`APP_LIMITS` as ``streamlit run`` options."""
    return [a for k, v in APP_LIMITS.items() for a in (f"--{k}", str(v))]


def free_port(address: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((address, 0))
        return int(s.getsockname()[1])


#: Uploads one client address may start per minute (nginx ``limit_req``, with a burst of as many).
UPLOADS_PER_MINUTE = 30


def unprivileged_user() -> tuple[str, str] | None:
    """``(user, group)`` nginx's worker runs as when the class is started as root (``None`` when it is
    not): ``nobody`` and its primary group."""
    if not (hasattr(os, "geteuid") and os.geteuid() == 0):
        return None
    import grp
    import pwd

    try:
        nobody = pwd.getpwnam("nobody")
        return "nobody", grp.getgrgid(nobody.pw_gid).gr_name
    except KeyError:  # pragma: no cover - a system without nobody
        return None


def app_user(env: dict[str, str] | None = None) -> tuple[int, int, str] | None:
    """``(uid, gid, home)`` the app processes run as when the class is started as root: the user
    named by ``RAG_METRICS_RUN_AS`` (:data:`rag_metrics.config.SETTINGS`); ``None`` when not
    root or not set (then :func:`main` warns).  An unknown or root user is refused with a message."""
    if not (hasattr(os, "geteuid") and os.geteuid() == 0):
        return None
    name = setting("run_as", env)
    if not name:
        return None
    import pwd

    try:
        pw = pwd.getpwnam(name)
    except KeyError:
        raise SystemExit(f"RAG_METRICS_RUN_AS={name!r} is not a user on this machine; create it or unset it") from None
    if pw.pw_uid == 0:
        raise SystemExit("RAG_METRICS_RUN_AS names root; name an unprivileged user who owns the workspace")
    return pw.pw_uid, pw.pw_gid, pw.pw_dir


#: The system user the app processes run as when ``./lab class`` is started as root and
#: ``RAG_METRICS_RUN_AS`` is not set (made on first use, with :data:`SYSTEM_HOME` as its home).
SYSTEM_USER = "rag-metrics"
SYSTEM_HOME = Path("/var/lib/rag-metrics")


@dataclass(frozen=True)
class RunAs:
    """The unprivileged user the app processes run as (started as root)."""

    name: str
    uid: int
    gid: int
    home: str


def _ensure_system_user() -> RunAs:
    """:data:`SYSTEM_USER`, created when missing (``useradd --system --user-group --no-create-home``,
    no login shell), with a home folder it owns (:data:`SYSTEM_HOME`: its caches)."""
    import pwd

    try:
        pw = pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        useradd = shutil.which("useradd") or "/usr/sbin/useradd"
        out = subprocess.run([useradd, "--system", "--user-group", "--no-create-home", "--home-dir", str(SYSTEM_HOME),
                              "--shell", "/usr/sbin/nologin", SYSTEM_USER], capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"lab class: could not create the user {SYSTEM_USER!r} to run the app as "
                             f"({out.stderr.strip()[:300]}); create an unprivileged user and set RAG_METRICS_RUN_AS "
                             "to it, or start ./lab class as an ordinary user") from None
        pw = pwd.getpwnam(SYSTEM_USER)
    home = Path(pw.pw_dir or SYSTEM_HOME)
    home.mkdir(parents=True, exist_ok=True)
    os.chown(home, pw.pw_uid, pw.pw_gid)
    os.chmod(home, 0o750)
    return RunAs(SYSTEM_USER, pw.pw_uid, pw.pw_gid, str(home))


def run_as_user(env: dict[str, str] | None = None) -> RunAs | None:
    """Who the app processes run as when the class is started as root: the user named by
    ``RAG_METRICS_RUN_AS`` (:func:`app_user`), else :data:`SYSTEM_USER` (created when missing);
    ``None`` when not started as root (they run as whoever started them)."""
    import pwd

    if not (hasattr(os, "geteuid") and os.geteuid() == 0):
        return None
    named = app_user(env)
    if named is not None:
        return RunAs(pwd.getpwuid(named[0]).pw_name, *named)
    return _ensure_system_user()


#: ``--app-user``: who the app processes run as when the class is started as root.  ``unprivileged`` (the
#: default): :func:`run_as_user`.  ``current``: whoever started the class (root), allowed on a loopback
#: address only (:func:`check_app_user`): for tests from a clone in a folder closed to other users.
APP_USERS = ("unprivileged", "current")


def is_loopback(address: str) -> bool:
    """Whether ``address`` (what the class listens on) is reachable from this machine only."""
    import ipaddress

    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False


def check_app_user(app_user: str, address: str) -> bool:
    """Whether the app processes keep the current user: ``app_user == "current"`` and started as root
    (else they keep it anyway).  A class on the network never runs its app as root: ``current`` on an
    address other than loopback stops the start with a message."""
    if app_user not in APP_USERS:
        raise SystemExit(f"lab class: --app-user must be one of {', '.join(APP_USERS)}, got {app_user!r}")
    if app_user != "current" or not (hasattr(os, "geteuid") and os.geteuid() == 0):
        return False
    if not is_loopback(address):
        raise SystemExit(f"lab class: --app-user current runs the app processes as root, which a class on the network "
                         f"never does; it is allowed on a loopback address only (--address 127.0.0.1), got {address!r}")
    return True


def closed_to_others(path: Path) -> Path | None:
    """The first folder of ``path`` (itself or one above it) that other users cannot enter (no ``o+x``),
    or ``None``: then an unprivileged user can reach ``path`` (ACLs and groups aside)."""
    import stat

    for folder in [*reversed(path.resolve().parents), path.resolve()]:
        try:
            if folder.is_dir() and not folder.stat().st_mode & stat.S_IXOTH:
                return folder
        except OSError:
            return folder
    return None


def _give(path: Path, user: RunAs) -> None:
    """``chown -R`` ``path`` to ``user`` (what it does not own yet)."""
    path.mkdir(parents=True, exist_ok=True)
    for top, dirs, files in os.walk(path):
        for name in [top, *(os.path.join(top, n) for n in dirs + files)]:
            try:
                st = os.lstat(name)
                if st.st_uid != user.uid or st.st_gid != user.gid:
                    os.lchown(name, user.uid, user.gid)
            except OSError:
                continue


_REACH = """import os, sys
for p in sys.argv[1:]:
    mode, path = p[0], p[1:]
    if not os.access(path, {"r": os.R_OK | os.X_OK, "w": os.R_OK | os.X_OK | os.W_OK, "f": os.R_OK}[mode]):
        print(path); break
"""


#: Where :func:`python_for` keeps the venv of a system Python for an unprivileged user (root's, open to all).
SHIM_ROOT = Path("/var/lib/rag-metrics-python")


def _runs_as(user: RunAs, python: str) -> bool:
    try:
        return subprocess.run([python, "-c", "pass"], capture_output=True, user=user.uid, group=user.gid,
                              extra_groups=[], cwd="/", timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def python_for(user: RunAs, python: str = sys.executable) -> str:
    """The interpreter ``user`` runs the app with: ``python`` when the user can run it, else (a Python
    installed in a folder closed to other users, such as pyenv under ``/root``) a venv of the system's
    Python of the same minor version (``/usr/bin/python3.X``) that reads ``python``'s packages, made once
    under :data:`SHIM_ROOT` (owned by root, readable by all).  ``python`` itself when there is no such
    system Python (then :func:`prepare_run_as` says what the user cannot reach)."""
    if _runs_as(user, python):
        return python
    minor = f"python{sys.version_info.major}.{sys.version_info.minor}"
    system = Path("/usr/bin") / minor
    if not system.exists():
        return python
    import sysconfig

    shim = SHIM_ROOT / minor
    shim_python = shim / "bin" / "python"
    sites = list(dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]))
    pth = "".join(f"import site; site.addsitedir({p!r})\n" for p in sites)  # its .pth files too (editable installs)
    target = shim / "lib" / minor / "site-packages" / "lab.pth"
    if not shim_python.exists() or not target.exists() or target.read_text(encoding="utf-8") != pth:
        SHIM_ROOT.mkdir(parents=True, exist_ok=True)
        os.chmod(SHIM_ROOT, 0o755)
        subprocess.run([str(system), "-m", "venv", "--without-pip", "--clear", str(shim)], check=True, timeout=120,
                       capture_output=True)
        target.write_text(pth, encoding="utf-8")
    return str(shim_python) if _runs_as(user, str(shim_python)) else python


def prepare_run_as(user: RunAs, env: dict[str, str], python: str = sys.executable) -> dict[str, str]:
    """Give ``user`` the class's folders and check it can reach them; returns the environment the
    app processes get (``HOME``, the workspace and the caches under it, offline models).

    The workspace (``RAG_METRICS_WORKSPACE``, else ``<home>/.rag_metrics/workspace``) and the
    embedding cache (``RAG_METRICS_CACHE``, else ``<home>/.cache/rag_metrics``) are ``chown``-ed to
    the user; the Hugging Face cache is its home's; the bundled models are read from the installed
    packages.  A folder the user cannot reach (a parent closed to other users, such as ``/root``) stops
    the start with a message naming it."""
    home = Path(user.home)
    ws = Path(env.get("RAG_METRICS_WORKSPACE") or home / ".rag_metrics" / "workspace")
    cache = Path(env.get("RAG_METRICS_CACHE") or home / ".cache" / "rag_metrics")
    for folder in (ws, cache):
        _give(folder, user)
    out = {"HOME": str(home), "RAG_METRICS_WORKSPACE": str(ws), "RAG_METRICS_CACHE": str(cache),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    if "HF_HOME" not in env:
        out["HF_HOME"] = str(home / ".cache" / "huggingface")
    if "XDG_CACHE_HOME" not in env:
        out["XDG_CACHE_HOME"] = str(home / ".cache")
    paths = [f"w{ws}", f"w{cache}", f"r{ROOT}", f"r{Path(python).parent}"]  # the operator's own choices first
    config = Path(env["RAG_METRICS_CONFIG"]).expanduser() if env.get("RAG_METRICS_CONFIG") else \
        ROOT / ".streamlit" / "secrets.toml"  # (the app processes start in ROOT)
    if config.is_file():  # the operator's [lab] table (it holds secrets: readable by the user, not given to it)
        paths.append(f"f{config}")
    try:
        got = subprocess.run([python, "-c", _REACH, *paths], capture_output=True, text=True, user=user.uid,
                             group=user.gid, extra_groups=[], env={**env, **out}, cwd="/")
        blocked = got.stdout.strip() or (f"{python} (it does not start: {got.stderr.strip()[-200:]})"
                                         if got.returncode else "")
    except OSError:  # the interpreter itself is out of its reach
        blocked = f"the lab's Python {python}"
    if blocked:
        raise SystemExit(f"lab class: the app processes run as {user.name}, who cannot use {blocked}: it, or a "
                         "folder above it, is closed to that user (a configuration file: chgrp it to the user's "
                         "group and chmod 640). Put the workspace and cache where that user can reach "
                         "them (RAG_METRICS_WORKSPACE, RAG_METRICS_CACHE, e.g. under /srv; the lab's venv made with a "
                         "system Python such as /usr/bin/python3), or set RAG_METRICS_RUN_AS to a user who can; "
                         "for a test on this machine only, --address 127.0.0.1 --app-user current keeps root")
    return out


def _nginx_head(tmp: Path, run_as: tuple[str, str] | None) -> str:
    """The start every nginx configuration of the lab shares: the worker's user, its files under ``tmp``, the
    body limit, up to the opened ``http`` block."""
    user = f"user {run_as[0]} {run_as[1]};\n" if run_as else ""
    return f"""{user}worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  client_body_temp_path {tmp}/body;
  proxy_temp_path {tmp}/proxy;
  fastcgi_temp_path {tmp}/fastcgi;
  uwsgi_temp_path {tmp}/uwsgi;
  scgi_temp_path {tmp}/scgi;
  client_max_body_size {MAX_BODY_MB}m;
  server_tokens off;
"""


def nginx_config(listen: str, backends: list[int], tmp: Path, *, show_upstream: bool = False,
                 run_as: tuple[str, str] | None = None) -> str:
    """The nginx configuration: one public listener, cookie-hash routing over the app processes.

    Only what a browser needs is passed on: ``/_stcore/metrics`` (live session counts, cache
    statistics) is answered 404; uploads are rate-limited per client address
    (:data:`UPLOADS_PER_MINUTE`); the worker runs as ``run_as`` (an unprivileged user when started as
    root, :func:`unprivileged_user`), never as root.

    ``show_upstream`` adds an ``X-Lab-Upstream`` response header naming the process that answered
    (tests use it to see that browsers are spread over the processes; off in a real class)."""
    servers = "\n".join(f"    server 127.0.0.1:{p} max_fails=0;" for p in backends)
    upstream = '      add_header X-Lab-Upstream $upstream_addr always;\n' if show_upstream else ""
    return _nginx_head(tmp, run_as) + f"""\
  map $cookie_{ROUTE_COOKIE} $rml_route {{ "" $request_id; default $cookie_{ROUTE_COOKIE}; }}
  map $http_upgrade $connection_upgrade {{ default upgrade; "" close; }}
  limit_req_zone $binary_remote_addr zone=uploads:1m rate={UPLOADS_PER_MINUTE}r/m;
  limit_req_status 429;
  upstream lab {{
    hash $rml_route consistent;
{servers}
  }}
  server {{
    listen {listen};
    location = /_stcore/metrics {{ return 404; }}
    location /_stcore/upload_file/ {{
      limit_req zone=uploads burst={UPLOADS_PER_MINUTE} nodelay;
      proxy_pass http://lab;
      proxy_http_version 1.1;
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_request_buffering off;
      add_header Set-Cookie "{ROUTE_COOKIE}=$rml_route; Path=/; SameSite=Strict; HttpOnly" always;
    }}
    location / {{
      proxy_pass http://lab;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_read_timeout 1d;
      proxy_send_timeout 1d;
      proxy_buffering off;
      add_header Set-Cookie "{ROUTE_COOKIE}=$rml_route; Path=/; SameSite=Strict; HttpOnly" always;
{upstream}    }}
  }}
}}
"""


#: The cookie the nginx in front of several hosts routes by (as :data:`ROUTE_COOKIE` within one host).
HOST_COOKIE = "rml_host"


def hosts_nginx_config(listen: str, hosts: list[str], tmp: Path, *, show_upstream: bool = False,
                       run_as: tuple[str, str] | None = None) -> str:
    """The nginx in front of several hosts, each a ``./lab class`` (``hosts``: ``"10.0.0.11:8601"``, ...):
    a browser stays on one host by the cookie :data:`HOST_COOKIE` (a random id nginx sets on the first
    request, ``hash ... consistent``), websockets pass, and when a host fails the same cookie goes to another
    host (``max_fails=1``, ``proxy_next_upstream``), where the seat (``lab.state``) and the saved work (the
    shared workspace) are.  docs/class.md#several-machines shows it; the two-host test runs it."""
    servers = "\n".join(f"    server {h} max_fails=1 fail_timeout=10s;" for h in hosts)
    upstream = '      add_header X-Lab-Upstream $upstream_addr always;\n' if show_upstream else ""
    return _nginx_head(tmp, run_as) + f"""\
  map $cookie_{HOST_COOKIE} $rml_host {{ "" $request_id; default $cookie_{HOST_COOKIE}; }}
  map $http_upgrade $connection_upgrade {{ default upgrade; "" close; }}
  upstream lab_hosts {{
    hash $rml_host consistent;
{servers}
  }}
  server {{
    listen {listen};
    location = /_stcore/metrics {{ return 404; }}
    location / {{
      proxy_pass http://lab_hosts;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_read_timeout 1d;
      proxy_send_timeout 1d;
      proxy_buffering off;
      proxy_next_upstream error timeout;
      add_header Set-Cookie "{HOST_COOKIE}=$rml_host; Path=/; SameSite=Strict; HttpOnly" always;
{upstream}    }}
  }}
}}
"""


def _nginx() -> str:
    for p in (shutil.which("nginx"), "/usr/sbin/nginx"):
        if p and Path(p).exists():
            return p
    raise SystemExit("nginx is not installed; install it with `apt-get install nginx-light` (Debian), or run "
                     "one process with --procs 1")


def _wait_healthy(port: int, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the app process on port {port} exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"the app process on port {port} did not become healthy within {timeout:g} s")


@dataclass
class ClassDeployment:
    """``procs`` app processes and (when ``procs > 1``) nginx in front, started by :meth:`start`."""

    procs: int
    port: int
    address: str = "0.0.0.0"
    env: dict[str, str] | None = None
    app_args: tuple[str, ...] = ()
    show_upstream: bool = False
    python: str = sys.executable   # the app processes' Python (its folder must be open to their user)
    app_user: str = "unprivileged"  # or "current": keep root, on loopback only (check_app_user; tests)

    def __post_init__(self) -> None:
        self.children: list[subprocess.Popen] = []
        self.backends: list[int] = []
        self.tmp: Path | None = None
        self.user: RunAs | None = None        # started as root: who the app processes run as
        self._user_env: dict[str, str] = {}   # and their HOME, workspace and caches

    def prepare(self) -> RunAs | None:
        """Started as root: choose the unprivileged user of the app processes (:func:`run_as_user`)
        and give it the class's folders (:func:`prepare_run_as`); once, before the first process."""
        if self.user is None and not check_app_user(self.app_user, self.address):
            env = {**environment(), **(self.env or {})}
            self.user = run_as_user(env)
            if self.user is not None:
                self.python = python_for(self.user, self.python)  # a Python under /root: the system's, same packages
                self._user_env = prepare_run_as(self.user, env, self.python)
        return self.user

    def _app(self, address: str, port: int) -> subprocess.Popen:
        # glibc gives every thread that allocates its own malloc arena (up to 8 per core); Streamlit
        # runs each session in a thread, so a class server's memory grows with the sessions. Two
        # arenas per process keep that in check (benchmarks/bench_class.py measures the peak).
        # The embedding model's OpenMP threads spin while they wait for each other: N processes with
        # one thread per core each oversubscribe the cores and a question's embedding then waits for
        # descheduled threads (a golden edit took 7.5 s instead of 0.6 s at saturation with 2 processes).
        # The cores are shared out between the processes instead.
        threads = str(max(1, (os.cpu_count() or 1) // max(1, self.procs)))
        env = {"MALLOC_ARENA_MAX": "2", "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads,
               **environment(), **(self.env or {}), "RAG_METRICS_CLASS_MODE": "1"}
        cmd = [self.python, "-m", "ui.launch", "--server.headless", "true",  # streamlit run app.py, prewarmed
               "--server.address", address, "--server.port", str(port), *limit_args(), *self.app_args]
        user, named = self.user, app_user(env)
        if user is None and named is not None and not check_app_user(self.app_user, self.address):
            # (not prepared: the operator's named user as it is)
            user, self._user_env = RunAs("", *named), {"HOME": named[2]}
        if user is not None:  # started as root: the app runs as an unprivileged user, never as root
            env.update(self._user_env)
            return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=None,
                                    start_new_session=True, user=user.uid, group=user.gid, extra_groups=[])
        return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=None,
                                start_new_session=True)

    def start(self, timeout: float = 180.0) -> None:
        self.prepare()
        if self.procs <= 1:
            proc = self._app(self.address, self.port)
            self.children.append(proc)
            self.backends = [self.port]
            _wait_healthy(self.port, proc, timeout)
            return
        nginx = _nginx()
        self.tmp = Path(tempfile.mkdtemp(prefix="rag_metrics_class_"))
        os.chmod(self.tmp, 0o755)
        for _ in range(self.procs):
            port = free_port()
            self.backends.append(port)
            self.children.append(self._app("127.0.0.1", port))
        for port, proc in zip(self.backends, self.children):
            _wait_healthy(port, proc, timeout)
        listen = f"[{self.address}]:{self.port}" if ":" in self.address else f"{self.address}:{self.port}"
        conf = self.tmp / "nginx.conf"
        run_as = unprivileged_user()
        if run_as is not None:  # the worker writes its temp files here
            import shutil as _sh

            for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
                (self.tmp / sub).mkdir(exist_ok=True)
                _sh.chown(self.tmp / sub, run_as[0], run_as[1])
        conf.write_text(nginx_config(listen, self.backends, self.tmp, show_upstream=self.show_upstream,
                                     run_as=run_as), encoding="utf-8")
        proc = subprocess.Popen([nginx, "-c", str(conf), "-p", str(self.tmp)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)
        self.children.append(proc)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                err = (proc.stderr.read() if proc.stderr else b"").decode("utf-8", "replace")
                self.stop()
                raise SystemExit(f"nginx did not start: {err.strip()[:500]}")
            try:
                host = "127.0.0.1" if self.address in ("0.0.0.0", "::") else self.address
                with urllib.request.urlopen(f"http://{host}:{self.port}/_stcore/health", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise SystemExit(f"nginx did not answer on {listen} within 15 s")

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.children]

    def stop(self) -> None:
        for p in self.children:
            if p.poll() is None:
                with _suppress():
                    os.killpg(p.pid, signal.SIGTERM)
        for p in self.children:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with _suppress():
                    os.killpg(p.pid, signal.SIGKILL)
        self.children.clear()
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self) -> ClassDeployment:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _suppress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return True


def check_state(env: dict[str, str]) -> str:
    """Where the class keeps its shared state (:mod:`rag_metrics.io.state`), said for the operator:
    ``files in <workspace>/.class``, or the PostgreSQL (redacted), reached and migrated now, so a wrong
    address or password stops the start with a message instead of failing in every app process."""
    from rag_metrics.errors import InputError
    from rag_metrics.io.state import PostgresState, state_dsn, where

    try:
        dsn = state_dsn(env)
        if not dsn:
            ws = env.get("RAG_METRICS_WORKSPACE") or "the workspace"
            return f"files in {ws}/.class (one host; --state postgresql://... for several)"
        backend = PostgresState(dsn, connections=1)
        backend.read("seats.json")  # connects, applies the migrations
        backend.close()
    except InputError as e:
        raise SystemExit(f"lab class: {e}") from None
    return f"PostgreSQL {where(dsn)}"


def addresses(bind: str) -> list[str]:
    """The addresses students can open (the machine's own when bound to every interface)."""
    if bind not in ("0.0.0.0", "::", ""):
        return [bind]
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=5).stdout.split()
    except (OSError, subprocess.SubprocessError):
        out = []
    return out or [socket.gethostname()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rag_metrics.server.deploy", description=__doc__.splitlines()[0])
    ap.add_argument("--procs", type=int, default=os.cpu_count() or 1,
                    help="app processes (default: one per core); 1 runs Streamlit alone, without nginx")
    ap.add_argument("--port", type=int, default=8501)
    ap.add_argument("--address", default="0.0.0.0")
    ap.add_argument("--dry-run", action="store_true", help="print the nginx configuration and exit")
    ap.add_argument("--state", default="", metavar="postgresql://...",
                    help="the class's shared state (seats, budgets, teacher sessions) in this PostgreSQL, for a class "
                         "on several hosts; write its password as ${VAR} (default: lab.state, else files in the "
                         "workspace)")
    ap.add_argument("--workspace", default="", metavar="FOLDER",
                    help="the class's workspace folder (RAG_METRICS_WORKSPACE), e.g. shared storage every host mounts")
    ap.add_argument("--app-user", choices=APP_USERS, default="unprivileged",
                    help="started as root, the app processes run as an unprivileged user (default); 'current' keeps "
                         "root, allowed on a loopback --address only (tests from a clone closed to other users)")
    args, rest = ap.parse_known_args(argv)
    if not 1 <= args.procs <= 64:
        ap.error(f"--procs must be 1 to 64, got {args.procs}")
    if args.dry_run:
        print(nginx_config(f"{args.address}:{args.port}", [8600 + i for i in range(args.procs)], Path("/tmp/x"),
                           run_as=unprivileged_user()))
        return 0
    from rag_metrics.server.teacher_sessions import LINK_ENV, LINK_TTL, new_link

    link, spec = new_link()  # the operator's one-time sign-in: the app processes get only its hash and expiry
    env = {LINK_ENV: spec}
    if args.workspace:
        env["RAG_METRICS_WORKSPACE"] = str(Path(args.workspace).expanduser().resolve())
    if args.state:
        env["RAG_METRICS_STATE"] = args.state
    state = check_state({**environment(), **env})
    dep = ClassDeployment(args.procs, args.port, args.address, env=env, app_args=tuple(rest),
                          app_user=args.app_user)
    user = dep.prepare()
    if check_app_user(args.app_user, args.address):
        print(f"lab class: WARNING: --app-user current: the app processes run as root, on {args.address} only (for "
              "tests; a class on the network runs them as an unprivileged user)", file=sys.stderr, flush=True)
    elif user is not None:
        print(f"lab class: started as root; the app processes run as {user.name} (uid {user.uid}), workspace "
              f"{dep._user_env['RAG_METRICS_WORKSPACE']}" + ("; nginx's worker as nobody" if args.procs > 1 else ""),
              flush=True)
    else:
        import getpass

        print(f"lab class: the app processes run as {getpass.getuser()} (who started ./lab class)", flush=True)
    print(f"lab class: the class's state (seats, budgets, teacher sessions) in {state}", flush=True)
    stop = {"now": False}

    def on_signal(*_: object) -> None:
        stop["now"] = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    dep.start()
    where = ", ".join(f"http://{a}:{args.port}" for a in addresses(args.address))
    print(f"lab class: ready, {args.procs} app process(es){' behind nginx' if args.procs > 1 else ''} on "
          f"{args.address}:{args.port} ({where})", flush=True)
    first = addresses(args.address)[0]
    print(f"lab class: the teacher's one-time sign-in link (works once, for {LINK_TTL // 60} minutes; then sign in "
          f"with the teacher key): http://{f'[{first}]' if ':' in first else first}:{args.port}/?teacher_link={link}",
          flush=True)
    try:
        while not stop["now"]:
            if any(p.poll() is not None for p in dep.children):
                print("lab class: a process exited; stopping the class server", file=sys.stderr)
                return 1
            time.sleep(0.5)
    finally:
        dep.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
