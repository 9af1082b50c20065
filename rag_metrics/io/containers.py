"""What wraps a file's content: gzip and Parquet, taken off before any reader looks at it, within a budget.

:func:`unwrap` takes off gzip (``.gz``, detected by its magic bytes, around any supported format) and
Parquet (``PAR1``).  A Parquet table with a query column, an id column and a score column (``q_id,
doc_id, score`` as ``ranx`` writes it) becomes TREC text (qrels when the scores are whole numbers,
else a run); any other table becomes JSON lines, one object a row, so a RAG log, a golden set or a
corpus saved as Parquet reads like its JSONL twin.  Every reader (:mod:`rag_metrics.io.trec`,
:mod:`rag_metrics.io.corpus`, :mod:`rag_metrics.io.raglog`, :mod:`rag_metrics.systems.uploads`) and
the one reader (:mod:`rag_metrics.formats`) call it, so a ``.gz`` or ``.parquet`` file works
wherever its plain twin does.

The budget (a decompression bomb is refused before it is expanded)
------------------------------------------------------------------
* Every byte a layer gives out (gzip's content, the Parquet table's text) counts against one budget,
  :func:`read_limit`: :data:`MAX_UNWRAPPED_BYTES` on the command line; in the app, the upload limit
  (``server.maxUploadSize``), which the app shell sets for each browser run with :func:`read_budget`.
  Decompression stops at the budget plus one byte.
* One gzip layer: gzip inside gzip is refused (a 253-byte double gzip held 30 MB).
* A Parquet file is sized from its metadata (rows, uncompressed bytes) before any row is read, then
  read a batch at a time with its strings kept as dictionaries, each batch's decoded size counted
  before it is turned into text (a 19 KB Parquet file repeating one long string held 152 MB).
"""
from __future__ import annotations

import json
import os
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import PurePath
from typing import Any

from rag_metrics.errors import InputError
from rag_metrics.io.files import read_bytes

__all__ = ["MAX_UNWRAPPED_BYTES", "is_wrapped", "read_budget", "read_limit", "read_unwrapped", "unwrap"]

#: Largest content read out of a ``.gz`` or Parquet file outside the app (bytes, all layers together).
MAX_UNWRAPPED_BYTES = 200 * 1024 * 1024

_LIMIT: ContextVar[int | None] = ContextVar("rag_metrics_read_limit", default=None)
_GZIP_MAGIC = b"\x1f\x8b"
_PARQUET_MAGIC = b"PAR1"
_QID_COLS = ("q_id", "query_id", "qid", "query-id", "query")
_DOC_COLS = ("doc_id", "docid", "chunk_id", "corpus-id", "doc")
_SCORE_COLS = ("score", "grade", "relevance", "rel", "label")
_BATCH_ROWS = 1024
_CHUNK = 1 << 20  # gzip is decompressed 1 MB at a time


@contextmanager
def read_budget(max_bytes: int) -> Iterator[None]:
    """Within the ``with`` block, :func:`unwrap` gives out at most ``max_bytes`` (all layers together;
    the app shell sets the upload limit for each browser run)."""
    token = _LIMIT.set(max(1, int(max_bytes)))
    try:
        yield
    finally:
        _LIMIT.reset(token)


def read_limit() -> int:
    """The unwrapping budget in force: :func:`read_budget`'s, else :data:`MAX_UNWRAPPED_BYTES`."""
    limit = _LIMIT.get()
    return MAX_UNWRAPPED_BYTES if limit is None else limit


def is_wrapped(head: bytes) -> bool:
    """Whether a file's first bytes are gzip's or Parquet's magic bytes (:func:`unwrap` has work to do)."""
    return head[:2] == _GZIP_MAGIC or head[:4] == _PARQUET_MAGIC


def _over(name: str, what: str, limit: int) -> InputError:
    return InputError(f"{name}: {what} is over the limit of {limit:,} bytes for what a compressed or Parquet "
                      "file holds; upload a smaller file (split it), or evaluate it with the command line "
                      "(rag-metrics evaluate)")


def _decompressor() -> Any:
    return zlib.decompressobj(16 + zlib.MAX_WBITS)


def _gunzip(data: bytes, name: str, budget: int, limit: int) -> bytes:
    """gzip's content, at most ``budget`` bytes: decompression stops at ``budget + 1``."""
    d = _decompressor()
    out = bytearray()
    try:
        while True:
            out += d.decompress(data, min(_CHUNK, budget + 1 - len(out)))
            if len(out) > budget:
                raise _over(name, "the gzip file's content", limit)
            data = d.unconsumed_tail
            if d.eof and d.unused_data[:2] == _GZIP_MAGIC:  # several gzip members one after another
                data, d = d.unused_data, _decompressor()
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


