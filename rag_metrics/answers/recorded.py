"""The judge's part recorded as data, the arithmetic's part by the lab's own judge (lesson 3 of the course).

The LLM judge (:class:`~rag_metrics.answers.llm.LLMJudge`) does two different things.  **The judge's part** is
what the model says: the answer's claims (statements), a verdict on each claim against the retrieved chunks, and
questions written back from the answer with a *noncommittal* flag.  **The arithmetic's part** is what ragas does
with that: supported verdicts / verdicts returned (faithfulness); the mean cosine between the real question and
the generated ones, times 0 when every generated question is noncommittal (answer relevancy).

Without a model, a :class:`RecordedJudge` plays the model's part from data, and the lab's :class:`LLMJudge` does
the arithmetic (its own code, unchanged): :func:`faithfulness_score` and :func:`relevancy_score` take the judge's
part as plain values (claims with a verdict per chunk; vectors with flags), so the course's exercises are checked
against the lab's engine on exactly the data the student's function gets.

For the shipped sample answers (:func:`sample_records`) the judge's part is recorded as follows:

- claims: the sentences people labelled ``supported`` or ``unsupported`` (``not a claim`` is left out);
- the verdict per retrieved chunk: a claim people labelled unsupported is supported by no chunk; a supported claim
  is supported by every chunk holding a sentence at least the encoder's support threshold close to it
  (:mod:`rag_metrics.answers.offline`'s rule), and at least by the closest chunk;
- generated questions: written for a few answers (:data:`GENERATED`), three per answer as ragas asks by default,
  each with its noncommittal flag; their vectors come from the lab's sentence encoder.
"""
from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from rag_metrics.answers.types import SUPPORTED, UNSUPPORTED, AnswerItem, MetricScore
from rag_metrics.errors import InputError
from rag_metrics.io.files import loads_json

__all__ = ["GENERATED", "Record", "RecordedJudge", "faithfulness_score", "relevancy_score", "sample_records",
           "unsupported_of", "DIGITS"]

#: Vectors are given (to the student and to the judge alike) rounded to this many decimals.
DIGITS = 7

#: Questions a judge would write back from a few sample answers (ragas asks three), with the noncommittal flag
#: (1: the answer is evasive or vague).  Keyed by the sample answer's id; the data of lesson 3's relevancy step.
GENERATED: Mapping[str, tuple[tuple[str, int], ...]] = {
    "q001-careful": (("How much storage do I get on the Free plan?", 0),
                     ("How much space does a free account include?", 0),
                     ("What do I have to do to get more storage than the Free plan gives?", 0)),
    "q014-sloppy": (("How much do the Plus and Team plans cost?", 0),
                    ("What does the Plus plan cost per month or per year?", 0),
                    ("What is the price of the Team plan per user?", 0)),
    "q037-sloppy": (("Who counts as a guest in a workspace?", 0),
                    ("Do guests take up a paid seat?", 0),
                    ("What is a guest in a workspace?", 0)),
    "q041-sloppy": (("What happens first during an outage?", 1),
                    ("What is the single source of truth during an outage?", 0),
                    ("How quickly are outages handled?", 1)),
    "q003-sloppy": (("How long are deleted notes kept?", 1),
                    ("What decides how long deleted notes are kept?", 1),
                    ("How are deleted notes handled?", 1)),
}


@dataclass(frozen=True)
class Record:
    """The judge's part for one answer: ``claims``; ``supports[i][j]`` = 1 when chunk ``j`` supports claim ``i``
    (one row per claim, one column per retrieved chunk); ``generated``: questions written back from the answer with
    their noncommittal flag (empty: none recorded)."""

    item: AnswerItem
    claims: tuple[str, ...]
    supports: tuple[tuple[int, ...], ...]
    generated: tuple[tuple[str, int], ...] = ()

    @property
    def table(self) -> dict[str, list[int]]:
        """``{claim: [verdict per chunk]}``: the exercises' ``supports``."""
        return {c: list(row) for c, row in zip(self.claims, self.supports)}

    @property
    def supported(self) -> list[bool]:
        """Per claim: at least one chunk supports it (the verdict the judge returns for it)."""
        return [any(row) for row in self.supports]


