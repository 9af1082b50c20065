"""Lesson 4's code exercises (an automated evaluation system): a paired comparison, the gate's decision, the
questions a set needs.

Plain Python, called with JSON values only (``{"function": name, "params": [...]}``): the statistics the student
cannot compute without SciPy are given (the gate's interval and smallest detectable change as inputs; the
t-distribution's quantile as a function in the starter code, :data:`T_HELPERS`).  Every expected value is the lab's
own engine on the same numbers: :func:`rag_metrics.compare.paired.compare_paired` (paired differences),
:func:`rag_metrics.compare.gate.gate_checks` (the gate's rule) and :func:`rag_metrics.compare.gate.questions_needed`,
on the per-question scores of the sample's two answer systems (*careful* and *sloppy*: each answer's faithfulness
by the lab's judge, :mod:`rag_metrics.answers.recorded`), on the current golden set and system against a changed
version of it (lesson 4's candidate), and on made-up edge cases.

This module registers its checks (:data:`rag_metrics.exercises.checks.BUILDERS`), its mistakes' hints
(:data:`rag_metrics.exercises.mistakes.MISTAKES`) and their diagnosis (:data:`~rag_metrics.exercises.mistakes.
DIAGNOSES`) as it loads.  Reference solutions: :mod:`rag_metrics.exercises.reference_system` (server only).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from rag_metrics.exercises.catalogue import Exercise
from rag_metrics.exercises.checks import BUILDERS, Check
from rag_metrics.exercises.grading import compare_values
from rag_metrics.exercises.mistakes import DIAGNOSES, MISTAKES, close

__all__ = ["EXERCISES", "GATE", "NEEDED", "PAIRED", "T_HELPERS", "gate_checks_of", "needed_checks", "paired_checks",
           "sample_pairs"]

LESSON = "system"


def _both(en: str, da: str) -> Mapping[str, str]:
    return MappingProxyType({"en": en, "da": da})


def _many(en: tuple[str, ...], da: tuple[str, ...]) -> Mapping[str, tuple[str, ...]]:
    assert len(en) == len(da)
    return MappingProxyType({"en": en, "da": da})


#: The t-distribution in plain Python (no SciPy in the browser), given in the starter of ``questions_needed``:
#: ``t_quantile(p, df)`` agrees with ``scipy.stats.t.ppf`` to about 1e-9 (regularised incomplete beta by Lentz's
#: continued fraction, then Newton's method inside a bracket).
T_HELPERS = '''import math
from statistics import NormalDist


def _betacf(a, b, x):
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        for num in (m * (b - m) * x / ((a + m2 - 1) * (a + m2)),
                    -(a + m) * (a + b + m) * x
                    / ((a + m2) * (a + m2 + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _betainc(a, b, x):
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a)
                 - math.lgamma(b) + a * math.log(x)
                 + b * math.log1p(-x))
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t, df):
    """P(T <= t) for Student's t with df degrees of freedom."""
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_quantile(p, df):
    """The t with P(T <= t) = p, for df degrees of freedom."""
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    z = NormalDist().inv_cdf(p)
    t = (z + (z ** 3 + z) / (4 * df)
         + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2))
    lo, hi = 0.0, max(2.0 * t, 1.0)
    while t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2.0
    log_c = (math.lgamma((df + 1) / 2) - math.lgamma(df / 2)
             - 0.5 * math.log(df * math.pi))
    for _ in range(200):
        if not lo < t < hi:
            t = (lo + hi) / 2.0
        err = t_cdf(t, df) - p
        if err < 0:
            lo = t
        else:
            hi = t
        shape = math.log1p(t * t / df)
        density = math.exp(log_c - (df + 1) / 2 * shape)
        step = err / density
        t -= step
        if abs(step) <= 1e-12 * abs(t) or hi - lo <= 1e-13 * hi:
            break
    return t
'''

# ---- 1. the paired comparison ----------------------------------------------------------------------------
_PAIRED_LESSON = '''import math


def paired_difference(scores_a, scores_b):
    """Run B against run A, question by question."""
    d = [b - a for a, b in zip(scores_a, scores_b)]
    n = len(d)
    mean = sum(d) / n
    if n > 1:
        squares = sum((x - mean) ** 2 for x in d)
        sd = math.sqrt(squares / (n - 1))
    else:
        sd = None  # one difference has no spread
    return {
        "mean_difference": mean,
        "sd": sd,
        "wins": sum(1 for x in d if x > 0),
        "losses": sum(1 for x in d if x < 0),
        "ties": sum(1 for x in d if x == 0),
    }
'''

PAIRED = Exercise(
    name="paired_difference", step="l4_paired", lesson=LESSON,
    title=_both("A paired comparison", "En parret sammenligning"),
    prompt=_both(
        "Write `paired_difference(scores_a, scores_b)`: compare run B with run A on the same questions. "
        "`scores_a[i]` and `scores_b[i]` are the two runs' scores on question `i`. Work with the differences "
        "`d = b − a`, one per question, and return a dict:\n\n"
        "- `mean_difference`: the mean of the differences;\n"
        "- `sd`: their standard deviation, dividing by n − 1 (`None` for a single question);\n"
        "- `wins`, `losses`, `ties`: how many questions B does better on (d > 0), worse (d < 0), the same "
        "(d = 0).",
        "Skriv `paired_difference(scores_a, scores_b)`: sammenlign kørsel B med kørsel A på de samme spørgsmål. "
        "`scores_a[i]` og `scores_b[i]` er de to kørslers score på spørgsmål `i`. Arbejd med forskellene "
        "`d = b − a`, én pr. spørgsmål, og returner en dict:\n\n"
        "- `mean_difference`: gennemsnittet af forskellene;\n"
        "- `sd`: deres standardafvigelse, divideret med n − 1 (`None` for et enkelt spørgsmål);\n"
        "- `wins`, `losses`, `ties`: hvor mange spørgsmål B klarer bedre (d > 0), dårligere (d < 0), ens "
        "(d = 0)."),
    starter='''import math


