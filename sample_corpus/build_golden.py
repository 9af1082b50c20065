"""Build sample_corpus/golden.jsonl (chunk-level labels) from golden_evidence.jsonl (quotes).

Run from the repository root with the project's Python:

    python sample_corpus/build_golden.py            # rewrite golden.jsonl
    python sample_corpus/build_golden.py --check    # exit 1 if golden.jsonl is out of date
    python sample_corpus/build_golden.py --root sample_corpus_da   # another sample folder (Danish)

The evidence file labels *text*, not chunks: each evidence item names a document, an exact quote
from it and a grade (3 = answers the question fully, 2 = mostly, 1 = partly / related).  This
script loads the corpus with ``load_corpus("sample_corpus/docs")``, chunks it with the default
``chunk_corpus`` settings, finds the character span of every quote and labels the chunks that
overlap it.

Mapping rule (for one quote of length L and one chunk that overlaps it by ``ov`` characters):

* the chunk holds the whole quote, or ``ov >= 0.3 * L``, or ``ov >= 60``  -> the quote's grade;
* otherwise, if ``ov >= 20``                                              -> ``max(grade - 1, 1)``
  (the chunk carries a fragment of the evidence: still relevant, one grade lower);
* otherwise (a sliver of fewer than 20 characters, e.g. two words of a
  sentence that continues in the next chunk)                               -> no label.

Every quote is guaranteed at least one label: since chunks cover the whole document, some chunk
overlaps the quote by ``min(L, ...)``; if the only overlaps are slivers (a quote split across many
tiny chunks, impossible at the default settings) the largest one keeps the grade.  When several
quotes label the same chunk, the chunk keeps the highest grade.

The script fails loudly (exit 2) when a quote is missing from its document, occurs more than once
(the label would be ambiguous), names an unknown document, or has a grade outside 1-3, and when
an in-scope query ends up with no label or an out-of-scope query has evidence.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rag_metrics.io.corpus import load_corpus  # noqa: E402
from rag_metrics.metrics.evidence import held_grade  # noqa: E402
from rag_metrics.retrieval.chunking import chunk_corpus  # noqa: E402

OUT_OF_SCOPE = "out_of_scope"
CATEGORIES = ("factual", "comparison", "procedural", OUT_OF_SCOPE)


class EvidenceError(Exception):
    pass


#: The label a chunk gets from one quote it overlaps: THE relevance rule of the library
#: (:func:`rag_metrics.metrics.evidence.held_grade`, docs/evidence.md), the same one evidence judging uses.
chunk_grade = held_grade


def build(evidence_path: Path, docs_path: Path) -> tuple[list[dict], dict]:
    corpus = load_corpus(str(docs_path))
    chunks = chunk_corpus(corpus)
    by_doc: dict[str, list] = {}
    for c in chunks:
        by_doc.setdefault(c.doc_id, []).append(c)
    order = {c.id: i for i, c in enumerate(chunks)}
    texts = {d.id: d.text for d in corpus}
    stats = Counter(chunks=len(chunks), documents=len(texts))

    rows = []
    seen_ids = set()
    for lineno, line in enumerate(evidence_path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        qid = row["id"]
        where = f"{evidence_path.name}:{lineno} ({qid})"
        if qid in seen_ids:
            raise EvidenceError(f"{where}: duplicate query id")
        seen_ids.add(qid)
        if row["category"] not in CATEGORIES:
            raise EvidenceError(f"{where}: unknown category {row['category']!r}")
        relevant: dict[str, int] = {}
        for ev in row["evidence"]:
            doc, quote, grade = ev["doc"], ev["quote"], ev["grade"]
            if doc not in texts:
                raise EvidenceError(f"{where}: unknown document {doc!r}")
            if grade not in (1, 2, 3):
                raise EvidenceError(f"{where}: grade must be 1, 2 or 3, got {grade!r}")
            text = texts[doc]
            start = text.find(quote)
            if start < 0:
                raise EvidenceError(f"{where}: quote not found in {doc}: {quote!r}")
            if text.find(quote, start + 1) >= 0:
                raise EvidenceError(f"{where}: quote occurs more than once in {doc}: {quote!r}")
            end = start + len(quote)
            overlaps = [(min(end, c.end) - max(start, c.start), c)
                        for c in by_doc[doc] if c.start < end and c.end > start]
            labelled = 0
            for ov, c in overlaps:
                g = chunk_grade(grade, ov, len(quote))
                if g is None:
                    stats["sliver_overlaps_ignored"] += 1
                    continue
                if g < grade:
                    stats["partial_overlaps_downgraded"] += 1
                relevant[c.id] = max(relevant.get(c.id, 0), g)
                labelled += 1
            if not labelled:  # only slivers: keep the biggest one
                ov, c = max(overlaps, key=lambda t: t[0])
                relevant[c.id] = max(relevant.get(c.id, 0), grade)
            if labelled > 1:
                stats["quotes_spanning_several_chunks"] += 1
            stats["quotes"] += 1
        if row["category"] == OUT_OF_SCOPE and relevant:
            raise EvidenceError(f"{where}: out-of-scope query has evidence")
        if row["category"] != OUT_OF_SCOPE and not relevant:
            raise EvidenceError(f"{where}: in-scope query has no evidence")
        ordered = dict(sorted(relevant.items(), key=lambda kv: (-kv[1], order[kv[0]])))
        rows.append({"id": qid, "question": row["question"], "category": row["category"],
                     "relevant": ordered, "expected_answer": row["expected_answer"]})
        stats[f"queries_{row['category']}"] += 1
    return rows, dict(stats)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", type=Path, default=HERE,
                    help="sample folder holding golden_evidence.jsonl, docs/ and golden.jsonl (default: this one)")
    ap.add_argument("--evidence", type=Path, default=None, help="default: ROOT/golden_evidence.jsonl")
    ap.add_argument("--docs", type=Path, default=None, help="default: ROOT/docs")
    ap.add_argument("--out", type=Path, default=None, help="default: ROOT/golden.jsonl")
    ap.add_argument("--check", action="store_true", help="only check that --out is up to date")
    args = ap.parse_args(argv)
    args.evidence = args.evidence or args.root / "golden_evidence.jsonl"
    args.docs = args.docs or args.root / "docs"
    args.out = args.out or args.root / "golden.jsonl"
    try:
        rows, stats = build(args.evidence, args.docs)
    except EvidenceError as e:
        print(f"build_golden: ERROR: {e}", file=sys.stderr)
        return 2
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else None
        if current != text:
            print(f"build_golden: {args.out} is out of date; rerun without --check", file=sys.stderr)
            return 1
        print(f"build_golden: {args.out} is up to date ({len(rows)} queries)")
        return 0
    args.out.write_text(text, encoding="utf-8")
    print(f"build_golden: wrote {len(rows)} queries to {args.out}")
    for k in sorted(stats):
        print(f"  {k}: {stats[k]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
