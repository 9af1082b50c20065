"""Lesson 1 of the course, "Why evaluation matters in RAG": what goes wrong in a RAG system, shown live.

Six short steps (about five minutes): the three ways a RAG system goes wrong (the retriever misses; the right
chunk is ranked low; the answer says what the retrieved chunks do not), each shown on the class's own golden set
and system; what a harmless-looking change costs (the same system with its top 10 in reverse order: the same
chunks found, ordered worst first); and the three questions the later lessons answer.

Every number is computed live: from the evaluation of the current corpus and system (``ctx.result``), from that
evaluation's run with its top 10 reversed (:func:`reversed_result`, evaluated by the lab's engine), and from the
sample's answers with their sentence labels (:func:`answer_support`).  Nothing here imports streamlit.

>>> LESSON.key, LESSON.number, [s.key for s in LESSON.steps][:2]
('why', 1, ['l1_three', 'l1_miss'])
"""
from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from rag_metrics.errors import InputError
from rag_metrics.evaluation import EvaluationResult, evaluate
from rag_metrics.lesson.course import Lesson
from rag_metrics.lesson.steps import FAILURE_REASONS, LessonContext, Step, Task, _check_failure, parse_number
from rag_metrics.types import Run

__all__ = ["LESSON", "TEXTS", "STEPS", "QUIZ", "REVERSED_DEPTH", "TOP_READ", "answer_support", "missed",
           "fall_when_reversed", "reversed_result", "found_not_top"]

#: The deliberately bad system reverses the current system's first this many results.
REVERSED_DEPTH = 10
#: How many chunks the model is said to read (step 3's "top 3").
TOP_READ = 3


# ---- live figures -------------------------------------------------------------------------------------
def _t(key: str, lang: str, **values: Any) -> str:
    en, da = TEXTS[key]
    return (da if lang == "da" else en).format(**values)


def _num(v: float, lang: str) -> str:
    if v != v:  # NaN: nothing to average
        return "–"
    s = f"{v:.3f}"
    return s.replace(".", ",") if lang == "da" else s


def _of(a: int, n: int, lang: str) -> str:
    return _t("ui.l1.of", lang, a=a, n=n)


def _hits(result: EvaluationResult, k: int) -> np.ndarray:
    """Per question in the mean: 1 when a relevant chunk is in the top ``k``, else 0."""
    return (np.nan_to_num(result.values("hit_rate", k)[result.included]) > 0).astype(int)


def missed(result: EvaluationResult, k: int) -> tuple[int, int]:
    """``(questions with no relevant chunk in the top k, questions in the mean)``."""
    hits = _hits(result, k)
    return int((hits == 0).sum()), int(hits.size)


def found_not_top(result: EvaluationResult, deep: int = REVERSED_DEPTH, top: int = TOP_READ) -> int:
    """Questions in the mean with a relevant chunk in the top ``deep`` but none in the top ``top``."""
    return int((_hits(result, deep) - _hits(result, top)).clip(0).sum())


_REVERSED: dict[int, tuple[EvaluationResult, EvaluationResult]] = {}


def reversed_result(result: EvaluationResult) -> EvaluationResult:
    """The deliberately bad system, evaluated by the engine under ``result``'s conventions: the same questions
    and the same first :data:`REVERSED_DEPTH` chunks of ``result``'s run, in reverse order (worst first)."""
    kept = _REVERSED.get(id(result))
    if kept is not None and kept[0] is result:
        return kept[1]
    ranked = result.run.rankings()
    bad = {q: [(cid, float(REVERSED_DEPTH - i)) for i, (cid, _) in enumerate(reversed(r[:REVERSED_DEPTH]))]
           for q, r in ranked.items()}
    out = evaluate(result.golden, Run.from_rankings(bad, name="reversed"), result.options)
    if len(_REVERSED) >= 8:
        _REVERSED.clear()
    _REVERSED[id(result)] = (result, out)
    return out


def fall_when_reversed(result: EvaluationResult, top: int = TOP_READ) -> int:
    """How many fewer questions in the mean have a relevant chunk in the first ``top`` after the reversal (hit
    rate@top's fall, in questions)."""
    return int(_hits(result, top).sum()) - int(_hits(reversed_result(result), top).sum())


