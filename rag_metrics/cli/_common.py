"""Helpers shared by the ``rag-metrics`` subcommands: messages, progress, tables, options.

Light on purpose: only the standard library and :mod:`rag_metrics.errors` are imported here; each
helper imports the library modules it needs when called, so ``rag-metrics --help`` stays fast.
"""
from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from rag_metrics.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from rag_metrics.metrics.options import EvalOptions
    from rag_metrics.metrics.registry import MetricKey
    from rag_metrics.types import GoldenSet, Run
from rag_metrics.cli._output import PROG, Progress, counter_progress, stderr

__all__ = [
    "PROG", "Parser", "stderr", "Progress", "counter_progress", "fmt", "table", "check_int",
    "add_judgment_options", "verdict_line", "eval_options", "metric_keys", "fail_under", "id_to_doc", "load_inputs",
]


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit 2) that point to --help."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}; see `{self.prog} --help`\n")



def fmt(v: float) -> str:
    """A metric value with four decimals (``nan`` for NaN)."""
    return "nan" if isinstance(v, float) and math.isnan(v) else f"{v:.4f}"


def ci_cell(lo: float, hi: float, n: int | None = None, signed: bool = False) -> str:
    """``[0.512, 0.734]`` (``[+0.012, +0.210]`` when ``signed``), or ``too few (n = 2)`` where the
    library gives no interval because the set is too small (:data:`rag_metrics.evaluation.MIN_CI_N`)."""
    if math.isnan(lo) or math.isnan(hi):
        return f"too few (n = {n})" if n is not None else "too few"
    return f"[{lo:+.3f}, {hi:+.3f}]" if signed else f"[{fmt(lo)}, {fmt(hi)}]"


def table(header: list[str], rows: list[list[str]]) -> str:
    """A plain-text table: first column left-aligned, the others right-aligned."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


#: The release in which the old spellings of :func:`add_renamed` options go.
RENAMED_GO_IN = "0.3.0"


class _Renamed(argparse.Action):
    """The old spelling of an option: it sets the new option's value and says, once, what it is now."""

    def __init__(self, option_strings: Sequence[str], dest: str, new: str = "", **kwargs: Any) -> None:
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        stderr(f"{PROG} {parser.prog.split()[-1]}: {option_string} is now {self.new} (--k means cutoffs in every "
               f"command); {option_string} still works here until release {RENAMED_GO_IN}, then it goes")
        setattr(namespace, self.dest, values)
        namespace.__dict__.setdefault("_spelled", {})[self.dest] = option_string


def spelled(args: argparse.Namespace, dest: str, new: str) -> str:
    """The spelling of option ``dest`` the user typed (the old one of :func:`add_renamed`, else ``new``), for
    messages that name it."""
    return str(getattr(args, "_spelled", {}).get(dest, new))


def add_renamed(p: argparse.ArgumentParser, new: str, old: str, **kwargs: Any) -> None:
    """Add option ``new`` (with ``kwargs``) and its old spelling ``old``, kept for one release with a warning.

    ``--k`` used to mean a depth in some commands (results per query, pool depth); it means cutoffs
    everywhere now, and those commands take ``--depth`` / ``--pool-depth``."""
    action = p.add_argument(new, **kwargs)
    same = {key: kwargs[key] for key in ("type", "metavar") if key in kwargs}
    p.add_argument(old, dest=action.dest, new=new, action=_Renamed, default=argparse.SUPPRESS, help=argparse.SUPPRESS,
                   **same)


def check_int(name: str, value: int, low: int) -> None:
    """Raise :class:`InputError` when the integer option ``name`` is below ``low``."""
    if value < low:
        raise InputError(f"{name} must be >= {low}, got {value}")