def paired_difference(scores_a, scores_b):
    """Run B against run A, question by question."""
    ...
''',
    examples=_many(
        ("A = `[1, 0.5, 0]`, B = `[0.5, 0.5, 1]`: d = `[-0.5, 0, 1]`, so mean 0.1667, sd 0.7638, 1 win, 1 loss, "
         "1 tie.",
         "One question: `paired_difference([0.2], [0.5])` has mean 0.3 and sd `None`."),
        ("A = `[1, 0.5, 0]`, B = `[0.5, 0.5, 1]`: d = `[-0.5, 0, 1]`, så gennemsnit 0,1667, sd 0,7638, 1 sejr, "
         "1 nederlag, 1 uafgjort.",
         "Ét spørgsmål: `paired_difference([0.2], [0.5])` har gennemsnit 0,3 og sd `None`.")),
    hints=_many(
        ("First make the list of differences, one per question: `d = [b - a for a, b in zip(scores_a, scores_b)]`.",
         "A win is a question where B is better: d > 0. Count d < 0 and d == 0 the same way.",
         "The sample standard deviation divides the sum of squared deviations from the mean by n − 1, not n."),
        ("Lav først listen af forskelle, én pr. spørgsmål: `d = [b - a for a, b in zip(scores_a, scores_b)]`.",
         "En sejr er et spørgsmål, hvor B er bedre: d > 0. Tæl d < 0 og d == 0 på samme måde.",
         "Stikprøvens standardafvigelse dividerer summen af de kvadrerede afvigelser fra gennemsnittet med n − 1, "
         "ikke n.")),
    lesson_code=_PAIRED_LESSON,
    conventions=_many(
        ("d = B − A per question; a win for B is d > 0", "sd with n − 1 (the sample standard deviation); "
         "none for one question", "the mean of the differences = the difference of the means"),
        ("d = B − A pr. spørgsmål; en sejr for B er d > 0", "sd med n − 1 (stikprøvens standardafvigelse); "
         "ingen for ét spørgsmål", "gennemsnittet af forskellene = forskellen mellem gennemsnittene")),
)

# ---- 2. the gate's decision ------------------------------------------------------------------------------
_GATE_LESSON = '''def gate_decision(comparison, min_change):
    """The gate's answer: pass, fail or inconclusive."""
    ci_high = comparison["ci_high"]
    detectable = comparison["detectable"]
    if ci_high is not None and ci_high < 0:
        return "fail"    # the whole interval is below 0
    if detectable is not None and detectable <= min_change:
        return "pass"    # a drop of min_change would show
    return "inconclusive"    # too small to tell
'''

GATE = Exercise(
    name="gate_decision", step="l4_gate", lesson=LESSON,
    title=_both("The gate's decision", "Gatens afgørelse"),
    prompt=_both(
        "Write `gate_decision(comparison, min_change)`: the gate's answer for one metric, `\"pass\"`, `\"fail\"` or "
        "`\"inconclusive\"`. `comparison` is a dict the lab computed from the two runs (current − baseline):\n\n"
        "- `n`: questions compared; `change`: the mean change;\n"
        "- `ci_low`, `ci_high`: the interval of the mean change (`None` with fewer than 3 questions);\n"
        "- `detectable`: the smallest change this set can detect (`None` with fewer than 3 questions).\n\n"
        "The rule: **fail** when the whole interval is below 0; else **pass** when `detectable` is at most "
        "`min_change`; else **inconclusive**.",
        "Skriv `gate_decision(comparison, min_change)`: gatens svar for ét mål, `\"pass\"`, `\"fail\"` eller "
        "`\"inconclusive\"`. `comparison` er en dict, som laboratoriet har beregnet ud fra de to kørsler "
        "(nuværende − baseline):\n\n"
        "- `n`: sammenlignede spørgsmål; `change`: den gennemsnitlige ændring;\n"
        "- `ci_low`, `ci_high`: intervallet for den gennemsnitlige ændring (`None` med færre end 3 spørgsmål);\n"
        "- `detectable`: den mindste ændring, sættet kan opdage (`None` med færre end 3 spørgsmål).\n\n"
        "Reglen: **fail**, når hele intervallet ligger under 0; ellers **pass**, når `detectable` højst er "
        "`min_change`; ellers **inconclusive**."),
    starter='''def gate_decision(comparison, min_change):
    """The gate's answer: pass, fail or inconclusive."""
    ...
