"""Lesson 3 of the course, "Generation metrics: faithfulness and answer relevancy".

Six short steps (about eight minutes): the two questions about every answer; the judge's part of faithfulness
(claims, and a verdict per claim and retrieved chunk); the arithmetic's part (the share supported); answer
relevancy (questions written back from the answer, their cosine with the real one, the noncommittal rule); the
real judge on the student's own question (when the class has a judge endpoint; said so honestly when not); a quiz.

Every number is live: the sample's answers with the judge's part recorded as data and the arithmetic done by the
lab's own judge (:mod:`rag_metrics.answers.recorded`).  Nothing here imports streamlit; the Lesson page draws the
example tables and the judge's run (``ui/lesson_generation.py``).

>>> LESSON.key, LESSON.number, [s.key for s in LESSON.steps][:2]
('generation', 3, ['l3_two', 'l3_claims'])
"""
from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

from rag_metrics.errors import InputError
from rag_metrics.lesson.course import Lesson
from rag_metrics.lesson.steps import NUMBER_TOLERANCE, LessonContext, Step, Task, parse_number

__all__ = ["LESSON", "TEXTS", "SAMPLE_DA", "sample_text",
           "STEPS", "QUIZ", "EXAMPLE_RULE", "RELEVANCY_EXAMPLE", "example", "extra_claim_share",
           "system_faithfulness", "relevancy_rows", "judge_passed"]

#: The answer the relevancy task asks about (its generated questions are recorded in
#: :data:`rag_metrics.answers.recorded.GENERATED`).
RELEVANCY_EXAMPLE = "q001-careful"
#: How the claims example is chosen from the sample: the first answer with a supported and an unsupported claim and
#: a claim that several chunks support.
EXAMPLE_RULE = "mixed"


#: Danish translations of the sample's texts the lesson quotes (questions, answers, claims, generated questions), shown
#: on the Danish path with a note that the numbers are the English originals' (the shipped answers are English).
SAMPLE_DA: Mapping[str, str] = {
    "whats the biggest file I can attach on plus": "hvad er den største fil, jeg kan vedhæfte på plus",
    "Plus lets you attach files of up to 200 MB each. Files larger than that are compressed automatically when you "
    "upload them.": "Plus lader dig vedhæfte filer på op til 200 MB hver. Større filer komprimeres automatisk, når du "
                    "uploader dem.",
    "Plus lets you attach files of up to 200 MB each.": "Plus lader dig vedhæfte filer på op til 200 MB hver.",
    "Files larger than that are compressed automatically when you upload them.":
        "Større filer komprimeres automatisk, når du uploader dem.",
    "how much room do I get without paying anything?": "hvor meget plads får jeg uden at betale noget?",
    "On the Free plan you get 2 GB of storage in total, without paying anything. If you need more space, you have "
    "to upgrade to Plus, which has 50 GB.": "På Free-abonnementet får du i alt 2 GB lagerplads uden at betale noget. "
                                            "Har du brug for mere plads, skal du opgradere til Plus, som har 50 GB.",
    "How much storage do I get on the Free plan?": "Hvor meget lagerplads får jeg på Free-abonnementet?",
    "How much space does a free account include?": "Hvor meget plads har en gratis konto?",
    "What do I have to do to get more storage than the Free plan gives?":
        "Hvad skal jeg gøre for at få mere lagerplads, end Free-abonnementet giver?",
    "any cheaper price if im at university?": "nogen billigere pris hvis jeg går på universitetet?",
    "Plus costs $6 per month, or $60 per year when paid annually. Team costs $10 per user per month on an annual "
    "contract.": "Plus koster 6 $ om måneden eller 60 $ om året ved årlig betaling. Team koster 10 $ pr. bruger om "
                 "måneden på en årsaftale.",
    "How much do the Plus and Team plans cost?": "Hvad koster Plus- og Team-abonnementerne?",
    "What does the Plus plan cost per month or per year?": "Hvad koster Plus om måneden eller om året?",
    "What is the price of the Team plan per user?": "Hvad er prisen for Team pr. bruger?",
    "whats the diff between someone who can only look and someone who can leave remarks":
        "hvad er forskellen på en, der kun kan se, og en, der kan skrive kommentarer",
    "Guests are people from outside the workspace's verified domain and do not use a paid seat.":
        "Gæster er personer uden for arbejdsområdets bekræftede domæne og bruger ikke en betalt plads.",
    "Who counts as a guest in a workspace?": "Hvem tæller som gæst i et arbejdsområde?",
    "Do guests take up a paid seat?": "Bruger gæster en betalt plads?",
    "What is a guest in a workspace?": "Hvad er en gæst i et arbejdsområde?",
    "for a sev 1 outage, which comes first: the status page post or the reply to an enterprise ticket?":
        "ved et sev 1-nedbrud, hvad kommer først: opslaget på statussiden eller svaret på en enterprise-sag?",
    "Both happen as quickly as possible during an outage. The status page is the single source of truth.":
        "Begge dele sker så hurtigt som muligt under et nedbrud. Statussiden er den eneste sande kilde.",
    "What happens first during an outage?": "Hvad sker der først under et nedbrud?",
    "What is the single source of truth during an outage?": "Hvad er den eneste sande kilde under et nedbrud?",
    "How quickly are outages handled?": "Hvor hurtigt håndteres nedbrud?",
    "How long before deleted stuff is gone for good?": "Hvor lang tid går der, før slettede ting er væk for altid?",
    "Deleted notes are handled according to the data retention policy. How long it takes depends on your plan and "
    "your settings.": "Slettede noter håndteres efter politikken for dataopbevaring. Hvor lang tid det tager, afhænger "
                      "af dit abonnement og dine indstillinger.",
    "How long are deleted notes kept?": "Hvor længe gemmes slettede noter?",
    "What decides how long deleted notes are kept?": "Hvad afgør, hvor længe slettede noter gemmes?",
    "How are deleted notes handled?": "Hvordan håndteres slettede noter?",
}


