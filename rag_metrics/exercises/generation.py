"""Lesson 3's code exercises (generation metrics): faithfulness, the unsupported claims, answer relevancy.

The judge's part comes as data (no model runs in the browser): an answer's ``claims`` and ``supports`` (per claim a
verdict per retrieved chunk, 1 = that chunk supports the claim), or the real question's vector, the vectors of the
questions the judge wrote back from the answer, and their ``noncommittal`` flags.  The student writes the
arithmetic's part.  Every expected value is the lab's own judge doing that arithmetic on the same data
(:mod:`rag_metrics.answers.recorded`: :class:`~rag_metrics.answers.llm.LLMJudge`'s faithfulness and answer
relevancy), on the shipped sample's answers and on small made-up cases.  The checks call the function directly
(``{"function": name, "params": [...]}``), so they need no golden set or retriever.

This module registers its checks (:data:`rag_metrics.exercises.checks.BUILDERS`), its mistakes' hints
(:data:`rag_metrics.exercises.mistakes.MISTAKES`) and their diagnosis (:data:`~rag_metrics.exercises.mistakes.
DIAGNOSES`) as it loads.  Reference solutions: :mod:`rag_metrics.exercises.reference_generation` (server only).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from rag_metrics.exercises.catalogue import Exercise
from rag_metrics.exercises.checks import BUILDERS, Check
from rag_metrics.exercises.mistakes import DIAGNOSES, MISTAKES, close

__all__ = ["EXERCISES", "FAITHFULNESS", "UNSUPPORTED", "RELEVANCY", "faithfulness_checks", "relevancy_checks",
           "unsupported_checks"]

LESSON = "generation"


def _both(en: str, da: str) -> Mapping[str, str]:
    return MappingProxyType({"en": en, "da": da})


def _many(en: tuple[str, ...], da: tuple[str, ...]) -> Mapping[str, tuple[str, ...]]:
    assert len(en) == len(da)
    return MappingProxyType({"en": en, "da": da})


_DATA_EN = ("`claims` is the list of claims the judge found in the answer. `supports` is a dict: for each claim, a "
            "list with one verdict per retrieved chunk, in rank order, `1` when that chunk supports the claim and `0` "
            "when it does not, e.g. `{'Free has 2 GB.': [1, 0, 1]}`.")
_DATA_DA = ("`claims` er listen af påstande, som dommeren fandt i svaret. `supports` er en dict: for hver påstand en "
            "liste med én dom pr. hentet chunk, i rangordenen, `1` når den chunk understøtter påstanden og `0` når "
            "den ikke gør, fx `{'Free har 2 GB.': [1, 0, 1]}`.")

# ---- faithfulness ---------------------------------------------------------------------------------
_FAITH_LESSON = '''def faithfulness(claims, supports):
    """Share of the claims that some retrieved chunk supports."""
    if not claims:
        return None  # no claim: no score (ragas gives NaN)
    supported = 0
    for claim in claims:
        if any(supports[claim]):
            supported += 1
    return supported / len(claims)
'''

FAITHFULNESS = Exercise(
    name="faithfulness", step="l3_share", lesson=LESSON,
    title=_both("Faithfulness", "Faithfulness"),
    prompt=_both(
        "Write `faithfulness(claims, supports)`: the share of the answer's claims that **at least one** retrieved "
        "chunk supports. Return `None` when there is no claim (the lab gives no score then).\n\n" + _DATA_EN,
        "Skriv `faithfulness(claims, supports)`: andelen af svarets påstande, som **mindst én** hentet chunk "
        "understøtter. Returner `None`, når der ingen påstand er (så giver laboratoriet ingen score).\n\n" + _DATA_DA),
    starter='''def faithfulness(claims, supports):
    """Share of the claims that some retrieved chunk supports."""
    ...
''',
    examples=_many(
        ("Two claims; `supports = {'A': [1, 0, 1], 'B': [0, 0, 0]}`: A is supported (by chunks 1 and 3), B by "
         "none, so faithfulness = 1 / 2 = 0.5.",
         "No claim: `faithfulness([], {})` is `None`."),
        ("To påstande; `supports = {'A': [1, 0, 1], 'B': [0, 0, 0]}`: A er understøttet (af chunk 1 og 3), B af "
         "ingen, så faithfulness = 1 / 2 = 0,5.",
         "Ingen påstand: `faithfulness([], {})` er `None`.")),
    hints=_many(
        ("Count the claims with a 1 anywhere in their row of `supports`, then divide by the number of claims.",
         "A claim counts once, however many chunks support it: `any(supports[claim])`.",
         "Divide by `len(claims)`, not by the number of chunks; with no claim, return `None` before dividing."),
        ("Tæl de påstande, der har et 1 et sted i deres række i `supports`, og divider med antallet af påstande.",
         "En påstand tæller én gang, uanset hvor mange chunks der understøtter den: `any(supports[claim])`.",
         "Divider med `len(claims)`, ikke med antallet af chunks; uden påstande returneres `None` før divisionen.")),
    lesson_code=_FAITH_LESSON,
    conventions=_many(
        ("a claim is supported when at least one retrieved chunk supports it",
         "faithfulness = supported claims / claims (ragas: supported verdicts / verdicts returned)",
         "no claim: no score (None; ragas NaN)"),
        ("en påstand er understøttet, når mindst én hentet chunk understøtter den",
         "faithfulness = understøttede påstande / påstande (ragas: understøttede domme / returnerede domme)",
         "ingen påstand: ingen score (None; ragas NaN)")),
)

# ---- the unsupported claims ----------------------------------------------------------------------
_UNSUP_LESSON = '''def unsupported_claims(claims, supports):
    """The claims that no retrieved chunk supports, in order."""
    return [claim for claim in claims if not any(supports[claim])]
'''

UNSUPPORTED = Exercise(
    name="unsupported_claims", step="l3_claims", lesson=LESSON,
    title=_both("The unsupported claims", "De påstande, der ikke er understøttet"),
    prompt=_both(
        "Write `unsupported_claims(claims, supports)`: the list of claims that **no** retrieved chunk supports (the "
        "ones a reader should not trust), in the answer's order. An answer with no claim gives `[]`.\n\n" + _DATA_EN,
        "Skriv `unsupported_claims(claims, supports)`: listen af påstande, som **ingen** hentet chunk understøtter "
        "(dem, en læser ikke bør stole på), i svarets rækkefølge. Et svar uden påstande giver `[]`.\n\n" + _DATA_DA),
    starter='''def unsupported_claims(claims, supports):
    """The claims that no retrieved chunk supports, in order."""
    ...
''',
    examples=_many(
        ("`supports = {'A': [1, 0, 1], 'B': [0, 0, 0]}`: only B is unsupported, so the result is `['B']`.",),
        ("`supports = {'A': [1, 0, 1], 'B': [0, 0, 0]}`: kun B er ikke understøttet, så resultatet er `['B']`.",)),
    hints=_many(
        ("Keep a claim when its row of `supports` holds no 1.",
         "`not any(supports[claim])` is true when no chunk supports the claim.",
         "One chunk that does not support a claim is not enough to list it: another chunk may support it."),
        ("Behold en påstand, når dens række i `supports` ikke har noget 1.",
         "`not any(supports[claim])` er sand, når ingen chunk understøtter påstanden.",
         "Én chunk, der ikke understøtter en påstand, er ikke nok til at tage den med: en anden chunk kan "
         "understøtte den.")),
    lesson_code=_UNSUP_LESSON,
    conventions=_many(
        ("unsupported: no retrieved chunk supports the claim", "the answer's order; no claim gives []"),
        ("ikke understøttet: ingen hentet chunk understøtter påstanden", "svarets rækkefølge; ingen påstand giver "
         "[]")),
)

# ---- answer relevancy ------------------------------------------------------------------------------
_REL_LESSON = '''import math


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    len_a = math.sqrt(sum(x * x for x in a))
    len_b = math.sqrt(sum(y * y for y in b))
    return dot / (len_a * len_b)


def answer_relevancy(question_vector, generated_vectors,
                     noncommittal):
    """Mean cosine of the question with each generated question;
    0 when every generated question is noncommittal."""
    if not generated_vectors:
        return 0.0  # the judge wrote no question
    cosines = [cosine(question_vector, g) for g in generated_vectors]
    score = sum(cosines) / len(cosines)
    if all(noncommittal):
        return 0.0
    return score
'''

RELEVANCY = Exercise(
    name="answer_relevancy", step="l3_relevancy", lesson=LESSON,
    title=_both("Answer relevancy", "Answer relevancy"),
    prompt=_both(
        "Write `answer_relevancy(question_vector, generated_vectors, noncommittal)`: the mean cosine between the "
        "real question's vector and each vector of the questions the judge wrote back from the answer, or `0.0` "
        "when **every** generated question is flagged noncommittal, or when there is none.\n\n"
        "`question_vector` is a list of numbers; `generated_vectors` a list of such lists; `noncommittal` a list "
        "of `0`/`1` flags, one per generated question. Compute the cosine yourself (plain Python, no numpy): "
        "`dot(a, b) / (|a| × |b|)`.",
        "Skriv `answer_relevancy(question_vector, generated_vectors, noncommittal)`: gennemsnittet af cosinus "
        "mellem det rigtige spørgsmåls vektor og hver vektor af de spørgsmål, dommeren skrev ud fra svaret, eller "
        "`0.0` når **alle** genererede spørgsmål er markeret som undvigende, eller når der ingen er.\n\n"
        "`question_vector` er en liste af tal; `generated_vectors` en liste af sådanne lister; `noncommittal` en "
        "liste af `0`/`1`-markeringer, én pr. genereret spørgsmål. Beregn selv cosinus (ren Python, ingen numpy): "
        "`dot(a, b) / (|a| × |b|)`."),
    starter='''import math


def answer_relevancy(question_vector, generated_vectors,
                     noncommittal):
    """Mean cosine of the question with each generated question;
    0 when every generated question is noncommittal."""
    ...
''',
    examples=_many(
        ("Question `[3, 4, 0]`, generated `[[3, 4, 0], [0, 4, 3]]`, flags `[0, 0]`: cosines 1 and 16 / 25 = 0.64, "
         "so relevancy = (1 + 0.64) / 2 = 0.82.",
         "The same with flags `[1, 1]`: every question is noncommittal, so 0.0. With `[1, 0]` it stays 0.82."),
        ("Spørgsmål `[3, 4, 0]`, genererede `[[3, 4, 0], [0, 4, 3]]`, markeringer `[0, 0]`: cosinus 1 og 16 / 25 = "
         "0,64, så relevans = (1 + 0,64) / 2 = 0,82.",
         "Det samme med markeringerne `[1, 1]`: alle spørgsmål er undvigende, så 0,0. Med `[1, 0]` er den stadig "
         "0,82.")),
    hints=_many(
        ("Compute one cosine per generated question, then take their mean.",
         "A cosine divides the dot product by both vectors' lengths: `math.sqrt(sum(x * x for x in a))`.",
         "Only when **all** flags are 1 is the score 0: `all(noncommittal)`. No generated question: 0.0."),
        ("Beregn én cosinus pr. genereret spørgsmål, og tag gennemsnittet af dem.",
         "En cosinus dividerer prikproduktet med begge vektorers længder: `math.sqrt(sum(x * x for x in a))`.",
         "Kun når **alle** markeringer er 1, er scoren 0: `all(noncommittal)`. Intet genereret spørgsmål: 0,0.")),
    lesson_code=_REL_LESSON,
    conventions=_many(
        ("the mean of the cosines, one per generated question",
         "0 only when every generated question is noncommittal (ragas)",
         "no generated question: 0"),
        ("gennemsnittet af cosinus, én pr. genereret spørgsmål",
         "0 kun når alle genererede spørgsmål er undvigende (ragas)",
         "intet genereret spørgsmål: 0")),
)

EXERCISES: tuple[Exercise, ...] = (UNSUPPORTED, FAITHFULNESS, RELEVANCY)


# ---- checks -------------------------------------------------------------------------------------------
def _t(en: str, da: str) -> Mapping[str, str]:
    return MappingProxyType({"en": en, "da": da})


def _claims(en: tuple[str, ...], da: tuple[str, ...]) -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType({"en": en, "da": da})


#: Made-up answers (claims -> verdict per chunk), in the exercise's language: (id, label, hint, claims, rows).
_CLAIM_CASES: tuple[tuple[str, Mapping[str, str], Mapping[str, str], Mapping[str, tuple[str, ...]],
                          tuple[tuple[int, ...], ...]], ...] = (
    ("more_chunks", _t("Three claims, five chunks", "Tre påstande, fem chunks"),
     _t("Five chunks and three claims: one claim is supported by three chunks, one by one chunk, one by none. Count "
        "claims, each once, and divide by the claims.",
        "Fem chunks og tre påstande: én påstand er understøttet af tre chunks, én af én chunk, én af ingen. Tæl "
        "påstande, hver én gang, og divider med påstandene."),
     _claims(("Free has 2 GB.", "Plus has 50 GB.", "Team has unlimited storage."),
             ("Free har 2 GB.", "Plus har 50 GB.", "Team har ubegrænset plads.")),
     ((1, 1, 1, 0, 0), (0, 1, 0, 0, 0), (0, 0, 0, 0, 0))),
    ("one_chunk_enough", _t("Each claim supported by one chunk of four", "Hver påstand understøttet af én chunk ud "
                                                                        "af fire"),
     _t("Every claim has exactly one chunk that supports it: one is enough.",
        "Hver påstand har præcis én chunk, der understøtter den: én er nok."),
     _claims(("Refunds take 14 days.", "Refunds go to the card used."),
             ("Refusion tager 14 dage.", "Refusion går til det brugte kort.")),
     ((0, 0, 1, 0), (1, 0, 0, 0))),
    ("no_claims", _t("An answer with no claim", "Et svar uden påstande"),
     _t("The judge found no claim (the answer only says it cannot answer): the lab gives no score, `None`.",
        "Dommeren fandt ingen påstand (svaret siger kun, at det ikke kan svare): laboratoriet giver ingen score, "
        "`None`."),
     _claims((), ()), ()),
)


def _sample_picks() -> list[tuple[str, Mapping[str, str], Mapping[str, str], Any]]:
    """Four of the sample's answers, chosen by rule from the recorded judge (:func:`sample_records`): one with a
    supported and an unsupported claim, one all supported with a claim supported by several chunks, one with no
    claim supported, one with no claim at all."""
    from rag_metrics.answers.recorded import sample_records

    recs = sample_records()
    rules: list[tuple[str, Mapping[str, str], Mapping[str, str], Callable[[Any], bool]]] = [
        ("sample_mixed", _t("A sample answer: some claims supported, some not",
                            "Et svar fra eksemplet: nogle påstande understøttet, andre ikke"),
         _t("A real answer of the sample: count the claims some chunk supports, divide by its claims.",
            "Et rigtigt svar fra eksemplet: tæl de påstande, en chunk understøtter, og divider med dets påstande."),
         lambda r: any(r.supported) and not all(r.supported) and any(sum(row) > 1 for row in r.supports)),
        ("sample_all", _t("A sample answer: every claim supported, some by several chunks",
                          "Et svar fra eksemplet: alle påstande understøttet, nogle af flere chunks"),
         _t("Every claim is supported, some by more than one chunk: a claim counts once.",
            "Alle påstande er understøttet, nogle af mere end én chunk: en påstand tæller én gang."),
         lambda r: r.claims and all(r.supported) and any(sum(row) > 1 for row in r.supports)),
        ("sample_none", _t("A sample answer: no claim supported", "Et svar fra eksemplet: ingen påstand understøttet"),
         _t("No chunk supports any claim of this answer.", "Ingen chunk understøtter nogen påstand i dette svar."),
         lambda r: r.claims and not any(r.supported)),
        ("sample_no_claims", _t("A sample answer with no claim", "Et svar fra eksemplet uden påstande"),
         _t("People found no claim in this answer (it says it cannot answer): no score, `None`.",
            "Folk fandt ingen påstand i dette svar (det siger, at det ikke kan svare): ingen score, `None`."),
         lambda r: not r.claims),
    ]
    out = []
    for cid, label, hint, rule in rules:
        rec = next((r for r in recs if rule(r)), None)
        if rec is not None:
            out.append((cid, _t(f"{label['en']} ({rec.item.id})", f"{label['da']} ({rec.item.id})"), hint, rec))
    return out


def _claim_inputs(lang: str) -> list[tuple[str, Mapping[str, str], Mapping[str, str], list[str],
                                          dict[str, list[int]], dict[str, Any]]]:
    """(id, label, hint, claims, supports, summary) of every check of the two claim exercises."""
    from rag_metrics.errors import InputError

    out: list[tuple[str, Mapping[str, str], Mapping[str, str], list[str], dict[str, list[int]], dict[str, Any]]] = []
    try:
        picks = _sample_picks()
    except InputError:   # the sample is not installed: the made-up cases still run
        picks = []
    for cid, label, hint, texts, rows in _CLAIM_CASES:   # the small cases first: their failures read easiest
        claims = list(texts.get(lang) or texts["en"])
        supports = {c: list(r) for c, r in zip(claims, rows)}
        out.append((cid, label, hint, claims, supports, {"claims": claims, "supports": supports}))
    for cid, label, hint, rec in picks:
        out.append((cid, label, hint, list(rec.claims), rec.table,
                    {"answer": rec.item.id, "claims": len(rec.claims), "chunks": len(rec.item.contexts)}))
    return out


def faithfulness_checks(name: str, golden: Any = None, run: Any = None, *, k: int | None = None,
                        chunk_to_doc: Any = None, lang: str = "en") -> tuple[Check, ...]:
    """The checks of ``faithfulness``: made-up cases, then four of the sample's answers; each expected value is the
    lab's judge's faithfulness on the same claims and verdicts (``None`` for no claim)."""
    from rag_metrics.answers.recorded import faithfulness_score

    return tuple(Check(cid, label, {"function": name, "params": [claims, supports]},
                       faithfulness_score(claims, supports).value, summary, hint)
                 for cid, label, hint, claims, supports, summary in _claim_inputs(lang))


def unsupported_checks(name: str, golden: Any = None, run: Any = None, *, k: int | None = None,
                       chunk_to_doc: Any = None, lang: str = "en") -> tuple[Check, ...]:
    """The checks of ``unsupported_claims``: the faithfulness checks' inputs; each expected value is the list of
    claims the lab's judge marks unsupported (any order)."""
    from rag_metrics.answers.recorded import faithfulness_score, unsupported_of

    return tuple(Check(cid, label, {"function": name, "params": [claims, supports]},
                       unsupported_of(faithfulness_score(claims, supports)), summary, hint, unordered=True)
                 for cid, label, hint, claims, supports, summary in _claim_inputs(lang))


