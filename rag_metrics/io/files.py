"""Reading and writing user files: one place for the messages (file:line, byte offset), atomic
writes and the one lock helper.

Durable writes
--------------
:func:`atomic_write_text` / :func:`atomic_write_bytes` write a temporary file in the target's
folder whose name is unique per process, thread and call (pid + thread id + random), fsync it,
``os.replace`` it over the target and fsync the folder (where the platform allows), so a reader,
another session or a crash (``kill -9``) only ever sees the old or the new content, never a torn
file, and two sessions writing the same file never share a temporary file.

:func:`locked` is an exclusive (or shared) ``flock`` on ``.<name>.lock`` beside a path, held
around every read-modify-write (systems index, corpus store, names, settings, golden saves,
history, imports).  It works across threads (each call opens its own descriptor) and processes,
and is re-entrant within one thread (a nested ``locked`` on the same path does not deadlock).
"""
from __future__ import annotations

import contextlib
import json
import os
import secrets
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rag_metrics.errors import InputError
from rag_metrics.limits import MAX_JSON_DEPTH

__all__ = ["atomic_write_bytes", "atomic_write_text", "csv_cell", "csv_text", "decode_utf8", "fsync_dir", "loads_json",
           "locked", "parse_json", "read_bytes", "read_text", "temp_name"]

#: A spreadsheet reads a cell starting with one of these as a formula (CSV injection, OWASP).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """``value`` as a CSV export writes it: text starting with ``=``, ``+``, ``-``, ``@`` (or a tab or
    carriage return) gets a leading ``'``, so a spreadsheet shows it as text instead of running it
    (a seat named ``=HYPERLINK(...)``); numbers and everything else are unchanged.

    >>> csv_cell("=HYPERLINK(1)"), csv_cell("-1 step"), csv_cell(-1.5), csv_cell("Ada")
    ("'=HYPERLINK(1)", "'-1 step", -1.5, 'Ada')
    """
    return "'" + value if isinstance(value, str) and value.startswith(_FORMULA_START) else value


def csv_text(table: Any) -> str:
    """A pandas table as CSV text for a person to open (every text cell and header through :func:`csv_cell`)."""
    safe = table.rename(columns=lambda c: csv_cell(str(c)))
    return str(safe.map(csv_cell).to_csv(index=False))


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The file's bytes; a clear :class:`InputError` for a missing file, a folder or no permission."""
    p = Path(path)
    try:
        return p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{p}: file not found; check the path") from None
    except IsADirectoryError:
        raise InputError(f"{p}: is a folder; give a file (or a BEIR folder where a folder is accepted)") from None
    except OSError as e:
        raise InputError(f"{p}: cannot read ({e.strerror})") from None


def decode_utf8(data: bytes, source: str) -> str:
    """UTF-8 text (a BOM is dropped); names the line and byte offset of the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InputError(f"{source}:{line}: not UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start}); "
                         "re-save the file as UTF-8") from None


def read_text(path: str | os.PathLike[str]) -> str:
    return decode_utf8(read_bytes(path), str(path))


def temp_name(path: str | os.PathLike[str]) -> Path:
    """A temporary file name beside ``path``, unique per process, thread and call."""
    p = Path(path)
    return p.with_name(f".{p.name[:80]}.{os.getpid()}-{threading.get_ident()}-{secrets.token_hex(4)}.tmp")


def fsync_dir(folder: str | os.PathLike[str]) -> None:
    """Flush a folder's entries (a rename inside it) to disk; a no-op where folders cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *, sync_dir: bool = True) -> None:
    """Write ``data`` via a uniquely named temporary file in the same folder, fsync, ``os.replace``
    and fsync the folder: readers and crashes see the old or the new bytes, never a torn file."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(p)
    try:
        with open(tmp, "xb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    if sync_dir:
        fsync_dir(p.parent)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write UTF-8 text atomically (see :func:`atomic_write_bytes`; never a half-written file)."""
    atomic_write_bytes(path, text.encode("utf-8"))


