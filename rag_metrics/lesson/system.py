"""Lesson 4 of the course, "Building an automated evaluation system".

Six short steps (about eight minutes): the four parts of an evaluation system (a versioned golden set, a baseline,
a gate, CI); a paired comparison of the student's system (the baseline) with a changed version of it (the
candidate: each question's first two results swapped, as a faulty reranker might do); the gate's three answers
(pass, fail, inconclusive) and its minimum change; how many questions a set needs to see a change of that size;
a GitHub Actions job running ``rag-metrics gate`` for the student's own setup; a quiz.

Every number is live: the evaluation of the current corpus and system (``ctx.result``), the candidate evaluated
by the lab's engine (:func:`rag_metrics.compare.candidate.candidate_result`), and the gate's own rule on the two
(:func:`rag_metrics.compare.paired.compare_paired`, :func:`rag_metrics.compare.gate.gate_checks`,
:func:`~rag_metrics.compare.gate.questions_needed`).  The CI job is :func:`ci_workflow` (a test runs its commands
with the lab's CLI).  Nothing here imports streamlit; the Lesson page draws the job (``ui/lesson_system.py``).

>>> LESSON.key, LESSON.number, [s.key for s in LESSON.steps][:2]
('system', 4, ['l4_parts', 'l4_paired'])
"""
from __future__ import annotations

import math
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rag_metrics.compare.candidate import METRIC, candidate_result
from rag_metrics.compare.power import MIN_EFFECT
from rag_metrics.errors import InputError
from rag_metrics.evaluation import EvaluationResult
from rag_metrics.lesson.course import Lesson
from rag_metrics.lesson.steps import NUMBER_TOLERANCE, LessonContext, Step, Task, parse_number

__all__ = ["LESSON", "TEXTS", "STEPS", "QUIZ", "METRIC", "CiSetup", "Comparison", "candidate_result", "ci_commands",
           "ci_workflow", "comparison", "gate_of"]

#: A larger minimum change the power step also asks about.
WIDER_CHANGE = 0.10


# ---- live data -------------------------------------------------------------------------------------
def _t(key: str, lang: str, **values: Any) -> str:
    en, da = TEXTS[key]
    return (da if lang == "da" else en).format(**values)


def _num(v: float | None, lang: str, digits: int = 3, sign: bool = False) -> str:
    if v is None or v != v:
        return "–"
    s = f"{v:+.{digits}f}" if sign else f"{v:.{digits}f}"
    s = s.replace("-", "−")
    return s.replace(".", ",") if lang == "da" else s


@dataclass(frozen=True)
class Comparison:
    """The baseline (the current system) and the candidate on the questions both include, by the gate's rule:
    ``table`` (:func:`~rag_metrics.compare.paired.compare_paired`'s one row) and ``gate``
    (:class:`~rag_metrics.compare.gate.GateCheck` at :data:`~rag_metrics.compare.power.MIN_EFFECT`)."""

    key: str
    baseline: tuple[float, ...]
    candidate: tuple[float, ...]
    table: Any
    gate: Any

    @property
    def row(self) -> Mapping[str, Any]:
        return self.table.to_dict("records")[0]


_COMPARISONS: dict[tuple[int, int], tuple[EvaluationResult, Comparison]] = {}


def comparison(ctx: LessonContext) -> Comparison:
    """The lesson's comparison of the current system (baseline) with :func:`candidate_result` on :data:`METRIC` at
    ``ctx.k``; :class:`InputError` when no question is in both means."""
    kept = _COMPARISONS.get((id(ctx.result), ctx.k))
    if kept is not None and kept[0] is ctx.result:
        return kept[1]
    out = _comparison(ctx)
    if len(_COMPARISONS) >= 8:
        _COMPARISONS.clear()
    _COMPARISONS[(id(ctx.result), ctx.k)] = (ctx.result, out)
    return out


def _comparison(ctx: LessonContext) -> Comparison:
    from rag_metrics.compare.gate import gate_checks
    from rag_metrics.compare.paired import compare_paired

    r = ctx.result
    c = candidate_result(r)
    inc = r.included & c.included
    if not inc.any():
        raise InputError("no question of the golden set is in the means: nothing to compare")
    a, b = r.values(METRIC, ctx.k)[inc], c.values(METRIC, ctx.k)[inc]
    table = compare_paired([(METRIC, ctx.k, a, b)], name_a="baseline", name_b="candidate")
    table.insert(0, "key", f"{METRIC}@{ctx.k}")
    return Comparison(f"{METRIC}@{ctx.k}", tuple(float(x) for x in a), tuple(float(x) for x in b), table,
                      gate_checks(table)[0])


def gate_of(ctx: LessonContext, min_change: float = MIN_EFFECT) -> Any:
    """The gate's answer (:class:`~rag_metrics.compare.gate.GateCheck`) for the lesson's comparison at
    ``min_change``."""
    from rag_metrics.compare.gate import gate_checks

    return gate_checks(comparison(ctx).table, min_change)[0]