#: Made-up relevancy cases: (id, label, hint, question vector, generated vectors, flags).
_REL_CASES: tuple[tuple[str, Mapping[str, str], Mapping[str, str], list[float], list[list[float]], list[int]], ...] = (
    ("lengths", _t("Vectors that are not of length 1", "Vektorer, der ikke har længden 1"),
     _t("These vectors are longer than 1: a cosine divides the dot product by both lengths.",
        "Disse vektorer er længere end 1: en cosinus dividerer prikproduktet med begge længder."),
     [3.0, 4.0, 0.0], [[3.0, 4.0, 0.0], [0.0, 4.0, 3.0], [4.0, 0.0, 3.0]], [0, 0, 0]),
    ("some_noncommittal", _t("Two of three generated questions noncommittal",
                             "To af tre genererede spørgsmål undvigende"),
     _t("Only some questions are noncommittal: the score is still the mean cosine (0 only when all are).",
        "Kun nogle spørgsmål er undvigende: scoren er stadig gennemsnittet af cosinus (0 kun når alle er)."),
     [3.0, 4.0, 0.0], [[3.0, 4.0, 0.0], [0.0, 4.0, 3.0], [4.0, 0.0, 3.0]], [1, 0, 1]),
    ("all_noncommittal", _t("Every generated question noncommittal", "Alle genererede spørgsmål undvigende"),
     _t("Every generated question is flagged noncommittal: the answer dodges the question, so the score is 0.",
        "Alle genererede spørgsmål er markeret som undvigende: svaret undviger spørgsmålet, så scoren er 0."),
     [3.0, 4.0, 0.0], [[3.0, 4.0, 0.0], [0.0, 4.0, 3.0], [4.0, 0.0, 3.0]], [1, 1, 1]),
    ("one_question", _t("One generated question", "Ét genereret spørgsmål"),
     _t("One generated question: the score is its cosine.", "Ét genereret spørgsmål: scoren er dets cosinus."),
     [1.0, 2.0, 2.0], [[2.0, 1.0, 2.0]], [0]),
    ("no_questions", _t("No generated question", "Intet genereret spørgsmål"),
     _t("The judge wrote no usable question (empty ones are dropped): the score is 0.0.",
        "Dommeren skrev intet brugbart spørgsmål (tomme droppes): scoren er 0,0."),
     [1.0, 0.0, 0.0], [], []),
)