def add_judgment_options(sp: argparse.ArgumentParser, metrics_default: str, k_default: str) -> None:
    """The options shared by ``evaluate`` and ``compare``: qrels, cutoffs, metrics, conventions, format."""
    sp.add_argument("--qrels", required=True, metavar="PATH",
                    help="TREC qrels, BEIR qrels .tsv, BEIR folder, or a golden set (.csv/.json/.jsonl)")
    sp.add_argument("--k", default=k_default, metavar="KS", help=f"cutoffs: 1,3,5,10 or 1-100 (default {k_default})")
    sp.add_argument("--metrics", default=metrics_default, metavar="LIST",
                    help=f"comma-separated metrics (default {metrics_default}); known: "
                         "hit_rate, mrr, precision, recall, ndcg, ndcg_exp, map")
    sp.add_argument("--relevance-level", type=int, default=1, metavar="L",
                    help="grade >= L is relevant (trec_eval -l; default 1)")
    sp.add_argument("--out-of-scope", choices=["exclude", "miss"], default="exclude",
                    help="queries with no relevant id: excluded from means (default) or counted as misses")
    sp.add_argument("--recall-denominator", choices=["all", "cap"], default="all",
                    help="recall divides by |R| (default, trec_eval) or min(k, |R|) (BEIR R_cap)")
    sp.add_argument("--missing", choices=["zero", "skip"], default="zero",
                    help="golden queries absent from the run: 0 in the mean (default, trec_eval -c) or skipped")
    sp.add_argument("--only-answered", action="store_true",
                    help="evaluate only the questions the run or log answers (the same as --missing skip); the "
                         "default counts absent questions as 0, as trec_eval -c")
    sp.add_argument("--level", choices=["chunk", "document"], default="chunk",
                    help="document: collapse ids '<doc>#<n>' to '<doc>' (first chunk's rank wins)")
    sp.add_argument("--ndcg-relevance", choices=["graded", "binary"], default="graded",
                    help="NDCG gain: the grade (default, trec_eval) or 1 for a relevant id (the lesson's code)")
    sp.add_argument("--conventions", choices=["trec_eval", "lesson"], default=None,
                    help="a preset that sets the conventions at once: trec_eval's defaults, or as in the lesson "
                         "(binary NDCG, out-of-scope counted as misses); wins over the single options")
    peers = sp.add_argument_group("other tools' conventions (off by default)")
    peers.add_argument("--gains", metavar="G=GAIN,...",
                       help="custom NDCG gain per grade, e.g. 0=0,1=1,2=3 (trec_eval gain parameters, ir_measures "
                            "nDCG(gains=...)); unlisted grades keep gain = grade")
    peers.add_argument("--judged-only", action="store_true",
                       help="drop unlabelled ids from every ranking first (trec_eval -J, ir_measures judged_only=True)")
    peers.add_argument("--mrr", choices=["first", "granular"], default="first",
                       help="first: 1/rank of the first relevant id (default, trec_eval); granular: the mean of "
                            "1/rank over the relevant ids retrieved (LlamaIndex use_granular_mrr)")
    peers.add_argument("--nonpositive-scores", choices=["retrieved", "not-retrieved"], default="retrieved",
                       help="results scored <= 0: retrieved (default, trec_eval) or not retrieved (torchmetrics)")
    sp.add_argument("--format", choices=["table", "json", "csv"], default="table")
    from rag_metrics.cli._systems import add_upload_options

    add_upload_options(sp)


def eval_options(args: argparse.Namespace) -> EvalOptions:
    """The :class:`~rag_metrics.metrics.options.EvalOptions` of the judgment options."""
    from rag_metrics.metrics.options import EvalOptions, parse_gains

    gains = getattr(args, "gains", None)
    opts = EvalOptions(relevance_level=args.relevance_level, out_of_scope=args.out_of_scope,
                       recall_denominator=args.recall_denominator,
                       missing_queries="skip" if getattr(args, "only_answered", False) else args.missing,
                       level="document" if args.level == "document" else "chunk",
                       gains=parse_gains(gains) if gains else (),
                       judged_only=bool(getattr(args, "judged_only", False)),
                       mrr=getattr(args, "mrr", "first"),
                       nonpositive_scores="not_retrieved" if getattr(args, "nonpositive_scores", "retrieved")
                       == "not-retrieved" else "retrieved",
                       ndcg_relevance=getattr(args, "ndcg_relevance", "graded"))
    if getattr(args, "conventions", None):
        from rag_metrics.metrics.presets import apply_preset

        opts = apply_preset(opts, args.conventions)
    return opts


def metric_keys(args: argparse.Namespace) -> list[MetricKey]:
    """Metric keys ``name@k`` for every requested metric and k (``name@k`` entries kept as given)."""
    from rag_metrics.metrics.registry import METRICS, MetricKey, parse_ks, parse_metric

    ks = parse_ks(args.k, "--k")
    keys: list[MetricKey] = []
    for tok in [t.strip() for t in args.metrics.split(",") if t.strip()]:
        if "@" in tok:
            keys.append(parse_metric(tok, "--metrics"))
            continue
        name = tok.lower()
        if name not in METRICS:
            raise InputError(f"--metrics: unknown metric {tok!r}; known metrics: {', '.join(METRICS)}")
        keys.extend(MetricKey(name, k) for k in ks)
    if not keys:
        raise InputError("--metrics: no metric given; e.g. --metrics hit_rate,mrr,ndcg")
    return list(dict.fromkeys(keys))


def fail_under(items: Sequence[str]) -> list[tuple[MetricKey, float]]:
    """``(key, threshold)`` pairs of the ``--fail-under METRIC@K=VALUE`` options."""
    from rag_metrics.metrics.registry import parse_metric

    out = []
    for item in items:
        for part in [p for p in item.split(",") if p.strip()]:
            if "=" not in part:
                raise InputError(f"--fail-under: cannot read {part!r}; write METRIC@K=VALUE, e.g. ndcg@10=0.4")
            key_s, val_s = part.split("=", 1)
            key = parse_metric(key_s, "--fail-under")
            try:
                val = float(val_s)
            except ValueError:
                raise InputError(f"--fail-under: threshold {val_s!r} in {part!r} is not a number; "
                                 "e.g. ndcg@10=0.4") from None
            if not (0.0 <= val <= 1.0) or math.isnan(val):
                raise InputError(f"--fail-under: threshold {val} in {part!r} is outside [0, 1]")
            out.append((key, val))
    return out