@functools.lru_cache(maxsize=1)
def answer_support() -> tuple[tuple[str, int, int], ...]:
    """The sample's answers per system: ``(system, answers, answers with at least one sentence labelled
    unsupported)``, from the shipped answers and their people's labels (:func:`load_sample_answers`).
    Raises :class:`InputError` when the sample is not installed."""
    from rag_metrics.answers.data import load_sample_answers

    items, labels = load_sample_answers()
    out: dict[str, list[int]] = {}
    for it in items:
        row = out.setdefault(it.system or "?", [0, 0])
        row[0] += 1
        row[1] += int(labels[it.id].has_unsupported) if it.id in labels else 0
    return tuple((name, a, b) for name, (a, b) in out.items())


def _fig_three(ctx: LessonContext, lang: str) -> list[tuple[str, str]]:
    r = ctx.result
    return [(_t("ui.l1.questions", lang), str(int(r.included.sum()))),
            (_t("ui.l1.hit_k", lang, k=ctx.k), _num(r.mean("hit_rate", ctx.k), lang))]


def _fig_miss(ctx: LessonContext, lang: str) -> list[tuple[str, str]]:
    r = ctx.result
    m, n = missed(r, ctx.k)
    deep, _ = missed(r, REVERSED_DEPTH)
    return [(_t("ui.l1.missed_k", lang, k=ctx.k), _of(m, n, lang)),
            (_t("ui.l1.missed_k", lang, k=REVERSED_DEPTH), _of(deep, n, lang)),
            (_t("ui.l1.hit_k", lang, k=ctx.k), _num(r.mean("hit_rate", ctx.k), lang))]


def _fig_low(ctx: LessonContext, lang: str) -> list[tuple[str, str]]:
    r = ctx.result
    _, n = missed(r, 1)
    return [(_t("ui.l1.at_1", lang), _of(int(_hits(r, 1).sum()), n, lang)),
            (_t("ui.l1.in_top", lang, k=TOP_READ), _of(int(_hits(r, TOP_READ).sum()), n, lang)),
            (_t("ui.l1.in_top", lang, k=REVERSED_DEPTH), _of(int(_hits(r, REVERSED_DEPTH).sum()), n, lang))]


def _fig_unsupported(ctx: LessonContext, lang: str) -> list[tuple[str, str]]:
    try:
        rows = answer_support()
    except (InputError, OSError):
        return []
    return [(_t("ui.l1.unsupported", lang, system=name), _of(bad, n, lang)) for name, n, bad in rows]


def _fig_cost(ctx: LessonContext, lang: str) -> list[tuple[str, str]]:
    """Questions with a relevant chunk in the top 10 and in the top 3: now → reversed (three cards: a row at
    1024 px)."""
    r, bad = ctx.result, reversed_result(ctx.result)
    return [(_t("ui.l1.in_top_change", lang, k=k), f"{int(_hits(r, k).sum())} → {int(_hits(bad, k).sum())}")
            for k in (REVERSED_DEPTH, TOP_READ)] + [(_t("ui.l1.questions", lang), str(int(r.included.sum())))]


# ---- checks -------------------------------------------------------------------------------------------
def _whole(answer: Any, expected: int) -> bool:
    v = parse_number(answer)
    return v is not None and v == expected


def _check_found_not_top(answer: Any, ctx: LessonContext) -> bool:
    return _whole(answer, found_not_top(ctx.result))


def _check_lost(answer: Any, ctx: LessonContext) -> bool:
    return _whole(answer, fall_when_reversed(ctx.result))


def _choice(key: str, options: tuple[str, ...], answer: str) -> Task:
    return Task(key, "choice", options=options, answer=answer)


QUIZ: tuple[Task, ...] = (
    _choice("l1_quiz_rank", ("l2", "l3", "l4"), "l2"),
    _choice("l1_quiz_faithful", ("l2", "l3", "l4"), "l3"),
    _choice("l1_quiz_change", ("l2", "l3", "l4"), "l4"),
)

STEPS: tuple[Step, ...] = (
    Step("l1_three", (_choice("l1_kind", ("miss", "low", "unsupported"), "unsupported"),), figures=_fig_three),
    Step("l1_miss", (Task("l1_why_missed", "failure", _check_failure, options=FAILURE_REASONS),), figures=_fig_miss),
    Step("l1_low", (Task("l1_found_not_top", "number", _check_found_not_top),), figures=_fig_low),
    Step("l1_unsupported", (_choice("l1_which_metric", ("retrieval", "answer", "neither"), "answer"),),
         figures=_fig_unsupported),
    Step("l1_cost", (Task("l1_lost", "number", _check_lost),), figures=_fig_cost),
    Step("l1_quiz", QUIZ),
)


