"""The tutor's retrieval, evaluated with the lab itself (issue 48): a RAG system's retriever scored by the lab.

The system: :class:`rag_metrics.tutor.retrieve.TutorIndex`, the course's passages (lessons, exercise prompts,
examples, hints and mistakes, the docs on conventions and metrics) searched with the lab's own retrievers.
The golden set: ``rag_metrics/tutor/questions.jsonl`` (the lab's golden-set format: student questions in
English (``en-*``) and Danish (``da-*``), each labelled with the passage ids that answer it).

For each retriever kind (``bm25``, ``dense``: multilingual e5-small, ``hybrid``: the two by RRF) and each
language:

- the run is what ``TutorIndex.search`` returns (the top 10 after the tutor's own steps: relative scores,
  repeated texts dropped), scored by the lab's ``rag_metrics.evaluation.evaluate`` (trec_eval conventions):
  hit rate@1, hit rate@3 (the tutor shows 3 passages), MRR (whole run of 10) and recall@3;
- cold build: the index built in a fresh, empty embedding cache (dense: the model loaded and every passage
  embedded); shipped: a fresh, empty cache with the vectors shipped in ``rag_metrics/tutor/embeddings/`` (a
  fresh install); warm build: built again in the same process (vectors from the cache); query: the time of
  one ``search`` of a text never seen (median and max; the first search of a process loads the model).

Then the ``where`` boost (``search(..., where=...)``: the step or exercise the student is on): each question
asked from the place of its first label (on topic), and from another question's place (off topic: a
question about MRR asked on the NDCG exercise), hit rate@3 and MRR against the search without ``where``.

Ratios are printed against ``bm25`` (the reference: instant, no model).  ``--save-runs DIR`` writes each
run as a TREC file, which the CLI scores too::

    rag-metrics evaluate --qrels rag_metrics/tutor/questions.jsonl --run DIR/tutor-hybrid.trec --k 1,3

Run::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_tutor_retrieval.py [--kinds bm25,dense,hybrid]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag_metrics.evaluation import evaluate  # noqa: E402
from rag_metrics.io.golden import load_golden  # noqa: E402
from rag_metrics.retrieval.cache import EmbeddingCache  # noqa: E402
from rag_metrics.tutor.retrieve import KINDS, TutorIndex  # noqa: E402
from rag_metrics.types import GoldenSet, Run  # noqa: E402

GOLDEN = ROOT / "rag_metrics" / "tutor" / "questions.jsonl"
LANGS = ("en", "da")
DEPTH = 10


def place_of(pid: str) -> str | None:
    """The ``where`` of the step or exercise passage ``pid`` belongs to (``None`` for a doc passage)."""
    parts = pid.split(".")
    if parts[0] == "lesson" and len(parts) >= 4 and parts[2] == "step":
        return f"lesson:{parts[1]}:{parts[3]}"
    if parts[0] == "exercise":
        return f"exercise:{parts[1]}"
    return None


def scores(golden: GoldenSet, run: Run) -> dict[str, float]:
    r = evaluate(golden, run)
    return {"hit@1": r.mean("hit_rate", 1), "hit@3": r.mean("hit_rate", 3), "mrr": r.mean("mrr"),
            "recall@3": r.mean("recall", 3)}


def subset(golden: GoldenSet, lang: str) -> GoldenSet:
    return GoldenSet(tuple(q for q in golden.queries if q.id.startswith(lang + "-")), name=f"tutor-{lang}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kinds", default=",".join(KINDS), help="retriever kinds, e.g. bm25,hybrid")
    ap.add_argument("--save-runs", metavar="DIR", help="write each kind's run (both languages) as a TREC file")
    args = ap.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    golden = load_golden(GOLDEN)
    per_lang = {lang: subset(golden, lang) for lang in LANGS}
    print(f"golden set: {GOLDEN.relative_to(ROOT)}: {len(golden.queries)} questions "
          + ", ".join(f"{lang} {len(g.queries)}" for lang, g in per_lang.items())
          + f"; {sum(len(q.relevant) for q in golden.queries) / len(golden.queries):.1f} labels a question")
    results: dict[str, dict[str, dict[str, float]]] = {}
    timing: dict[str, dict[str, float]] = {}
    runs: dict[str, Run] = {}
    indexes: dict[tuple[str, str], TutorIndex] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in kinds:
            results[kind], timing[kind], parts = {}, {}, []
            for lang in LANGS:
                cache = EmbeddingCache(Path(tmp) / kind)
                t0 = time.perf_counter()
                TutorIndex(lang, kind=kind, cache=cache, shipped=False)
                cold = time.perf_counter() - t0
                t0 = time.perf_counter()
                idx = TutorIndex(lang, kind=kind, cache=cache, shipped=False)
                warm = time.perf_counter() - t0
                t0 = time.perf_counter()
                TutorIndex(lang, kind=kind, cache=EmbeddingCache(Path(tmp) / f"{kind}-shipped"))
                shipped = time.perf_counter() - t0
                indexes[kind, lang] = idx
                g = per_lang[lang]
                times = []
                for n, q in enumerate(g.queries):
                    t0 = time.perf_counter()
                    idx.search(f"{q.question} ({kind} {n})", k=3)   # a text not yet in the query cache
                    times.append(time.perf_counter() - t0)
                run = idx.run({q.id: q.question for q in g.queries}, k=DEPTH)
                parts.append(run)
                results[kind][lang] = scores(g, run)
                timing[kind].update({f"cold_{lang}": cold, f"warm_{lang}": warm, f"shipped_{lang}": shipped,
                                     f"q_med_{lang}": statistics.median(times), f"q_max_{lang}": max(times)})
            runs[kind] = Run.concat(parts, name=f"tutor-{kind}")
            results[kind]["all"] = scores(golden, runs[kind])

    ref = kinds[0]
    print(f"\nquality (the lab's evaluate, trec_eval conventions; ratio against {ref})")
    print(f"  {'retriever':<8} {'lang':<4} {'hit@1':>6} {'hit@3':>6} {'MRR':>6} {'R@3':>6}"
          f"   hit@3 / {ref}  MRR / {ref}")
    for kind in kinds:
        for lang in (*LANGS, "all"):
            s, b = results[kind][lang], results[ref][lang]
            print(f"  {kind:<8} {lang:<4} {s['hit@1']:6.3f} {s['hit@3']:6.3f} {s['mrr']:6.3f} {s['recall@3']:6.3f}"
                  f"   {s['hit@3'] / b['hit@3']:10.2f}x  {s['mrr'] / b['mrr']:8.2f}x")
    print("\ntime (s): cold build = empty embedding cache, no shipped vectors (dense: model load + every passage "
          "embedded); shipped = empty cache + the shipped vectors (a fresh install); warm = vectors cached; "
          "query = one search of a new text (the first one loads the model)")
    print(f"  {'retriever':<8} {'cold en':>8} {'cold da':>8} {'shipped en':>10} {'shipped da':>10} {'warm en':>8} "
          f"{'warm da':>8} {'query med':>10} {'query max':>10}")
    for kind in kinds:
        t = timing[kind]
        qmed = statistics.median([t["q_med_en"], t["q_med_da"]])
        qmax = max(t["q_max_en"], t["q_max_da"])
        print(f"  {kind:<8} {t['cold_en']:8.2f} {t['cold_da']:8.2f} {t['shipped_en']:10.3f} {t['shipped_da']:10.3f} "
              f"{t['warm_en']:8.3f} {t['warm_da']:8.3f} "
              f"{qmed * 1000:8.1f}ms {qmax * 1000:8.1f}ms")

    print("\nthe where boost (asked on the place of the first label / on another question's place / no where)")
    for kind in kinds:
        row = []
        for label, pick in (("none", None), ("on topic", 0), ("off topic", 1)):
            parts = []
            for lang in LANGS:
                qs = per_lang[lang].queries
                places = [place_of(next(iter(q.relevant))) for q in qs]
                where = None if pick is None else {
                    q.id: places[i] if pick == 0 else next(
                        (p for p in places[i + 1:] + places[:i] if p and p != places[i]), None)
                    for i, q in enumerate(qs)}
                parts.append(indexes[kind, lang].run({q.id: q.question for q in qs}, k=DEPTH, where=where))
            s = scores(golden, Run.concat(parts))
            row.append(f"{label}: hit@3 {s['hit@3']:.3f} MRR {s['mrr']:.3f}")
        print(f"  {kind:<8} " + "   ".join(row))

    if args.save_runs:
        out = Path(args.save_runs)
        out.mkdir(parents=True, exist_ok=True)
        for kind, run in runs.items():
            path = out / f"tutor-{kind}.trec"
            with path.open("w", encoding="utf-8") as f:
                for qid, ranked in run.rankings().items():
                    for rank, (pid, score) in enumerate(ranked, start=1):
                        f.write(f"{qid} Q0 {pid} {rank} {score:g} tutor-{kind}\n")
            print(f"wrote {path}")


if __name__ == "__main__":
    main()