# ---- the recorded model -----------------------------------------------------------------------------
def _reply(content: str) -> Any:
    msg = SimpleNamespace(content=content, refusal=None)
    return SimpleNamespace(choices=[SimpleNamespace(message=msg, finish_reason="stop")], usage=None)


def _input(prompt: str) -> dict[str, Any]:
    value, problem, _ = loads_json(prompt.rsplit("input: ", 1)[1].rsplit("\nOutput: ", 1)[0])
    if problem is not None or not isinstance(value, dict):
        raise InputError(f"the recorded judge could not read its prompt's input: {problem or 'not an object'}")
    return value


class RecordedJudge:
    """An OpenAI-client look-alike whose replies are recorded: ``claims`` per answer text, a verdict per claim
    (``verdicts``: claim -> supported), ``generated`` per answer text (a question and its flag per sample number),
    and ``vectors`` per text (the embeddings endpoint)."""

    def __init__(self, claims: Mapping[str, Sequence[str]] | None = None,
                 verdicts: Mapping[str, bool] | None = None,
                 generated: Mapping[str, Sequence[tuple[str, int]]] | None = None,
                 vectors: Mapping[str, Sequence[float]] | None = None) -> None:
        self.claims = dict(claims or {})
        self.verdicts = dict(verdicts or {})
        self.generated = dict(generated or {})
        self.vectors = dict(vectors or {})
        self._asked: dict[str, int] = {}
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._chat))
        self.embeddings = SimpleNamespace(create=self._embed)

    def _chat(self, model: str, messages: list[dict[str, str]], **params: Any) -> Any:
        prompt = messages[0]["content"]
        data = _input(prompt)
        if prompt.startswith("Given a question and an answer"):
            return _reply(json.dumps({"statements": list(self.claims.get(data["answer"], ()))}))
        if prompt.startswith("Your task is to judge the faithfulness"):
            return _reply(json.dumps({"statements": [
                {"statement": s, "reason": "recorded", "verdict": int(bool(self.verdicts.get(s)))}
                for s in data["statements"]]}))
        if prompt.startswith("Generate a question for the given answer"):
            answer = data["response"]
            n = self._asked.get(answer, 0)
            self._asked[answer] = n + 1
            gen = list(self.generated.get(answer, ()))
            q, flag = gen[n] if n < len(gen) else ("", 0)
            return _reply(json.dumps({"question": q, "noncommittal": int(flag)}))
        raise InputError("the recorded judge has no reply for this prompt")

    def _embed(self, model: str, input: Sequence[str]) -> Any:
        return SimpleNamespace(data=[SimpleNamespace(index=i, embedding=list(self.vectors[t]))
                                     for i, t in enumerate(input)], usage=None)


def _judge(client: RecordedJudge, n_questions: int = 3) -> Any:
    from rag_metrics.answers.llm import JudgeConfig, LLMJudge

    cfg = JudgeConfig("http://recorded.judge.invalid/v1", "recorded", "recorded", n_questions=max(1, n_questions),
                      concurrency=1)
    return LLMJudge(cfg, cache=False, client=client)


# ---- the arithmetic's part, by the lab's judge -------------------------------------------------------
def faithfulness_score(claims: Sequence[str], supports: Mapping[str, Sequence[int]]) -> MetricScore:
    """The lab's faithfulness (:meth:`LLMJudge.faithfulness`, ragas's arithmetic) of an answer whose judge returned
    ``claims``, each supported when at least one retrieved chunk supports it (``supports[claim]``: a verdict per
    chunk).  No claim: status ``no_statements``, value ``None`` (ragas: NaN)."""
    answer = " ".join(claims) or "(an answer with no claim)"
    client = RecordedJudge(claims={answer: list(claims)},
                           verdicts={c: any(int(v) for v in supports.get(c, ())) for c in claims})
    item = AnswerItem("x", "(the question)", answer, ("(the retrieved chunks)",))
    return _judge(client).faithfulness(item)


def unsupported_of(score: MetricScore) -> list[str]:
    """The claims the judge found unsupported, in the judge's order (none for a score without statements)."""
    return [s.statement for s in score.statements if s.verdict == UNSUPPORTED]


