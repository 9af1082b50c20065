"""A LlamaIndex ``EmbeddingQAFinetuneDataset`` (``dataset.save_json(path)``) read as a golden set and a
corpus: by :func:`rag_metrics.io.trec.read_qrels` and :func:`rag_metrics.formats.describe`."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from rag_metrics.errors import InputError
from rag_metrics.types import Corpus, Document, GoldenQuery, GoldenSet

__all__ = ["llamaindex_dataset"]


def llamaindex_dataset(value: Mapping[str, Any], source: str) -> tuple[Any, Any, list[str]]:
    """A LlamaIndex ``EmbeddingQAFinetuneDataset`` as ``(GoldenSet, Corpus, warnings)``.

    ``queries`` ``{qid: text}`` give the questions, ``relevant_docs`` ``{qid: [node_id]}`` the
    relevant ids (grade 1), ``corpus`` ``{node_id: text}`` one document per node, whose id is the
    node id (so the golden ids name documents of this corpus; evaluate at ``--level document`` or
    with runs that return node ids).
    """
    queries, corpus, rel = value.get("queries"), value.get("corpus"), value.get("relevant_docs")
    for key, v in (("queries", queries), ("corpus", corpus), ("relevant_docs", rel)):
        if not isinstance(v, Mapping):
            raise InputError(f"{source}: field {key!r} of a LlamaIndex EmbeddingQAFinetuneDataset must be an object "
                             f"{{id: ...}}, got {type(v).__name__}; save the dataset again with "
                             "dataset.save_json(path)")
    assert isinstance(queries, Mapping) and isinstance(corpus, Mapping) and isinstance(rel, Mapping)
    warnings: list[str] = []
    out = []
    for qid, text in queries.items():
        ids = rel.get(qid, [])
        if isinstance(ids, str):
            ids = [ids]
        if not isinstance(ids, list):
            warnings.append(f"{source}: relevant_docs[{qid!r}] is not a list; the query has no relevant id")
            ids = []
        missing = [i for i in ids if str(i) not in corpus]
        if missing:
            warnings.append(f"{source}: query {qid!r}: relevant node {missing[0]!r} is not in 'corpus'")
        out.append(GoldenQuery(str(qid), str(text), "", {str(i): 1 for i in ids}))
    stray = [q for q in rel if q not in queries]
    if stray:
        warnings.append(f"{source}: relevant_docs names {len(stray)} query id(s) not in 'queries' (first "
                        f"{stray[0]!r}); they are left out")
    docs = tuple(Document(str(i), str(t), str(i), source) for i, t in corpus.items())
    name = PurePath(source).stem
    return GoldenSet(tuple(out), name), Corpus(docs, name=name), warnings
