"""The lesson as data: steps in the lesson's order, each with tasks whose checks are pure functions.

A :class:`Task` names its texts (:mod:`rag_metrics.lesson.texts`), the kind of answer it takes
(what the page draws), and ``check(answer, ctx) -> bool``, a pure function of the student's answer
and a :class:`LessonContext` (the evaluation of the current corpus and system, the sidebar's K, the
shared golden set).  Nothing here imports streamlit; the Lesson page only renders these records.

Answer shapes by kind
---------------------
``choice``   an option key (fixed options: :attr:`Task.options`; live ones: :func:`choices`)
``number``   a number, or text such as ``"0,387"`` (Danish decimal comma accepted)
``sandbox``  the grades of the student's list, rank 1 first (``[0, 1, 0, 0, 0]``)
``k_predict`` ``{"k": int, "metrics": [metric names]}``
``label``    ``{"query_id": str, "recall": number}``
``query``    a query id, or :data:`NONE` when the student says there is none
``failure``  ``{"query_id": str, "reason": option key}``
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from rag_metrics.errors import InputError
from rag_metrics.metrics.registry import DEFAULT_METRICS

if TYPE_CHECKING:
    from rag_metrics.evaluation import EvaluationResult
    from rag_metrics.types import GoldenSet

__all__ = ["NONE", "LessonContext", "Task", "Step", "STEPS", "TASKS", "QUIZ", "step", "task", "choices",
           "check", "parse_number", "sandbox_start", "failure_reason", "mrr_row", "live_numbers",
           "HIT_RATE_KS", "NUMBER_TOLERANCE"]

#: The answer "there is none" (a ``query`` task when no question qualifies).
NONE = "__none__"
#: How far a typed number may be from the right one (answers are asked with three decimals).
NUMBER_TOLERANCE = 0.0015
#: The hit-rate cutoffs the lesson compares.
HIT_RATE_KS = (1, 3, 5, 10)
#: The cutoff of the tasks the lesson words at K = 5 (hit@5 vs NDCG@5, P@5).
LESSON_K = 5


@dataclass(frozen=True, eq=False)
class LessonContext:
    """What the checks read: the evaluation of the current corpus and system (``result``, under the
    conventions in use), the sidebar's K, and the shared golden set (``baseline``: the labels a
    new label is compared with; ``None``: the result's own golden set)."""

    result: EvaluationResult
    k: int
    baseline: GoldenSet | None = None
    ndcg: str = "ndcg"          # the NDCG the student sees: "ndcg" (linear gain) or "ndcg_exp"


@dataclass(frozen=True)
class Task:
    """One task: its texts are ``task.<key>.prompt|hint|ok``; ``options`` are the option keys of a
    fixed ``choice`` (texts ``opt.<option_prefix or key>.<option>``); ``answer`` is the right option
    of a fixed choice (what :attr:`check` compares with when no function is given)."""

    key: str
    kind: str
    check_fn: Callable[[Any, LessonContext], bool] | None = field(default=None, repr=False, compare=False)
    options: tuple[str, ...] = ()
    answer: str | None = None
    option_prefix: str = ""

    def option_key(self, option: str) -> str:
        return f"opt.{self.option_prefix or self.key}.{option}"

    @property
    def prompt(self) -> str:
        return f"task.{self.key}.prompt"

    @property
    def hint(self) -> str:
        return f"task.{self.key}.hint"

    @property
    def ok(self) -> str:
        return f"task.{self.key}.ok"


@dataclass(frozen=True)
class Step:
    """One step of a lesson: ``step.<key>.title|body`` texts, its tasks, and the live numbers it
    shows (``(metric, k)``; ``k`` ``None`` = the sidebar's K, ``0`` = the whole ranking).

    ``figures``: other live figures a step shows beside (or instead of) the retrieval means,
    ``figures(ctx, lang) -> [(label, formatted value)]``, computed from the lab's engine on ``ctx``
    (the Lesson page draws them like the live numbers; the label and value are shown as text)."""

    key: str
    tasks: tuple[Task, ...]
    numbers: tuple[tuple[str, int | None], ...] = ()
    figures: Callable[[LessonContext, str], list[tuple[str, str]]] | None = field(default=None, repr=False,
                                                                                 compare=False)

    @property
    def title(self) -> str:
        return f"step.{self.key}.title"

    @property
    def body(self) -> str:
        return f"step.{self.key}.body"