def needed(ctx: LessonContext, min_change: float = MIN_EFFECT) -> int | None:
    """About how many questions would detect ``min_change`` for the spread of the lesson's differences (the gate's
    :func:`~rag_metrics.compare.gate.questions_needed`)."""
    from rag_metrics.compare.gate import questions_needed

    g = comparison(ctx).gate
    sd = float(comparison(ctx).row["sd"])
    return questions_needed(sd, min_change, g.alpha, g.power) if sd == sd else None


def _more(ctx: LessonContext) -> int | None:
    n = needed(ctx)
    return None if n is None else max(n - comparison(ctx).gate.n, 0)


# ---- the CI job ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CiSetup:
    """The student's setup as the CI job needs it: paths in their repository, the system (a bundled retriever
    ``kind`` with its model and chunking, or ``""`` for their own system, which writes the run itself), and what
    the gate compares."""

    corpus: str = "docs"
    golden: str = "golden.jsonl"
    baseline: str = "baseline.json"
    retriever: str = "dense"
    model: str = ""
    chunk_size: int = 500
    chunk_overlap: int = 100
    level: str = "chunk"
    metrics: tuple[str, ...] = ("mrr", "ndcg")
    k: int = 5
    min_change: float = MIN_EFFECT
    options: tuple[str, ...] = ()     # the evaluation's conventions as CLI options, e.g. ("--out-of-scope", "miss")


_RUN = "run.trec"
_OWN_RUN = "run.jsonl"


def _cmd(*parts: Any) -> str:
    return " ".join(shlex.quote(str(p)) for p in parts)


def ci_commands(s: CiSetup) -> tuple[str, str, str]:
    """``(run, baseline, gate)``: the command that writes the current run (bundled retrievers; ``""`` for the
    student's own system), the command that saves the baseline from it (once, on the main branch), and the gate."""
    for name, value in (("corpus", s.corpus), ("golden", s.golden), ("baseline", s.baseline)):
        if not value or any(c in value for c in "\n\r\"'`$"):
            raise InputError(f"the CI job's {name} path {value!r}: use a plain path in your repository")
    if s.retriever:
        parts: list[Any] = ["rag-metrics", "retrieve", "--corpus", s.corpus, "--queries", s.golden,
                            "--retriever", s.retriever]
        if s.model:
            parts += ["--model", s.model]
        parts += ["--chunk-size", s.chunk_size, "--chunk-overlap", s.chunk_overlap]
        if s.level != "chunk":
            parts += ["--level", s.level]
        run = _cmd(*parts, "--out", _RUN)
        run_file = _RUN
    else:
        run, run_file = "", _OWN_RUN
    judged = ["--qrels", s.golden, "--run", run_file, "--metrics", ",".join(s.metrics), "--k", s.k, *s.options]
    base = _cmd("rag-metrics", "evaluate", *judged, "--save-run", s.baseline, "--run-name", "baseline")
    gate = _cmd("rag-metrics", "gate", *judged, "--baseline", s.baseline, "--min-change", f"{s.min_change:g}")
    return run, base, gate


#: The widest line of the job (a projector shows it whole, with no scroll bar).
WIDTH = 66


def _pieces(cmd: str) -> list[str]:
    """A command's words, each option with its value (``--k 5``), for folding."""
    words = shlex.split(cmd)
    out: list[str] = []
    for w in words:
        if out and out[-1].startswith("--") and " " not in out[-1] and not w.startswith("--"):
            out[-1] = f"{out[-1]} {shlex.quote(w)}"
        else:
            out.append(shlex.quote(w))
    return out


def _fold(cmd: str, first: str, rest: str, end: str = "") -> list[str]:
    """``cmd`` on lines of at most :data:`WIDTH` characters: the first starts with ``first``, the others with
    ``rest``; every line but the last ends with ``end`` (a shell's `` \\`` in a comment)."""
    lines: list[str] = []
    line = first
    for piece in _pieces(cmd):
        if line.strip() and line not in (first,) and len(line) + 1 + len(piece) + len(end) > WIDTH:
            lines.append(line + end)
            line = rest
        line = f"{line}{'' if line in (first, rest) else ' '}{piece}"
    lines.append(line)
    return lines


def _step(cmd: str) -> list[str]:
    """A ``run:`` step; a long command folded (``>-``: YAML joins the lines with spaces)."""
    one = f"      - run: {cmd}"
    if len(one) <= WIDTH:
        return [one]
    return ["      - run: >-", *_fold(cmd, "          ", "          ")]