def relevancy_checks(name: str, golden: Any = None, run: Any = None, *, k: int | None = None,
                     chunk_to_doc: Any = None, lang: str = "en") -> tuple[Check, ...]:
    """The checks of ``answer_relevancy``: the sample's answers with recorded generated questions (vectors from the
    lab's encoder), then made-up cases; each expected value is the lab's judge's answer relevancy on the same
    vectors and flags."""
    from rag_metrics.answers.recorded import relevancy_inputs, relevancy_score, sample_records
    from rag_metrics.errors import InputError

    out = []
    try:
        recs = [r for r in sample_records() if r.generated]
    except InputError:
        recs = []
    for rec in recs:
        q, gen, flags = relevancy_inputs(rec)
        label = _t(f"A sample answer ({rec.item.id}): {len(gen)} generated questions, noncommittal flags {flags}",
                   f"Et svar fra eksemplet ({rec.item.id}): {len(gen)} genererede spørgsmål, undvigende-markeringer "
                   f"{flags}")
        out.append(Check(f"sample_{rec.item.id}", label, {"function": name, "params": [q, gen, flags]},
                         relevancy_score(q, gen, flags).value,
                         {"answer": rec.item.id, "dimensions": len(q), "generated": len(gen), "noncommittal": flags},
                         _t("Vectors of the lab's sentence encoder: the mean of the cosines, 0 only when every flag "
                            "is 1.",
                            "Vektorer fra laboratoriets sætnings-encoder: gennemsnittet af cosinus, 0 kun når alle "
                            "markeringer er 1.")))
    for cid, label, hint, q, gen, flags in _REL_CASES:
        out.append(Check(cid, label, {"function": name, "params": [q, gen, flags]},
                         relevancy_score(q, gen, flags).value,
                         {"question_vector": q, "generated_vectors": gen, "noncommittal": flags}, hint))
    return tuple(out)