def sample_text(value: str, lang: str) -> str:
    """A text of the sample as the lesson shows it in ``lang`` (Danish: its translation, when there is one)."""
    return SAMPLE_DA.get(value, value) if lang == "da" else value


# ---- live data ----------------------------------------------------------------------------------------
def _t(key: str, lang: str, **values: Any) -> str:
    en, da = TEXTS[key]
    return (da if lang == "da" else en).format(**values)


def _num(v: float | None, lang: str) -> str:
    if v is None or v != v:
        return "–"
    s = f"{v:.3f}"
    return s.replace(".", ",") if lang == "da" else s


def example() -> Any:
    """The claims example (steps 2 and 3): the first sample answer with a supported claim, an unsupported one, and a
    claim that several chunks support (:class:`rag_metrics.answers.recorded.Record`).  :class:`InputError` when the
    sample has none (or is not installed)."""
    from rag_metrics.answers.recorded import sample_records

    for r in sample_records():
        if any(r.supported) and not all(r.supported) and any(sum(row) > 1 for row in r.supports):
            return r
    raise InputError("the sample has no answer with a supported and an unsupported claim")


@functools.lru_cache(maxsize=4)
def _faith(item_id: str) -> float | None:
    from rag_metrics.answers.recorded import faithfulness_score, record

    r = record(item_id)
    return faithfulness_score(list(r.claims), r.table).value


def extra_claim_share() -> float:
    """Task ``l3_share``: the example's faithfulness had the judge found one more claim, supported by a chunk."""
    from rag_metrics.answers.recorded import faithfulness_score

    r = example()
    table = {**r.table, "(one more claim)": [1] + [0] * (len(r.item.contexts) - 1)}
    value = faithfulness_score([*r.claims, "(one more claim)"], table).value
    assert value is not None
    return float(value)


@functools.lru_cache(maxsize=1)
def system_faithfulness() -> tuple[tuple[str, float | None, int, int], ...]:
    """Per system of the sample: ``(system, mean faithfulness over the answers with a claim, answers, answers with
    no claim)``, each answer's faithfulness by the lab's judge (:func:`faithfulness_score`)."""
    from rag_metrics.answers.recorded import faithfulness_score, sample_records

    rows: dict[str, list[Any]] = {}
    for r in sample_records():
        row = rows.setdefault(r.item.system or "?", [[], 0, 0])
        v = faithfulness_score(list(r.claims), r.table).value
        row[1] += 1
        if v is None:
            row[2] += 1
        else:
            row[0].append(v)
    return tuple((name, sum(vs) / len(vs) if vs else None, n, none) for name, (vs, n, none) in rows.items())


@functools.lru_cache(maxsize=1)
def relevancy_rows() -> tuple[tuple[Any, Any], ...]:
    """``(record, the lab's answer relevancy MetricScore)`` of every sample answer with recorded generated
    questions (its ``questions`` hold each generated question's cosine and flag)."""
    from rag_metrics.answers.recorded import relevancy_inputs, relevancy_score, sample_records

    out = []
    for r in sample_records():
        if r.generated:
            score = relevancy_score(*relevancy_inputs(r))
            out.append((r, score))
    return tuple(out)


