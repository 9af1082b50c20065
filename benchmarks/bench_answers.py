"""Answer-metric throughput (offline judge, LLM judge on loopback) and the careful-vs-sloppy check.

Answers: the 128 shipped sample answers (``sample_corpus/answers.jsonl``).

- offline, cold: context support + answer-question similarity + reference metrics with an empty
  embedding cache (model already loaded: its load time is printed separately);
- offline, warm: the same again (every sentence vector read from the cache);
- LLM judge, cold / warm: faithfulness + answer relevancy (3 questions) through the openai client
  against the loopback OpenAI-compatible server of the tests (canned replies), concurrency 4, with
  an empty judge cache, then again (every call a cache hit).  ``--latency S`` adds S seconds to
  every chat reply (a model's think time; default 0.05).
- done-when: does context support score the careful answer above the sloppy one?

Run::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_answers.py [--latency 0.05]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from answers_server import JudgeServer, Scenario  # noqa: E402

from rag_metrics.answers import agreement as ag  # noqa: E402
from rag_metrics.answers.data import load_sample_answers  # noqa: E402
from rag_metrics.answers.embed import add_shipped_answer_embeddings  # noqa: E402
from rag_metrics.answers.llm import JudgeConfig, LLMJudge  # noqa: E402
from rag_metrics.answers.llm_cache import JudgeCache  # noqa: E402
from rag_metrics.answers.offline import SUPPORT_THRESHOLD, OfflineJudge  # noqa: E402
from rag_metrics.answers.reference import ReferenceMetrics  # noqa: E402
from rag_metrics.answers.scoring import evaluate_answers  # noqa: E402
from rag_metrics.answers.text import split_sentences  # noqa: E402
from rag_metrics.retrieval import get_encoder  # noqa: E402
from rag_metrics.retrieval.cache import EmbeddingCache  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "answers.txt"))
    args = ap.parse_args()
    lines: list[str] = []

    def say(s: str = "") -> None:
        print(s, flush=True)
        lines.append(s)

    items, labels = load_sample_answers()
    n = len(items)
    n_sent = sum(len(split_sentences(i.answer)) + sum(len(split_sentences(c)) for c in i.contexts) for i in items)
    say(f"answers: {n} shipped sample answers; {n_sent} sentences to embed (answers + contexts, with repeats)")
    t = time.perf_counter()
    enc = get_encoder()
    enc.encode(["warm-up"])
    say(f"model load (all-MiniLM-L6-v2, CPU): {time.perf_counter() - t:.1f} s (not in the figures below)")

    with tempfile.TemporaryDirectory() as d:
        cache = EmbeddingCache(d)
        judges = [OfflineJudge(enc, cache), ReferenceMetrics(enc, cache)]
        t = time.perf_counter()
        ev = evaluate_answers(items, judges)
        cold = time.perf_counter() - t
        cache2 = EmbeddingCache(d)  # a new process: vectors read back from disk
        t = time.perf_counter()
        evaluate_answers(items, [OfflineJudge(enc, cache2), ReferenceMetrics(enc, cache2)])
        warm = time.perf_counter() - t
    say(f"offline judge + reference, cold cache: {cold:.2f} s ({n / cold:.1f} answers/s)")
    with tempfile.TemporaryDirectory() as d:
        shipped = add_shipped_answer_embeddings(EmbeddingCache(d))
        t = time.perf_counter()
        evaluate_answers(items, [OfflineJudge(enc, shipped), ReferenceMetrics(enc, shipped)])
        first = time.perf_counter() - t
    say(f"offline judge + reference, first start on the sample (shipped vectors, empty user cache): "
        f"{first:.2f} s ({n / first:.0f} answers/s)")
    say(f"offline judge + reference, warm cache: {warm:.3f} s ({n / warm:.0f} answers/s)")

    sc = Scenario(unsupported={t for i in items for t, lab in labels[i.id].sentences if lab == "unsupported"},
                  latency=args.latency)
    with tempfile.TemporaryDirectory() as d, JudgeServer(sc) as srv:
        cfg = JudgeConfig(srv.base_url, "canned", "canned-embed", concurrency=4)
        for label in ("cold", "warm"):
            judge = LLMJudge(cfg, cache=JudgeCache(Path(d) / "judge.sqlite3"))
            t = time.perf_counter()
            judge.judge(items)
            dt = time.perf_counter() - t
            p = judge.last_progress
            say(f"LLM judge (loopback, {args.latency * 1000:.0f} ms per chat reply, concurrency 4), {label} cache: "
                f"{dt:.2f} s, {p.done} calls ({p.cache_hits} cache hits), {n / dt:.1f} answers/s")

    say("")
    order = ag.ordering_summary(ag.ordering_table(ev, "context_support", labels=labels))
    say(f"done-when: context support scores careful above sloppy for {order['ordered']} of {order['n']} questions "
        f"({order['fraction']:.2f}); threshold for sentence verdicts {SUPPORT_THRESHOLD}")
    un = ag.ordering_summary(ag.ordering_table(ev, "context_support", labels=labels), only_unsupported=True)
    say(f"  where the sloppy answer holds an unsupported claim (people's labels): {un['ordered']} of {un['n']} "
        f"({un['fraction']:.2f})")
    f = order["failures"]
    for r in f.itertuples():
        why = ("sloppy has unsupported claims" if r.worse_has_unsupported
               else f"sloppy is supported but {r.worse_relevancy}")
        say(f"  fails on {r.question_id}: careful {r.careful:.3f} <= sloppy {r.sloppy:.3f} ({why})")
    st = ag.sentence_table(ev, labels)
    s = ag.agreement_stats(st)
    say(f"sentence verdicts vs people: agreement {s['agreement']:.3f} over {s['n']} sentences; "
        f"'unsupported' precision {s['precision_unsupported']:.3f}, recall {s['recall_unsupported']:.3f}")
    a = ag.agreement_stats(ag.answer_table(ev, labels, "context_support"))
    say(f"answers with an unsupported claim vs people: agreement {a['agreement']:.3f}; precision "
        f"{a['precision_unsupported']:.3f}, recall {a['recall_unsupported']:.3f}")
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