_HELD = threading.local()  # lock files this thread holds -> depth (re-entrancy)
_FALLBACK: dict[str, threading.RLock] = {}  # without fcntl (Windows): one lock per path and process
_FALLBACK_GUARD = threading.Lock()


@contextlib.contextmanager
def locked(path: str | os.PathLike[str], *, shared: bool = False) -> Iterator[None]:
    """Hold the lock of ``path`` (``.<name>.lock`` beside it) for a read-modify-write.

    Exclusive by default; ``shared=True`` for readers that must not see a write half done (several
    readers at once).  Across threads and processes (``flock``); re-entrant in one thread.
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    lock = p.with_name(f".{p.name}.lock")
    key = os.path.abspath(lock)
    held: dict[str, int] = getattr(_HELD, "locks", None) or {}
    _HELD.locks = held
    if held.get(key):
        held[key] += 1
        try:
            yield
        finally:
            held[key] -= 1
        return
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: one process-wide lock per path
        with _FALLBACK_GUARD:
            rl = _FALLBACK.setdefault(key, threading.RLock())
        with rl:
            held[key] = 1
            try:
                yield
            finally:
                held.pop(key, None)
        return
    fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        held[key] = 1
        try:
            with _across_hosts(key, shared):
                yield
        finally:
            held.pop(key, None)
    finally:
        os.close(fd)  # closing releases the lock


def _across_hosts(key: str, shared: bool) -> contextlib.AbstractContextManager[None]:
    """With the class's state in PostgreSQL (several hosts on one shared workspace), that database's
    advisory lock of the same path too (:meth:`rag_metrics.io.pg_state.PostgresState.lock`): ``flock`` holds
    on one host only.  Every host mounts the workspace at the same path."""
    from rag_metrics.io.pg_state import lock_backend

    backend = lock_backend()
    return backend.lock(key, shared=shared) if backend is not None else contextlib.nullcontext()


def _depth_over(value: Any, limit: int) -> bool:
    """True when ``value`` nests lists/objects deeper than ``limit`` (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            if d > limit:
                return True
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            if d > limit:
                return True
            stack.extend((x, d + 1) for x in v)
    return False


def loads_json(text: str, *, max_depth: int = MAX_JSON_DEPTH, strict: bool = True
               ) -> tuple[Any, str | None, int | None]:
    """Parse JSON from user input: ``(value, None, None)`` or ``(None, message, line)``.

    Never raises: invalid syntax, nesting deeper than ``max_depth`` (Python's parser would raise
    ``RecursionError`` near 1000 levels) and integers with more than 4300 digits (``ValueError``)
    give a message; ``line`` is the 1-based line inside ``text`` when known.  ``NaN``,
    ``Infinity`` and ``1e999`` are parsed as Python does and left to the field checks
    (:mod:`rag_metrics.limits`).
    """
    try:
        value = json.loads(text, strict=strict)  # strict=False: control characters allowed in strings
    except json.JSONDecodeError as e:
        at = f"column {e.colno}" if e.lineno == 1 else f"line {e.lineno} column {e.colno}"
        return None, f"invalid JSON ({e.msg} at {at})", e.lineno
    except RecursionError:
        return None, (f"JSON nested too deeply (more than {max_depth} levels of [ ] or {{ }}); "
                      "flatten the structure"), None
    except ValueError as e:
        msg = str(e).split(";")[0]
        return None, f"invalid JSON number ({msg})", None
    if _depth_over(value, max_depth):
        return None, (f"JSON nested too deeply (more than {max_depth} levels of [ ] or {{ }}); "
                      "flatten the structure"), None
    return value, None, None


def parse_json(text: str, source: str, line: int | None = None) -> Any:
    """:func:`loads_json` that raises :class:`InputError` naming ``source:line``."""
    value, msg, at = loads_json(text)
    if msg is not None:
        ln = line if line is not None else at
        where = f"{source}:{ln}" if ln is not None else source
        raise InputError(f"{where}: {msg}")
    return value