def _decoded_size(arr: Any) -> int:
    """Bytes an Arrow array's values take once decoded (a dictionary's entries counted per use),
    without decoding them."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = arr.type
    if pa.types.is_dictionary(t):
        d = arr.dictionary
        sizes = (pc.binary_length(d) if pa.types.is_string(d.type) or pa.types.is_binary(d.type)
                 or pa.types.is_large_string(d.type) or pa.types.is_large_binary(d.type)
                 else pa.array([max(1, d.nbytes // max(1, len(d)))] * len(d), pa.int64()))
        total = pc.sum(pc.take(pc.cast(sizes, pa.int64()), arr.indices)).as_py()
        return int(total or 0) + len(arr)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _decoded_size(arr.flatten()) + 2 * len(arr)
    if pa.types.is_struct(t):
        return sum(_decoded_size(f) for f in arr.flatten()) + 2 * len(arr)
    if pa.types.is_map(t):
        return _decoded_size(arr.keys) + _decoded_size(arr.items) + 2 * len(arr)
    if pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        return int(pc.sum(pc.binary_length(arr)).as_py() or 0) + len(arr)
    return int(arr.nbytes) + len(arr)


def _parquet(data: bytes, name: str, role: str | None, budget: int, limit: int) -> tuple[bytes, str, str]:
    """Parquet bytes -> (text bytes, file name for the readers, what it became), at most ``budget`` bytes
    of text: sized from its metadata first, then batch by batch before each batch is decoded."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
        import pyarrow.types as pt
    except ImportError:  # pragma: no cover - pyarrow is a requirement
        raise InputError(f"{name}: a Parquet file, and reading Parquet needs pyarrow; `pip install pyarrow`, or "
                         "save the table as CSV") from None
    try:
        pf = pq.ParquetFile(pa.BufferReader(data))
        md = pf.metadata
        cols = list(pf.schema_arrow.names)
        q, d, s = _column(cols, _QID_COLS), _column(cols, _DOC_COLS), _column(cols, _SCORE_COLS)
        trec = bool(q and d and s and not (set(c.lower() for c in cols) & {"question", "contexts", "text"}))
        # Each row is at least its keys as JSON (a TREC line, ``q 0 d 1``); the table at least its pages.
        row_floor = 8 if trec else 3 + sum(len(json.dumps(c)) + 4 for c in cols)
        stored = sum(md.row_group(i).total_byte_size for i in range(md.num_row_groups))
        if md.num_rows * row_floor > budget or stored > budget:
            raise _over(name, f"the Parquet table ({md.num_rows:,} rows, {stored:,} bytes uncompressed)", limit)
        strings = [pf.schema.column(i).path for i in range(len(pf.schema))
                   if pf.schema.column(i).physical_type == "BYTE_ARRAY"]
        pf = pq.ParquetFile(pa.BufferReader(data), read_dictionary=strings)
        whole = bool(trec and s and pt.is_integer(pf.schema_arrow.field(s).type))
        as_qrels = role == "qrels" or (role is None and whole)
        out: list[str] = []
        rank: dict[Any, int] = {}
        size, written, stem = 0, 0, PurePath(name).stem
        for batch in pf.iter_batches(batch_size=_BATCH_ROWS):
            size += sum(_decoded_size(c) for c in batch.columns) + batch.num_rows * row_floor
            if size > budget:  # before the batch is decoded
                raise _over(name, "the Parquet table's text", limit)
            if trec:
                qs, ds, ss = (batch.column(c).to_pylist() for c in (q, d, s))
                if as_qrels:
                    lines = [f"{a} 0 {b} {c}" for a, b, c in zip(qs, ds, ss)]
                else:
                    lines = []
                    for a, b, c in zip(qs, ds, ss):
                        rank[a] = rank.get(a, 0) + 1
                        lines.append(f"{a} Q0 {b} {rank[a]} {c} {stem}")
            else:
                lines = [json.dumps(r, ensure_ascii=False, default=str) for r in batch.to_pylist()]
            written += sum(len(x) + 1 for x in lines)
            if written > budget:  # (JSON escapes can make the text longer than the values)
                raise _over(name, "the Parquet table's text", limit)
            out.extend(lines)
    except InputError:
        raise
    except (pa.ArrowException, OSError, ValueError) as e:
        raise InputError(f"{name}: starts like a Parquet file (PAR1) but cannot be read ({str(e)[:200]}); write it "
                         "again (e.g. DataFrame.to_parquet), or save it as CSV") from None
    text = ("\n".join(out) + "\n").encode("utf-8")
    if len(text) > budget:  # (the estimate above is close; this is the exact count)
        raise _over(name, "the Parquet table's text", limit)
    if trec:
        return text, name, f"Parquet ({q}, {d}, {s})"
    return text, f"{name}.jsonl", "Parquet"


def unwrap(data: bytes, filename: str, role: str | None = None, *,
           max_bytes: int | None = None) -> tuple[bytes, str, tuple[str, ...]]:
    """Take gzip and Parquet off ``data``: ``(content, name for the readers, wrappings taken off)``.

    ``role`` (``"qrels"``, ``"run"`` or None) decides what a ``q_id, doc_id, score`` Parquet table
    becomes; without it whole-number scores make qrels.  What the layers give out, all together, is at
    most ``max_bytes`` (default :func:`read_limit`); one gzip layer, then one Parquet layer.  Raises
    :class:`InputError` for a damaged gzip or Parquet file, or one over the budget (before it is
    expanded).  Content in neither wrapping comes back unchanged.
    """
    limit = read_limit() if max_bytes is None else max_bytes
    budget = limit
    wraps: list[str] = []
    name = filename or "file"
    if data[:2] == _GZIP_MAGIC:
        data = _gunzip(data, name, budget, limit)
        budget -= len(data)
        p = PurePath(name)
        if p.suffix.lower() in (".gz", ".gzip"):
            name = str(p.with_suffix(""))
        wraps.append("gzip-compressed")
        if data[:2] == _GZIP_MAGIC:
            raise InputError(f"{filename or name}: gzip inside gzip; the lab takes off one layer of gzip: decompress "
                             "the file once (gunzip) and give that")
    if data[:4] == _PARQUET_MAGIC:
        data, name, what = _parquet(data, name, role, budget, limit)
        wraps.append(what)
    return data, name, tuple(wraps)


def read_unwrapped(path: str | os.PathLike[str], role: str | None = None) -> tuple[bytes, str, tuple[str, ...]]:
    """:func:`unwrap` of a file's bytes (messages name ``path``)."""
    return unwrap(read_bytes(path), str(path), role)
