"""``rag-metrics answers``: answer metrics of a RAG log (offline approximations or an LLM judge).

Offline (default): context support and answer-question similarity (MiniLM), which approximate
but are **not** faithfulness and answer relevancy.  With ``--judge-url`` and ``--judge-model``:
faithfulness and (with ``--embed-model``) answer relevancy, as ragas 0.4 defines them.  Always,
where the log has a ground truth: semantic similarity and string similarity (null otherwise).

Exit codes: 0; 1 when a ``--fail-under`` threshold is missed; 2 for bad input.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import math
from typing import Any

from rag_metrics.cli._common import ci_cell, fmt, table
from rag_metrics.cli._output import PROG, stderr
from rag_metrics.errors import InputError

__all__ = ["add_parser", "parse_fail_under", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``answers`` on an ``argparse`` subparsers object."""
    ap = subparsers.add_parser(
        "answers", help="answer metrics of a RAG log: faithfulness, answer relevancy (LLM judge) or offline "
                        "approximations, and reference similarity",
        description="Score the answers of a RAG log (.jsonl/.json/.csv with question, answer, contexts and "
                    "optionally ground_truth). Offline by default; --judge-url/--judge-model use any "
                    "OpenAI-compatible endpoint (key from the environment variable --api-key-env).")
    ap.add_argument("--data", required=True, metavar="FILE", help="RAG log: .jsonl, .json (rows or the ragas "
                    "columnar shape) or .csv")
    ap.add_argument("--map", default=None, metavar="KEY=FIELD,...",
                    help="name the log's fields when its own names do not fit, e.g. question=query,answer=output,"
                         "contexts=results[].text (docs/your-files.md#column-mapping-when-sniffing-cannot-decide-"
                         "you-say-it)")
    ap.add_argument("--judge", choices=["offline", "llm"], default=None,
                    help="offline (default) or llm (implied by --judge-url)")
    ap.add_argument("--judge-url", metavar="URL", help="OpenAI-compatible base URL, e.g. http://localhost:11434/v1")
    ap.add_argument("--judge-model", metavar="NAME", help="chat model of the judge")
    ap.add_argument("--embed-model", metavar="NAME", help="embeddings model (needed for answer_relevancy)")
    ap.add_argument("--api-key-env", default="RAG_METRICS_JUDGE_KEY", metavar="VAR",
                    help="environment variable holding the API key (default RAG_METRICS_JUDGE_KEY)")
    ap.add_argument("--n-questions", type=int, default=3, metavar="N",
                    help="questions generated per answer for answer_relevancy (default 3)")
    ap.add_argument("--concurrency", type=int, default=4, metavar="N", help="judge calls in flight (default 4)")
    ap.add_argument("--timeout", type=float, default=60.0, metavar="S", help="seconds per judge call (default 60)")
    ap.add_argument("--no-json-mode", action="store_true",
                    help="do not send response_format=json_object (for servers that reject it)")
    ap.add_argument("--no-cache", action="store_true", help="do not read or write the judge's call cache")
    ap.add_argument("--per-item", action="store_true", help="also print one row per item (table and csv)")
    ap.add_argument("--format", choices=["table", "json", "csv"], default="table", help="output format")
    ap.add_argument("--fail-under", action="append", default=[], metavar="NAME=VALUE",
                    help="exit 1 when the mean of NAME is below VALUE, e.g. faithfulness=0.8 (repeatable)")
    return ap


def parse_fail_under(items: list[str], known: list[str]) -> list[tuple[str, float]]:
    """``(metric, threshold)`` pairs of ``--fail-under NAME=VALUE`` for the metrics computed."""
    out = []
    for item in items:
        for part in [p.strip() for p in item.split(",") if p.strip()]:
            name, sep, val = part.partition("=")
            if not sep:
                raise InputError(f"--fail-under: cannot read {part!r}; write NAME=VALUE, e.g. faithfulness=0.8")
            if name not in known:
                raise InputError(f"--fail-under: {name!r} is not computed by this judge; use one of "
                                 f"{', '.join(known)}")
            try:
                v = float(val)
            except ValueError:
                raise InputError(f"--fail-under: threshold {val!r} in {part!r} is not a number") from None
            if math.isnan(v) or not 0.0 <= v <= 1.0:
                raise InputError(f"--fail-under: threshold {v} in {part!r} is outside [0, 1]")
            out.append((name, v))
    return out


