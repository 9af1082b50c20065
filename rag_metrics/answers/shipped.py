"""The shipped vectors of the sample answers: every text the offline and reference judges embed."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rag_metrics.answers.embed import _shipped_dir, default_embedding_cache, default_encoder
from rag_metrics.answers.reference import ReferenceMetrics


def ship_answer_embeddings(items: Sequence[Any], encoder: Any = None, cache: Any = None) -> Any:
    """(Re)write the shipped vectors of every text the offline and reference judges embed for
    ``items`` (the sample answers).  Returns the folder."""
    from rag_metrics.answers.offline import OfflineJudge
    from rag_metrics.retrieval.cache import ship_embeddings

    texts = list(dict.fromkeys(OfflineJudge.texts(items) + ReferenceMetrics.texts(items)))
    enc = encoder if encoder is not None else default_encoder()
    return ship_embeddings(_shipped_dir(), enc, [str(i) for i in range(len(texts))], texts,
                           cache=cache if cache is not None else default_embedding_cache(),
                           extra={"what": "texts embedded by the offline answer judges for answers.jsonl"})
