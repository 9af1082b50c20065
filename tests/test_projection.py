"""Corpus map: projection shapes, fit-on-chunks/transform-queries, links, and the chart spec."""
from __future__ import annotations

import json

import numpy as np
import pytest

from rag_metrics import Chunk, GoldenQuery, GoldenSet, Run
from rag_metrics.errors import InputError
from rag_metrics.evaluation import evaluate
from rag_metrics.insights.projection import LINK_KINDS, NOT_COVERED, available_methods, corpus_map_chart, project_corpus
from rag_metrics.metrics.options import EvalOptions
from rag_metrics.retrieval import HashingEncoder

TEXTS = {
    "billing#0": "Invoices are emailed every month to the billing owner.",
    "billing#1": "Change the card used for payments in billing settings.",
    "sync#0": "Notes sync across devices every five minutes.",
    "sync#1": "Offline edits sync when you reconnect.",
    "export#0": "Export notes as Markdown or PDF.",
    "export#1": "Bulk export is available on the Plus plan.",
}
CHUNKS = [Chunk(i, i.split("#")[0], t, 0, len(t)) for i, t in TEXTS.items()]
GOLDEN = GoldenSet((
    GoldenQuery("q1", "where do invoices go?", "factual", {"billing#0": 2, "billing#1": 0}),
    GoldenQuery("q2", "do offline edits sync?", "factual", {"sync#1": 1}),
    GoldenQuery("q3", "weather tomorrow?", "out_of_scope", {}),
))
ENC = HashingEncoder(32)


def _map(result=None, **kw):
    x = ENC.encode([c.text for c in CHUNKS])
    q = ENC.encode([g.question for g in GOLDEN])
    return project_corpus(CHUNKS, x, GOLDEN, q, result, **kw), x, q


def test_shapes_and_coverage():
    cm, x, q = _map(n_clusters=2)
    assert cm.method == "pca"
    assert list(cm.chunks.columns) == ["chunk_id", "doc_id", "category", "cluster", "covered_by_any_question",
                                       "n_questions", "preview", "x", "y"]
    assert len(cm.chunks) == 6 and len(cm.queries) == 3
    cov = cm.chunks.set_index("chunk_id")
    # billing#1 has grade 0: judged, but not covered
    assert cov["covered_by_any_question"].to_dict() == {
        "billing#0": True, "billing#1": False, "sync#0": False, "sync#1": True, "export#0": False, "export#1": False}
    assert cov.loc["billing#0", "category"] == "factual" and cov.loc["export#0", "category"] == NOT_COVERED
    assert set(cm.chunks["cluster"]) <= {"cluster 1", "cluster 2"}
    assert cm.explained_variance is not None and 0 < sum(cm.explained_variance) <= 1 + 1e-9
    assert cm.axis_titles[0].startswith("PC 1")


def test_fit_on_chunks_transform_queries():
    from sklearn.decomposition import PCA

    cm, x, q = _map()
    pca = PCA(n_components=2, random_state=0).fit(x)
    np.testing.assert_allclose(cm.chunks[["x", "y"]].to_numpy(), pca.transform(x), atol=1e-5)
    np.testing.assert_allclose(cm.queries[["x", "y"]].to_numpy(), pca.transform(q), atol=1e-5)
    # adding a question does not move the chunks
    g2 = GoldenSet(GOLDEN.queries + (GoldenQuery("q4", "bulk export?", "", {"export#1": 1}),))
    cm2 = project_corpus(CHUNKS, x, g2, ENC.encode([g.question for g in g2]))
    np.testing.assert_allclose(cm2.chunks[["x", "y"]].to_numpy(), cm.chunks[["x", "y"]].to_numpy())


def test_links_with_result():
    run = Run.from_rankings({"q1": ["billing#1", "sync#0"], "q2": ["sync#1", "sync#0", "export#0"]})
    res = evaluate(GOLDEN, run)
    cm, _, _ = _map(res, k=2)
    got = {(r.query_id, r.chunk_id): (r.kind, None if r.rank is None or str(r.rank) == "<NA>" else int(r.rank))
           for r in cm.links.itertuples()}
    assert got == {
        ("q1", "billing#0"): (LINK_KINDS[1], None),       # relevant, missed
        ("q1", "billing#1"): (LINK_KINDS[2], 1),          # grade 0: retrieved, not relevant
        ("q1", "sync#0"): (LINK_KINDS[2], 2),
        ("q2", "sync#1"): (LINK_KINDS[0], 1),             # relevant, retrieved
        ("q2", "sync#0"): (LINK_KINDS[2], 2),
    }
    row = cm.links[(cm.links.query_id == "q2") & (cm.links.chunk_id == "sync#1")].iloc[0]
    chunk = cm.chunks.set_index("chunk_id").loc["sync#1"]
    query = cm.queries.set_index("query_id").loc["q2"]
    assert (row.x2, row.y2, row.x, row.y) == pytest.approx((chunk.x, chunk.y, query.x, query.y))
    # without a result: relevant lines only
    cm0, _, _ = _map()
    assert set(cm0.links["kind"]) == {LINK_KINDS[1]}


