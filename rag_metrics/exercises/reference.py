"""Reference solutions, one per exercise: **server only**, never sent to a browser.

They are source text, run by the tests through the same harness as a student's code (in a separate
process); expected values never come from them (:mod:`rag_metrics.exercises.checks` asks the
engine), so a test that runs them checks the engine and the exercises against each other.
"""
from __future__ import annotations

__all__ = ["REFERENCE"]

REFERENCE: dict[str, str] = {
    "hit_rate_at_k": '''
def hit_rate_at_k(golden_dataset, retriever, k=5):
    if not golden_dataset:
        return 0.0
    hits = 0
    for item in golden_dataset:
        top = {r["id"] for r in retriever.retrieve(item["question"], top_k=k)[:k]}
        hits += bool(top & set(item["relevant_chunk_ids"]))
    return hits / len(golden_dataset)
''',
    "mean_reciprocal_rank": '''
def mean_reciprocal_rank(golden_dataset, retriever, top_k=10):
    if not golden_dataset:
        return 0.0
    total = 0.0
    for item in golden_dataset:
        relevant = set(item["relevant_chunk_ids"])
        ids = [r["id"] for r in retriever.retrieve(item["question"], top_k=top_k)][:top_k]
        total += next((1.0 / (i + 1) for i, cid in enumerate(ids) if cid in relevant), 0.0)
    return total / len(golden_dataset)
''',
    "precision_at_k": '''
def precision_at_k(golden_dataset, retriever, k=5):
    if not golden_dataset:
        return 0.0
    total = 0.0
    for item in golden_dataset:
        relevant = set(item["relevant_chunk_ids"])
        ids = [r["id"] for r in retriever.retrieve(item["question"], top_k=k)][:k]
        total += sum(cid in relevant for cid in ids) / k
    return total / len(golden_dataset)
''',
    "ndcg_at_k": '''
from math import log2


def dcg_at_k(relevances, k):
    total = 0.0
    for rank, rel in enumerate(relevances[:k], start=1):
        total += rel / log2(rank + 1)
    return total


def ndcg_at_k(retrieved_ids, relevant_ids, k):
    relevant = set(relevant_ids)
    if not relevant:
        return 0.0
    gains = [int(cid in relevant) for cid in retrieved_ids]
    return dcg_at_k(gains, k) / dcg_at_k([1] * min(len(relevant), k), k)


def mean_ndcg_at_k(golden_dataset, retriever, k=5):
    if not golden_dataset:
        return 0.0
    total = 0.0
    for item in golden_dataset:
        ids = [r["id"] for r in retriever.retrieve(item["question"], top_k=k)]
        total += ndcg_at_k(ids, item["relevant_chunk_ids"], k)
    return total / len(golden_dataset)
''',
    "recall_at_k": '''
def recall_at_k(golden_dataset, retriever, k=5):
    values = []
    for item in golden_dataset:
        relevant = set(item["relevant_chunk_ids"])
        if relevant:
            top = {r["id"] for r in retriever.retrieve(item["question"], top_k=k)[:k]}
            values.append(len(top & relevant) / len(relevant))
    return sum(values) / len(values) if values else 0.0
''',
    "evaluate_by_category": '''
def evaluate_by_category(golden_dataset, retriever, k=5):
    out = {}
    for item in golden_dataset:
        s = out.setdefault(item.get("category", "unknown"), {"hits": 0, "count": 0})
        top = {r["id"] for r in retriever.retrieve(item["question"], top_k=k)[:k]}
        s["count"] += 1
        s["hits"] += int(bool(top & set(item["relevant_chunk_ids"])))
    for s in out.values():
        s["hit_rate"] = s["hits"] / s["count"]
    return out
''',
    "analyze_failures": '''
def analyze_failures(golden_dataset, retriever, k=5):
    out = []
    for item in golden_dataset:
        results = retriever.retrieve(item["question"], top_k=k)[:k]
        ids = [r["id"] for r in results]
        if not set(ids) & set(item["relevant_chunk_ids"]):
            out.append({"question": item["question"], "expected_ids": list(item["relevant_chunk_ids"]),
                        "retrieved_ids": ids, "top_score": max((r["score"] for r in results), default=None)})
    return out
''',
}