# ---- helpers the checks share -------------------------------------------------------------------
def parse_number(answer: Any) -> float | None:
    """A typed number: ``0.387``, ``0,387``, ``.5``, ``12``; ``None`` when it is not one."""
    if isinstance(answer, bool) or answer is None:
        return None
    if isinstance(answer, (int, float, np.integer, np.floating)):
        v = float(answer)
        return v if math.isfinite(v) else None
    t = str(answer).strip().replace(" ", "")
    if not re.fullmatch(r"[+-]?(\d+([.,]\d*)?|[.,]\d+)", t):
        return None
    return float(t.replace(",", "."))


def _close(answer: Any, expected: float, tol: float = NUMBER_TOLERANCE) -> bool:
    v = parse_number(answer)
    return v is not None and not math.isnan(expected) and abs(v - expected) <= tol


def _index(result: EvaluationResult, query_id: Any) -> int | None:
    try:
        return result.query_ids.index(str(query_id))
    except ValueError:
        return None


def mrr_row(mrr: float) -> str:
    """The row of the lesson's MRR table a value reads as (option keys of task ``mrr_row``)."""
    from rag_metrics.insights.readouts import MRR_READING_TABLE

    for (value, _), row in zip(MRR_READING_TABLE, ("perfect", "good", "acceptable", "weak", "poor")):
        if mrr >= value:
            return row
    return "very_poor"


def sandbox_start() -> list[int]:
    """The MRR task's list: five results, the relevant one at rank 1."""
    return [1, 0, 0, 0, 0]


def failure_reason(result: EvaluationResult, query_id: str, k: int) -> str | None:
    """Why a question of :meth:`EvaluationResult.failures` fails at ``k`` (``None`` when it does not
    fail): ``below_k`` (a relevant id is retrieved, below rank k), ``no_relevant_label`` (none
    relevant: judged so, or out of scope, listed when the conventions count those as misses),
    ``not_retrieved`` (relevant ids exist, none was retrieved)."""
    q = _index(result, query_id)
    listed = result.in_scope[q] or result.options.out_of_scope == "miss" if q is not None else False
    if q is None or not listed or result.values("hit_rate", k)[q] > 0:
        return None
    if result.kernels.first_relevant_rank[q] > 0:
        return "below_k"
    if result.kernels.n_relevant[q] == 0:
        return "no_relevant_label"
    return "not_retrieved"


# ---- the checks ---------------------------------------------------------------------------------
def _check_hit_count(answer: Any, ctx: LessonContext) -> bool:
    r = ctx.result
    inc = r.included
    expected = int(r.values("hit_rate", 10)[inc].sum() - r.values("hit_rate", 1)[inc].sum())
    v = parse_number(answer)
    return v is not None and v == expected


def _check_sandbox(answer: Any, ctx: LessonContext) -> bool:
    from rag_metrics.lesson.sandbox import Sandbox, explain

    try:
        grades = [int(g) for g in answer]
        sb = Sandbox.from_grades(grades)
    except (TypeError, ValueError, InputError):
        return False
    if sorted(grades) != sorted(sandbox_start()):  # the task moves the chunk; it does not relabel
        return False
    return explain(sb, len(grades))["mrr"].value == 0.5


def _check_mrr_row(answer: Any, ctx: LessonContext) -> bool:
    v = ctx.result.mean("mrr")
    return not math.isnan(v) and answer == mrr_row(v)


def _check_p5_best(answer: Any, ctx: LessonContext) -> bool:
    from rag_metrics.insights.readouts import achievable

    return _close(answer, achievable(ctx.result, "precision", LESSON_K))