def _relevancy_of(item_id: str) -> float | None:
    for r, score in relevancy_rows():
        if r.item.id == item_id:
            return score.value
    raise InputError(f"no generated questions are recorded for {item_id!r}")


# ---- figures ------------------------------------------------------------------------------------------
def _safe(fn: Any) -> Any:
    def figures(ctx: LessonContext, lang: str) -> list[tuple[str, str]]:
        try:
            return list(fn(ctx, lang))
        except InputError:   # the sample is not installed: no figure, the step's text still stands
            return []
    return figures


def _fig_two(ctx: LessonContext, lang: str) -> list[tuple[str, str]]:
    from rag_metrics.answers.recorded import sample_records

    recs = sample_records()
    out = [(_t("ui.l3.answers", lang), str(len(recs))),
           (_t("ui.l3.claims", lang), str(sum(len(r.claims) for r in recs)))]
    out += [(_t("ui.l3.faith_of", lang, system=name), _num(mean, lang)) for name, mean, _, _ in system_faithfulness()]
    return out


def _fig_claims(ctx: LessonContext, lang: str) -> list[tuple[str, str]]:
    r = example()
    return [(_t("ui.l3.answer", lang), r.item.id), (_t("ui.l3.claims", lang), str(len(r.claims))),
            (_t("ui.l3.chunks", lang), str(len(r.item.contexts)))]


def _fig_share(ctx: LessonContext, lang: str) -> list[tuple[str, str]]:
    r = example()
    out = [(_t("ui.l3.faith_of_answer", lang, answer=r.item.id), _num(_faith(r.item.id), lang))]
    out += [(_t("ui.l3.faith_of", lang, system=name), _num(mean, lang)) for name, mean, _, _ in system_faithfulness()]
    out.append((_t("ui.l3.no_claim", lang), str(sum(none for _, _, _, none in system_faithfulness()))))
    return out


def _fig_relevancy(ctx: LessonContext, lang: str) -> list[tuple[str, str]]:
    rows = relevancy_rows()
    zero = [r.item.id for r, s in rows if s.value == 0.0 and s.questions]
    return [(_t("ui.l3.recorded", lang), str(len(rows))),
            (_t("ui.l3.generated", lang), str(sum(len(r.generated) for r, _ in rows))),
            (_t("ui.l3.all_noncommittal", lang), str(len(zero)))]


# ---- checks -------------------------------------------------------------------------------------------
def _close(answer: Any, expected: float | None) -> bool:
    v = parse_number(answer)
    return v is not None and expected is not None and not math.isnan(expected) and \
        abs(v - expected) <= NUMBER_TOLERANCE


def _check_supported_n(answer: Any, ctx: LessonContext) -> bool:
    v = parse_number(answer)
    return v is not None and v == sum(example().supported)


def _check_share(answer: Any, ctx: LessonContext) -> bool:
    return _close(answer, extra_claim_share())


def _check_relevancy(answer: Any, ctx: LessonContext) -> bool:
    return _close(answer, _relevancy_of(RELEVANCY_EXAMPLE))


def judge_passed(answer: Any) -> bool:
    """Task ``l3_judge_run``: the judge ran on the student's question and answer and gave a faithfulness (or said
    why it could not: a per-item status); or the class has no judge endpoint (``{"configured": False}``, the step is
    then passable without it, as the page says)."""
    if not isinstance(answer, Mapping):
        return False
    if answer.get("configured") is False:
        return True
    return answer.get("configured") is True and answer.get("ran") is True and \
        isinstance(answer.get("faithfulness_status"), str)


def _check_judge(answer: Any, ctx: LessonContext) -> bool:
    return judge_passed(answer)


def _choice(key: str, options: tuple[str, ...], answer: str) -> Task:
    return Task(key, "choice", options=options, answer=answer)


QUIZ: tuple[Task, ...] = (
    _choice("l3_quiz_none", ("zero", "none", "one"), "none"),
    _choice("l3_quiz_flags", ("mean", "zero", "committal"), "mean"),
    _choice("l3_quiz_part", ("judge", "arithmetic", "both"), "judge"),
)