BUILDERS.update({"faithfulness": faithfulness_checks, "unsupported_claims": unsupported_checks,
                 "answer_relevancy": relevancy_checks})


# ---- typical mistakes -------------------------------------------------------------------------------------
MISTAKES.update({
    "faith_divide_chunks": (
        "You divided by the number of retrieved chunks. Faithfulness is a share of the **claims**: divide by "
        "`len(claims)`.",
        "Du har divideret med antallet af hentede chunks. Faithfulness er en andel af **påstandene**: divider med "
        "`len(claims)`."),
    "faith_count_pairs": (
        "You counted a claim once for every chunk that supports it, so a well-supported claim counts several times "
        "(the score can pass 1). Count each claim once: `if any(supports[claim])`.",
        "Du har talt en påstand én gang for hver chunk, der understøtter den, så en godt understøttet påstand "
        "tæller flere gange (scoren kan blive over 1). Tæl hver påstand én gang: `if any(supports[claim])`."),
    "faith_share_pairs": (
        "You took the share of all (claim, chunk) pairs that say 1. A claim needs only one chunk to support it: "
        "count the claims with `any(...)`, and divide by the claims.",
        "Du har taget andelen af alle (påstand, chunk)-par, der siger 1. En påstand behøver kun én chunk, der "
        "understøtter den: tæl påstandene med `any(...)`, og divider med påstandene."),
    "faith_all_chunks": (
        "You counted a claim only when **every** chunk supports it. One supporting chunk is enough: `any`, not "
        "`all`.",
        "Du har kun talt en påstand, når **alle** chunks understøtter den. Én chunk, der understøtter den, er nok: "
        "`any`, ikke `all`."),
    "faith_unsupported_share": (
        "You returned the share of **unsupported** claims. Faithfulness is the share supported.",
        "Du har returneret andelen af påstande, der **ikke** er understøttet. Faithfulness er andelen, der er "
        "understøttet."),
    "faith_count": (
        "You returned the number of supported claims: divide it by the number of claims for the share.",
        "Du har returneret antallet af understøttede påstande: divider det med antallet af påstande for at få "
        "andelen."),
    "faith_no_claims_zero": (
        "With no claim there is nothing to score: return `None` (the lab shows no score; ragas gives NaN), not 0. "
        "An answer that says nothing is not unfaithful.",
        "Uden påstande er der intet at give score: returner `None` (laboratoriet viser ingen score; ragas giver "
        "NaN), ikke 0. Et svar, der intet siger, er ikke utro."),
    "unsup_supported": (
        "You returned the **supported** claims. List the ones no chunk supports: `not any(supports[claim])`.",
        "Du har returneret de **understøttede** påstande. Tag dem med, som ingen chunk understøtter: "
        "`not any(supports[claim])`."),
    "unsup_any_zero": (
        "You listed a claim as soon as one chunk does not support it. It is unsupported only when **no** chunk "
        "supports it: `not any(supports[claim])`.",
        "Du har taget en påstand med, så snart én chunk ikke understøtter den. Den er kun ikke understøttet, når "
        "**ingen** chunk understøtter den: `not any(supports[claim])`."),
    "unsup_count": (
        "You returned a number. Return the list of the unsupported claims themselves.",
        "Du har returneret et tal. Returner listen af selve de påstande, der ikke er understøttet."),
    "rel_ignore_noncommittal": (
        "You ignored the noncommittal flags. When **every** generated question is noncommittal the answer dodges "
        "the question, and the score is 0: `if all(noncommittal): return 0.0`.",
        "Du har set bort fra undvigende-markeringerne. Når **alle** genererede spørgsmål er undvigende, undviger "
        "svaret spørgsmålet, og scoren er 0: `if all(noncommittal): return 0.0`."),
    "rel_any_noncommittal": (
        "You gave 0 as soon as one generated question is noncommittal. The score is 0 only when **all** of them "
        "are: `all(noncommittal)`, not `any(...)`.",
        "Du har givet 0, så snart ét genereret spørgsmål er undvigende. Scoren er kun 0, når **alle** er: "
        "`all(noncommittal)`, ikke `any(...)`."),
    "rel_drop_noncommittal": (
        "You left the noncommittal questions out of the mean. Every generated question counts in the mean; the "
        "flags only matter when all of them are set.",
        "Du har udeladt de undvigende spørgsmål af gennemsnittet. Alle genererede spørgsmål tæller i "
        "gennemsnittet; markeringerne betyder kun noget, når alle er sat."),
    "rel_dot": (
        "You used the dot product without dividing by the vectors' lengths. A cosine is "
        "`dot(a, b) / (|a| × |b|)`, with `|a| = math.sqrt(sum(x * x for x in a))`.",
        "Du har brugt prikproduktet uden at dividere med vektorernes længder. En cosinus er "
        "`dot(a, b) / (|a| × |b|)`, med `|a| = math.sqrt(sum(x * x for x in a))`."),
    "rel_sum": (
        "You returned the sum of the cosines: divide by the number of generated questions for the mean.",
        "Du har returneret summen af cosinus: divider med antallet af genererede spørgsmål for at få "
        "gennemsnittet."),
    "rel_mean_vector": (
        "You averaged the generated vectors first and took one cosine. Take one cosine per generated question, "
        "then the mean of the cosines.",
        "Du har taget gennemsnittet af de genererede vektorer først og så én cosinus. Tag én cosinus pr. genereret "
        "spørgsmål, og så gennemsnittet af cosinus."),
})


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def _faith_variants(claims: Sequence[str], supports: Mapping[str, Sequence[int]]) -> dict[str, Any]:
    rows = [[int(x) for x in supports.get(c, [])] for c in claims]
    n, chunks = len(claims), max((len(r) for r in rows), default=0)
    supported = sum(1 for r in rows if any(r))
    pairs = sum(sum(r) for r in rows)
    if not n:
        return {"faith_no_claims_zero": 0.0}
    out: dict[str, Any] = {"faith_count": float(supported), "faith_count_pairs": pairs / n,
                           "faith_all_chunks": sum(1 for r in rows if r and all(r)) / n,
                           "faith_unsupported_share": (n - supported) / n}
    if chunks:
        out.update(faith_divide_chunks=supported / chunks, faith_share_pairs=pairs / (n * chunks))
    return out