def _check_ndcg_calc(answer: Any, ctx: LessonContext) -> bool:
    from rag_metrics.metrics.explain import explain_ranking

    expected = explain_ranking([0, 1, 0, 1], [1, 1], 3)["ndcg"].value
    return _close(answer, expected)


def changing_metrics(result: EvaluationResult, k_from: int, k_to: int,
                     metrics: Sequence[str] = DEFAULT_METRICS) -> list[str]:
    """The metrics whose mean differs between two cutoffs (the answer of task ``k_predict``)."""
    return [m for m in metrics if abs(result.mean(m, k_from) - result.mean(m, k_to)) > 1e-12]


def _check_k_predict(answer: Any, ctx: LessonContext) -> bool:
    if not isinstance(answer, Mapping):
        return False
    k_to = answer.get("k")
    if isinstance(k_to, bool) or not isinstance(k_to, int) or k_to < 1 or k_to == ctx.k:
        return False
    picked = set(answer.get("metrics") or ())
    return picked == set(changing_metrics(ctx.result, ctx.k, k_to))


def _check_label(answer: Any, ctx: LessonContext) -> bool:
    if not isinstance(answer, Mapping):
        return False
    r = ctx.result
    q = _index(r, answer.get("query_id"))
    if q is None:
        return False
    level = r.options.relevance_level
    now = {i for i, g in r.golden.queries[q].relevant.items() if g >= level}
    base_golden = ctx.baseline if ctx.baseline is not None else r.golden
    before: set[str] = set()
    for gq in base_golden:
        if gq.id == r.query_ids[q]:
            before = {i for i, g in gq.relevant.items() if g >= level}
    if not now - before:
        return False
    return _close(answer.get("recall"), float(r.values("recall", ctx.k)[q]))


def _check_weakest(answer: Any, ctx: LessonContext) -> bool:
    cats = ctx.result.by_category(["hit_rate"], ks=[ctx.k], ci=False)
    if cats.empty:
        return False
    low = cats["mean"].min()
    return answer in set(cats.loc[np.isclose(cats["mean"], low, atol=1e-12), "category"])


def hit_not_ndcg(result: EvaluationResult, k: int = LESSON_K, ndcg_metric: str = "ndcg") -> list[str]:
    """Questions in the mean with hit rate@k = 1 and NDCG@k < 0.5 (task ``hit_not_ndcg``)."""
    hit, ndcg = result.values("hit_rate", k), result.values(ndcg_metric, k)
    return [q for q, ok, h, n in zip(result.query_ids, result.included, hit, ndcg) if ok and h == 1 and n < 0.5]


def _check_hit_not_ndcg(answer: Any, ctx: LessonContext) -> bool:
    found = hit_not_ndcg(ctx.result, LESSON_K, ctx.ndcg)
    return answer == NONE and not found or answer in found


def _check_failure(answer: Any, ctx: LessonContext) -> bool:
    if not isinstance(answer, Mapping):
        return False
    if answer.get("query_id") == NONE:
        return ctx.result.failures(ctx.k).empty
    reason = failure_reason(ctx.result, str(answer.get("query_id")), ctx.k)
    return reason is not None and answer.get("reason") == reason


def _choice(key: str, options: Sequence[str], answer: str, prefix: str = "") -> Task:
    return Task(key, "choice", options=tuple(options), answer=answer, option_prefix=prefix)


# ---- the lesson ------------------------------------------------------------------------------------
#: Why a failure failed (:func:`failure_reason`; the options of task ``why_failed``).
FAILURE_REASONS = ("below_k", "not_retrieved", "no_relevant_label")
_RAGAS = ("context_precision", "context_recall", "faithfulness", "answer_relevancy")
QUIZ: tuple[Task, ...] = (
    _choice("quiz_mrr", ("2", "4", "25"), "4"),
    _choice("quiz_precision", ("0.2", "0.4", "0.5"), "0.4"),
    _choice("quiz_k", ("precision", "recall", "ndcg"), "recall"),
    _choice("quiz_oos", ("excluded", "miss", "hit"), "miss"),
    _choice("quiz_faith", ("retrieved", "supported", "question"), "supported"),
)

