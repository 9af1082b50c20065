"""Refresh the retrieval contexts of ``answers.jsonl`` (the hand-written sample answers).

Every answer in ``answers.jsonl`` was written from the **top-5 chunks of the dense retriever**
(all-MiniLM-L6-v2, default chunking) for its golden question.  This script recomputes those
chunks with the project's retriever and rewrites the ``contexts`` and ``context_ids`` fields,
keeping everything else (answers, sentence labels, relevancy labels) as written by hand.  Run it
after changing the documents, the chunker or the model, then re-read the answers whose contexts
changed: their labels may no longer hold (the script lists them).

    python sample_corpus/build_answer_contexts.py [--check]

``--check`` changes nothing and exits 1 when a row's contexts differ from the retriever's.
Without it, the script also rewrites ``answers_embeddings/``: the vectors of every text the offline
answer judges embed for these answers (so the Answers page starts without loading the model).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's rag_metrics, not an installed copy
TOP_K = 5


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only report rows whose contexts differ")
    args = ap.parse_args(argv)
    from rag_metrics.io.golden import load_golden
    from rag_metrics.retrieval.sample_index import load_sample_index

    idx = load_sample_index(root=HERE, kind="dense")
    golden = {q.id: q for q in load_golden(HERE / "golden.jsonl")}
    text = {c.id: c.text for c in idx.chunks}
    path = HERE / "answers.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    qids = sorted({r["question_id"] for r in rows})
    ranked = idx.retriever.retrieve({q: golden[q].question for q in qids}, k=TOP_K).rankings()
    changed = []
    for r in rows:
        ids = [i for i, _ in ranked[r["question_id"]]][:TOP_K]
        if r.get("context_ids") != ids:
            changed.append(r["id"])
        r["context_ids"] = ids
        r["contexts"] = [text[i] for i in ids]
    if args.check:
        for rid in changed:
            print(f"contexts differ: {rid}", file=sys.stderr)
        return 1 if changed else 0
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    from rag_metrics.answers.data import load_sample_answers
    from rag_metrics.answers.shipped import ship_answer_embeddings

    items, _ = load_sample_answers(path)
    print(f"wrote {ship_answer_embeddings(items)}")
    print(f"wrote {len(rows)} rows; contexts changed for {len(changed)}: re-read their labels"
          + (": " + ", ".join(changed) if changed and len(changed) < 20 else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
