"""Parsing that can still be costly, in a child process with a memory limit (no Streamlit here).

The bounded reader (:mod:`rag_metrics.io.containers`) caps what a file holds once unwrapped, but a
file within the upload limit can still take many times its size once parsed into Python objects.
:func:`run_limited` runs such a parse in a child process whose address space may grow by at most
``memory_mb`` (``RLIMIT_AS``): a parse that needs more ends in the child, as a clear
:class:`~rag_metrics.errors.InputError`, and the app process serving the class keeps its memory.
The child is killed when ``cancelled()`` says so (the browser session that asked has ended) or after
``timeout`` seconds.

Children are forked from a fork server started once per process, with the readers imported
(``forkserver``: no thread of the app is ever forked); a child costs tens of milliseconds.  A child
never imports the parent's ``__main__`` (under Streamlit, the page script being run).
"""
from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from rag_metrics.errors import InputError

__all__ = ["Cancelled", "WORKER_MEMORY_MB", "run_limited", "within"]

#: What a parse in a worker may add to the worker's address space (MB): a 20 MB upload's objects, with room.
WORKER_MEMORY_MB = 1024

_PRELOAD = ["rag_metrics.formats"]
_NAME = "rag-metrics-worker"
_LOCK = threading.Lock()
_CTX: Any = None


class Cancelled(Exception):
    """The session that asked for the parse ended: the worker was killed."""


def _without_main(prepare: Callable[[str], dict[str, Any]]) -> Callable[[str], dict[str, Any]]:
    """``multiprocessing.spawn.get_preparation_data`` that, for this module's workers only, does not
    ask the child to import the parent's ``__main__``: under Streamlit that is the page script being
    run (Streamlit installs it as ``sys.modules["__main__"]``), which the child must never run."""

    def get_preparation_data(name: str) -> dict[str, Any]:
        data = prepare(name)
        if name.startswith(_NAME):
            data.pop("init_main_from_path", None)
            data.pop("init_main_from_name", None)
        return data

    get_preparation_data.__wrapped__ = prepare  # type: ignore[attr-defined]
    return get_preparation_data


def _context() -> Any:
    global _CTX
    with _LOCK:
        if _CTX is None:
            from multiprocessing import spawn

            if not hasattr(spawn.get_preparation_data, "__wrapped__"):
                spawn.get_preparation_data = _without_main(spawn.get_preparation_data)  # type: ignore[assignment]
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(_PRELOAD)
            _CTX = ctx
        return _CTX


def _vm_bytes() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _child(conn: Connection, memory_mb: int, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    import resource

    limit = _vm_bytes() + memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        conn.send(("done", fn(*args)))
    except MemoryError:
        conn.send(("memory", None))
    except InputError as e:
        conn.send(("input", str(e)))
    except BaseException as e:  # noqa: BLE001 - sent back, raised in the parent
        conn.send(("error", f"{type(e).__name__}: {e}"))
    finally:
        conn.close()


def run_limited(fn: Callable[..., Any], *args: Any, what: str = "the file", memory_mb: int = WORKER_MEMORY_MB,
                timeout: float = 120.0, cancelled: Callable[[], bool] | None = None, poll: float = 0.1) -> Any:
    """``fn(*args)`` (a module-level function; its arguments and result picklable) in a worker process
    that may grow by at most ``memory_mb``.  Raises :class:`InputError` when the worker runs out of that
    memory, fails or takes longer than ``timeout`` seconds; :class:`Cancelled` when ``cancelled()`` turns
    true (the worker is killed at once); ``fn``'s own :class:`InputError` as it is."""
    ctx = _context()
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, memory_mb, fn, args), daemon=True, name=_NAME)
    proc.start()
    send.close()
    deadline = time.monotonic() + timeout
    try:
        while not recv.poll(poll):
            if cancelled is not None and cancelled():
                raise Cancelled(what)
            if not proc.is_alive() and not recv.poll(0):
                break
            if time.monotonic() > deadline:
                raise InputError(f"{what}: reading it took more than {timeout:.0f} s; give a smaller file, or "
                                 "read it with the command line (rag-metrics evaluate)")
        try:
            kind, value = recv.recv()
        except (EOFError, OSError):
            kind, value = "died", proc.exitcode
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(5)
        recv.close()
    if kind == "done":
        return value
    if kind == "input":
        raise InputError(value)
    if kind in ("memory", "died"):
        raise InputError(f"{what}: reading it needs more than {memory_mb:,} MB of memory; give a smaller file "
                         "(split it), or read it with the command line (rag-metrics evaluate)")
    raise InputError(f"{what}: could not be read ({str(value)[:200]})")



def within(max_bytes: int, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` within the reading budget ``max_bytes`` (a worker does not inherit the caller's
    :func:`~rag_metrics.io.containers.read_budget`): what a worker runs, ``run_limited(within, ...)``."""
    from rag_metrics.io.containers import read_budget

    with read_budget(max_bytes):
        return fn(*args)