STEPS: tuple[Step, ...] = (
    Step("why", (_choice("why_pick", ("hit_rate", "mrr", "recall"), "mrr"),), (("hit_rate", None), ("mrr", None))),
    Step("hit_rate", (Task("hit_count", "number", _check_hit_count),),
         tuple(("hit_rate", k) for k in HIT_RATE_KS)),
    Step("mrr", (Task("mrr_sandbox", "sandbox", _check_sandbox), Task("mrr_row", "choice", _check_mrr_row)),
         (("mrr", 0), ("mrr", None))),
    Step("precision", (Task("p5_best", "number", _check_p5_best),), (("precision", LESSON_K), ("precision", None))),
    Step("ndcg", (Task("ndcg_calc", "number", _check_ndcg_calc),), (("ndcg", None), ("ndcg", 10))),
    Step("recall", (Task("k_predict", "k_predict", _check_k_predict), Task("label_missing", "label", _check_label)),
         (("precision", None), ("recall", None))),
    Step("ragas", (_choice("ragas_claim", _RAGAS, "faithfulness", "ragas"),
                   _choice("ragas_order", _RAGAS, "context_precision", "ragas"))),
    Step("categories", (Task("weakest_category", "choice", _check_weakest),), (("hit_rate", None),)),
    Step("disagree", (Task("hit_not_ndcg", "query", _check_hit_not_ndcg),),
         (("hit_rate", LESSON_K), ("ndcg", LESSON_K))),
    Step("failures", (Task("why_failed", "failure", _check_failure, options=FAILURE_REASONS),), (("hit_rate", None),)),
    Step("quiz", QUIZ),
)

#: Every task by key.
TASKS: dict[str, Task] = {t.key: t for s in STEPS for t in s.tasks}


def step(key: str) -> Step:
    for s in STEPS:
        if s.key == key:
            return s
    raise InputError(f"the lesson has no step {key!r}; steps: {', '.join(s.key for s in STEPS)}")


def task(key: str) -> Task:
    try:
        return TASKS[key]
    except KeyError:
        raise InputError(f"the lesson has no task {key!r}") from None


def choices(t: Task, ctx: LessonContext) -> list[tuple[str, str | None]]:
    """The options of a ``choice`` task: ``(value, text key)``; a live option (a category name) has
    no text key and shows as its value."""
    if t.options:
        return [(o, t.option_key(o)) for o in t.options]
    # live options: from the evaluation
    if t.key == "mrr_row":
        return [(o, f"opt.mrr_row.{o}") for o in ("perfect", "good", "acceptable", "weak", "poor", "very_poor")]
    if t.key == "weakest_category":
        cats = ctx.result.categories[ctx.result.included]
        return [(str(c), None) for c in dict.fromkeys(cats.tolist())]
    return []


def check(t: Task | str, answer: Any, ctx: LessonContext) -> bool:
    """Whether ``answer`` solves task ``t`` on ``ctx`` (never raises for a malformed answer)."""
    t = task(t) if isinstance(t, str) else t
    if t.check_fn is None:
        return answer == t.answer
    try:
        return bool(t.check_fn(answer, ctx))
    except (TypeError, ValueError, KeyError, AttributeError, InputError):
        return False


def live_numbers(s: Step, result: EvaluationResult, k: int, ndcg_metric: str = "ndcg"
                 ) -> list[tuple[str, int | None, float]]:
    """The step's live numbers: ``(metric, k, mean)`` from the evaluation (the Dashboard's means;
    NDCG as ``ndcg_metric``, the gain the sidebar chose); ``k`` ``None`` in the result means the
    whole ranking. A number the step names twice (P@K and P@5 when K is 5) is shown once."""
    out: list[tuple[str, int | None, float]] = []
    for metric, kk in s.numbers:
        metric = ndcg_metric if metric == "ndcg" else metric
        cut = k if kk is None else (None if kk == 0 else kk)
        if any(m == metric and c == cut for m, c, _ in out):
            continue
        out.append((metric, cut, result.mean(metric, cut)))
    return out