def relevancy_score(question_vector: Sequence[float], generated_vectors: Sequence[Sequence[float]],
                    noncommittal: Sequence[int]) -> MetricScore:
    """The lab's answer relevancy (:meth:`LLMJudge.answer_relevancy`, ragas's arithmetic) when the judge wrote the
    questions whose vectors are ``generated_vectors`` (an empty question is dropped by the judge before this: give
    none for it), with their ``noncommittal`` flags; ``question_vector`` is the real question's."""
    gen = [(f"(generated question {i + 1})", int(f)) for i, f in enumerate(noncommittal)]
    vectors = {"(the question)": list(question_vector)}
    vectors.update({q: list(v) for (q, _), v in zip(gen, generated_vectors)})
    client = RecordedJudge(generated={"(the answer)": gen}, vectors=vectors)
    item = AnswerItem("x", "(the question)", "(the answer)", ("(the retrieved chunks)",))
    return _judge(client, len(gen)).answer_relevancy(item)


# ---- the sample's recorded judge --------------------------------------------------------------------------
def _supports_per_chunk(item: AnswerItem, claims: Sequence[tuple[str, bool]]) -> tuple[tuple[int, ...], ...]:
    import numpy as np

    from rag_metrics.answers.embed import default_embedding_cache, embed, encoder_for_items
    from rag_metrics.answers.text import split_sentences
    from rag_metrics.retrieval.choice import thresholds_for

    encoder = encoder_for_items([item])
    threshold = thresholds_for(encoder.name).support
    chunks = [split_sentences(c) for c in item.contexts]
    vec = embed(encoder, default_embedding_cache(), [c for c, _ in claims] + [s for ss in chunks for s in ss])
    rows = []
    for claim, ok in claims:
        if not ok:
            rows.append(tuple(0 for _ in chunks))
            continue
        best = [max((float(vec[s] @ vec[claim]) for s in ss), default=-1.0) for ss in chunks]
        top = int(np.argmax(best))
        rows.append(tuple(int(b >= threshold or j == top) for j, b in enumerate(best)))
    return tuple(rows)


def _rounded(v: Any) -> list[float]:
    return [round(float(x), DIGITS) for x in v]


@functools.lru_cache(maxsize=1)
def sample_records() -> tuple[Record, ...]:
    """The judge's part for every shipped sample answer (see the module doc), in the sample's order.  Raises
    :class:`InputError` when the sample is not installed."""
    from rag_metrics.answers.data import load_sample_answers

    items, labels = load_sample_answers()
    out = []
    for it in items:
        lab = labels.get(it.id)
        claims = [(s, v == SUPPORTED) for s, v in (lab.sentences if lab else ()) if v in (SUPPORTED, UNSUPPORTED)]
        out.append(Record(it, tuple(c for c, _ in claims), _supports_per_chunk(it, claims) if claims else (),
                          tuple(GENERATED.get(it.id, ()))))
    return tuple(out)


@functools.lru_cache(maxsize=1)
def sample_vectors() -> Mapping[str, list[float]]:
    """``{text: vector}`` of the real question and every generated question of the recorded answers (the lab's
    sentence encoder for the sample's language, rounded to :data:`DIGITS` decimals)."""
    from rag_metrics.answers.embed import default_embedding_cache, embed, encoder_for_items

    recs = [r for r in sample_records() if r.generated]
    texts = [t for r in recs for t in (r.item.question, *(q for q, _ in r.generated))]
    vec = embed(encoder_for_items([r.item for r in recs]), default_embedding_cache(), texts)
    return {t: _rounded(v) for t, v in vec.items()}


def record(item_id: str) -> Record:
    """The sample's record of answer ``item_id``."""
    for r in sample_records():
        if r.item.id == item_id:
            return r
    raise InputError(f"the sample has no answer {item_id!r}")


def relevancy_inputs(rec: Record) -> tuple[list[float], list[list[float]], list[int]]:
    """``(question_vector, generated_vectors, noncommittal)`` of a recorded answer (the exercise's parameters)."""
    vec = sample_vectors()
    return (vec[rec.item.question], [vec[q] for q, _ in rec.generated], [int(f) for _, f in rec.generated])


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine of two vectors (0 for a zero vector)."""
    den = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b)) / den if den else 0.0