def _judges(args: argparse.Namespace, items: Any = ()) -> list[Any]:
    from rag_metrics.answers.embed import encoder_for_items
    from rag_metrics.answers.reference import ReferenceMetrics

    first: Any
    llm = args.judge == "llm" or args.judge_url is not None
    if args.judge == "offline" and (args.judge_url or args.judge_model):
        raise InputError("--judge offline takes no --judge-url/--judge-model; drop them or use --judge llm")
    if llm:
        if not args.judge_url or not args.judge_model:
            raise InputError("the LLM judge needs --judge-url URL and --judge-model NAME "
                             "(e.g. --judge-url http://localhost:11434/v1 --judge-model llama3.1:8b)")
        from rag_metrics.answers.llm import JudgeConfig, LLMJudge

        cfg = JudgeConfig(args.judge_url, args.judge_model, args.embed_model, api_key_env=args.api_key_env,
                          n_questions=args.n_questions, concurrency=args.concurrency, timeout=args.timeout,
                          json_mode=not args.no_json_mode)
        first = LLMJudge(cfg, cache=False if args.no_cache else None)
    else:
        from rag_metrics.answers.offline import OfflineJudge

        enc = encoder_for_items(items)  # the answers' language picks the model (rag_metrics.retrieval.choice)
        return [OfflineJudge(enc), ReferenceMetrics(enc)]
    return [first, ReferenceMetrics(encoder_for_items(items))]


def _progress() -> Any:
    """The judge's progress on stderr: the one printer of the judge commands."""
    from rag_metrics.cli.judge_relevance import progress_printer

    return progress_printer("answers")


def run(args: argparse.Namespace) -> int:
    """Handler of ``rag-metrics answers``."""
    from rag_metrics.answers.data import read_answers
    from rag_metrics.answers.scoring import evaluate_answers

    items, report = read_answers(args.data, mapping=args.map)
    for w in report.warning_lines():
        stderr(f"{PROG} answers: {w}")
    report.raise_if_errors(str(args.data))
    judges = _judges(args, items)
    known = [m for j in judges for m in j.metrics]
    thresholds = parse_fail_under(args.fail_under, known)
    ev = evaluate_answers(items, judges, progress=_progress() if args.judge_url else None)
    out = ev.to_json()
    for m in known:
        out["metrics"].setdefault(m, None)
    if args.format == "json":
        print(json.dumps(out, indent=2, ensure_ascii=False))
    elif args.format == "csv":
        print(_csv(ev, known, args.per_item), end="")
    else:
        print(_table(ev, known, args.per_item))
    failed = 0
    for name, v in thresholds:
        mean = out["metrics"].get(name)
        if mean is None or mean < v:
            stderr(f"{PROG} answers: FAIL {name} = {'null' if mean is None else fmt(mean)} < {v}")
            failed += 1
    return 1 if failed else 0


def _table(ev: Any, known: list[str], per_item: bool) -> str:
    s = ev.summary()
    rows = []
    for m in known:
        r = s[s.metric == m]
        if r.empty or r.iloc[0]["n"] == 0:
            n_failed = int(r.iloc[0]["n_failed"]) if not r.empty else len(ev.items)
            rows.append([m, "null", "", "0", str(n_failed)])
            continue
        r = r.iloc[0]
        rows.append([m, fmt(r["mean"]), ci_cell(float(r["ci_low"]), float(r["ci_high"]), int(r["n"])), str(int(r["n"])),
                     str(int(r["n_failed"]))])
    text = f"{len(ev.items)} answers, judge: {ev.judge}\n" + table(
        ["metric", "mean", "95% CI", "n", "not scored"], rows)
    statuses = ev.statuses()
    if statuses:
        counts: dict[str, int] = {}
        for d in statuses.values():
            for st in d.values():
                counts[st] = counts.get(st, 0) + 1
        text += "\nnot scored: " + ", ".join(f"{k} x{v}" for k, v in sorted(counts.items()))
    if per_item:
        pi = ev.per_item()
        st = ev.statuses()
        text += "\n\n" + table(["id"] + known, [[i] + [("-" if pi[i].get(m) is None else fmt(pi[i][m]))
                                                       + (f" ({st[i][m]})" if m in st.get(i, {}) else "")
                                                       for m in known] for i in pi])
    return text


def _csv(ev: Any, known: list[str], per_item: bool) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    if per_item:
        pi, st = ev.per_item(), ev.statuses()
        w.writerow(["id", "system"] + known + [f"{m}_status" for m in known])
        for it in ev.items:
            w.writerow([it.id, it.system] + ["" if pi[it.id].get(m) is None else repr(pi[it.id][m]) for m in known]
                       + [st.get(it.id, {}).get(m, "ok") for m in known])
    else:
        s = ev.summary()
        w.writerow(["metric", "mean", "ci_low", "ci_high", "n", "not_scored"])
        for m in known:
            r = s[s.metric == m]
            if r.empty or r.iloc[0]["n"] == 0:
                w.writerow([m, "", "", "", 0, len(ev.items) if r.empty else int(r.iloc[0]["n_failed"])])
            else:
                r = r.iloc[0]
                w.writerow([m, repr(float(r["mean"])), repr(float(r["ci_low"])), repr(float(r["ci_high"])),
                            int(r["n"]), int(r["n_failed"])])
    return buf.getvalue()