def ci_workflow(s: CiSetup, lang: str = "en") -> str:
    """A GitHub Actions workflow (YAML) running the gate on every pull request for setup ``s``; its comments in
    ``lang``.  The baseline is saved once on the main branch with :func:`ci_commands`' second command and
    committed beside the golden set."""
    from rag_metrics import __version__

    run, base, gate = ci_commands(s)

    def c(key: str, **values: Any) -> str:
        return _t(f"ui.l4.yaml_{key}", lang, **values)

    lines = ["# .github/workflows/rag-gate.yml", f"# {c('title')}",
             f"# {c('baseline', file=s.baseline)}",
             *(line for cmd in (run, base) if cmd for line in _fold(cmd, "#   ", "#     ", " \\")),
             "name: rag-gate",
             "on: [pull_request]",
             "jobs:",
             "  gate:",
             "    runs-on: ubuntu-latest",
             "    steps:",
             "      - uses: actions/checkout@v4",
             "      - uses: actions/setup-python@v5",
             "        with:",
             '          python-version: "3.11"',
             f"      # {c('install')}",
             f'      - run: pip install "rag-metrics=={__version__}"']
    if run:
        lines += [f"      # {c('run')}", *_step(run)]
    else:
        lines += [f"      # {c('own', file=_OWN_RUN)}",
                  *_step(f"python your_rag_system.py --questions {shlex.quote(s.golden)} --out {_OWN_RUN}")]
    lines += [f"      # {c('gate')}", *_step(gate), ""]
    return "\n".join(lines)


# ---- figures ------------------------------------------------------------------------------------------
def _safe(fn: Any) -> Any:
    def figures(ctx: LessonContext, lang: str) -> list[tuple[str, str]]:
        try:
            return list(fn(ctx, lang))
        except InputError:   # nothing in the means: the step's text still stands
            return []
    return figures


def _fig_parts(ctx: LessonContext, lang: str) -> list[tuple[str, str]]:
    r = ctx.result
    return [(_t("ui.l4.questions", lang), str(len(r.golden))),
            (_t("ui.l4.version", lang), r.golden.fingerprint()[:8]),
            (f"{_t('ui.l4.baseline', lang)}: MRR@{ctx.k}", _num(r.mean(METRIC, ctx.k), lang))]


def _fig_paired(ctx: LessonContext, lang: str) -> list[tuple[str, str]]:
    cmp = comparison(ctx)
    row = cmp.row
    return [(f"{_t('ui.l4.baseline', lang)}: MRR@{ctx.k}", _num(row["mean_a"], lang)),
            (f"{_t('ui.l4.candidate', lang)}: MRR@{ctx.k}", _num(row["mean_b"], lang)),
            (_t("ui.l4.wlt", lang), f"{row['wins']} / {row['losses']} / {row['ties']}"),
            (_t("ui.l4.sd", lang), _num(row["sd"], lang))]


def _fig_gate(ctx: LessonContext, lang: str) -> list[tuple[str, str]]:
    g = comparison(ctx).gate
    return [(_t("ui.l4.change", lang), _num(g.delta, lang, sign=True)),
            (_t("ui.l4.interval_low", lang), _num(g.ci_low, lang, sign=True)),
            (_t("ui.l4.interval_high", lang), _num(g.ci_high, lang, sign=True)),
            (_t("ui.l4.detectable", lang, n=g.n), _num(g.detectable, lang))]


def _fig_power(ctx: LessonContext, lang: str) -> list[tuple[str, str]]:
    g = comparison(ctx).gate
    n5, n10 = needed(ctx), needed(ctx, WIDER_CHANGE)
    return [(_t("ui.l4.in_set", lang), str(g.n)),
            (_t("ui.l4.detectable", lang, n=g.n), _num(g.detectable, lang)),
            (_t("ui.l4.needed_for", lang, d=_num(MIN_EFFECT, lang, 2)), "–" if n5 is None else str(n5)),
            (_t("ui.l4.needed_for", lang, d=_num(WIDER_CHANGE, lang, 2)), "–" if n10 is None else str(n10))]


# ---- checks -------------------------------------------------------------------------------------------
def _check_mean_diff(answer: Any, ctx: LessonContext) -> bool:
    v = parse_number(str(answer).replace("−", "-")) if isinstance(answer, str) else parse_number(answer)
    delta = float(comparison(ctx).row["delta"])
    return v is not None and not math.isnan(delta) and abs(v - delta) <= NUMBER_TOLERANCE


def _check_verdict(answer: Any, ctx: LessonContext) -> bool:
    return answer == comparison(ctx).gate.verdict


def _check_more(answer: Any, ctx: LessonContext) -> bool:
    v, more = parse_number(answer), _more(ctx)
    return v is not None and more is not None and v == more


def _choice(key: str, options: tuple[str, ...], answer: str) -> Task:
    return Task(key, "choice", options=options, answer=answer)


QUIZ: tuple[Task, ...] = (
    _choice("l4_quiz_drop", ("fail", "pass", "inconclusive"), "fail"),
    _choice("l4_quiz_power", ("four", "twice", "same"), "four"),
    _choice("l4_quiz_baseline", ("rescore", "keep", "delete"), "rescore"),
)