''',
    examples=_many(
        ("Interval `[-0.12, -0.03]`: `\"fail\"`, whatever `detectable` is.",
         "Interval `[-0.04, 0.02]`, detectable 0.09, min_change 0.05: `\"inconclusive\"`; with min_change 0.1: "
         "`\"pass\"`."),
        ("Interval `[-0.12, -0.03]`: `\"fail\"`, uanset hvad `detectable` er.",
         "Interval `[-0.04, 0.02]`, detectable 0,09, min_change 0,05: `\"inconclusive\"`; med min_change 0,1: "
         "`\"pass\"`.")),
    hints=_many(
        ("Check fail first: it depends only on the interval's upper end, `ci_high < 0`.",
         "A change that is not significant is not a pass by itself: the set must also be able to see "
         "`min_change` (`detectable <= min_change`).",
         "With fewer than 3 questions `ci_high` and `detectable` are `None`: that is inconclusive, unless "
         "`detectable` is given."),
        ("Tjek fail først: det afhænger kun af intervallets øvre ende, `ci_high < 0`.",
         "En ændring, der ikke er signifikant, er ikke bestået i sig selv: sættet skal også kunne se "
         "`min_change` (`detectable <= min_change`).",
         "Med færre end 3 spørgsmål er `ci_high` og `detectable` `None`: det er uafgjort, medmindre "
         "`detectable` er givet.")),
    lesson_code=_GATE_LESSON,
    conventions=_many(
        ("fail: the interval of current − baseline lies below 0", "pass: not fail, and detectable <= min_change",
         "inconclusive otherwise, including too few questions; an improvement can be inconclusive too"),
        ("fail: intervallet for nuværende − baseline ligger under 0", "pass: ikke fail, og detectable <= "
         "min_change", "ellers inconclusive, også ved for få spørgsmål; en forbedring kan også være inconclusive")),
)

# ---- 3. the questions needed -------------------------------------------------------------------------------
_NEEDED_FN = '''

def questions_needed(min_change, sd, alpha=0.05, power=0.8):
    """Fewest questions (3 or more) detecting min_change."""
    if sd <= 0 or min_change <= 0:
        return None
    n = 3
    while True:
        df = n - 1
        t_alpha = t_quantile(1 - alpha / 2, df)
        t_power = t_quantile(power, df)
        detectable = (t_alpha + t_power) * sd / math.sqrt(n)
        if detectable <= min_change:
            return n
        n += 1
'''

NEEDED = Exercise(
    name="questions_needed", step="l4_power", lesson=LESSON,
    title=_both("The questions a set needs", "De spørgsmål, et sæt kræver"),
    prompt=_both(
        "Write `questions_needed(min_change, sd, alpha=0.05, power=0.8)`: the smallest number of questions `n` "
        "(at least 3) for which the smallest detectable change\n\n"
        "`(t_quantile(1 − alpha/2, n − 1) + t_quantile(power, n − 1)) × sd / √n`\n\n"
        "is at most `min_change`. `sd` is the standard deviation of the per-question differences. Return `None` "
        "when `sd` or `min_change` is not above 0. The starter gives `t_quantile(p, df)`, the t-distribution's "
        "quantile (what `scipy.stats.t.ppf` gives): leave it as it is.",
        "Skriv `questions_needed(min_change, sd, alpha=0.05, power=0.8)`: det mindste antal spørgsmål `n` "
        "(mindst 3), for hvilket den mindste opdagelige ændring\n\n"
        "`(t_quantile(1 − alpha/2, n − 1) + t_quantile(power, n − 1)) × sd / √n`\n\n"
        "højst er `min_change`. `sd` er standardafvigelsen af forskellene pr. spørgsmål. Returner `None`, når "
        "`sd` eller `min_change` ikke er over 0. Startkoden giver `t_quantile(p, df)`, t-fordelingens kvantil "
        "(det, `scipy.stats.t.ppf` giver): lad den være, som den er."),
    starter=T_HELPERS + '''

def questions_needed(min_change, sd, alpha=0.05, power=0.8):
    """Fewest questions (3 or more) detecting min_change."""
    ...