def test_chart_spec():
    res = evaluate(GOLDEN, Run.from_rankings({"q1": ["billing#0"], "q2": ["sync#0"]}))
    cm, _, _ = _map(res)
    spec = corpus_map_chart(cm, query_id="q2", color="cluster").to_dict()
    params = {p["name"]: p for p in spec["params"]}
    assert params["query"]["select"]["type"] == "point" and params["query"]["value"] == [{"query_id": "q2"}]
    text = json.dumps(spec)
    assert '"filter": {"param": "query"' in text          # lines/rings/labels follow the selection
    marks = [(layer.get("mark") or {}).get("type") for layer in spec["layer"]]
    assert marks[0] == "rule" and "point" in marks and "text" in marks
    assert '"not covered"' in text and '"square"' in text     # uncovered chunks get their own shape
    assert spec["resolve"]["scale"]["color"] == "independent"
    # no preselection
    assert "value" not in {p["name"]: p for p in corpus_map_chart(cm).to_dict()["params"]}["query"]
    with pytest.raises(InputError, match="not on the map"):
        corpus_map_chart(cm, query_id="nope")
    with pytest.raises(InputError, match="color"):
        corpus_map_chart(cm, color="x")  # type: ignore[arg-type]  # bad input on purpose


def test_validation():
    x = ENC.encode([c.text for c in CHUNKS])
    q = ENC.encode([g.question for g in GOLDEN])
    with pytest.raises(InputError, match="one row per chunk"):
        project_corpus(CHUNKS, x[:3], GOLDEN, q)
    with pytest.raises(InputError, match="one row per golden query"):
        project_corpus(CHUNKS, x, GOLDEN, q[:1])
    with pytest.raises(InputError, match="unknown projection"):
        project_corpus(CHUNKS, x, GOLDEN, q, method="tsne")  # type: ignore[arg-type]  # bad input on purpose
    if "umap" not in available_methods():
        with pytest.raises(InputError, match="umap-learn"):
            project_corpus(CHUNKS, x, GOLDEN, q, method="umap")
        assert project_corpus(CHUNKS, x, GOLDEN, q, method="auto").method == "pca"
    # a single chunk still projects (second axis padded)
    one = project_corpus(CHUNKS[:1], x[:1], GoldenSet(()), np.zeros((0, x.shape[1]), np.float32))
    assert one.chunks[["x", "y"]].shape == (1, 2)


# ---- document-level corpora (BEIR/TREC labels name documents) ---------------------------------
DOC_GOLDEN = GoldenSet((
    GoldenQuery("d1", "where do invoices go?", "factual", {"billing": 1}),
    GoldenQuery("d2", "do offline edits sync?", "factual", {"sync": 2, "export": 0}),
))


def _doc_map(result=None, **kw):
    x = ENC.encode([c.text for c in CHUNKS])
    q = ENC.encode([g.question for g in DOC_GOLDEN])
    return project_corpus(CHUNKS, x, DOC_GOLDEN, q, result, **kw), x, q


def test_document_labels_cover_every_chunk_of_the_document():
    cm, _, _ = _doc_map(n_clusters=0)  # level "auto": labels name documents, not chunks
    cov = cm.chunks.set_index("chunk_id")["covered_by_any_question"].to_dict()
    assert cov == {"billing#0": True, "billing#1": True, "sync#0": True, "sync#1": True,
                   "export#0": False, "export#1": False}  # export has grade 0: judged, not relevant


def test_document_level_links_go_to_the_documents_nearest_chunk():
    chunk_run = Run.from_rankings({"d1": ["export#1", "billing#1", "billing#0"], "d2": ["sync#0", "sync#1"]})
    to_doc = {c.id: c.doc_id for c in CHUNKS}
    res = evaluate(DOC_GOLDEN, chunk_run, EvalOptions(level="document"), chunk_to_doc=to_doc)
    cm, x, q = _doc_map(res, k=2, n_clusters=0)
    links = cm.links.set_index(["query_id", "kind"])
    # d1: documents ranked export (1), billing (2); billing is relevant and retrieved at rank 2
    assert links.loc[("d1", LINK_KINDS[0]), "rank"] == 2
    assert links.loc[("d1", LINK_KINDS[2]), "rank"] == 1
    # the line to a document ends at the chunk of that document nearest the question
    xn = x / np.linalg.norm(x, axis=1, keepdims=True)
    qn = q / np.linalg.norm(q, axis=1, keepdims=True)
    best_billing = ["billing#0", "billing#1"][int(np.argmax(xn[:2] @ qn[0]))]
    assert links.loc[("d1", LINK_KINDS[0]), "chunk_id"] == best_billing
    assert set(cm.links["query_id"]) == {"d1", "d2"}  # every labelled question draws lines
    # explicit chunk level on document labels: nothing matches, no lines (the old behaviour)
    cm_chunk, _, _ = _doc_map(n_clusters=0, level="chunk")
    assert cm_chunk.links.empty and not cm_chunk.chunks["covered_by_any_question"].any()


def test_many_documents_drop_the_colour_legend():
    many = [Chunk(f"doc{i}#0", f"doc{i}", f"text number {i} about topic {i % 7}", 0, 20) for i in range(30)]
    x = ENC.encode([c.text for c in many])
    cm = project_corpus(many, x, GoldenSet(()), np.zeros((0, x.shape[1])), n_clusters=0)
    spec = json.dumps(corpus_map_chart(cm, color="doc_id").to_dict())
    assert "30 documents share 20 colours" in spec
    few = json.dumps(corpus_map_chart(_map(n_clusters=0)[0], color="doc_id").to_dict())
    assert "share 20 colours" not in few and '"symbolLimit": 60' in few  # the legend is kept
