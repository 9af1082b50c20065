"""pgvector (a real PostgreSQL server with the vector extension, started by ``pgserver`` and
dropped afterwards) and Qdrant (qdrant-client local mode) adapters.

Expected rankings are computed here with NumPy (exact cosine over the same embeddings), so the
databases are checked against independent arithmetic.  The encoder is the hashing test encoder
(deterministic, no model download).
"""
from __future__ import annotations

import numpy as np
import pytest

from rag_metrics.errors import InputError
from rag_metrics.evaluation import evaluate
from rag_metrics.retrieval.encoders import HashingEncoder
from rag_metrics.systems.base import ResultMemo
from rag_metrics.types import Chunk, GoldenQuery, GoldenSet

TEXTS = [
    "Refunds are possible within 30 days of purchase.",
    "There are three plans: Free, Plus and Pro.",
    "To get a refund open Settings and choose Billing.",
    "Reset your password from the sign-in page.",
    "Attachments up to 200 MB on the Plus plan.",
    "Deleted notes stay in the trash for 30 days.",
]
CHUNKS = [Chunk(f"d{i // 2}#{i % 2}", f"d{i // 2}", t, 0, len(t)) for i, t in enumerate(TEXTS)]
GOLDEN = GoldenSet((
    GoldenQuery("q1", "how many days for a refund of my purchase", relevant={"d0#0": 2, "d1#0": 1}),
    GoldenQuery("q2", "reset my password", relevant={"d1#1": 1}),
    GoldenQuery("q3", "which plans are there", relevant={"d0#1": 1}),
))
ENC = HashingEncoder(dim=32)


def _expected(k: int) -> dict[str, list[str]]:
    emb = ENC.encode([c.text for c in CHUNKS])
    out = {}
    for q in GOLDEN:
        s = emb @ ENC.encode([q.question])[0]
        order = sorted(range(len(CHUNKS)), key=lambda i: (-round(float(s[i]), 5), [-b for b in CHUNKS[i].id.encode()]))
        out[q.id] = [CHUNKS[i].id for i in order[:k]]
    return out


def _rankings(sr):
    return {q: [i for i, _ in items] for q, items in sr.run.rankings().items()}


# ---- pgvector ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pg():
    """A fresh PostgreSQL server (pgserver bundles PostgreSQL and pgvector), deleted afterwards."""
    import tempfile

    pgserver = pytest.importorskip("pgserver")
    folder = tempfile.mkdtemp(prefix="rag_metrics_pg_")
    srv = pgserver.get_server(folder, cleanup_mode="delete")
    srv.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    yield srv.get_uri()
    srv.cleanup()


@pytest.mark.slow
def test_pgvector_index_query_and_metrics(pg):
    from rag_metrics.systems.backends.pgvector import (
        PgvectorConfig,
        index_chunks,
        pgvector_system,
    )

    cfg = PgvectorConfig(pg, "lab_chunks")
    assert index_chunks(cfg, CHUNKS, ENC) == len(CHUNKS)
    memo = ResultMemo()
    system = pgvector_system(cfg, ENC, name="pg", memo=memo)
    sr = system.rank(GOLDEN.questions(), 4)
    assert sr.ok, sr.failures
    assert _rankings(sr) == _expected(4)
    # scores are cosine similarities computed by PostgreSQL
    emb = ENC.encode([c.text for c in CHUNKS])
    top_id, top_score = sr.run.rankings()["q2"][0]
    i = [c.id for c in CHUNKS].index(top_id)
    assert top_score == pytest.approx(float(emb[i] @ ENC.encode([GOLDEN.get("q2").question])[0]), abs=1e-5)
    assert memo.queried == 3
    system.rank(GOLDEN.questions(), 2)
    assert memo.queried == 3  # K change: nothing re-queried
    with pytest.raises(InputError, match="already exists"):
        index_chunks(cfg, CHUNKS, ENC)
    ip = pgvector_system(PgvectorConfig(pg, "lab_chunks", metric="inner_product"), ENC, memo=ResultMemo())
    assert _rankings(ip.rank(GOLDEN.questions(), 4)) == _expected(4)  # unit vectors: same order
    res = evaluate(GOLDEN, sr.run)
    assert 0.0 <= res.mean("ndcg", 4) <= 1.0
    system.close()


@pytest.mark.slow
def test_pgvector_clear_errors(pg):
    from rag_metrics.systems.backends.pgvector import (
        PgvectorConfig,
        index_chunks,
        pgvector_system,
    )

    cfg = PgvectorConfig(pg, "wide_chunks")
    index_chunks(cfg, CHUNKS, HashingEncoder(dim=48))
    with pytest.raises(InputError, match=r"holds 48-dimensional vectors but the lab's encoder \(hashing-32\) gives 32"):
        pgvector_system(cfg, ENC).rank(GOLDEN.questions(), 3)
    with pytest.raises(InputError, match=r"table 'nope' not found .*tables with a vector column: .*wide_chunks"):
        pgvector_system(PgvectorConfig(pg, "nope"), ENC).rank(GOLDEN.questions(), 3)
    with pytest.raises(InputError,
                       match=r"id_column 'chunk' is not a column of 'wide_chunks' \(columns: id, embedding, text\)"):
        pgvector_system(PgvectorConfig(pg, "wide_chunks", id_column="chunk"), ENC).rank(GOLDEN.questions(), 3)
    with pytest.raises(InputError, match="embedding_column 'text' of 'wide_chunks' has type text, not vector"):
        pgvector_system(PgvectorConfig(pg, "wide_chunks", embedding_column="text"), ENC).rank(GOLDEN.questions(), 3)
    bad = pg.replace("postgresql://postgres:@/", "postgresql://postgres:@/nodb_here")
    with pytest.raises(InputError, match="cannot connect to PostgreSQL"):
        pgvector_system(PgvectorConfig(bad, "t"), ENC).rank(GOLDEN.questions(), 3)
    with pytest.raises(InputError, match=r"refers to \$\{NOT_SET_DSN_X\}"):
        pgvector_system(PgvectorConfig("${NOT_SET_DSN_X}", "t"), ENC).rank(GOLDEN.questions(), 3)


