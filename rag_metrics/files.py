"""Reading and writing user files: one place for the messages (file:line, byte offset) and atomic writes."""
from __future__ import annotations

import os
from pathlib import Path

from rag_metrics.errors import InputError

__all__ = ["read_bytes", "decode_utf8", "read_text", "atomic_write_text"]


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
