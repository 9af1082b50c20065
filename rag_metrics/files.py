"""Reading and writing user files: one place for the messages (file:line, byte offset) and atomic writes."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from rag_metrics.errors import InputError
from rag_metrics.limits import MAX_JSON_DEPTH

__all__ = ["atomic_write_text", "decode_utf8", "loads_json", "parse_json", "read_bytes", "read_text"]


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


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write via a temporary file in the same folder and ``os.replace`` (never a half-written file)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, p)


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