def _diagnose_faithfulness(name: str, args: Mapping[str, Any], expected: Any, got: Any) -> str | None:
    claims, supports = args["params"]
    v = _number(got)
    if v is None:
        return None
    exp = _number(expected)
    for mistake, value in _faith_variants(claims, supports).items():
        if close(v, value) and (exp is None or not close(exp, value)):
            return mistake
    return None


def _diagnose_unsupported(name: str, args: Mapping[str, Any], expected: Any, got: Any) -> str | None:
    claims, supports = args["params"]
    if _number(got) is not None:
        return "unsup_count"
    if not isinstance(got, list) or not all(isinstance(x, str) for x in got):
        return None
    rows = {c: [int(x) for x in supports.get(c, [])] for c in claims}
    variants = {"unsup_supported": [c for c in claims if any(rows[c])],
                "unsup_any_zero": [c for c in claims if not all(rows[c])]}
    for mistake, value in variants.items():
        if sorted(got) == sorted(value) and sorted(value) != sorted(expected):
            return mistake
    return None


def _cos(a: Sequence[float], b: Sequence[float]) -> float:
    den = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b)) / den


def _rel_variants(q: Sequence[float], gen: Sequence[Sequence[float]], flags: Sequence[int]) -> dict[str, Any]:
    if not gen:
        return {}
    cos = [_cos(q, g) for g in gen]
    mean = sum(cos) / len(cos)
    kept = [c for c, f in zip(cos, flags) if not f]
    centre = [sum(g[i] for g in gen) / len(gen) for i in range(len(q))]
    dots = [sum(x * y for x, y in zip(q, g)) for g in gen]
    zero = all(flags)
    return {"rel_ignore_noncommittal": mean,
            "rel_any_noncommittal": 0.0 if any(flags) else mean,
            "rel_drop_noncommittal": sum(kept) / len(kept) if kept else 0.0,
            "rel_dot": 0.0 if zero else sum(dots) / len(dots),
            "rel_sum": 0.0 if zero else sum(cos),
            "rel_mean_vector": 0.0 if zero else _cos(q, centre)}


def _diagnose_relevancy(name: str, args: Mapping[str, Any], expected: Any, got: Any) -> str | None:
    q, gen, flags = args["params"]
    variants = _rel_variants(q, gen, flags)
    v, exp = _number(got), _number(expected)
    if v is None or exp is None:
        return None
    for mistake, value in variants.items():
        if close(v, value) and not close(exp, value):
            return mistake
    return None


DIAGNOSES.update({"faithfulness": _diagnose_faithfulness, "unsupported_claims": _diagnose_unsupported,
                  "answer_relevancy": _diagnose_relevancy})