def test_pgvector_config_validation_and_redaction():
    from rag_metrics.systems.backends.pgvector import PgvectorConfig

    with pytest.raises(InputError, match="must be 'name' or 'schema.name'"):
        PgvectorConfig("postgresql://x", "a.b.c")
    with pytest.raises(InputError, match="metric 'l2' is not one of cosine, inner_product"):
        PgvectorConfig("postgresql://x", "t", metric="l2")  # type: ignore[arg-type]  # a bad value on purpose
    cfg = PgvectorConfig("postgresql://me:hunter2@db:5432/x", "t")
    assert "hunter2" not in str(cfg.public()) and "me:***@db:5432" in cfg.public()["dsn"]
    assert "hunter2" not in str(PgvectorConfig("host=db password=hunter2", "t").public())
    assert PgvectorConfig("host=db password=${PW}", "t").public()["dsn"] == "host=db password=${PW}"


# ---- Qdrant (local mode) -------------------------------------------------------------------------
def test_qdrant_memory_index_query_and_errors():
    from qdrant_client import QdrantClient

    from rag_metrics.systems.backends.qdrant import (
        QdrantConfig,
        index_chunks,
        point_id,
        qdrant_system,
    )

    client = QdrantClient(location=":memory:")
    cfg = QdrantConfig("lab", path=":memory:")
    index_chunks(cfg, CHUNKS, ENC, client=client)
    memo = ResultMemo()
    system = qdrant_system(cfg, ENC, name="qd", memo=memo, client=client)
    sr = system.rank(GOLDEN.questions(), 4)
    assert sr.ok and _rankings(sr) == _expected(4)
    system.rank(GOLDEN.questions(), 3)
    assert memo.queried == 3
    with pytest.raises(InputError,
                       match=r"collection 'other' not found at local path ':memory:'; collections there: lab"):
        qdrant_system(QdrantConfig("other", path=":memory:"), ENC, client=client).rank(GOLDEN.questions(), 3)
    with pytest.raises(InputError, match="holds 32-dimensional vectors but the lab's encoder"):
        qdrant_system(cfg, HashingEncoder(dim=16), client=client).rank(GOLDEN.questions(), 3)
    with pytest.raises(InputError, match=r"have no payload field 'doc' \(fields: 'chunk_id', 'text'\)"):
        qdrant_system(QdrantConfig("lab", path=":memory:", id_payload_key="doc"), ENC, client=client,
                      memo=ResultMemo()).rank({"q1": "refund"}, 3)
    by_point = qdrant_system(QdrantConfig("lab", path=":memory:", id_payload_key=None), ENC, client=client,
                             memo=ResultMemo()).rank({"q1": "refund"}, 1)
    assert by_point.run.ids[0] in {point_id(c.id) for c in CHUNKS}
    client.close()


def test_qdrant_local_folder_and_euclid_sign(tmp_path):
    from rag_metrics.systems.backends.qdrant import (
        QdrantConfig,
        index_chunks,
        qdrant_system,
    )

    cfg = QdrantConfig("lab_euclid", path=str(tmp_path / "qd"))
    index_chunks(cfg, CHUNKS, ENC, distance="Euclid")
    sr = qdrant_system(cfg, ENC, memo=ResultMemo()).rank(GOLDEN.questions(), 4)
    assert sr.ok and _rankings(sr) == _expected(4)  # unit vectors: Euclid order == cosine order
    assert all(s <= 0 for _, s in sr.run.rankings()["q1"])  # distances negated: higher is better


def test_qdrant_config_validation():
    from rag_metrics.systems.backends.qdrant import QdrantConfig

    with pytest.raises(InputError, match="exactly one of url"):
        QdrantConfig("c")
    with pytest.raises(InputError, match="exactly one of url"):
        QdrantConfig("c", url="http://x", path=":memory:")
    with pytest.raises(InputError, match=r"api_key must be a \$\{VAR\} reference"):
        QdrantConfig("c", url="http://x", api_key="abc")
    assert QdrantConfig("c", url="http://x", api_key="${QK}").public()["api_key"] == "${QK}"


def test_qdrant_server_down_is_clear():
    import socket

    from rag_metrics.systems.backends.qdrant import QdrantConfig, qdrant_system

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = QdrantConfig("c", url=f"http://127.0.0.1:{port}", timeout=2)
    with pytest.raises(InputError, match=f"cannot reach Qdrant at http://127.0.0.1:{port}"):
        qdrant_system(cfg, ENC, memo=ResultMemo()).rank(GOLDEN.questions(), 3)


def test_expected_is_not_trivial():
    # the hand ranking differs between questions (guards against a constant ranking passing)
    exp = _expected(2)
    assert len({tuple(v) for v in exp.values()}) == 3
    assert np.isfinite(ENC.encode(["x"])).all()