''',
    examples=_many(
        ("`questions_needed(0.05, 0.3)` is 285: with 284 questions the detectable change is just above 0.05.",
         "`questions_needed(0.5, 0.1)` is 3 (the fewest the gate uses); `questions_needed(0.05, 0)` is `None`."),
        ("`questions_needed(0.05, 0.3)` er 285: med 284 spørgsmål er den opdagelige ændring lige over 0,05.",
         "`questions_needed(0.5, 0.1)` er 3 (det færreste, gaten bruger); `questions_needed(0.05, 0)` er "
         "`None`.")),
    hints=_many(
        ("Start at n = 3 and add one question at a time until the detectable change is at most `min_change`.",
         "The test is two-sided: the first quantile is at `1 - alpha / 2`, with `n - 1` degrees of freedom.",
         "Divide by the square root of n (`math.sqrt(n)`), and return the first n that is small enough, not the "
         "last one that is not."),
        ("Start ved n = 3, og læg ét spørgsmål til ad gangen, til den opdagelige ændring højst er `min_change`.",
         "Testen er tosidet: den første kvantil er ved `1 - alpha / 2`, med `n - 1` frihedsgrader.",
         "Divider med kvadratroden af n (`math.sqrt(n)`), og returner det første n, der er lille nok, ikke det "
         "sidste, der ikke er.")),
    lesson_code=T_HELPERS + _NEEDED_FN,
    conventions=_many(
        ("t quantiles with n − 1 degrees of freedom (not the normal z)", "two-sided: 1 − alpha/2",
         "at least 3 questions; None when sd or min_change is not above 0"),
        ("t-kvantiler med n − 1 frihedsgrader (ikke normalfordelingens z)", "tosidet: 1 − alpha/2",
         "mindst 3 spørgsmål; None når sd eller min_change ikke er over 0")),
)

EXERCISES: tuple[Exercise, ...] = (PAIRED, GATE, NEEDED)


# ---- the engine's numbers -------------------------------------------------------------------------------
def _t(en: str, da: str) -> Mapping[str, str]:
    return MappingProxyType({"en": en, "da": da})


def _json_number(v: Any) -> float | None:
    """A float for JSON: NaN (no value) as ``None``."""
    f = float(v)
    return None if math.isnan(f) else f


def sample_pairs() -> list[tuple[str, list[float], list[float]]]:
    """The sample's two answer systems as paired per-question scores: ``(question id, faithfulness of careful,
    of sloppy)`` for the questions both answers have a faithfulness for (the lab's judge,
    :func:`rag_metrics.answers.recorded.faithfulness_score`); empty when the sample is not installed."""
    from rag_metrics.answers.recorded import faithfulness_score, sample_records
    from rag_metrics.errors import InputError

    try:
        recs = sample_records()
    except InputError:
        return []
    by: dict[str, dict[str, float]] = {}
    for r in recs:
        v = faithfulness_score(list(r.claims), r.table).value
        if v is not None:
            by.setdefault(r.item.id.rsplit("-", 1)[0], {})[r.item.system] = float(v)
    return [(q, [s["careful"]], [s["sloppy"]]) for q, s in by.items() if {"careful", "sloppy"} <= set(s)]


def _sample_scores() -> tuple[list[float], list[float]]:
    pairs = sample_pairs()
    return [a for _, (a,), _ in pairs], [b for _, _, (b,) in pairs]


def _current_scores(golden: Any, run: Any, k: int) -> tuple[list[float], list[float]] | None:
    """MRR@k per question of the current system (A) and of lesson 4's candidate (B: its first two results
    swapped), on the questions both include; None without a golden set and run."""
    from rag_metrics.compare.candidate import METRIC, candidate_result
    from rag_metrics.evaluation import evaluate
    from rag_metrics.types import GoldenSet, Run

    if not isinstance(golden, GoldenSet) or not isinstance(run, Run) or not len(golden):
        return None
    base = evaluate(golden, run)
    cand = candidate_result(base)
    inc = base.included & cand.included
    if not inc.any():
        return None
    return ([float(x) for x in base.values(METRIC, k)[inc]], [float(x) for x in cand.values(METRIC, k)[inc]])


def _paired_expected(a: Sequence[float], b: Sequence[float]) -> dict[str, Any]:
    import numpy as np

    from rag_metrics.compare.paired import compare_paired

    pair = ("score", None, np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    row = compare_paired([pair]).to_dict("records")[0]
    return {"mean_difference": float(row["delta"]), "sd": _json_number(row["sd"]), "wins": int(row["wins"]),
            "losses": int(row["losses"]), "ties": int(row["ties"])}


def gate_checks_of(a: Sequence[float], b: Sequence[float], min_change: float) -> tuple[dict[str, Any], str]:
    """The gate on baseline ``a`` and current ``b``: the exercise's ``comparison`` dict and the lab's answer
    (:func:`~rag_metrics.compare.gate.gate_checks`)."""
    import numpy as np

    from rag_metrics.compare.gate import gate_checks
    from rag_metrics.compare.paired import compare_paired

    table = compare_paired([("score", None, np.asarray(a, dtype=float), np.asarray(b, dtype=float))])
    g = gate_checks(table, min_change)[0]
    few = g.n < 3
    return ({"n": g.n, "change": float(g.delta), "ci_low": None if few else _json_number(g.ci_low),
             "ci_high": None if few else _json_number(g.ci_high), "detectable": _json_number(g.detectable)},
            g.verdict)


# ---- checks: paired_difference ----------------------------------------------------------------------------
#: Made-up pairs: (id, label, hint, scores A, scores B).
_PAIRED_CASES: tuple[tuple[str, Mapping[str, str], Mapping[str, str], list[float], list[float]], ...] = (
    ("mixed", _t("Three questions: a loss, a tie, a win", "Tre spørgsmål: et nederlag, uafgjort, en sejr"),
     _t("d = b − a per question; a tie is d = 0.", "d = b − a pr. spørgsmål; uafgjort er d = 0."),
     [1.0, 0.5, 0.0], [0.5, 0.5, 1.0]),
    ("all_worse", _t("B worse on every question", "B dårligere på hvert spørgsmål"),
     _t("Every difference is negative: B loses everywhere, and the mean difference is negative.",
        "Alle forskelle er negative: B taber overalt, og den gennemsnitlige forskel er negativ."),
     [1.0, 1.0, 0.5, 0.5, 1.0], [0.5, 0.0, 0.0, 0.25, 0.5]),
    ("same_means", _t("The same mean, different questions", "Samme gennemsnit, forskellige spørgsmål"),
     _t("The means are equal, but B wins two questions and loses two: the spread of d is large.",
        "Gennemsnittene er ens, men B vinder to spørgsmål og taber to: spredningen af d er stor."),
     [1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]),
    ("identical", _t("Identical runs", "Ens kørsler"),
     _t("No question changed: all ties, mean 0 and sd 0.", "Intet spørgsmål ændrede sig: alle uafgjort, "
                                                            "gennemsnit 0 og sd 0."),
     [0.2, 0.4, 0.6], [0.2, 0.4, 0.6]),
    ("one_question", _t("One question", "Ét spørgsmål"),
     _t("One difference has no spread: sd is None.", "Én forskel har ingen spredning: sd er None."),
     [0.2], [0.5]),
)


def paired_checks(name: str, golden: Any = None, run: Any = None, *, k: int | None = None,
                  chunk_to_doc: Any = None, lang: str = "en") -> tuple[Check, ...]:
    """The checks of ``paired_difference``: the sample's two answer systems, the current golden set and system
    against lesson 4's candidate, then made-up cases; each expected value from
    :func:`~rag_metrics.compare.paired.compare_paired`."""
    out = []
    a, b = _sample_scores()
    if a:
        out.append(Check("sample_systems", _t(f"The sample's answers: careful (A) and sloppy (B), faithfulness on "
                                              f"{len(a)} questions",
                                              f"Eksemplets svar: careful (A) og sloppy (B), faithfulness på "
                                              f"{len(a)} spørgsmål"),
                         {"function": name, "params": [a, b]}, _paired_expected(a, b), {"questions": len(a)},
                         _t("Real per-question scores: B is worse on many questions.",
                            "Rigtige scorer pr. spørgsmål: B er dårligere på mange spørgsmål.")))
    kk = 5 if k is None else int(k)
    cur = _current_scores(golden, run, kk)
    if cur is not None:
        out.append(Check("current", _t(f"Your golden set: your system (A) and lesson 4's candidate (B), MRR@{kk} on "
                                       f"{len(cur[0])} questions",
                                       f"Dit guldsæt: dit system (A) og lektion 4's kandidat (B), MRR@{kk} på "
                                       f"{len(cur[0])} spørgsmål"),
                         {"function": name, "params": [cur[0], cur[1]]}, _paired_expected(*cur),
                         {"questions": len(cur[0]), "k": kk},
                         _t("Most questions tie: the swap only moves a relevant chunk at rank 1 or 2.",
                            "De fleste spørgsmål er uafgjort: ombytningen flytter kun en relevant chunk på plads "
                            "1 eller 2.")))
    for cid, label, hint, xa, xb in _PAIRED_CASES:
        out.append(Check(cid, label, {"function": name, "params": [xa, xb]}, _paired_expected(xa, xb),
                         {"scores_a": xa, "scores_b": xb}, hint))
    return tuple(out)


# ---- checks: gate_decision -----------------------------------------------------------------------------------
def _noise(n: int, step: float) -> tuple[list[float], list[float]]:
    """``n`` questions whose differences alternate +step, −step (mean 0, a small spread)."""
    a = [0.5 + 0.01 * (i % 7) for i in range(n)]
    return a, [x + (step if i % 2 else -step) for i, x in enumerate(a)]


def _gate_cases() -> list[tuple[str, Mapping[str, str], Mapping[str, str], list[float], list[float], float]]:
    drop_a = [1.0, 0.5, 1.0, 1.0, 0.5, 1.0, 0.333, 1.0, 0.5, 1.0] * 3
    drop_b = [x - 0.2 + 0.05 * (i % 3) for i, x in enumerate(drop_a)]
    small_a = [0.2, 0.5, 0.7, 0.4, 0.9, 0.6, 0.3, 0.8]
    small_b = [0.3, 0.4, 0.6, 0.5, 0.9, 0.5, 0.3, 0.7]
    big_a, big_b = _noise(200, 0.05)
    mid_a, mid_b = _noise(50, 0.1)
    many_a = [0.6] * 400
    many_b = [x - 0.02 + (0.1 if i % 2 else -0.1) * (0.5 + i / 400) for i, x in enumerate(many_a)]
    up_a = [0.2, 0.3, 0.1, 0.4, 0.2, 0.3, 0.5, 0.1]
    up_b = [0.9, 0.4, 0.8, 0.5, 0.9, 0.3, 0.7, 0.6]
    same = [0.5, 1.0, 0.0, 0.25, 1.0, 0.5]
    return [
        ("clear_drop", _t("30 questions, a clear drop", "30 spørgsmål, et tydeligt fald"),
         _t("The whole interval is below 0: fail.", "Hele intervallet ligger under 0: fail."), drop_a, drop_b, 0.05),
        ("small_set", _t("8 questions, no clear change", "8 spørgsmål, ingen tydelig ændring"),
         _t("Not significant, but 8 questions cannot see a change of 0.05: inconclusive, not pass.",
            "Ikke signifikant, men 8 spørgsmål kan ikke se en ændring på 0,05: inconclusive, ikke pass."),
         small_a, small_b, 0.05),
        ("small_set_wide", _t("The same 8 questions, minimum change 0.5", "De samme 8 spørgsmål, mindste ændring 0,5"),
         _t("The same data with a larger minimum change: the set can see 0.5, so pass.",
            "De samme data med en større mindste ændring: sættet kan se 0,5, så pass."), small_a, small_b, 0.5),
        ("large_set", _t("200 questions, small ups and downs", "200 spørgsmål, små op- og nedture"),
         _t("No significant change, and 200 questions can see 0.05: pass.",
            "Ingen signifikant ændring, og 200 spørgsmål kan se 0,05: pass."), big_a, big_b, 0.05),
        ("just_enough", _t("50 questions, ups and downs of 0.1", "50 spørgsmål, op- og nedture på 0,1"),
         _t("The set detects changes of about 0.04, less than 0.05: pass.",
            "Sættet opdager ændringer på omkring 0,04, mindre end 0,05: pass."), mid_a, mid_b, 0.05),
        ("small_drop", _t("400 questions, a drop of 0.02", "400 spørgsmål, et fald på 0,02"),
         _t("A drop smaller than the minimum change, but the whole interval is below 0: fail.",
            "Et fald, der er mindre end den mindste ændring, men hele intervallet ligger under 0: fail."),
         many_a, many_b, 0.05),
        ("improvement", _t("8 questions, a clear improvement", "8 spørgsmål, en tydelig forbedring"),
         _t("Better, but the set still cannot see a drop of 0.05: an improvement is not a pass by itself.",
            "Bedre, men sættet kan stadig ikke se et fald på 0,05: en forbedring er ikke bestået i sig selv."),
         up_a, up_b, 0.05),
        ("identical", _t("6 questions, identical runs", "6 spørgsmål, ens kørsler"),
         _t("Nothing changed: the smallest detectable change is 0, so pass.",
            "Intet ændrede sig: den mindste opdagelige ændring er 0, så pass."), same, list(same), 0.05),
        ("two_questions", _t("2 questions", "2 spørgsmål"),
         _t("Fewer than 3 questions: no interval, no detectable change; inconclusive.",
            "Færre end 3 spørgsmål: intet interval, ingen opdagelig ændring; inconclusive."),
         [1.0, 0.5], [0.5, 0.0], 0.05),
    ]


def gate_checks_for(name: str, golden: Any = None, run: Any = None, *, k: int | None = None,
                    chunk_to_doc: Any = None, lang: str = "en") -> tuple[Check, ...]:
    """The checks of ``gate_decision``: the sample's two answer systems both ways, the current golden set and
    system against lesson 4's candidate, then made-up cases; each expected answer from
    :func:`~rag_metrics.compare.gate.gate_checks`."""
    out = []
    a, b = _sample_scores()
    cases: list[tuple[str, Mapping[str, str], Mapping[str, str], list[float], list[float], float]] = []
    if a:
        cases += [("sample_worse", _t(f"The sample: baseline careful, current sloppy ({len(a)} questions)",
                                      f"Eksemplet: baseline careful, nuværende sloppy ({len(a)} spørgsmål)"),
                   _t("Real scores: the current system is much less faithful.",
                      "Rigtige scorer: det nuværende system er meget mindre tro mod kilderne."), a, b, 0.05),
                  ("sample_better", _t(f"The sample: baseline sloppy, current careful ({len(a)} questions)",
                                       f"Eksemplet: baseline sloppy, nuværende careful ({len(a)} spørgsmål)"),
                   _t("Real scores, the other way round: better, so not a fail; is the set large enough?",
                      "Rigtige scorer, omvendt: bedre, så ikke fail; er sættet stort nok?"), b, a, 0.05)]
    kk = 5 if k is None else int(k)
    cur = _current_scores(golden, run, kk)
    if cur is not None:
        cases.append(("current", _t(f"Your golden set: your system, then lesson 4's candidate (MRR@{kk})",
                                    f"Dit guldsæt: dit system, så lektion 4's kandidat (MRR@{kk})"),
                      _t("The comparison on the Lesson page's gate step.", "Sammenligningen på lektionens gate-trin."),
                      cur[0], cur[1], 0.05))
    cases += _gate_cases()
    for cid, label, hint, xa, xb, mc in cases:
        comp, verdict = gate_checks_of(xa, xb, mc)
        out.append(Check(cid, label, {"function": name, "params": [comp, mc]}, verdict,
                         {"comparison": comp, "min_change": mc}, hint))
    return tuple(out)


# ---- checks: questions_needed ---------------------------------------------------------------------------------
def _needed(min_change: float, sd: float, alpha: float, power: float) -> int | None:
    from rag_metrics.compare.gate import questions_needed

    return questions_needed(sd, min_change, alpha, power)


def needed_checks(name: str, golden: Any = None, run: Any = None, *, k: int | None = None,
                  chunk_to_doc: Any = None, lang: str = "en") -> tuple[Check, ...]:
    """The checks of ``questions_needed``: the spread of the sample's two answer systems' differences, then
    made-up spreads; each expected value from :func:`rag_metrics.compare.gate.questions_needed`."""
    out = []
    a, b = _sample_scores()
    if a:
        sd = float(_paired_expected(a, b)["sd"])
        for mc in (0.1, 0.05):
            out.append(Check(f"sample_{mc:g}", _t(f"The sample's careful vs sloppy spread (sd {sd:.3f}), minimum "
                                                  f"change {mc:g}",
                                                  f"Spredningen mellem eksemplets careful og sloppy (sd {sd:.3f}), "
                                                  f"mindste ændring {mc:g}"),
                             {"function": name, "params": [mc, sd, 0.05, 0.8]}, _needed(mc, sd, 0.05, 0.8),
                             {"min_change": mc, "sd": sd, "alpha": 0.05, "power": 0.8},
                             _t("A real spread of per-question differences.",
                                "En rigtig spredning af forskelle pr. spørgsmål.")))
    made_up: list[tuple[str, Mapping[str, str], Mapping[str, str], list[float]]] = [
        ("typical", _t("sd 0.3, minimum change 0.05", "sd 0,3, mindste ændring 0,05"),
         _t("The prompt's example: 284 questions are just too few.",
            "Opgavens eksempel: 284 spørgsmål er lige for få."), [0.05, 0.3, 0.05, 0.8]),
        ("strict", _t("alpha 0.01 and power 0.9", "alpha 0,01 og styrke 0,9"),
         _t("A stricter test and more power need more questions: use alpha and power as given.",
            "En strengere test og mere styrke kræver flere spørgsmål: brug alpha og power, som de er givet."),
         [0.1, 0.25, 0.01, 0.9]),
        ("few", _t("A large minimum change", "En stor mindste ændring"),
         _t("Three questions already detect it: the gate never uses fewer than 3.",
            "Tre spørgsmål opdager den allerede: gaten bruger aldrig færre end 3."), [0.5, 0.05, 0.05, 0.8]),
        ("small_n", _t("sd 0.2, minimum change 0.25", "sd 0,2, mindste ændring 0,25"),
         _t("A handful of questions: the t quantiles with n − 1 degrees of freedom are much larger than z here.",
            "En håndfuld spørgsmål: t-kvantilerne med n − 1 frihedsgrader er meget større end z her."),
         [0.25, 0.2, 0.05, 0.8]),
        ("zero_sd", _t("No spread at all", "Ingen spredning overhovedet"),
         _t("With sd 0 the number cannot be computed from the spread: None.",
            "Med sd 0 kan antallet ikke beregnes ud fra spredningen: None."), [0.05, 0.0, 0.05, 0.8]),
        ("zero_change", _t("A minimum change of 0", "En mindste ændring på 0"),
         _t("No set can detect a change of 0: None.", "Intet sæt kan opdage en ændring på 0: None."),
         [0.0, 0.3, 0.05, 0.8]),
    ]
    for cid, label, hint, params in made_up:
        mc, sd, alpha, power = params
        out.append(Check(cid, label, {"function": name, "params": list(params)}, _needed(mc, sd, alpha, power),
                         {"min_change": mc, "sd": sd, "alpha": alpha, "power": power}, hint))
    return tuple(out)


BUILDERS.update({"paired_difference": paired_checks, "gate_decision": gate_checks_for,
                 "questions_needed": needed_checks})


# ---- typical mistakes -----------------------------------------------------------------------------------------
MISTAKES.update({
    "pd_sign": (
        "You computed a − b: the differences go the other way, so the mean has the wrong sign and wins and losses "
        "are swapped. The comparison is B against A: `d = b - a`.",
        "Du har beregnet a − b: forskellene går den anden vej, så gennemsnittet har forkert fortegn, og sejre og "
        "nederlag er byttet om. Sammenligningen er B mod A: `d = b - a`."),
    "pd_population_sd": (
        "Your sd divides by n: the sample standard deviation the t-test uses divides by n − 1.",
        "Din sd dividerer med n: den stikprøve-standardafvigelse, t-testen bruger, dividerer med n − 1."),
    "pd_unpaired_sd": (
        "Your sd is the spread of the two runs' scores, not of the differences per question. Pair first: "
        "`d = [b - a ...]`, then the standard deviation of d.",
        "Din sd er spredningen af de to kørslers scorer, ikke af forskellene pr. spørgsmål. Par først: "
        "`d = [b - a ...]`, derefter standardafvigelsen af d."),
    "pd_ties_counted": (
        "A tie (d = 0) is neither a win nor a loss: count `d > 0` and `d < 0`, not `>=` or `<=`.",
        "Uafgjort (d = 0) er hverken en sejr eller et nederlag: tæl `d > 0` og `d < 0`, ikke `>=` eller `<=`."),
    "pd_one_sd": (
        "With one question there is no spread to estimate: return `None` for sd (dividing by n − 1 = 0 is not "
        "possible).",
        "Med ét spørgsmål er der ingen spredning at skønne: returner `None` for sd (division med n − 1 = 0 er "
        "ikke mulig)."),
    "gate_no_min_change": (
        "You passed a change the set is too small to see. A change that is not significant is a pass only when the "
        "set can **detect** `min_change` (`detectable <= min_change`), not when the change itself is small; "
        "otherwise it is \"inconclusive\".",
        "Du har godkendt en ændring, sættet er for lille til at se. En ændring, der ikke er signifikant, er kun "
        "bestået, når sættet kan **opdage** `min_change` (`detectable <= min_change`), ikke når selve ændringen er "
        "lille; ellers er den \"inconclusive\"."),
    "gate_false_fail": (
        "You failed a change that is not significantly worse. Fail only when the **whole** interval is below 0 "
        "(`ci_high < 0`): a lower mean, or an interval that only reaches below 0, can be chance, and a set that "
        "cannot tell gives \"inconclusive\".",
        "Du har givet fail til en ændring, der ikke er signifikant dårligere. Giv kun fail, når **hele** "
        "intervallet ligger under 0 (`ci_high < 0`): et lavere gennemsnit eller et interval, der kun når under 0, "
        "kan være tilfældigt, og et sæt, der ikke kan afgøre det, giver \"inconclusive\"."),
    "gate_missed_fail": (
        "The whole interval is below 0 (`ci_high < 0`): that is a fail, however small the change. `min_change` "
        "only decides between pass and inconclusive.",
        "Hele intervallet ligger under 0 (`ci_high < 0`): det er fail, uanset hvor lille ændringen er. "
        "`min_change` afgør kun mellem pass og inconclusive."),
    "gate_missed_pass": (
        "Nothing is significantly worse and the set can detect `min_change` (`detectable <= min_change`; equal "
        "counts): that is a pass. Check for `None` before you compare.",
        "Intet er signifikant dårligere, og sættet kan opdage `min_change` (`detectable <= min_change`; lighed "
        "tæller med): det er pass. Tjek for `None`, før du sammenligner."),
    "qn_z": (
        "Your number is what the normal z quantiles give. The gate uses the t-distribution with n − 1 degrees "
        "of freedom (`t_quantile(p, n - 1)`), which needs more questions when n is small.",
        "Dit tal er det, normalfordelingens z-kvantiler giver. Gaten bruger t-fordelingen med n − 1 "
        "frihedsgrader (`t_quantile(p, n - 1)`), som kræver flere spørgsmål, når n er lille."),
    "qn_one_sided": (
        "You used `t_quantile(1 - alpha, ...)`: the gate's test is two-sided, `1 - alpha / 2`.",
        "Du har brugt `t_quantile(1 - alpha, ...)`: gatens test er tosidet, `1 - alpha / 2`."),
    "qn_last_short": (
        "You returned the last n that is too small, one below the answer: return the first n whose detectable "
        "change is at most `min_change`.",
        "Du har returneret det sidste n, der er for lille, ét under svaret: returner det første n, hvis "
        "opdagelige ændring højst er `min_change`."),
    "qn_one_more": (
        "Your number is one too many: stop at the first n that is small enough (`<=`, not `<`), and return it "
        "before adding one.",
        "Dit tal er ét for meget: stop ved det første n, der er lille nok (`<=`, ikke `<`), og returner det, før "
        "du lægger én til."),
    "qn_df_n": (
        "You used n degrees of freedom: the paired t-test on n questions has n − 1.",
        "Du har brugt n frihedsgrader: den parrede t-test på n spørgsmål har n − 1."),
    "qn_no_sqrt": (
        "You divided by n: the detectable change falls with the square root of n, `sd / math.sqrt(n)`.",
        "Du har divideret med n: den opdagelige ændring falder med kvadratroden af n, `sd / math.sqrt(n)`."),
    "qn_below_three": (
        "The gate never decides on fewer than 3 questions: start the search at n = 3.",
        "Gaten afgør aldrig noget på færre end 3 spørgsmål: start søgningen ved n = 3."),
    "qn_none": (
        "With `sd` or `min_change` not above 0 there is no number of questions to give: return `None`.",
        "Når `sd` eller `min_change` ikke er over 0, er der intet antal spørgsmål at give: returner `None`."),
})


def _sd(xs: Sequence[float], ddof: int) -> float | None:
    n = len(xs)
    if n - ddof <= 0:
        return None
    m = sum(xs) / n
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (n - ddof))


def _diagnose_paired(name: str, args: Mapping[str, Any], expected: Any, got: Any) -> str | None:
    a, b = (list(map(float, x)) for x in args["params"])
    if not isinstance(got, Mapping):
        return None
    if len(a) == 1 and isinstance(got.get("sd"), (int, float)) and not isinstance(got.get("sd"), bool):
        return "pd_one_sd"
    d = [y - x for x, y in zip(a, b)]
    base = dict(expected)
    variants: dict[str, dict[str, Any]] = {
        "pd_sign": {**base, "mean_difference": -base["mean_difference"], "wins": base["losses"],
                    "losses": base["wins"]},
        "pd_population_sd": {**base, "sd": _sd(d, 0)},
        "pd_unpaired_sd": {**base, "sd": math.sqrt((_sd(a, 1) or 0.0) ** 2 + (_sd(b, 1) or 0.0) ** 2)
                           if len(a) > 1 else None},
        "pd_ties_counted": {**base, "wins": base["wins"] + base["ties"], "losses": base["losses"] + base["ties"]},
    }
    for mistake, value in variants.items():
        if value != base and _agrees(value, got, keys=("mean_difference", "sd", "wins", "losses", "ties")):
            return mistake
    if len(a) > 1 and any(_agrees({**base, "wins": w, "losses": lo}, got, keys=("wins", "losses"))
                          for w, lo in ((base["wins"] + base["ties"], base["losses"]),
                                        (base["wins"], base["losses"] + base["ties"]))) and base["ties"]:
        return "pd_ties_counted"
    return None


def _agrees(value: Mapping[str, Any], got: Mapping[str, Any], keys: Sequence[str]) -> bool:
    return all(k in got and compare_values(value[k], got[k]) is None for k in keys)


def _diagnose_gate(name: str, args: Mapping[str, Any], expected: Any, got: Any) -> str | None:
    """The gate's mistakes by what was answered instead of what the rule gives (one case cannot tell a fail on the
    mean from a fail on the interval's lower end: both get the rule's hint)."""
    if not isinstance(got, str) or got == expected or got not in ("pass", "fail", "inconclusive"):
        return None
    if got == "fail":
        return "gate_false_fail"
    if expected == "fail":
        return "gate_missed_fail"
    return "gate_no_min_change" if got == "pass" else "gate_missed_pass"


def _search(mde: Callable[[int], float], mc: float, start: int = 3) -> int:
    n = start
    while mde(n) > mc and n < 1_000_000:
        n += 1
    return n


def _needed_variants(mc: float, sd: float, alpha: float, power: float) -> dict[str, int]:
    from statistics import NormalDist

    from scipy import stats

    def t(p: float, df: int) -> float:
        return float(stats.t.ppf(p, df))

    z = NormalDist().inv_cdf
    exp = _needed(mc, sd, alpha, power)
    assert exp is not None
    return {
        "qn_z": _search(lambda n: (z(1 - alpha / 2) + z(power)) * sd / math.sqrt(n), mc, 1),
        "qn_one_sided": _search(lambda n: (t(1 - alpha, n - 1) + t(power, n - 1)) * sd / math.sqrt(n), mc),
        "qn_df_n": _search(lambda n: (t(1 - alpha / 2, n) + t(power, n)) * sd / math.sqrt(n), mc),
        "qn_no_sqrt": _search(lambda n: (t(1 - alpha / 2, n - 1) + t(power, n - 1)) * sd / n, mc),
        "qn_below_three": _search(lambda n: (t(1 - alpha / 2, n - 1) + t(power, n - 1)) * sd / math.sqrt(n)
                                  if n > 1 else math.inf, mc, 2) if exp == 3 else exp,
        "qn_last_short": exp - 1,   # the plain off-by-ones last: a more specific mistake can give the same n
        "qn_one_more": exp + 1,
    }


def _diagnose_needed(name: str, args: Mapping[str, Any], expected: Any, got: Any) -> str | None:
    mc, sd, alpha, power = (float(x) for x in args["params"])
    if expected is None:
        return "qn_none" if got is not None else None
    if isinstance(got, bool) or not isinstance(got, (int, float)):
        return None
    if expected == 3 and got < 3:
        return "qn_below_three"
    for mistake, value in _needed_variants(mc, sd, alpha, power).items():
        if value != expected and close(float(got), float(value)):
            return mistake
    return None


DIAGNOSES.update({"paired_difference": _diagnose_paired, "gate_decision": _diagnose_gate,
                  "questions_needed": _diagnose_needed})