STEPS: tuple[Step, ...] = (
    Step("l4_parts", (_choice("l4_version", ("mixed", "system", "nothing"), "mixed"),), figures=_safe(_fig_parts)),
    Step("l4_paired", (Task("l4_mean_diff", "number", _check_mean_diff),
                       _choice("l4_why_pair", ("difficulty", "faster", "order"), "difficulty")),
         figures=_safe(_fig_paired)),
    Step("l4_gate", (Task("l4_verdict", "choice", _check_verdict, options=("pass", "fail", "inconclusive")),
                     _choice("l4_next", ("more", "merge", "rerun"), "more")),
         figures=_safe(_fig_gate)),
    Step("l4_power", (Task("l4_more", "number", _check_more),), figures=_safe(_fig_power)),
    Step("l4_ci", (_choice("l4_exit", ("inconclusive", "fail", "input"), "inconclusive"),)),
    Step("l4_quiz", QUIZ),
)

TEXTS: Mapping[str, tuple[str, str]] = {
    "lesson.system.title": ("Building an automated evaluation system", "Et automatisk evalueringssystem"),
    "lesson.system.intro": (
        "Check every change of your RAG system automatically: a versioned golden set, a baseline, a gate that "
        "answers pass, fail or inconclusive, the number of questions a set needs, and a CI job that runs it all.",
        "Tjek hver ændring af dit RAG-system automatisk: et versioneret guldsæt, en baseline, en gate, der svarer "
        "bestået, fejlet eller uafgjort, det antal spørgsmål, et sæt kræver, og et CI-job, der kører det hele."),
    "lesson.system.live_caption": (
        "Corpus {corpus}, system {system}, K = {k}: your golden set and system, compared by the lab's gate.",
        "Korpus {corpus}, system {system}, K = {k}: dit guldsæt og system, sammenlignet af laboratoriets gate."),
    # ---- 1. the parts ------------------------------------------------------------------------------------
    "step.l4_parts.title": ("Four parts of an evaluation system", "Et evalueringssystems fire dele"),
    "step.l4_parts.body": (
        "Lessons 2 and 3 measured a system once. A system changes every week: a new chunk size, a new model, a "
        "new prompt. An **evaluation system** checks every change, the same way each time. It has four parts:\n\n"
        "1. **A versioned golden set.** The questions and their labels, kept as files with a version. The lab "
        "keeps earlier versions of your golden set (undo), and names each version by a fingerprint of its "
        "content: change one label and the fingerprint changes.\n"
        "2. **A baseline.** A saved run of the system you trust: its score on every question, on one version of "
        "the golden set.\n"
        "3. **A gate.** It scores a new version of the system on the same questions, compares it with the "
        "baseline question by question, and answers **pass**, **fail** or **inconclusive**.\n"
        "4. **CI.** A job that runs the gate on every change, before it is merged.\n\n"
        "Below: your golden set's version, and the baseline's number.",
        "Lektion 2 og 3 målte et system én gang. Et system ændrer sig hver uge: en ny chunkstørrelse, en ny model, "
        "en ny prompt. Et **evalueringssystem** tjekker hver ændring, på samme måde hver gang. Det har fire "
        "dele:\n\n"
        "1. **Et versioneret guldsæt.** Spørgsmålene og deres markeringer, gemt som filer med en version. "
        "Laboratoriet gemmer tidligere versioner af dit guldsæt (fortryd) og navngiver hver version med et "
        "fingeraftryk af indholdet: ændr én markering, og fingeraftrykket ændres.\n"
        "2. **En baseline.** En gemt kørsel af det system, du stoler på: dets score på hvert spørgsmål, på én "
        "version af guldsættet.\n"
        "3. **En gate.** Den giver en ny version af systemet score på de samme spørgsmål, sammenligner den med "
        "baselinen spørgsmål for spørgsmål og svarer **bestået**, **fejlet** eller **uafgjort**.\n"
        "4. **CI.** Et job, der kører gaten på hver ændring, før den bliver flettet ind.\n\n"
        "Herunder: dit guldsæts version og baselinens tal."),
    "task.l4_version.prompt": (
        "You correct the labels of five questions, then compare a new version of the system with last month's "
        "baseline. What does the difference you see measure?",
        "Du retter markeringerne på fem spørgsmål og sammenligner derefter en ny version af systemet med sidste "
        "måneds baseline. Hvad måler den forskel, du ser?"),
    "task.l4_version.hint": (
        "The baseline was scored on the old labels. What changed since then?",
        "Baselinen fik score på de gamle markeringer. Hvad har ændret sig siden?"),
    "task.l4_version.ok": (
        "Both changes at once. Score the baseline again on the new version of the golden set (the lab warns when "
        "a baseline's golden set differs), so that the gate measures the system alone.",
        "Begge ændringer på én gang. Giv baselinen score igen på den nye version af guldsættet (laboratoriet "
        "advarer, når en baselines guldsæt er et andet), så gaten kun måler systemet."),
    "opt.l4_version.mixed": ("The system's change and the labels' change, mixed together",
                             "Systemets ændring og markeringernes ændring, blandet sammen"),
    "opt.l4_version.system": ("Only the system's change", "Kun systemets ændring"),
    "opt.l4_version.nothing": ("Nothing: comparing question by question removes the labels' change",
                               "Intet: sammenligning spørgsmål for spørgsmål fjerner markeringernes ændring"),
    # ---- 2. paired ---------------------------------------------------------------------------------------
    "step.l4_paired.title": ("The same questions, before and after", "De samme spørgsmål, før og efter"),
    "step.l4_paired.body": (
        "The **baseline** here is your system as it is. The **candidate** is a change of it: each question's "
        "first two results swapped, as a faulty reranker might do.\n\n"
        "The comparison is **paired**: for each question, the difference **d = candidate − baseline** of its "
        "MRR. A question the candidate does better on is a **win**, worse a **loss**, the same a **tie**. The "
        "mean of the differences is the same as the difference of the two means. What pairing changes is the "
        "**spread**: some questions are easy and some hard for every version of a system, and those differences "
        "between questions are much larger than the change itself. The differences per question leave them "
        "out.\n\n"
        "Below: both means, wins / losses / ties, and the standard deviation of the differences.",
        "**Baselinen** er her dit system, som det er. **Kandidaten** er en ændring af det: hvert spørgsmåls to "
        "første resultater byttet om, som en fejlbehæftet reranker kunne gøre.\n\n"
        "Sammenligningen er **parret**: for hvert spørgsmål forskellen **d = kandidat − baseline** i dets MRR. Et "
        "spørgsmål, kandidaten klarer bedre, er en **sejr**, dårligere et **nederlag**, det samme **uafgjort**. "
        "Gennemsnittet af forskellene er det samme som forskellen mellem de to gennemsnit. Det, parringen ændrer, "
        "er **spredningen**: nogle spørgsmål er lette og nogle svære for alle versioner af et system, og de "
        "forskelle mellem spørgsmålene er meget større end selve ændringen. Forskellene pr. spørgsmål udelader "
        "dem.\n\n"
        "Herunder: begge gennemsnit, sejre / nederlag / uafgjorte og standardafvigelsen af forskellene."),
    "task.l4_mean_diff.prompt": (
        "What is the mean difference, candidate − baseline, in MRR on your set? (three decimals)",
        "Hvad er den gennemsnitlige forskel, kandidat − baseline, i MRR på dit sæt? (tre decimaler)"),
    "task.l4_mean_diff.hint": (
        "The mean of the differences is the candidate's mean minus the baseline's. A drop is negative.",
        "Gennemsnittet af forskellene er kandidatens gennemsnit minus baselinens. Et fald er negativt."),
    "task.l4_mean_diff.ok": (
        "The swap helps the questions whose first relevant chunk was second, and hurts those where it was first and "
        "the second was not relevant.",
        "Ombytningen hjælper de spørgsmål, hvis første relevante chunk var nummer to, og skader dem, hvor den var "
        "nummer ét, og nummer to ikke var relevant."),
    "task.l4_why_pair.prompt": (
        "Why compare the two versions question by question?",
        "Hvorfor sammenligne de to versioner spørgsmål for spørgsmål?"),
    "task.l4_why_pair.hint": (
        "What varies more: one question from the next, or one version from the other on the same question?",
        "Hvad varierer mest: ét spørgsmål fra det næste, eller én version fra den anden på samme spørgsmål?"),
    "task.l4_why_pair.ok": (
        "The questions' own difficulty drops out, so a smaller set can see the same change.",
        "Spørgsmålenes egen sværhedsgrad falder ud, så et mindre sæt kan se den samme ændring."),
    "opt.l4_why_pair.difficulty": (
        "Questions differ in difficulty much more than the versions do; pairing takes that out of the spread",
        "Spørgsmål er langt mere forskellige i sværhedsgrad end versionerne; parring fjerner det fra spredningen"),
    "opt.l4_why_pair.faster": ("It is faster to compute", "Det er hurtigere at beregne"),
    "opt.l4_why_pair.order": ("It gives another mean difference", "Det giver en anden gennemsnitlig forskel"),
    # ---- 3. the gate -------------------------------------------------------------------------------------
    "step.l4_gate.title": ("The gate: pass, fail or inconclusive", "Gaten: bestået, fejlet eller uafgjort"),
    "step.l4_gate.body": (
        "From the differences the gate computes two numbers. The **interval**: where the true mean change "
        "likely lies (95 %, a paired t-test). The **smallest change this set can detect**: with this many "
        "questions and this spread, a drop at least this large would be caught 80 % of the time. You choose a "
        "third: the **minimum change** that matters to you (0.05 by default). Then:\n\n"
        "- **fail**: the whole interval lies below 0. The candidate is worse, and not by chance.\n"
        "- **pass**: not a fail, and the set can detect the minimum change (smallest detectable ≤ minimum "
        "change). A drop that matters would have shown.\n"
        "- **inconclusive**: neither. The set is too small to tell. That is not a pass.\n\n"
        "Below: the gate's numbers for the candidate on your set, with a minimum change of 0.05.",
        "Ud fra forskellene beregner gaten to tal. **Intervallet**: hvor den sande gennemsnitlige ændring "
        "sandsynligvis ligger (95 %, en parret t-test). **Den mindste ændring, sættet kan opdage**: med så mange "
        "spørgsmål og denne spredning ville et fald mindst så stort blive fanget 80 % af gangene. Du vælger et "
        "tredje: den **mindste ændring**, der betyder noget for dig (0,05 som standard). Så:\n\n"
        "- **fejlet**: hele intervallet ligger under 0. Kandidaten er dårligere, og ikke tilfældigt.\n"
        "- **bestået**: ikke fejlet, og sættet kan opdage den mindste ændring (mindste opdagelige ≤ mindste "
        "ændring). Et fald, der betyder noget, ville være blevet set.\n"
        "- **uafgjort**: ingen af delene. Sættet er for lille til at afgøre det. Det er ikke bestået.\n\n"
        "Herunder: gatens tal for kandidaten på dit sæt, med en mindste ændring på 0,05."),
    "task.l4_verdict.prompt": (
        "What does the gate answer for the candidate on your set?",
        "Hvad svarer gaten for kandidaten på dit sæt?"),
    "task.l4_verdict.hint": (
        "First: is the whole interval below 0? If not: is the smallest detectable change at most the minimum "
        "change?",
        "Først: ligger hele intervallet under 0? Hvis ikke: er den mindste opdagelige ændring højst den mindste "
        "ændring?"),
    "task.l4_verdict.ok": (
        "That is the gate's rule, the same in the app and in the CLI.",
        "Det er gatens regel, den samme i appen og i kommandolinjen."),
    "opt.l4_verdict.pass": ("Pass", "Bestået"),
    "opt.l4_verdict.fail": ("Fail", "Fejlet"),
    "opt.l4_verdict.inconclusive": ("Inconclusive", "Uafgjort"),
    "task.l4_next.prompt": (
        "The gate answers inconclusive. What do you do?",
        "Gaten svarer uafgjort. Hvad gør du?"),
    "task.l4_next.hint": (
        "Inconclusive means the set could not see a change of the size you asked about.",
        "Uafgjort betyder, at sættet ikke kunne se en ændring af den størrelse, du spurgte om."),
    "task.l4_next.ok": (
        "More questions make the smallest detectable change smaller. Merging or rerunning until it passes hides "
        "the question.",
        "Flere spørgsmål gør den mindste opdagelige ændring mindre. At flette ind eller køre igen, til den består, "
        "skjuler spørgsmålet."),
    "opt.l4_next.more": ("Add questions to the golden set, then run the gate again",
                         "Tilføj spørgsmål til guldsættet, og kør gaten igen"),
    "opt.l4_next.merge": ("Merge: nothing was shown to be worse", "Flet ind: intet blev vist at være dårligere"),
    "opt.l4_next.rerun": ("Run the gate again until it passes", "Kør gaten igen, til den består"),
    # ---- 4. power ----------------------------------------------------------------------------------------
    "step.l4_power.title": ("How many questions does a set need?", "Hvor mange spørgsmål kræver et sæt?"),
    "step.l4_power.body": (
        "The smallest change a set can detect is about\n\n"
        "**(t(1 − α/2) + t(power)) × sd / √n**\n\n"
        "with α = 0.05 and power 80 %: two numbers from the t-distribution (together about 2.8 for a large set), "
        "the standard deviation **sd** of the differences, and **n** questions. The square root is the point: "
        "four times the questions halve the smallest detectable change.\n\n"
        "To plan a golden set, turn it round: the smallest **n** whose detectable change is at most the minimum "
        "change. The lab does that from the spread of your differences (an estimate: a larger set may spread "
        "differently). Below: for the candidate on your set.",
        "Den mindste ændring, et sæt kan opdage, er omtrent\n\n"
        "**(t(1 − α/2) + t(styrke)) × sd / √n**\n\n"
        "med α = 0,05 og styrke 80 %: to tal fra t-fordelingen (tilsammen omkring 2,8 for et stort sæt), "
        "standardafvigelsen **sd** af forskellene og **n** spørgsmål. Kvadratroden er pointen: fire gange så "
        "mange spørgsmål halverer den mindste opdagelige ændring.\n\n"
        "For at planlægge et guldsæt vender du den om: det mindste **n**, hvis opdagelige ændring højst er den "
        "mindste ændring. Laboratoriet gør det ud fra spredningen af dine forskelle (et skøn: et større sæt kan "
        "sprede sig anderledes). Herunder: for kandidaten på dit sæt."),
    "task.l4_more.prompt": (
        "How many more questions than your set has now would detect a change of 0.05? (0 if it already can)",
        "Hvor mange flere spørgsmål, end dit sæt har nu, skal der til for at opdage en ændring på 0,05? (0, hvis "
        "det allerede kan)"),
    "task.l4_more.hint": (
        "The questions needed for 0.05, minus the questions in your set.",
        "De spørgsmål, der skal til for 0,05, minus spørgsmålene i dit sæt."),
    "task.l4_more.ok": (
        "Writing that many good questions takes time: that is why the gate says inconclusive instead of pass "
        "when the set is too small.",
        "Det tager tid at skrive så mange gode spørgsmål: derfor siger gaten uafgjort i stedet for bestået, når "
        "sættet er for lille."),
    # ---- 5. CI -------------------------------------------------------------------------------------------
    "step.l4_ci.title": ("Run it on every change: CI", "Kør den på hver ændring: CI"),
    "step.l4_ci.body": (
        "The command-line gate is `rag-metrics gate`. Once, on the main branch, you save the baseline with "
        "`rag-metrics evaluate --save-run` and commit it beside the golden set. Then, on every pull request, a "
        "CI job builds the run of the changed system and runs the gate. Its **exit code** is the answer: **0** "
        "pass, **1** fail, **3** inconclusive (2: bad input). Every code but 0 stops the job, so an "
        "inconclusive change is not merged by accident.\n\n"
        "Below: a GitHub Actions job for your setup: your corpus, your system, your golden set and K. Download "
        "your golden set and commit it with the job; save the baseline with the command in the job's first "
        "lines.",
        "Gaten på kommandolinjen er `rag-metrics gate`. Én gang, på hovedgrenen, gemmer du baselinen med "
        "`rag-metrics evaluate --save-run` og committer den ved siden af guldsættet. Derefter kører et CI-job på "
        "hver pull request: det bygger den ændrede systems kørsel og kører gaten. Dens **exitkode** er svaret: "
        "**0** bestået, **1** fejlet, **3** uafgjort (2: forkert input). Alle koder undtagen 0 stopper jobbet, så "
        "en uafgjort ændring ikke bliver flettet ind ved et uheld.\n\n"
        "Herunder: et GitHub Actions-job til din opsætning: dit korpus, dit system, dit guldsæt og K. Hent dit "
        "guldsæt, og commit det sammen med jobbet; gem baselinen med kommandoen i jobbets første linjer."),
    "task.l4_exit.prompt": (
        "The job stopped with exit code 3. What happened?",
        "Jobbet stoppede med exitkode 3. Hvad skete der?"),
    "task.l4_exit.hint": ("0 pass, 1 fail, 2 bad input, 3 …", "0 bestået, 1 fejlet, 2 forkert input, 3 …"),
    "task.l4_exit.ok": (
        "The log then says the smallest change the set can detect, and about how many more questions it needs.",
        "Loggen siger så, hvilken mindste ændring sættet kan opdage, og omtrent hvor mange flere spørgsmål det "
        "kræver."),
    "opt.l4_exit.inconclusive": ("Inconclusive: the set is too small to see the minimum change",
                                 "Uafgjort: sættet er for lille til at se den mindste ændring"),
    "opt.l4_exit.fail": ("Fail: a metric is significantly worse", "Fejlet: et mål er signifikant dårligere"),
    "opt.l4_exit.input": ("A file could not be read", "En fil kunne ikke læses"),
    # ---- 6. quiz -----------------------------------------------------------------------------------------
    "step.l4_quiz.title": ("Quiz", "Quiz"),
    "step.l4_quiz.body": (
        "Three questions on what you saw. That is the end of the course: you can now measure retrieval and "
        "answers, and check every change automatically.",
        "Tre spørgsmål om det, du så. Det er slutningen på kurset: du kan nu måle retrieval og svar og tjekke "
        "hver ændring automatisk."),
    "task.l4_quiz_drop.prompt": (
        "On 2,000 questions a change lowers MRR by 0.02, with the interval [−0.03; −0.01]. The minimum change is "
        "0.05. What does the gate answer?",
        "På 2.000 spørgsmål sænker en ændring MRR med 0,02, med intervallet [−0,03; −0,01]. Den mindste ændring er "
        "0,05. Hvad svarer gaten?"),
    "task.l4_quiz_drop.hint": ("Which rule does the gate check first?", "Hvilken regel tjekker gaten først?"),
    "task.l4_quiz_drop.ok": (
        "Fail: the whole interval is below 0. The minimum change only decides between pass and inconclusive.",
        "Fejlet: hele intervallet ligger under 0. Den mindste ændring afgør kun mellem bestået og uafgjort."),
    "opt.l4_quiz_drop.fail": ("Fail", "Fejlet"),
    "opt.l4_quiz_drop.pass": ("Pass: 0.02 is below the minimum change", "Bestået: 0,02 er under den mindste ændring"),
    "opt.l4_quiz_drop.inconclusive": ("Inconclusive", "Uafgjort"),
    "task.l4_quiz_power.prompt": (
        "To detect a change half as large with the same spread, about how many questions do you need?",
        "For at opdage en ændring, der er halvt så stor, med samme spredning, hvor mange spørgsmål skal du så "
        "have omtrent?"),
    "task.l4_quiz_power.hint": ("The detectable change falls with √n.", "Den opdagelige ændring falder med √n."),
    "task.l4_quiz_power.ok": ("√4 = 2: four times as many questions halve it.",
                              "√4 = 2: fire gange så mange spørgsmål halverer den."),
    "opt.l4_quiz_power.four": ("Four times as many", "Fire gange så mange"),
    "opt.l4_quiz_power.twice": ("Twice as many", "Dobbelt så mange"),
    "opt.l4_quiz_power.same": ("The same number", "Det samme antal"),
    "task.l4_quiz_baseline.prompt": (
        "You add 40 questions to the golden set. What do you do with the baseline?",
        "Du tilføjer 40 spørgsmål til guldsættet. Hvad gør du med baselinen?"),
    "task.l4_quiz_baseline.hint": (
        "The baseline holds a score for each question it was run on.",
        "Baselinen har en score for hvert spørgsmål, den blev kørt på."),
    "task.l4_quiz_baseline.ok": (
        "Score the baseline system again on the new version and commit both together: a baseline belongs to one "
        "version of the golden set.",
        "Giv baselinesystemet score igen på den nye version, og commit begge sammen: en baseline hører til én "
        "version af guldsættet."),
    "opt.l4_quiz_baseline.rescore": ("Score the baseline system again on the new golden set, and commit both",
                                     "Giv baselinesystemet score igen på det nye guldsæt, og commit begge"),
    "opt.l4_quiz_baseline.keep": ("Keep it: the gate only uses the questions both runs have",
                                  "Behold den: gaten bruger kun de spørgsmål, begge kørsler har"),
    "opt.l4_quiz_baseline.delete": ("Delete it: the first run after the change becomes the baseline",
                                    "Slet den: den første kørsel efter ændringen bliver baselinen"),
    # ---- the figures' and the page's labels -------------------------------------------------------------
    "ui.l4.questions": ("Questions in your golden set", "Spørgsmål i dit guldsæt"),
    "ui.l4.version": ("Golden set version", "Guldsættets version"),
    "ui.l4.baseline": ("Baseline", "Baseline"),
    "ui.l4.candidate": ("Candidate", "Kandidat"),
    "ui.l4.wlt": ("Wins / losses / ties", "Sejre / nederlag / uafgjorte"),
    "ui.l4.sd": ("Standard deviation of d", "Standardafvigelse af d"),
    "ui.l4.change": ("Mean change", "Gennemsnitlig ændring"),
    "ui.l4.interval_low": ("Interval (95 %): from", "Interval (95 %): fra"),
    "ui.l4.interval_high": ("Interval (95 %): to", "Interval (95 %): til"),
    "ui.l4.detectable": ("Smallest detectable, n = {n}", "Mindste opdagelige, n = {n}"),
    "ui.l4.in_set": ("Questions compared", "Spørgsmål sammenlignet"),
    "ui.l4.needed_for": ("Questions needed for {d}", "Spørgsmål nødvendige for {d}"),
    "ui.l4.job": ("Your CI job (.github/workflows/rag-gate.yml)", "Dit CI-job (.github/workflows/rag-gate.yml)"),
    "ui.l4.download_golden": ("Download your golden set ({file})", "Hent dit guldsæt ({file})"),
    "ui.l4.min_change_input": ("Minimum change for your gate", "Mindste ændring for din gate"),
    "ui.l4.corpus_path": ("Your corpus folder in the repository", "Din korpusmappe i repositoriet"),
    "ui.l4.own_system": (
        "Your system is not one of the lab's retrievers, so the job has a line for your own system to write its "
        "run for the golden questions: replace it with your system's command.",
        "Dit system er ikke en af laboratoriets retrievere, så jobbet har en linje, hvor dit eget system skriver "
        "sin kørsel for guldspørgsmålene: erstat den med dit systems kommando."),
    "ui.l4.yaml_title": ("the RAG regression gate on every pull request",
                         "RAG-regressionsgaten på hver pull request"),
    "ui.l4.yaml_baseline": ("once, on the main branch: save and commit {file}:",
                            "én gang, på hovedgrenen: gem og commit {file}:"),
    "ui.l4.yaml_install": ("the lab's library and CLI (the class's version)",
                           "laboratoriets bibliotek og CLI (klassens version)"),
    "ui.l4.yaml_run": ("the changed system's run for the golden questions",
                       "det ændrede systems kørsel for guldspørgsmålene"),
    "ui.l4.yaml_own": ("your system writes {file} (a RAG log) for the questions",
                       "dit system skriver {file} (en RAG-log) for spørgsmålene"),
    "ui.l4.yaml_gate": ("the gate: exit 0 pass, 1 fail, 3 inconclusive",
                        "gaten: exit 0 bestået, 1 fejlet, 3 uafgjort"),
}

LESSON = Lesson(key="system", number=4, steps=STEPS, quiz=QUIZ, texts=TEXTS,
                exercises=("paired_difference", "gate_decision", "questions_needed"))
