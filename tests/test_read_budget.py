"""Decompression bombs are refused before they are expanded (issue 50): one budget for every layer of
a file (:func:`rag_metrics.io.containers.unwrap`), one gzip layer, Parquet sized before it is read."""
from __future__ import annotations

import gzip
import io

import pytest

from rag_metrics.errors import InputError
from rag_metrics.io import containers
from rag_metrics.io.containers import read_budget, read_limit, unwrap

CAP = 2 * 1024 * 1024


def _parquet(table: dict) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.table(table), buf, compression="zstd")
    return buf.getvalue()


@pytest.fixture
def gunzipped(monkeypatch) -> list[int]:
    """The bytes every gzip decompressor gave out."""
    out: list[int] = []
    real = containers._decompressor

    class Counting:
        def __init__(self):
            self.d = real()

        def decompress(self, data, max_length=0):
            got = self.d.decompress(data, max_length)
            out.append(len(got))
            return got

        def __getattr__(self, name):
            return getattr(self.d, name)

    monkeypatch.setattr(containers, "_decompressor", Counting)
    return out


def test_a_double_gzip_is_refused_after_one_layer(gunzipped):
    bomb = gzip.compress(gzip.compress(b"\n" * (30 * 1024 * 1024), 9), 9)
    assert len(bomb) < 300  # the 253-byte file: 30 MB inside
    with pytest.raises(InputError, match=r"log\.jsonl\.gz\.gz: gzip inside gzip.*decompress the file once"):
        unwrap(bomb, "log.jsonl.gz.gz")
    assert sum(gunzipped) < 100_000  # the outer layer only


def test_a_gzip_bomb_just_over_the_cap_stops_at_the_cap(gunzipped):
    bomb = gzip.compress(b"a" * (CAP + 1), 9)
    with read_budget(CAP), pytest.raises(InputError, match=r"run\.txt\.gz: the gzip file's content is over the "
                                                             r"limit of 2,097,152 bytes.*split it"):
        unwrap(bomb, "run.txt.gz")
    assert sum(gunzipped) == CAP + 1  # stopped at the budget plus one byte
    assert read_limit() == containers.MAX_UNWRAPPED_BYTES  # the budget holds only inside the block
    assert unwrap(gzip.compress(b"a" * CAP), "run.txt.gz", max_bytes=CAP)[0] == b"a" * CAP  # at the cap: read


def test_a_small_parquet_that_expands_to_a_huge_text_is_refused_before_its_rows_are_decoded(monkeypatch):
    bomb = _parquet({"question": ["x" * 100_000] * 1500})  # 150 MB of text
    assert len(bomb) < 20_000
    dumped: list[object] = []
    real = containers.json.dumps
    monkeypatch.setattr(containers.json, "dumps", lambda v, **k: dumped.append(v) or real(v, **k))
    with read_budget(CAP), pytest.raises(InputError, match=r"bomb\.parquet: the Parquet table's text is over"):
        unwrap(bomb, "bomb.parquet")
    assert not [v for v in dumped if isinstance(v, dict)]  # no row was turned into text


def test_a_parquet_file_with_too_many_rows_is_refused_from_its_metadata(monkeypatch):
    import pyarrow.parquet as pq

    bomb = _parquet({"question": [None] * 300_000})

    def read(*a, **k):
        raise AssertionError("rows read")

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", read)
    with pytest.raises(InputError, match=r"the Parquet table \(300,000 rows"):
        unwrap(bomb, "g.parquet", max_bytes=CAP)


def test_the_layers_share_one_budget_and_real_files_still_read():
    table = _parquet({"question": ["what is rag?", "why?"], "contexts": [["a", "b"], None]})
    text, name, wraps = unwrap(gzip.compress(table), "g.parquet.gz", max_bytes=CAP)
    assert name == "g.parquet.jsonl" and wraps == ("gzip-compressed", "Parquet") and text.count(b"\n") == 2
    with pytest.raises(InputError, match="Parquet table"):  # its gzip content used most of the budget
        unwrap(gzip.compress(table), "g.parquet.gz", max_bytes=len(table) + len(text) - 1)
    qrels = _parquet({"q_id": ["1", "2"], "doc_id": ["a", "b"], "score": [1, 2]})
    assert unwrap(qrels, "q.parquet", max_bytes=CAP)[0] == b"1 0 a 1\n2 0 b 2\n"
    two_members = gzip.compress(b"a\n") + gzip.compress(b"b\n")
    assert unwrap(two_members, "x.txt.gz", max_bytes=CAP)[0] == b"a\nb\n"


def test_the_tune_page_s_sweep_upload_goes_through_the_bounded_reader(gunzipped):
    from rag_metrics.tuning.store import read_sweep_upload

    with read_budget(CAP), pytest.raises(InputError, match="over the limit of 2,097,152 bytes"):
        read_sweep_upload(gzip.compress(b" " * (10 * CAP)), "sweep.json")
    assert sum(gunzipped) == CAP + 1
    with pytest.raises(InputError, match="not a sweep file"):  # unwrapped, then read as a sweep
        read_sweep_upload(gzip.compress(b'{"kind": "other"}'), "sweep.json.gz")