# ---- texts (en, da) -----------------------------------------------------------------------------------
TEXTS: Mapping[str, tuple[str, str]] = {
    "lesson.why.title": ("Why evaluation matters in RAG", "Hvorfor evaluering er vigtig i RAG"),
    "lesson.why.intro": (
        "What goes wrong in a RAG system, shown on your own golden set and system, and what it costs. About five "
        "minutes.",
        "Hvad der går galt i et RAG-system, vist på dit eget guldsæt og system, og hvad det koster. Omkring fem "
        "minutter."),
    # ---- 1. three ways --------------------------------------------------------------------------------
    "step.l1_three.title": ("Three ways a RAG system goes wrong", "Tre måder, et RAG-system går galt på"),
    "step.l1_three.body": (
        "A RAG system answers in three moves: it **retrieves** chunks of your documents for the question, it "
        "**ranks** them, and a language model **writes the answer** from the first few. Each move can fail:\n\n"
        "1. **The retriever misses**: no chunk that holds the answer is among the ones the model reads.\n"
        "2. **The right chunk is ranked low**: it was found, but too far down for the model to read it.\n"
        "3. **The answer is not supported**: the model had the right chunks and still wrote something they do "
        "not say.\n\n"
        "All three give a fluent answer that looks fine. You only see them by checking many questions whose "
        "right chunks you know: a golden set. The numbers below are your golden set and system.",
        "Et RAG-system svarer i tre træk: det **henter** stykker (chunks) af dine dokumenter til spørgsmålet, "
        "det **rangordner** dem, og en sprogmodel **skriver svaret** ud fra de første. Hvert træk kan fejle:\n\n"
        "1. **Retrieveren rammer ved siden af**: ingen chunk med svaret er blandt dem, modellen læser.\n"
        "2. **Den rigtige chunk står for langt nede**: den blev fundet, men for langt nede til, at modellen "
        "læser den.\n"
        "3. **Svaret er ikke understøttet**: modellen havde de rigtige chunks og skrev alligevel noget, de ikke "
        "siger.\n\n"
        "Alle tre giver et flydende svar, der ser fint ud. Du ser dem kun ved at tjekke mange spørgsmål, hvis "
        "rigtige chunks du kender: et guldsæt. Tallene herunder er dit guldsæt og system."),
    "task.l1_kind.prompt": (
        "The retrieved chunks say that refunds can be asked for within 14 days. The answer says 30 days. Which "
        "failure is this?",
        "De hentede chunks siger, at man kan bede om refusion inden for 14 dage. Svaret siger 30 dage. Hvilken "
        "fejl er det?"),
    "task.l1_kind.hint": (
        "The right chunk was retrieved, and it was read. Where did the wrong number come from?",
        "Den rigtige chunk blev hentet, og den blev læst. Hvor kom det forkerte tal fra?"),
    "task.l1_kind.ok": (
        "The evidence was there; the model did not follow it. Retrieval metrics cannot see this failure.",
        "Beviset var der; modellen fulgte det ikke. Retrieval-mål kan ikke se denne fejl."),
    "opt.l1_kind.miss": ("The retriever missed", "Retrieveren ramte ved siden af"),
    "opt.l1_kind.low": ("The right chunk was ranked low", "Den rigtige chunk stod for langt nede"),
    "opt.l1_kind.unsupported": ("The answer is not supported by the chunks", "Svaret er ikke understøttet af "
                                                                            "chunkene"),
    # ---- 2. the retriever misses ----------------------------------------------------------------------
    "step.l1_miss.title": ("The retriever misses", "Retrieveren rammer ved siden af"),
    "step.l1_miss.body": (
        "When no chunk that holds the answer is among the first K the model reads, the model can only guess or "
        "refuse. No prompt fixes that: the evidence never reached it.\n\n"
        "Below: how many of your questions get no relevant chunk in the first K, and in the first 10. Some of "
        "A question missed at K may have been found further down, or not found at all. The task lists the "
        "questions your system misses at K: pick one and say why.",
        "Når ingen chunk med svaret er blandt de første K, modellen læser, kan modellen kun gætte eller sige "
        "nej. Ingen prompt løser det: beviset nåede aldrig frem.\n\n"
        "Herunder: hvor mange af dine spørgsmål der ikke får nogen relevant chunk blandt de første K, og blandt "
        "de første 10. Et spørgsmål, der ikke er fundet ved K, kan være fundet længere nede eller slet ikke. "
        "Opgaven viser de spørgsmål, dit system rammer ved siden af ved K: vælg et, og sig hvorfor."),
    "task.l1_why_missed.prompt": (
        "Pick a question your system misses at K = {k}. Why does it miss?",
        "Vælg et spørgsmål, dit system rammer ved siden af ved K = {k}. Hvorfor rammer det ved siden af?"),
    "task.l1_why_missed.hint": (
        "Open the question on the page \"Failures and drill-down\": is a relevant chunk anywhere in its ranking, "
        "and at which rank?",
        "Åbn spørgsmålet på siden \"Failures and drill-down\": står der en relevant chunk et sted i dets "
        "rangering, og på hvilken plads?"),
    "task.l1_why_missed.ok": (
        "A miss at K can be a chunk ranked too low, a chunk never retrieved, or a question with no relevant "
        "chunk labelled. Each needs a different fix.",
        "En bom ved K kan være en chunk, der står for langt nede, en chunk, der aldrig blev hentet, eller et "
        "spørgsmål uden nogen relevant chunk markeret. Hver kræver sin egen løsning."),
    "opt.l1_why_missed.below_k": ("A relevant chunk was retrieved, but below rank K",
                                  "En relevant chunk blev hentet, men under plads K"),
    "opt.l1_why_missed.not_retrieved": ("No relevant chunk was retrieved at all",
                                        "Ingen relevant chunk blev hentet overhovedet"),
    "opt.l1_why_missed.no_relevant_label": ("The question has no relevant chunk labelled",
                                            "Spørgsmålet har ingen relevant chunk markeret"),
    # ---- 3. ranked low --------------------------------------------------------------------------------
    "step.l1_low.title": ("The right chunk is ranked low", "Den rigtige chunk står for langt nede"),
    "step.l1_low.body": (
        "A model reads only the first few chunks: the more it reads, the slower and dearer each answer, and the "
        "more noise it gets. So a relevant chunk at rank 8 helps little when the model reads the first 3.\n\n"
        "Below: for how many of your questions the first chunk is already relevant, and for how many a relevant "
        "chunk is in the top 3, and in the top 10.",
        "En model læser kun de første få chunks: jo flere den læser, jo langsommere og dyrere bliver hvert svar, "
        "og jo mere støj får den. En relevant chunk på plads 8 hjælper derfor ikke meget, når modellen læser de "
        "første 3.\n\n"
        "Herunder: for hvor mange af dine spørgsmål den første chunk allerede er relevant, og for hvor mange en "
        "relevant chunk er i top 3 og i top 10."),
    "task.l1_found_not_top.prompt": (
        "If the model reads only the first 3 chunks, how many of your questions lose their evidence: a relevant "
        "chunk in the first 10, but none in the first 3?",
        "Hvis modellen kun læser de første 3 chunks, hvor mange af dine spørgsmål mister så deres bevis: en "
        "relevant chunk blandt de første 10, men ingen blandt de første 3?"),
    "task.l1_found_not_top.hint": (
        "Every question with a relevant chunk in the first 3 also has one in the first 10. Compare the two counts "
        "above.",
        "Hvert spørgsmål med en relevant chunk blandt de første 3 har også en blandt de første 10. Sammenlign de "
        "to tal ovenfor."),
    "task.l1_found_not_top.ok": (
        "Those questions were answered from the wrong chunks, although the retriever found the right ones. "
        "Lesson 2's rank-aware metrics (MRR, NDCG) measure exactly this.",
        "De spørgsmål blev besvaret ud fra de forkerte chunks, selv om retrieveren fandt de rigtige. Lektion 2's "
        "rangfølsomme mål (MRR, NDCG) måler netop det."),
    # ---- 4. not supported -----------------------------------------------------------------------------
    "step.l1_unsupported.title": ("The answer is not supported", "Svaret er ikke understøttet"),
    "step.l1_unsupported.body": (
        "The lab ships answers from two made-up systems, *careful* and *sloppy*, to the same questions. "
        "Both got **exactly the same retrieved chunks** for every question. People labelled each sentence of "
        "each answer: supported by those chunks, or not.\n\n"
        "Below: how many answers of each system hold at least one unsupported sentence. Their hit rate, MRR "
        "and NDCG are identical, since their retrieval is.",
        "Laboratoriet har svar fra to opdigtede systemer, *careful* og *sloppy*, på de samme spørgsmål. "
        "Begge fik **præcis de samme hentede chunks** til hvert spørgsmål. Mennesker har markeret hver sætning "
        "i hvert svar: understøttet af de chunks eller ej.\n\n"
        "Herunder: hvor mange svar fra hvert system der har mindst én sætning, som ikke er understøttet. Deres "
        "hit rate, MRR og NDCG er ens, for deres retrieval er ens."),
    "task.l1_which_metric.prompt": (
        "Both systems retrieved the same chunks for every question. What can tell them apart?",
        "Begge systemer hentede de samme chunks til hvert spørgsmål. Hvad kan skelne dem fra hinanden?"),
    "task.l1_which_metric.hint": (
        "Retrieval metrics read only the ranked chunks, and those are the same. What differs between the two "
        "systems?",
        "Retrieval-mål læser kun de rangordnede chunks, og de er ens. Hvad er forskelligt mellem de to systemer?"),
    "task.l1_which_metric.ok": (
        "Only a metric that reads the answer against the chunks, such as faithfulness (lesson 3), sees the "
        "difference.",
        "Kun et mål, der læser svaret op mod chunkene, som faithfulness (lektion 3), ser forskellen."),
    "opt.l1_which_metric.retrieval": ("Retrieval metrics: hit rate, MRR, NDCG",
                                      "Retrieval-mål: hit rate, MRR, NDCG"),
    "opt.l1_which_metric.answer": ("Answer metrics: is each sentence supported by the chunks?",
                                   "Svarmål: er hver sætning understøttet af chunkene?"),
    "opt.l1_which_metric.neither": ("Nothing: they look the same", "Intet: de ser ens ud"),
    # ---- 5. what a change costs -----------------------------------------------------------------------
    "step.l1_cost.title": ("What a change costs", "Hvad en ændring koster"),
    "step.l1_cost.body": (
        "A deliberately bad change: the same system, but its first 10 chunks in **reverse order**, worst first. "
        "It finds exactly the same chunks, so a check that only asks \"is a relevant chunk in the first 10?\" "
        "sees no change. The lab's engine evaluates it on your golden set: below, how many of your questions have "
        "a relevant chunk in the top 10 and in the top 3, now → reversed.\n\n"
        "Reading a handful of answers by hand would rarely show this. A number over the whole golden set does.",
        "En bevidst dårlig ændring: det samme system, men dets første 10 chunks i **omvendt rækkefølge**, den "
        "dårligste først. Det finder præcis de samme chunks, så et tjek, der kun spørger \"er der en relevant "
        "chunk blandt de første 10?\", ser ingen ændring. Laboratoriets motor evaluerer det på dit guldsæt "
        "herunder: hvor mange af dine spørgsmål der har en relevant chunk i top 10 og i top 3, nu → omvendt.\n\n"
        "At læse en håndfuld svar i hånden ville sjældent vise det. Et tal over hele guldsættet gør."),
    "task.l1_lost.prompt": (
        "How many fewer of your questions have a relevant chunk in the top 3 after the reversal? Those answers "
        "are now written from the wrong chunks.",
        "Hvor mange færre af dine spørgsmål har en relevant chunk i top 3 efter vendingen? De svar skrives nu ud "
        "fra de forkerte chunks."),
    "task.l1_lost.hint": (
        "Look at \"Relevant in the top 3\": now minus reversed.",
        "Se på \"Relevant i top 3\": nu minus omvendt."),
    "task.l1_lost.ok": (
        "Those answers got worse with no error anywhere, and the top 10 did not change. Catching a change like "
        "this before it ships is lesson 4.",
        "De svar blev dårligere uden nogen fejl nogen steder, og top 10 ændrede sig ikke. At fange en ændring som "
        "denne, før den sendes ud, er lektion 4."),
    # ---- 6. the three questions and the quiz ----------------------------------------------------------
    "step.l1_quiz.title": ("Three questions for the rest of the course", "Tre spørgsmål til resten af kurset"),
    "step.l1_quiz.body": (
        "Each failure has its own question, and each of the next lessons answers one:\n\n"
        "- **Lesson 2**: is the right evidence retrieved, and is it ranked high? (hit rate, MRR, NDCG)\n"
        "- **Lesson 3**: is the answer faithful to that evidence, and relevant to the question? (faithfulness, "
        "answer relevancy)\n"
        "- **Lesson 4**: does a change make the system better or worse, checked automatically before it ships? "
        "(a golden set, a baseline and a regression gate)\n\n"
        "Which lesson answers each of these?",
        "Hver fejl har sit eget spørgsmål, og hver af de næste lektioner besvarer ét:\n\n"
        "- **Lektion 2**: bliver det rigtige bevis hentet, og står det højt? (hit rate, MRR, NDCG)\n"
        "- **Lektion 3**: holder svaret sig til beviset, og svarer det på spørgsmålet? (faithfulness, answer "
        "relevancy)\n"
        "- **Lektion 4**: gør en ændring systemet bedre eller værre, tjekket automatisk, før den sendes ud? (et "
        "guldsæt, en baseline og en regressionsport)\n\n"
        "Hvilken lektion besvarer hvert af disse?"),
    "task.l1_quiz_rank.prompt": (
        "The relevant chunk is at rank 8 and the model reads the first 3. Which lesson's question is this?",
        "Den relevante chunk står på plads 8, og modellen læser de første 3. Hvilken lektions spørgsmål er det?"),
    "task.l1_quiz_rank.hint": ("Is this about the chunks, or about the answer?",
                               "Handler det om chunkene eller om svaret?"),
    "task.l1_quiz_rank.ok": ("Lesson 2: a rank-aware retrieval metric sees it.",
                             "Lektion 2: et rangfølsomt retrieval-mål ser det."),
    "task.l1_quiz_faithful.prompt": (
        "The answer adds a price that no retrieved chunk mentions. Which lesson's question is this?",
        "Svaret tilføjer en pris, som ingen hentet chunk nævner. Hvilken lektions spørgsmål er det?"),
    "task.l1_quiz_faithful.hint": ("The chunks may be right. What is wrong?",
                                   "Chunkene kan være rigtige. Hvad er galt?"),
    "task.l1_quiz_faithful.ok": ("Lesson 3: faithfulness checks each claim against the chunks.",
                                 "Lektion 3: faithfulness tjekker hver påstand mod chunkene."),
    "task.l1_quiz_change.prompt": (
        "You change the chunk size from 500 to 200 characters. Did it get better or worse? Which lesson's "
        "question is this?",
        "Du ændrer chunkstørrelsen fra 500 til 200 tegn. Blev det bedre eller værre? Hvilken lektions spørgsmål er "
        "det?"),
    "task.l1_quiz_change.hint": ("This is about comparing two versions, every time something changes.",
                                 "Det handler om at sammenligne to versioner, hver gang noget ændres."),
    "task.l1_quiz_change.ok": ("Lesson 4: a regression gate compares the change with a baseline on the golden set.",
                               "Lektion 4: en regressionsport sammenligner ændringen med en baseline på guldsættet."),
    **{f"opt.{key}.{n}": (f"Lesson {n[1]}", f"Lektion {n[1]}")
       for key in ("l1_quiz_rank", "l1_quiz_faithful", "l1_quiz_change") for n in ("l2", "l3", "l4")},
    # ---- the figures' labels --------------------------------------------------------------------------
    "ui.l1.of": ("{a} of {n}", "{a} af {n}"),
    "ui.l1.questions": ("Questions", "Spørgsmål"),
    "ui.l1.hit_k": ("Hit rate@{k}", "Hit rate@{k}"),
    "ui.l1.mrr": ("MRR@{k}", "MRR@{k}"),
    "ui.l1.in_top_change": ("Relevant in the top {k}: now → reversed", "Relevant i top {k}: nu → omvendt"),
    "ui.l1.missed_k": ("Missed in the top {k}", "Ikke fundet i top {k}"),
    "ui.l1.at_1": ("Relevant at rank 1", "Relevant på plads 1"),
    "ui.l1.in_top": ("Relevant in the top {k}", "Relevant i top {k}"),
    "ui.l1.unsupported": ("Unsupported answers: {system}", "Ikke understøttede svar: {system}"),
}

LESSON = Lesson(key="why", number=1, steps=STEPS, quiz=QUIZ, texts=TEXTS)