STEPS: tuple[Step, ...] = (
    Step("l3_two", (_choice("l3_which", ("faithfulness", "relevancy", "both"), "relevancy"),),
         figures=_safe(_fig_two)),
    Step("l3_claims", (Task("l3_supported_n", "number", _check_supported_n),), figures=_safe(_fig_claims)),
    Step("l3_share", (Task("l3_share", "number", _check_share),), figures=_safe(_fig_share)),
    Step("l3_relevancy", (Task("l3_rel_value", "number", _check_relevancy),
                          _choice("l3_rel_zero", ("noncommittal", "far", "none"), "noncommittal")),
         figures=_safe(_fig_relevancy)),
    Step("l3_judge", (Task("l3_judge_run", "judge", _check_judge),)),
    Step("l3_quiz", QUIZ),
)

TEXTS: Mapping[str, tuple[str, str]] = {
    "lesson.generation.title": ("Generation metrics: faithfulness and answer relevancy",
                                "Genereringsmål: faithfulness og answer relevancy"),
    "lesson.generation.intro": (
        "Is the answer true to the retrieved chunks, and does it answer the question? Faithfulness and answer "
        "relevancy on the sample's answers: what the judge decides, and the arithmetic after it.",
        "Holder svaret sig til de hentede chunks, og svarer det på spørgsmålet? Faithfulness og answer relevancy "
        "på eksemplets svar: hvad dommeren afgør, og regnestykket bagefter."),
    "lesson.generation.live_caption": (
        "The sample's answers (the same for every corpus and system), scored by the lab's judge code.",
        "Eksemplets svar (de samme for alle korpusser og systemer), bedømt af laboratoriets dommerkode."),
    # ---- 1. two questions ----------------------------------------------------------------------------
    "step.l3_two.title": ("Two questions about every answer", "To spørgsmål til hvert svar"),
    "step.l3_two.body": (
        "Lesson 2 measured the chunks the retriever found. Now we measure the answer the model wrote from them, "
        "with two questions:\n\n"
        "- **Faithfulness**: does the answer say only what the retrieved chunks say?\n"
        "- **Answer relevancy**: does the answer answer the question that was asked?\n\n"
        "Each metric has two parts. **The judge's part**: a language model reads and decides (which claims the "
        "answer makes, whether a chunk supports each, which question the answer fits). **The arithmetic's part**: "
        "plain counting and averaging on what the judge decided. We keep the two apart: the judge can be wrong; "
        "the arithmetic you can check by hand.\n\n"
        "The lab ships answers from two made-up systems, *careful* and *sloppy*, to the same questions, with the "
        "same retrieved chunks. Below: their faithfulness, computed by the lab's judge code.",
        "Lektion 2 målte de chunks, retrieveren fandt. Nu måler vi det svar, modellen skrev ud fra dem, med to "
        "spørgsmål:\n\n"
        "- **Faithfulness**: siger svaret kun det, de hentede chunks siger?\n"
        "- **Answer relevancy**: svarer svaret på det spørgsmål, der blev stillet?\n\n"
        "Hvert mål har to dele. **Dommerens del**: en sprogmodel læser og afgør (hvilke påstande svaret "
        "indeholder, om en chunk understøtter hver af dem, hvilket spørgsmål svaret passer til). "
        "**Regnestykkets del**: almindelig optælling og gennemsnit af det, dommeren afgjorde. Vi holder de to "
        "adskilt: dommeren kan tage fejl; regnestykket kan du tjekke i hånden.\n\n"
        "Laboratoriet har svar fra to opdigtede systemer, *careful* og *sloppy*, på de samme spørgsmål, med de "
        "samme hentede chunks. Herunder: deres faithfulness, beregnet af laboratoriets dommerkode."),
    "task.l3_which.prompt": (
        "An answer repeats only facts from the retrieved chunks, but about another topic than the question. Which "
        "metric falls?",
        "Et svar gentager kun fakta fra de hentede chunks, men om et andet emne end spørgsmålet. Hvilket mål "
        "falder?"),
    "task.l3_which.hint": (
        "Every claim is in the chunks. What is wrong with the answer, then?",
        "Hver påstand står i chunkene. Hvad er der så galt med svaret?"),
    "task.l3_which.ok": (
        "Faithful but off-topic: faithfulness stays high, answer relevancy falls. You need both metrics.",
        "Tro mod kilderne, men ved siden af emnet: faithfulness forbliver høj, answer relevancy falder. Du har brug "
        "for begge mål."),
    "opt.l3_which.faithfulness": ("Faithfulness", "Faithfulness"),
    "opt.l3_which.relevancy": ("Answer relevancy", "Answer relevancy"),
    "opt.l3_which.both": ("Both", "Begge"),
    # ---- 2. claims and verdicts ----------------------------------------------------------------------
    "step.l3_claims.title": ("The judge's part: claims and verdicts", "Dommerens del: påstande og domme"),
    "step.l3_claims.body": (
        "First the judge splits the answer into **claims**: short statements that each say one fact and can be "
        "read on their own. Then, for each claim and each retrieved chunk, it gives a **verdict**: does this chunk "
        "support this claim?\n\n"
        "A claim is **supported** when at least one chunk supports it. It does not matter that the other chunks "
        "say nothing about it: a retriever returns several chunks, and most are about something else.\n\n"
        "Below: one answer from the sample, its claims, and the verdict per chunk (✓: the chunk supports the "
        "claim). For the sample, the judge's part is recorded as data: people labelled each sentence, and the lab's "
        "encoder found the chunks that hold it.",
        "Først deler dommeren svaret op i **påstande**: korte udsagn, der hver siger ét faktum og kan læses for "
        "sig. Derefter giver den for hver påstand og hver hentet chunk en **dom**: understøtter denne chunk denne "
        "påstand?\n\n"
        "En påstand er **understøttet**, når mindst én chunk understøtter den. Det gør ikke noget, at de andre "
        "chunks intet siger om den: en retriever returnerer flere chunks, og de fleste handler om noget andet.\n\n"
        "Herunder: et svar fra eksemplet, dets påstande og dommen pr. chunk (✓: chunken understøtter påstanden). "
        "For eksemplet er dommerens del gemt som data: mennesker markerede hver sætning, og laboratoriets encoder "
        "fandt de chunks, der indeholder den."),
    "task.l3_supported_n.prompt": (
        "How many of this answer's claims does at least one chunk support?",
        "Hvor mange af dette svars påstande understøtter mindst én chunk?"),
    "task.l3_supported_n.hint": (
        "Count the rows of the table with at least one ✓, each row once.",
        "Tæl tabellens rækker med mindst ét ✓, hver række én gang."),
    "task.l3_supported_n.ok": (
        "The claims without any ✓ are the answer's unsupported claims: the ones a reader should not trust.",
        "Påstandene uden noget ✓ er svarets ikke understøttede påstande: dem, en læser ikke bør stole på."),
    # ---- 3. the share ---------------------------------------------------------------------------------
    "step.l3_share.title": ("The arithmetic's part: the share supported", "Regnestykkets del: andelen understøttet"),
    "step.l3_share.body": (
        "Once the judge has decided, faithfulness is plain arithmetic:\n\n"
        "**faithfulness = supported claims / claims**\n\n"
        "Each claim counts once, however many chunks support it, and we divide by the claims, not by the chunks. "
        "(ragas, and the lab's judge, divide by the verdicts the judge returned: one per claim.)\n\n"
        "An answer with no claim at all, such as \"The passages do not say\", gets **no score**, not 0: there is "
        "nothing to be faithful or unfaithful about. The lab leaves it out of the mean; ragas gives NaN.\n\n"
        "Below: the example's faithfulness, and each system's mean over its answers.",
        "Når dommeren har afgjort, er faithfulness almindelig regning:\n\n"
        "**faithfulness = understøttede påstande / påstande**\n\n"
        "Hver påstand tæller én gang, uanset hvor mange chunks der understøtter den, og vi dividerer med "
        "påstandene, ikke med chunkene. (ragas og laboratoriets dommer dividerer med de domme, dommeren "
        "returnerede: én pr. påstand.)\n\n"
        "Et svar helt uden påstande, fx \"Kilderne siger det ikke\", får **ingen score**, ikke 0: der er intet at "
        "være tro eller utro mod. Laboratoriet udelader det af gennemsnittet; ragas giver NaN.\n\n"
        "Herunder: eksemplets faithfulness og hvert systems gennemsnit over dets svar."),
    "task.l3_share.prompt": (
        "Suppose the judge had found one more claim in this answer, and chunk 1 supports it. What would the "
        "faithfulness be then? (three decimals)",
        "Antag, at dommeren havde fundet én påstand mere i dette svar, og at chunk 1 understøtter den. Hvad ville "
        "faithfulness så være? (tre decimaler)"),
    "task.l3_share.hint": (
        "One more claim, and it is supported: (supported + 1) / (claims + 1).",
        "Én påstand mere, og den er understøttet: (understøttede + 1) / (påstande + 1)."),
    "task.l3_share.ok": (
        "The judge's split matters: the same answer cut into other claims gets another score. That is the judge's "
        "part, not the arithmetic's.",
        "Dommerens opdeling betyder noget: det samme svar delt op i andre påstande får en anden score. Det er "
        "dommerens del, ikke regnestykkets."),
    # ---- 4. answer relevancy --------------------------------------------------------------------------
    "step.l3_relevancy.title": ("Answer relevancy: questions back from the answer",
                                "Answer relevancy: spørgsmål tilbage fra svaret"),
    "step.l3_relevancy.body": (
        "**The judge's part**: the judge reads only the answer, not the question, and writes a question that the "
        "answer answers, three times. It also flags each as **noncommittal** when the answer dodges (\"it depends\", "
        "\"see the policy\").\n\n"
        "**The arithmetic's part**: turn the real question and each generated question into vectors, take the "
        "cosine of each generated one with the real one, and average them. If **every** generated question is "
        "noncommittal, the score is 0. An answer that fits the question gives back questions close to it.\n\n"
        "Below: five answers from the sample, the questions recorded for each, and each cosine, from the lab's "
        "sentence encoder.",
        "**Dommerens del**: dommeren læser kun svaret, ikke spørgsmålet, og skriver et spørgsmål, som svaret "
        "besvarer, tre gange. Den markerer også hvert som **undvigende** (noncommittal), når svaret undviger "
        "(\"det afhænger af\", \"se politikken\").\n\n"
        "**Regnestykkets del**: lav det rigtige spørgsmål og hvert genereret spørgsmål om til vektorer, tag "
        "cosinus mellem hvert genereret og det rigtige, og tag gennemsnittet. Er **alle** genererede spørgsmål "
        "undvigende, er scoren 0. Et svar, der passer til spørgsmålet, giver spørgsmål tilbage, der ligger tæt på "
        "det.\n\n"
        "Herunder: fem svar fra eksemplet, de spørgsmål, der er gemt for hvert, og hver cosinus, fra laboratoriets "
        "sætnings-encoder."),
    "task.l3_rel_value.prompt": (
        "What is the answer relevancy of answer q001-careful? (three decimals)",
        "Hvad er answer relevancy for svaret q001-careful? (tre decimaler)"),
    "task.l3_rel_value.hint": (
        "None of its questions is noncommittal: add its three cosines and divide by 3.",
        "Ingen af dets spørgsmål er undvigende: læg dets tre cosinusværdier sammen, og divider med 3."),
    "task.l3_rel_value.ok": (
        "The mean cosine. Its questions are about free storage, as the real question is.",
        "Gennemsnittet af cosinus. Dets spørgsmål handler om gratis lagerplads, ligesom det rigtige spørgsmål."),
    "task.l3_rel_zero.prompt": (
        "Answer q003-sloppy gives back questions about as close to the real question as q001-careful's, yet it "
        "scores 0. Why?",
        "Svaret q003-sloppy giver spørgsmål tilbage, der ligger omtrent lige så tæt på det rigtige spørgsmål som "
        "q001-carefuls, men det får 0. Hvorfor?"),
    "task.l3_rel_zero.hint": ("Look at the noncommittal column.", "Se på kolonnen undvigende."),
    "task.l3_rel_zero.ok": (
        "It talks about the right topic but never gives the answer. The noncommittal flags catch that; the cosine "
        "alone would not.",
        "Det taler om det rigtige emne, men giver aldrig svaret. Undvigende-markeringerne fanger det; cosinus alene "
        "ville ikke."),
    "opt.l3_rel_zero.noncommittal": ("Every generated question is flagged noncommittal",
                                     "Alle genererede spørgsmål er markeret som undvigende"),
    "opt.l3_rel_zero.far": ("Its cosines are too low", "Dets cosinusværdier er for lave"),
    "opt.l3_rel_zero.none": ("The judge wrote no question", "Dommeren skrev intet spørgsmål"),
    # ---- 5. the real judge ----------------------------------------------------------------------------
    "step.l3_judge.title": ("The real judge on your question", "Den rigtige dommer på dit spørgsmål"),
    "step.l3_judge.body": (
        "So far the judge's part was recorded. Here a real language model does it, when the class has a judge "
        "endpoint.\n\n"
        "Pick a question from your golden set and write an answer to it: try one with a detail the chunks do not "
        "give, such as a price or a number of days. The lab passes your system's first K chunks for that question "
        "as the retrieved chunks, and runs its judge: the judge's part (claims, verdicts, generated questions) "
        "and the arithmetic's part (the division, the mean) are shown apart.",
        "Indtil nu var dommerens del gemt på forhånd. Her udfører en rigtig sprogmodel den, når klassen har et "
        "dommer-endpoint.\n\n"
        "Vælg et spørgsmål fra dit guldsæt, og skriv et svar på det: prøv et med en detalje, som chunkene ikke "
        "giver, fx en pris eller et antal dage. Laboratoriet giver dit systems første K chunks for det spørgsmål "
        "som de hentede chunks og kører sin dommer: dommerens del (påstande, domme, genererede spørgsmål) og "
        "regnestykkets del (divisionen, gennemsnittet) vises hver for sig."),
    "task.l3_judge_run.prompt": ("Run the judge on your own question and answer.",
                                 "Kør dommeren på dit eget spørgsmål og svar."),
    "task.l3_judge_run.hint": (
        "Write an answer, click \"Run the judge\", then Check.",
        "Skriv et svar, klik på \"Kør dommeren\", og derefter Tjek."),
    "task.l3_judge_run.ok": (
        "Did the judge catch your invented detail? When it does not, that is the judge's part failing: the "
        "arithmetic was right.",
        "Fangede dommeren din opdigtede detalje? Når den ikke gør, er det dommerens del, der fejler: regnestykket "
        "var rigtigt."),
    # ---- 6. quiz --------------------------------------------------------------------------------------
    "step.l3_quiz.title": ("Quiz", "Quiz"),
    "step.l3_quiz.body": (
        "Three questions on what you saw. The course goes on with lesson 4: checking every change of the system "
        "automatically, against a baseline.",
        "Tre spørgsmål om det, du så. Kurset fortsætter med lektion 4: at tjekke hver ændring af systemet "
        "automatisk, op mod en baseline."),
    "task.l3_quiz_none.prompt": (
        "The judge finds no claim in the answer \"The passages do not say.\" What is its faithfulness in the lab?",
        "Dommeren finder ingen påstand i svaret \"Kilderne siger det ikke.\" Hvad er dets faithfulness i "
        "laboratoriet?"),
    "task.l3_quiz_none.hint": ("Is there anything to divide?", "Er der noget at dividere?"),
    "task.l3_quiz_none.ok": ("No claim, no score: it is left out of the mean (ragas: NaN).",
                             "Ingen påstand, ingen score: det udelades af gennemsnittet (ragas: NaN)."),
    "opt.l3_quiz_none.zero": ("0", "0"),
    "opt.l3_quiz_none.none": ("No score", "Ingen score"),
    "opt.l3_quiz_none.one": ("1", "1"),
    "task.l3_quiz_flags.prompt": (
        "Three generated questions with cosines 0.8, 0.6 and 0.7; the first and the last are flagged noncommittal. "
        "What is the answer relevancy?",
        "Tre genererede spørgsmål med cosinus 0,8, 0,6 og 0,7; det første og det sidste er markeret som "
        "undvigende. Hvad er answer relevancy?"),
    "task.l3_quiz_flags.hint": ("When is the score set to 0?", "Hvornår sættes scoren til 0?"),
    "task.l3_quiz_flags.ok": ("Not every question is noncommittal, so it is the mean: 0.7.",
                              "Ikke alle spørgsmål er undvigende, så det er gennemsnittet: 0,7."),
    "opt.l3_quiz_flags.mean": ("0.7", "0,7"),
    "opt.l3_quiz_flags.zero": ("0", "0"),
    "opt.l3_quiz_flags.committal": ("0.6", "0,6"),
    "task.l3_quiz_part.prompt": (
        "You switch the judge to another language model. Which part can change the scores?",
        "Du skifter dommeren til en anden sprogmodel. Hvilken del kan ændre scorerne?"),
    "task.l3_quiz_part.hint": ("Which part reads and decides, and which part only counts?",
                               "Hvilken del læser og afgør, og hvilken del tæller kun?"),
    "task.l3_quiz_part.ok": (
        "The judge's part: its claims, verdicts and questions. The arithmetic is the same code; that is why you can "
        "check it, and why a judge needs checking against people's labels.",
        "Dommerens del: dens påstande, domme og spørgsmål. Regnestykket er den samme kode; derfor kan du tjekke "
        "det, og derfor skal en dommer tjekkes mod menneskers markeringer."),
    "opt.l3_quiz_part.judge": ("The judge's part: claims, verdicts, generated questions",
                               "Dommerens del: påstande, domme, genererede spørgsmål"),
    "opt.l3_quiz_part.arithmetic": ("The arithmetic's part: the division and the mean",
                                    "Regnestykkets del: divisionen og gennemsnittet"),
    "opt.l3_quiz_part.both": ("Both, equally", "Begge, lige meget"),
    # ---- the figures' and the page's labels ---------------------------------------------------------------
    "ui.l3.answers": ("Sample answers", "Svar i eksemplet"),
    "ui.l3.claims": ("Claims", "Påstande"),
    "ui.l3.chunks": ("Retrieved chunks", "Hentede chunks"),
    "ui.l3.answer": ("Answer", "Svar"),
    "ui.l3.faith_of": ("Faithfulness: {system}", "Faithfulness: {system}"),
    "ui.l3.faith_of_answer": ("Faithfulness of {answer}", "Faithfulness for {answer}"),
    "ui.l3.no_claim": ("Answers with no claim", "Svar uden påstande"),
    "ui.l3.recorded": ("Answers with generated questions", "Svar med genererede spørgsmål"),
    "ui.l3.generated": ("Generated questions", "Genererede spørgsmål"),
    "ui.l3.all_noncommittal": ("Scored 0: all noncommittal", "Fik 0: alle undvigende"),
    "ui.l3.question": ("Question", "Spørgsmål"),
    "ui.l3.the_answer": ("Answer", "Svar"),
    "ui.l3.claim": ("Claim", "Påstand"),
    "ui.l3.chunk_n": ("Chunk {n}", "Chunk {n}"),
    "ui.l3.supported": ("Supported", "Understøttet"),
    "ui.l3.yes": ("yes", "ja"),
    "ui.l3.no": ("no", "nej"),
    "ui.l3.chunk_texts": ("The retrieved chunks", "De hentede chunks"),
    "ui.l3.generated_q": ("Generated question", "Genereret spørgsmål"),
    "ui.l3.noncommittal": ("Noncommittal", "Undvigende"),
    "ui.l3.cosine": ("Cosine", "Cosinus"),
    "ui.l3.relevancy_is": ("Answer relevancy = {value}", "Answer relevancy = {value}"),
    "ui.l3.relevancy_task": ("Answer relevancy = ? (task 1)", "Answer relevancy = ? (opgave 1)"),
    "ui.l3.translated": (
        "The sample's answers are in English: shown here in Danish translation; the numbers are the English "
        "originals'.",
        "Eksemplets svar er på engelsk: her vist i dansk oversættelse; tallene er de engelske originalers."),
    "ui.l3.no_data": ("The sample's answers are not installed, so this step has no example.",
                      "Eksemplets svar er ikke installeret, så dette trin har intet eksempel."),
    "ui.l3.no_judge": (
        "This class has no judge endpoint, so the lab cannot run a real judge here (the operator sets one in the "
        "server's configuration, [lab.judge]). Nothing is sent anywhere. Click Check to go on: this step does not "
        "need the judge without one.",
        "Denne klasse har intet dommer-endpoint, så laboratoriet kan ikke køre en rigtig dommer her (operatøren "
        "sætter et i serverens konfiguration, [lab.judge]). Intet sendes nogen steder hen. Klik på Tjek for at gå "
        "videre: dette trin kræver ikke dommeren, når der ingen er."),
    "ui.l3.pick_question": ("Your question (from your golden set)", "Dit spørgsmål (fra dit guldsæt)"),
    "ui.l3.your_answer": ("Your answer", "Dit svar"),
    "ui.l3.run_judge": ("Run the judge", "Kør dommeren"),
    "ui.l3.no_answer": ("Write an answer first.", "Skriv et svar først."),
    "ui.l3.no_questions": ("Your golden set has no question.", "Dit guldsæt har intet spørgsmål."),
    "ui.l3.judge_part": ("The judge's part", "Dommerens del"),
    "ui.l3.arith_part": ("The arithmetic's part", "Regnestykkets del"),
    "ui.l3.faith_arith": ("Faithfulness = {supported} / {claims} = {value}",
                          "Faithfulness = {supported} / {claims} = {value}"),
    "ui.l3.rel_arith": ("Answer relevancy = ({cosines}) / {n} = {value}",
                        "Answer relevancy = ({cosines}) / {n} = {value}"),
    "ui.l3.rel_zero": ("Every generated question is noncommittal, so answer relevancy = 0",
                       "Alle genererede spørgsmål er undvigende, så answer relevancy = 0"),
    "ui.l3.not_scored": ("Not scored: {status}. {message}", "Ingen score: {status}. {message}"),
    "ui.l3.judged_with": ("Judged by {model}, on your system's first {k} chunks.",
                          "Bedømt af {model} på dit systems første {k} chunks."),
}

LESSON = Lesson(key="generation", number=3, steps=STEPS, quiz=QUIZ, texts=TEXTS,
                exercises=("unsupported_claims", "faithfulness", "answer_relevancy"))