def id_to_doc(run: Run, golden: GoldenSet) -> dict[str, str]:
    """Chunk id ``<doc_id>#<n>`` -> doc id, for --level document without a corpus."""
    ids = set(run.factorized_ids()[1].tolist())
    for q in golden:
        ids.update(q.relevant)
    return {i: i.rsplit("#", 1)[0] for i in ids if "#" in i}


def verdict_line(result: Any, name: str = "") -> str:
    """The CLI's last line: "" when the numbers are a verdict and every retrieved context was placed
    in the corpus; the "no verdict" sentence (:mod:`rag_metrics.verdict`: nothing matched, no
    retrieval, none answered, "NOT COMPARABLE" above :data:`rag_metrics.metrics.evidence.UNLOCATED_LIMIT`)
    when they are not; else the unlocated share and the likely fix."""
    who = f"{name}: " if name else ""
    nv = getattr(result, "no_verdict", None)
    if nv is not None:
        return nv.cli_line(name)
    located = getattr(result, "located", None)
    if located is None or not located.line():
        return ""
    return f"{who}{located.line()}"


def load_inputs(args: argparse.Namespace, run_paths: Sequence[str], progress: Progress) -> tuple[GoldenSet, list[Any]]:
    """Read ``--qrels`` and the runs, stopping on errors and printing warnings on stderr."""
    from rag_metrics.cli._systems import read_mapped_qrels
    from rag_metrics.io.trec import read_qrels, read_run, validate_run

    got = read_mapped_qrels(args, args.qrels)
    golden, report = got if got is not None else read_qrels(args.qrels, with_report=True)
    report.raise_if_errors()
    if len(golden) == 0:
        raise InputError(f"{args.qrels}: no judgments found")
    if not any(q.has_relevant for q in golden) and any(q.awaiting_labels for q in golden):
        n = sum(q.awaiting_labels for q in golden)
        raise InputError(f"{args.qrels}: {n} question(s) have a reference answer but no relevant id and no reviewed "
                         f"evidence, so there is nothing to evaluate yet; propose evidence from the reference answers "
                         f"with `{PROG} validate {args.qrels} --corpus PATH --propose-evidence OUT.jsonl`, review it "
                         "(accept or reject each proposal) and evaluate OUT.jsonl with --corpus PATH")
    if not any(q.has_relevant for q in golden):
        raise InputError(f"{args.qrels}: no query has a relevant id (grade >= 1), so there is nothing to evaluate; "
                         "--qrels takes TREC qrels, a BEIR qrels .tsv or folder, or a golden set with relevant ids "
                         "(a corpus.jsonl or queries.jsonl holds no judgments)")
    runs = []
    for rp in run_paths:
        t = time.perf_counter()
        from rag_metrics.cli._systems import is_upload, read_upload_run

        if is_upload(rp, args):  # a RAG log, or a CSV/JSON run (or --map): matched to the golden questions
            run = read_upload_run(args, rp, golden)
            progress(f"read {len(run):,} results of {rp} in {time.perf_counter() - t:.1f}s")
            runs.append(run)
            continue
        run, rrep = read_run(rp)
        if rrep.errors:  # judgments given as the run? say so rather than list every line
            from rag_metrics.formats import KINDS, sniff
            from rag_metrics.io.files import read_bytes

            try:
                kind = sniff(read_bytes(rp), rp, role="run").kind
            except InputError:
                kind = ""
            if kind in ("trec_qrels", "beir_qrels", "json_qrels"):
                raise InputError(f"{rp}: looks like {KINDS[kind]}, not a run; give it as --qrels and the system's "
                                 "output (TREC run, CSV/JSON run, RAG log or trace export) as --run")
        rrep.raise_if_errors(hint=f"run `{PROG} validate {args.qrels} --run {rp}` to list all")
        if len(run) == 0:
            raise InputError(f"{rp}: run has no lines; expected 'qid Q0 docid rank score tag'")
        progress(f"read {len(run):,} lines of {rp} in {time.perf_counter() - t:.1f}s")
        for line in validate_run(run, golden, source=str(rp)).lines():
            stderr(f"{PROG}: {line}")
        runs.append(run)
    warned = report.warning_lines()  # repeats counted in one line (rag_metrics.errors.grouped_lines)
    for line in warned[:20]:
        stderr(f"{PROG}: {line}")
    if len(warned) > 20:
        stderr(f"{PROG}: ... {len(warned) - 20} more warnings (run `{PROG} validate {args.qrels}`)")
    return golden, runs
