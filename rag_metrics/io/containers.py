"""What wraps a file's content: gzip and Parquet, taken off before any reader looks at it.

:func:`unwrap` takes off gzip (``.gz``, detected by its magic bytes, around any supported format) and
Parquet (``PAR1``).  A Parquet table with a query column, an id column and a score column (``q_id,
doc_id, score`` as ``ranx`` writes it) becomes TREC text (qrels when the scores are whole numbers,
else a run); any other table becomes JSON lines, one object a row, so a RAG log, a golden set or a
corpus saved as Parquet reads like its JSONL twin.  Every reader (:mod:`rag_metrics.io.trec`,
:mod:`rag_metrics.io.corpus`, :mod:`rag_metrics.io.raglog`, :mod:`rag_metrics.systems.uploads`) and
the one reader (:mod:`rag_metrics.formats`) call it, so a ``.gz`` or ``.parquet`` file works
wherever its plain twin does.
"""
from __future__ import annotations

import json
import os
import zlib
from pathlib import PurePath
from typing import Any

from rag_metrics.errors import InputError
from rag_metrics.io.files import read_bytes

__all__ = ["MAX_UNWRAPPED_BYTES", "is_wrapped", "read_unwrapped", "unwrap"]

#: Largest content read out of a ``.gz`` or Parquet file (bytes, as the upload limit).
MAX_UNWRAPPED_BYTES = 200 * 1024 * 1024

_GZIP_MAGIC = b"\x1f\x8b"
_PARQUET_MAGIC = b"PAR1"
_QID_COLS = ("q_id", "query_id", "qid", "query-id", "query")
_DOC_COLS = ("doc_id", "docid", "chunk_id", "corpus-id", "doc")
_SCORE_COLS = ("score", "grade", "relevance", "rel", "label")


def is_wrapped(head: bytes) -> bool:
    """Whether a file's first bytes are gzip's or Parquet's magic bytes (:func:`unwrap` has work to do)."""
    return head[:2] == _GZIP_MAGIC or head[:4] == _PARQUET_MAGIC


def _gunzip(data: bytes, name: str) -> bytes:
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = bytearray()
    try:
        while True:
            out += d.decompress(data, MAX_UNWRAPPED_BYTES + 1 - len(out))
            if len(out) > MAX_UNWRAPPED_BYTES:
                raise InputError(f"{name}: gzip content is over {MAX_UNWRAPPED_BYTES:,} bytes; evaluate a smaller "
                                 "file or split it")
            data = d.unconsumed_tail
            if d.eof and d.unused_data[:2] == _GZIP_MAGIC:  # several gzip members one after another
                data, d = d.unused_data, zlib.decompressobj(16 + zlib.MAX_WBITS)
                continue
            if d.eof or not data:
                break
    except zlib.error as e:
        raise InputError(f"{name}: looks like a gzip file (it starts with 1f 8b) but cannot be decompressed "
                         f"({e}); compress it again with gzip, or give the file uncompressed") from None
    if not d.eof:
        raise InputError(f"{name}: the gzip file is cut off (no end of stream); copy the whole file again, "
                         "or give it uncompressed")
    return bytes(out)


def _column(names: list[str], wanted: tuple[str, ...]) -> str | None:
    low = {n.lower(): n for n in names}
    return next((low[w] for w in wanted if w in low), None)


def _parquet(data: bytes, name: str, role: str | None) -> tuple[bytes, str, str]:
    """Parquet bytes -> (text bytes, file name for the readers, what it became)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow is a requirement
        raise InputError(f"{name}: a Parquet file, and reading Parquet needs pyarrow; `pip install pyarrow`, or "
                         "save the table as CSV") from None
    try:
        table = pq.read_table(pa.py_buffer(data))
    except (pa.ArrowException, OSError, ValueError) as e:
        raise InputError(f"{name}: starts like a Parquet file (PAR1) but cannot be read ({str(e)[:200]}); write it "
                         "again (e.g. DataFrame.to_parquet), or save it as CSV") from None
    cols = list(table.column_names)
    q, d, s = _column(cols, _QID_COLS), _column(cols, _DOC_COLS), _column(cols, _SCORE_COLS)
    if q and d and s and not (set(c.lower() for c in cols) & {"question", "contexts", "text"}):
        import pyarrow.types as pt

        whole = pt.is_integer(table.schema.field(s).type)
        as_qrels = role == "qrels" or (role is None and whole)
        qs, ds, ss = (table.column(c).to_pylist() for c in (q, d, s))
        if as_qrels:
            lines = [f"{a} 0 {b} {c}" for a, b, c in zip(qs, ds, ss)]
        else:
            rank: dict[Any, int] = {}
            lines = []
            for a, b, c in zip(qs, ds, ss):
                rank[a] = rank.get(a, 0) + 1
                lines.append(f"{a} Q0 {b} {rank[a]} {c} {PurePath(name).stem}")
        text = "\n".join(lines) + "\n"
        return text.encode("utf-8"), name, f"Parquet ({q}, {d}, {s})"
    rows = table.to_pylist()
    text = "\n".join(json.dumps(r, ensure_ascii=False, default=str) for r in rows) + "\n"
    return text.encode("utf-8"), f"{name}.jsonl", "Parquet"


def unwrap(data: bytes, filename: str, role: str | None = None) -> tuple[bytes, str, tuple[str, ...]]:
    """Take gzip and Parquet off ``data``: ``(content, name for the readers, wrappings taken off)``.

    ``role`` (``"qrels"``, ``"run"`` or None) decides what a ``q_id, doc_id, score`` Parquet table
    becomes; without it whole-number scores make qrels.  Raises :class:`InputError` for a damaged
    gzip or Parquet file.  Content in neither wrapping comes back unchanged.
    """
    wraps: list[str] = []
    name = filename or "file"
    for _ in range(3):  # a .parquet.gz, at most
        if data[:2] == _GZIP_MAGIC:
            data = _gunzip(data, name)
            p = PurePath(name)
            if p.suffix.lower() in (".gz", ".gzip"):
                name = str(p.with_suffix(""))
            wraps.append("gzip-compressed")
        elif data[:4] == _PARQUET_MAGIC:
            data, name, what = _parquet(data, name, role)
            wraps.append(what)
        else:
            break
    return data, name, tuple(wraps)


def read_unwrapped(path: str | os.PathLike[str], role: str | None = None) -> tuple[bytes, str, tuple[str, ...]]:
    """:func:`unwrap` of a file's bytes (messages name ``path``)."""
    return unwrap(read_bytes(path), str(path), role)
