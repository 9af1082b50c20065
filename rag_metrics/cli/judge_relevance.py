"""``rag-metrics judge-relevance``: fill the holes of a qrels file with an LLM judge's UMBRELA
grades, and measure the judge against people.

::

    rag-metrics judge-relevance --qrels G --run R [--run R2 ...] --judge-url URL --judge-model M
        [--pool-depth 10] [--corpus C] [--unlabelled-as-zero] --out completed.qrels

The pool is every run's top K per question.  The judge grades (0-3, UMBRELA's prompt) every
pooled pair: the ones people judged measure the agreement, the others are written to ``--out``
with people's labels (TREC qrels; a person's label always wins).  stdout: the planned and the
actual calls, the confusion matrix, Cohen's kappa (binary at the relevance level; graded,
quadratic-weighted and plain), the ranking change (Kendall tau, with two runs or more), and as
the last line ``kappa=<binary kappa> n=<pairs people judged and the judge graded>``.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from rag_metrics.cli._common import add_renamed, fmt, spelled, table
from rag_metrics.cli._output import PROG, stderr
from rag_metrics.errors import InputError

__all__ = ["add_parser", "run", "add_judge_options", "judge_config", "progress_printer", "passage_texts"]


def add_judge_options(p: argparse.ArgumentParser) -> None:
    """``--judge-url``, ``--judge-model`` and the call settings shared by ``draft``."""
    p.add_argument("--judge-url", required=True, metavar="URL",
                   help="OpenAI-compatible base URL, e.g. http://localhost:11434/v1")
    p.add_argument("--judge-model", required=True, metavar="NAME", help="chat model of the judge")
    p.add_argument("--api-key-env", default="RAG_METRICS_JUDGE_KEY", metavar="VAR",
                   help="environment variable holding the API key (default RAG_METRICS_JUDGE_KEY)")
    p.add_argument("--concurrency", type=int, default=4, metavar="N", help="judge calls in flight (default 4)")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S", help="seconds per judge call (default 60)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the judge's call cache")
    p.add_argument("--dry-run", action="store_true", help="print the planned calls and stop (nothing is asked)")


def judge_config(args: argparse.Namespace, **extra: Any) -> Any:
    from rag_metrics.answers.llm import JudgeConfig

    return JudgeConfig(args.judge_url, args.judge_model, api_key_env=args.api_key_env,
                       concurrency=args.concurrency, timeout=args.timeout, **extra)


def progress_printer(command: str) -> Any:
    """A JudgeProgress callback printing calls, cache hits and tokens on stderr."""
    tty = sys.stderr.isatty()
    state = {"last": 0.0}

    def cb(p: Any) -> None:
        now = time.monotonic()
        if p.done < p.total and now - state["last"] < (0.5 if tty else 10.0):
            return
        state["last"] = now
        msg = (f"{PROG} {command}: judge calls {p.done}/{p.total}, cache hits {p.cache_hits}, "
               f"tokens {p.tokens:,}, {p.elapsed:.1f} s")
        print(("\r" if tty else "") + msg, end="" if tty and p.done < p.total else "\n", file=sys.stderr, flush=True)
    return cb


def cost_line(p: Any) -> str:
    """The "after" line: calls made to the endpoint, cache hits, tokens."""
    return (f"judge calls made: {p.done - p.cache_hits} (+{p.cache_hits} from the cache), "
            f"tokens {p.prompt_tokens:,} prompt + {p.completion_tokens:,} completion")


def passage_texts(corpus_path: str | None, chunk_size: int, chunk_overlap: int,
                  ids: set[str]) -> tuple[dict[str, str], str]:
    """``{id: text}`` for chunk ids and document ids of ``--corpus`` (default: the sample corpus,
    used only when it knows every id asked for), and the corpus's description."""
    from rag_metrics.errors import ValidationReport
    from rag_metrics.io.corpus import load_corpus
    from rag_metrics.retrieval.chunking import chunk_corpus, validate_chunk_args

    size, overlap = validate_chunk_args(chunk_size, chunk_overlap)
    explicit = corpus_path is not None
    if corpus_path is None:
        from rag_metrics.sample import sample_paths

        corpus_path = str(sample_paths().docs)
    report = ValidationReport()
    corpus = load_corpus(corpus_path, report=report)
    texts = {d.id: d.text for d in corpus}
    texts.update({c.id: c.text for c in chunk_corpus(corpus, size, overlap)})
    missing = [i for i in ids if i not in texts and not i.startswith("unmatched:")]
    if not explicit and missing:
        raise InputError(f"--corpus is needed: {len(missing)} id(s) of the runs and qrels (e.g. {missing[0]!r}) are "
                         "not chunks of the sample corpus; pass the corpus they come from")
    if missing:
        stderr(f"{PROG}: {len(missing)} id(s) are not in {corpus_path} at chunk size {size}, overlap {overlap} "
               f"(e.g. {missing[0]!r}); they are not judged")
    return texts, f"{corpus_path}{'' if explicit else ' (the sample corpus; pass --corpus for another)'}"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``judge-relevance`` on an ``argparse`` subparsers object."""
    from rag_metrics.retrieval.chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE

    p = subparsers.add_parser(
        "judge-relevance", help="grade the unjudged pairs of runs with an LLM judge (UMBRELA 0-3); agreement "
                                "with people (kappa) and the ranking change",
        description="Pool the runs' top K, grade every pooled (question, chunk) pair with an OpenAI-compatible "
                    "judge on UMBRELA's 0-3 scale, write people's labels plus the judge's grades for the "
                    "unjudged pairs as TREC qrels, and measure the judge on the pairs people judged.")
    p.add_argument("--qrels", required=True, metavar="PATH",
                   help="people's labels: a golden set (.jsonl/.json/.csv), TREC qrels, or BEIR qrels/folder")
    p.add_argument("--run", required=True, action="append", metavar="PATH",
                   help="TREC run (repeatable: every run's top K is pooled; two or more give the ranking change)")
    add_judge_options(p)
    add_renamed(p, "--pool-depth", "--k", type=int, default=10, metavar="N",
                help="pool depth: the top N of every run are judged (default 10; was --k)")
    p.add_argument("--out", required=True, metavar="PATH", help="completed qrels to write (TREC format)")
    p.add_argument("--corpus", default=None, metavar="PATH",
                   help="corpus of the ids (folder, .jsonl or BEIR folder); default: the sample corpus")
    p.add_argument("--chunk-size", type=int, default=DEFAULT_CHUNK_SIZE, metavar="N")
    p.add_argument("--chunk-overlap", type=int, default=DEFAULT_CHUNK_OVERLAP, metavar="N")
    p.add_argument("--queries", default=None, metavar="PATH",
                   help="question texts when --qrels has none (BEIR queries.jsonl or a golden set)")
    p.add_argument("--relevance-level", type=int, default=1, metavar="L",
                   help="grade >= L is relevant for the binary kappa and the metrics (default 1)")
    p.add_argument("--unlabelled-as-zero", action="store_true",
                   help="the people's labels are complete (as in the sample): an unlabelled pooled chunk of a "
                        "labelled question is the people's 0")
    p.add_argument("--samples", type=int, default=1, metavar="N",
                   help="samples per pair (2+: the judge's own consistency; cost multiplies)")
    p.add_argument("--metric", default="ndcg@10", metavar="NAME@K",
                   help="metric of the ranking change (default ndcg@10)")
    return p


def run(args: argparse.Namespace) -> int:
    """Handler of ``rag-metrics judge-relevance``."""
    from rag_metrics.authoring.judge_agreement import ranking_change, relevance_agreement
    from rag_metrics.authoring.relevance_judge import RelevanceJudge, completed_golden, judge_golden, pooled_pairs
    from rag_metrics.io.trec import read_qrels, read_run, write_trec_qrels
    from rag_metrics.metrics.options import EvalOptions
    from rag_metrics.types import GoldenSet

    if args.pool_depth < 1:
        raise InputError(f"{spelled(args, 'pool_depth', '--pool-depth')} must be at least 1, got {args.pool_depth}")
    out = Path(args.out)
    if not out.parent.exists():
        raise InputError(f"{out}: folder {out.parent} does not exist; create it or choose another --out path")
    golden: GoldenSet = read_qrels(args.qrels)
    if args.queries:
        from rag_metrics.cli.retrieve import load_queries

        texts_q = load_queries(args.queries)
        from dataclasses import replace

        golden = GoldenSet(tuple(replace(q, question=q.question or texts_q.get(q.id, "")) for q in golden), golden.name)
    no_text = sum(1 for q in golden if not q.question.strip())
    if no_text == len(golden):
        raise InputError(f"{args.qrels}: no question text; the judge needs the questions: pass --queries "
                         "(BEIR queries.jsonl or a golden set)")
    if no_text:
        stderr(f"{PROG} judge-relevance: {no_text} question(s) have no text and are not judged (pass --queries)")
    runs = {}
    for rp in args.run:
        r, rep = read_run(rp)
        rep.raise_if_errors()
        name = Path(rp).stem
        while name in runs:
            name += "'"
        runs[name] = r
    ids = {i for r in runs.values() for i in r.factorized_ids()[1].tolist()}
    texts, where = passage_texts(args.corpus, args.chunk_size, args.chunk_overlap, ids)
    pairs = pooled_pairs(golden, runs, args.pool_depth, texts, unjudged_only=False,
                         unlabelled_as_zero=args.unlabelled_as_zero)
    judge = RelevanceJudge(judge_config(args, json_mode=False), n_samples=args.samples,
                           cache=False if args.no_cache else None)
    n_people = sum(1 for p in pairs if p.people is not None)
    print(f"pool: top {args.pool_depth} of {len(runs)} run(s), {len(pairs)} (question, chunk) pairs: {n_people} "
          f"judged by people, {len(pairs) - n_people} unjudged; passages from {where}")
    print(f"planned judge calls: {judge.planned_calls(len(pairs))} (at most; cached replies cost nothing), "
          f"about {judge.planned_prompt_tokens(pairs):,} prompt tokens")
    if args.dry_run:
        return 0
    suggestions = judge.grade(pairs, progress=progress_printer("judge-relevance"))
    print(cost_line(judge.last_progress))
    bad: dict[str, int] = {}
    for s in suggestions:
        if not s.ok:
            bad[s.status] = bad.get(s.status, 0) + 1
    if bad:
        print("not graded: " + ", ".join(f"{k} x{v}" for k, v in sorted(bad.items())))
    holes = [s for s in suggestions if s.people is None]
    completed = completed_golden(golden, holes)
    write_trec_qrels(completed, out)
    added = sum(1 for s in holes if s.ok)
    print(f"wrote {out}: people's labels plus {added} judge grade(s) for unjudged pairs")
    agree = relevance_agreement(((s.people, s.grade if s.ok else None) for s in suggestions),
                                args.relevance_level)
    print(f"\njudge vs people on {agree.n} pairs people judged (rows: people, columns: judge)")
    conf = agree.confusion
    print(table(["people \\ judge"] + [str(c) for c in conf.columns],
                [[str(i)] + [str(int(v)) for v in conf.loc[i]] for i in conf.index]))
    print(f"kappa binary (grade >= {args.relevance_level}) {fmt(agree.kappa_binary)}; graded 0-3: quadratic-weighted "
          f"{fmt(agree.kappa_quadratic)}, plain {fmt(agree.kappa_plain)}; same grade {fmt(agree.exact)}")
    people_classes = {int(s.people >= args.relevance_level) for s in suggestions if s.people is not None and s.ok}
    if len(people_classes) == 1 and not args.unlabelled_as_zero:
        print("note: every pair people judged is " + ("relevant" if people_classes == {1} else "not relevant")
              + ", so the binary kappa cannot show agreement; if the people's labels are complete (as in the "
              "sample), pass --unlabelled-as-zero")
    if len(runs) >= 2:
        opts = EvalOptions(relevance_level=args.relevance_level)
        rc = ranking_change({"people": golden, "completed": completed, "judge": judge_golden(golden, suggestions)},
                            runs, args.metric, opts)
        print(f"\nsystems ranked by {rc.metric}")
        cols = [c for c in rc.table.columns if c != "system"]
        print(table(["system"] + cols, [[str(r["system"])] + [fmt(float(r[c])) if "rank" not in c else str(r[c])
                                                              for c in cols] for _, r in rc.table.iterrows()]))
        print("ranking change: " + ", ".join(f"Kendall tau people vs {n} = {fmt(t)}" for n, t in rc.tau.items()))
    print(f"kappa={fmt(agree.kappa_binary)} n={agree.n}")
    return 0
