"""Ask the tutor (issue 48): passages from the course, one streamed answer from the class's model, the guard.

:func:`ask` yields events, in order:

1. :class:`Passages`: the course passages found for the question (:class:`~rag_metrics.tutor.retrieve.TutorIndex`
   of the lesson's language, ``k=3``, boosted towards the step or exercise the student is on);
2. without a model (no endpoint, or the model failed or timed out): :class:`Fallback` with those passages and
   the diagnosis of the student's last run (the verdict's text), and nothing else: it never pretends to be a
   model (``reason`` says why the model did not answer, ``""`` when none is configured);
3. with a model: :class:`Token` events as the model streams (one chat completion through the ``openai``
   client, ``stream=True``), then :class:`Done`.

The model's instructions (:data:`SYSTEM`, in the lesson's language) are a hint ladder: locate the mistake,
then ask, then hint, then a smaller example; never the solution, never a check's expected value; cite the
passages as ``[1]``, ``[2]``.  The reply is checked by :func:`rag_metrics.tutor.guard.check_reply` as it
streams (tokens stop being passed on at the first leak, and the stream is closed) and once whole; a reply that
leaks is replaced by the exercise's next hint (:attr:`Exercise.hints`, one rung further at every withheld reply
of the same place) with a sentence saying it was withheld, and the mistake the last run was diagnosed with
(:func:`diagnosis`: the verdict's mistake-specific hint, when it has one); ``Done.guarded`` is True.

Citations: ``[n]`` (and ``[passage id]``, which some models copy from the prompt, rewritten as ``[n]``) are
mapped to the passages given; ``Done.citations`` lists them (each once, in order), each with its app link.

Tokens: ``Done.tokens_used`` is the server's count when it sends usage in the stream (``stream_options=
{"include_usage": True}``; retried without it for a server that refuses the option), else an estimate of
about four characters a token (:func:`rag_metrics.server.budgets.estimate_tokens`), and ``Done.tokens_estimated``
says which.

The endpoint is the judge's (:func:`endpoint_from_config`: the operator's ``[lab.judge]``: base_url,
chat_model, timeout, max_retries; the key from ``api_key`` there, else the variable ``api_key_env`` names).
The key is sent only to that base URL, and never logged nor shown (:class:`TutorEndpoint` leaves it out of its
repr).  The stream is read directly (not through the judge's buffering outbound transport, which reads a
whole reply before returning it); in class mode the destination is the operator's own, declared judge.

Replies are cached (:class:`ReplyCache`, in memory, bounded) by question, code, verdict, language, place and
model: the same question on the same code and verdict costs no tokens twice.
"""
from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rag_metrics.tutor.guard import CODE_LINE, GuardResult, check_reply
from rag_metrics.tutor.passages import Passage

__all__ = ["Done", "Event", "Fallback", "MAX_CODE", "Passages", "ReplyCache", "SYSTEM", "Token", "TutorEndpoint",
           "TutorRequest", "ask", "diagnosis", "endpoint_from_config", "exercises_at", "map_citations", "messages",
           "safe_end"]

#: Longest student code / verdict / passage text put in the prompt (characters).
MAX_CODE, MAX_VERDICT, MAX_PASSAGE = 6000, 2000, 1200
#: Passages retrieved per question.
K = 3
#: The answer's length cap (tokens) sent to the model.
MAX_TOKENS = 700


# ---- the request and the events -------------------------------------------------------------------------------
@dataclass(frozen=True)
class TutorRequest:
    """A student's question: ``where`` is ``"lesson:<lesson>:<step>"`` or ``"exercise:<name>"``; ``code`` and
    ``verdict`` the student's current code and last verdict (exercise); ``hidden_values`` the checks' expected
    values the student has not been shown (the guard looks for them)."""

    question: str
    lang: str
    where: str
    code: str = ""
    verdict: str = ""
    hidden_values: tuple = ()


@dataclass(frozen=True)
class Passages:
    passages: list[Passage]


@dataclass(frozen=True)
class Token:
    text: str


@dataclass(frozen=True)
class Done:
    answer: str
    citations: list[Passage]
    guarded: bool
    tokens_used: int
    from_model: bool = True
    cached: bool = False
    tokens_estimated: bool = False     # True: ``tokens_used`` is an estimate (the server sent no usage)
    reason: str = ""                   # what the guard found when ``guarded``


@dataclass(frozen=True)
class Fallback:
    """No model answered: the best passages and the diagnosis of the last run (labelled so by the page)."""

    passages: list[Passage]
    diagnosis: str
    reason: str = ""                   # "" (no model configured) or why the model failed


Event = Passages | Token | Done | Fallback


# ---- the endpoint ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TutorEndpoint:
    """The class's OpenAI-compatible chat endpoint (the judge's); the key is never part of the repr."""

    base_url: str
    model: str
    timeout: float = 30.0
    max_retries: int = 1
    temperature: float = 0.2
    max_tokens: int = MAX_TOKENS
    api_key: str | None = field(default=None, repr=False, compare=False)

    def client(self) -> Any:
        """The ``openai`` client of this endpoint, one per process (building one costs 0.2-0.3 s: the TLS
        context), kept while the settings stay the same."""
        import openai

        ident = (self.base_url, hashlib.sha256((self.api_key or "").encode()).hexdigest(), self.timeout,
                 self.max_retries)
        with _CLIENTS_LOCK:
            found = _CLIENTS.get(ident)
            if found is None:
                # no proxy or certificate settings from the environment, no redirect followed (the key goes to
                # base_url only)
                http = openai.DefaultHttpxClient(trust_env=False, follow_redirects=False)
                found = openai.OpenAI(base_url=self.base_url, api_key=self.api_key or "not-needed",
                                      timeout=self.timeout, max_retries=self.max_retries, http_client=http)
                if len(_CLIENTS) >= 8:
                    _CLIENTS.pop(next(iter(_CLIENTS)))
                _CLIENTS[ident] = found
            return found


_CLIENTS: dict[tuple, Any] = {}
_CLIENTS_LOCK = threading.Lock()


def endpoint_from_config(config: Any) -> TutorEndpoint | None:
    """The tutor's endpoint from the operator's configuration (:class:`rag_metrics.config.ServerConfig`): its
    ``[lab.judge]`` (validated as the judge's, :class:`~rag_metrics.answers.llm.JudgeConfig`: InputError for bad
    settings), or None when no judge is configured."""
    from rag_metrics.answers.llm import JudgeConfig
    from rag_metrics.config import variable

    judge = getattr(config, "judge", None)
    if not judge:
        return None
    spec = dict(judge)
    allowed = ("api_key_env", "timeout", "max_retries", "temperature")
    cfg = JudgeConfig(str(spec.get("base_url", "")), str(spec.get("chat_model", "")),
                      **{k: spec[k] for k in allowed if k in spec})
    key = spec.get("api_key") or variable(cfg.api_key_env) or None
    return TutorEndpoint(cfg.base_url, cfg.chat_model, timeout=float(cfg.timeout), max_retries=min(cfg.max_retries, 2),
                         temperature=float(spec.get("temperature", 0.2)), api_key=str(key) if key else None)


# ---- the reply cache ------------------------------------------------------------------------------------------
class ReplyCache:
    """Replies by (question, code, verdict, language, place, model), in memory, the ``maxsize`` most recent; and
    how many replies of each place the guard withheld (the hint ladder's rung)."""

    def __init__(self, maxsize: int = 512) -> None:
        self.maxsize = maxsize
        self._lock = threading.Lock()
        self._items: OrderedDict[str, Done] = OrderedDict()
        self._withheld: dict[str, int] = {}

    @staticmethod
    def key(req: TutorRequest, model: str) -> str:
        raw = json.dumps([req.question.strip(), req.code, req.verdict, req.lang, req.where, model])
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()

    def get(self, key: str) -> Done | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: str, done: Done) -> None:
        with self._lock:
            self._items[key] = done
            self._items.move_to_end(key)
            while len(self._items) > self.maxsize:
                self._items.popitem(last=False)

    def withheld(self, where: str) -> int:
        """How many replies of place ``where`` were withheld before this one (then counts this one)."""
        with self._lock:
            n = self._withheld.get(where, 0)
            self._withheld[where] = n + 1
            return n

    def __len__(self) -> int:
        return len(self._items)


# ---- the prompt -----------------------------------------------------------------------------------------------
SYSTEM: Mapping[str, str] = {
    "en": (
        "You are the tutor of the RAG Metrics Lab, a course on evaluating retrieval-augmented generation. A student "
        "is stuck; help them like a patient teaching assistant. You never give the solution away.\n"
        "Work as a hint ladder, one rung per answer, starting at the lowest rung that helps:\n"
        "1. Locate the mistake: say where it is in the student's code or reasoning (a line, a step), in words.\n"
        "2. Ask: one short question that makes the student look at it.\n"
        "3. Hint: name the rule or idea they are missing, without writing the code for it.\n"
        "4. A smaller example: show the idea on a different, smaller problem (other names, other data), never on "
        "the exercise's own function.\n"
        "Never write the exercise's function, its body or its key line, and never state the value a check "
        "expects. If the student asks for the solution, say that you cannot give it and offer the next rung.\n"
        "Ground your answer in the course passages given; cite a passage you use as [1], [2], ... by its number; "
        "never invent a passage. If the passages do not cover the question, say so briefly.\n"
        "Answer in English, in at most about 150 words, in Markdown."),
    "da": (
        "Du er vejleder i RAG Metrics Lab, et kursus i at evaluere retrieval-augmented generation. En elev sidder "
        "fast; hjælp som en tålmodig instruktor. Du giver aldrig løsningen væk.\n"
        "Arbejd som en stige af hints, ét trin pr. svar, fra det laveste trin, der hjælper:\n"
        "1. Find fejlen: sig med ord, hvor den er i elevens kode eller ræsonnement (en linje, et trin).\n"
        "2. Spørg: ét kort spørgsmål, der får eleven til at se på den.\n"
        "3. Hint: nævn reglen eller idéen, eleven mangler, uden at skrive koden til den.\n"
        "4. Et mindre eksempel: vis idéen på et andet, mindre problem (andre navne, andre data), aldrig på "
        "øvelsens egen funktion.\n"
        "Skriv aldrig øvelsens funktion, dens krop eller dens nøglelinje, og sig aldrig den værdi, et tjek "
        "forventer. Beder eleven om løsningen, så sig, at du ikke kan give den, og tilbyd næste trin.\n"
        "Byg dit svar på de givne afsnit fra kurset; henvis til et afsnit, du bruger, som [1], [2], ... med dets "
        "nummer; opfind aldrig et afsnit. Dækker afsnittene ikke spørgsmålet, så sig det kort.\n"
        "Svar på dansk, med højst omkring 150 ord, i Markdown."),
}

_LABELS: Mapping[str, Mapping[str, str]] = {
    "en": {"passages": "Course passages", "none": "(none found)", "where": "Where the student is",
           "code": "The student's code", "verdict": "The verdict of the student's last run",
           "question": "The student's question", "cut": "(cut)"},
    "da": {"passages": "Afsnit fra kurset", "none": "(ingen fundet)", "where": "Hvor eleven er",
           "code": "Elevens kode", "verdict": "Dommen over elevens seneste kørsel",
           "question": "Elevens spørgsmål", "cut": "(afkortet)"},
}

_WITHHELD: Mapping[str, str] = {
    "en": "The tutor's reply gave part of the solution away ({reason}), so it is withheld. A hint instead:",
    "da": "Vejlederens svar gav en del af løsningen væk ({reason}), så det er holdt tilbage. Et hint i stedet:",
}
_REASONS_DA: Mapping[str, str] = {
    "code matching the reference solution": "kode som i modelløsningen",
    "code matching the lesson's code": "kode som i lektionens kode",
    "a key line of the solution": "en nøglelinje i løsningen",
    "an expected value": "en forventet værdi",
}
_LAST_RUN: Mapping[str, str] = {"en": "What your last run showed:", "da": "Hvad din seneste kørsel viste:"}
_NO_HINT: Mapping[str, str] = {
    "en": "Go back to the step's text and its example, and try the smallest case by hand first.",
    "da": "Gå tilbage til trinnets tekst og dets eksempel, og prøv det mindste tilfælde i hånden først.",
}


def _lang(lang: str) -> str:
    return "da" if str(lang).lower().startswith("da") else "en"


def _cut(text: str, cap: int, lang: str) -> str:
    text = str(text or "")
    return text if len(text) <= cap else text[:cap] + f"\n{_LABELS[lang]['cut']}"


def messages(req: TutorRequest, passages: Sequence[Passage]) -> list[dict[str, str]]:
    """The chat messages for ``req`` with ``passages`` numbered [1], [2], ... (each with its id in brackets)."""
    lang = _lang(req.lang)
    L = _LABELS[lang]
    parts = [f"{L['passages']}:"]
    if passages:
        for i, p in enumerate(passages, start=1):
            parts.append(f"[{i}] [{p.id}] {p.title}\n{_cut(p.text, MAX_PASSAGE, lang)}")
    else:
        parts.append(L["none"])
    parts.append(f"{L['where']}: {req.where}")
    if req.code.strip():
        parts.append(f"{L['code']}:\n```python\n{_cut(req.code, MAX_CODE, lang)}\n```")
    if req.verdict.strip():
        parts.append(f"{L['verdict']}:\n{_cut(req.verdict, MAX_VERDICT, lang)}")
    parts.append(f"{L['question']}:\n{req.question.strip()}")
    return [{"role": "system", "content": SYSTEM[lang]}, {"role": "user", "content": "\n\n".join(parts)}]


# ---- citations, places, hints -------------------------------------------------------------------------------
_CITE = re.compile(r"\[([^\[\]\s]{1,200})\]")


def map_citations(answer: str, passages: Sequence[Passage]) -> tuple[str, list[Passage]]:
    """``(answer, cited)``: ``[n]`` and ``[passage id]`` in ``answer`` mapped to ``passages`` (an id rewritten
    as its number); a number or id that is not one of them is left as written and not cited."""
    by_id = {p.id: i for i, p in enumerate(passages, start=1)}
    cited: list[Passage] = []

    def one(m: re.Match[str]) -> str:
        token = m.group(1)
        n = int(token) if token.isdigit() else by_id.get(token)
        if n is None or not 1 <= n <= len(passages):
            return m.group(0)
        p = passages[n - 1]
        if p not in cited:
            cited.append(p)
        return f"[{n}]"

    return _CITE.sub(one, answer), cited


def exercises_at(where: str) -> tuple[str, ...]:
    """The exercises whose solution the guard protects at place ``where``: the exercise itself, or the
    exercises of a lesson step."""
    parts = str(where or "").split(":")
    if parts[0] == "exercise" and len(parts) == 2:
        return (parts[1],)
    if parts[0] == "lesson" and len(parts) == 3:
        from rag_metrics.exercises.catalogue import exercises_for_step

        return tuple(e.name for e in exercises_for_step(parts[2], parts[1]))
    return ()


def guard(text: str, req: TutorRequest, names: Sequence[str]) -> GuardResult:
    """The guard over every exercise of the place (the values checked once when there is none)."""
    if not names:
        return check_reply(text, exercise=None, hidden_values=req.hidden_values)
    for name in names:
        found = check_reply(text, exercise=name, hidden_values=req.hidden_values, student_code=req.code)
        if found.leaked:
            return found
    return GuardResult(False)


def _hint(names: Sequence[str], lang: str, rung: int) -> str:
    from rag_metrics.exercises.catalogue import exercise

    hints: list[str] = []
    for name in names:
        try:
            ex = exercise(name)
        except Exception:  # noqa: BLE001  an unknown exercise has no hint
            continue
        hints.extend(ex.hints.get(lang) or ex.hints.get("en") or ())
    if not hints:
        return _NO_HINT[lang]
    return hints[min(rung, len(hints) - 1)]


def diagnosis(verdict: str) -> str:
    """The mistake the last run was diagnosed with, as its hint (a line of ``verdict`` that is one of
    :data:`rag_metrics.exercises.mistakes.MISTAKES`' hints), or ``""``."""
    from rag_metrics.exercises.mistakes import MISTAKES

    known = {h.strip() for hints in MISTAKES.values() for h in hints}
    return next((line.strip() for line in str(verdict or "").splitlines() if line.strip() in known), "")


def _withheld(result: GuardResult, names: Sequence[str], lang: str, rung: int, verdict: str = "") -> str:
    """The answer in place of a withheld reply: it says so, the exercise's next hint, and the mistake the last
    run was diagnosed with (when it was)."""
    reason = result.reason if lang == "en" else _REASONS_DA.get(result.reason, result.reason)
    hint = _hint(names, lang, rung)
    text = f"{_WITHHELD[lang].format(reason=reason)}\n\n{hint}"
    found = diagnosis(verdict)
    if found and found != hint:
        text += f"\n\n{_LAST_RUN[lang]} {found}"
    return text


# ---- asking ---------------------------------------------------------------------------------------------------
def _search(req: TutorRequest, index: Any) -> list[Passage]:
    from rag_metrics.tutor.retrieve import TutorIndex

    idx = index if index is not None else TutorIndex.for_language(_lang(req.lang))
    query = req.question.strip()
    if req.verdict.strip():  # a little context: the verdict's first lines (the mistake's hint)
        query += "\n" + " ".join(req.verdict.strip().splitlines()[:3])[:300]
    return [p for p, _ in idx.search(query, K, where=req.where or None)]


_OPEN_NUMBER = re.compile(r"\d[\d.,/ %]*$")


def safe_end(text: str) -> int:
    """How much of a streamed ``text`` may be shown now: up to an open code span or fence (an odd number of
    backticks: the guard sees the code whole first), a line of code being written, or a number being written
    (``0,7`` may become ``0,7237``)."""
    end = len(text)
    if text.count("`") % 2:
        end = text.rfind("`")
        while end > 0 and text[end - 1] == "`":
            end -= 1
    line = text.rfind("\n", 0, end) + 1
    if CODE_LINE.match(text[line:end]):
        end = line
    m = _OPEN_NUMBER.search(text, 0, end)
    if m is not None:
        end = m.start()
    return end


def _estimate(msgs: Sequence[Mapping[str, str]], answer: str) -> int:
    from rag_metrics.server.budgets import estimate_tokens

    return estimate_tokens(1, sum(len(m["content"]) for m in msgs) + len(answer))


def _stream(endpoint: TutorEndpoint, msgs: list[dict[str, str]]) -> Any:
    import openai

    client = endpoint.client()
    args: dict[str, Any] = {"model": endpoint.model, "messages": msgs, "stream": True,
                            "temperature": endpoint.temperature, "max_tokens": endpoint.max_tokens}
    try:
        return client.chat.completions.create(**args, stream_options={"include_usage": True})
    except openai.BadRequestError:  # a server that does not know stream_options: ask again without it
        return client.chat.completions.create(**args)


def _why(err: BaseException) -> str:
    name = type(err).__name__
    if "Timeout" in name:
        return "the model did not answer in time"
    if "Connection" in name:
        return "the model's server could not be reached"
    status = getattr(err, "status_code", None)
    if status is not None:
        return f"the model's server answered HTTP {status}"
    return f"the model's reply could not be read ({name})"


def ask(req: TutorRequest, *, endpoint: Any | None, cache: Any | None = None, index: Any = None) -> Iterator[Event]:
    """Answer ``req`` (module docstring): :class:`Passages`, then :class:`Token`\\ s and :class:`Done` from
    the model at ``endpoint`` (a :class:`TutorEndpoint`), or :class:`Fallback` without one or when it fails.
    ``cache``: a :class:`ReplyCache` (or None); ``index``: the passages' index (default
    ``TutorIndex.for_language(req.lang)``)."""
    lang = _lang(req.lang)
    try:
        passages = _search(req, index)
    except Exception:  # noqa: BLE001  no passages is still an answer (the model, or the diagnosis)
        passages = []
    yield Passages(list(passages))
    diagnosis = str(req.verdict or "").strip()
    if endpoint is None:
        yield Fallback(list(passages), diagnosis, "")
        return
    key = ReplyCache.key(req, str(getattr(endpoint, "model", ""))) if cache is not None else ""
    if cache is not None:
        kept = cache.get(key)
        if kept is not None:
            yield Done(kept.answer, list(kept.citations), kept.guarded, kept.tokens_used, kept.from_model, True,
                       kept.tokens_estimated, kept.reason)
            return
    names = exercises_at(req.where)
    msgs = messages(req, passages)
    text, shown, usage, leak = "", 0, None, None
    deadline = time.monotonic() + 3 * float(getattr(endpoint, "timeout", 30.0))
    stream = None
    try:
        stream = _stream(endpoint, msgs)
        for chunk in stream:
            got = getattr(chunk, "usage", None)
            if got is not None and getattr(got, "total_tokens", None):
                usage = int(got.total_tokens)
            for choice in getattr(chunk, "choices", None) or ():
                piece = getattr(getattr(choice, "delta", None), "content", None)
                if not piece or leak is not None:
                    continue
                text += piece
                found = guard(text, req, names)  # before the piece is shown
                if found.leaked:
                    leak = found
                    continue
                safe = safe_end(text)
                if safe > shown:
                    yield Token(text[shown:safe])
                    shown = safe
            if leak is not None:
                break  # the reply is withheld: read no more of it
            if time.monotonic() > deadline:
                raise TimeoutError("the model did not finish in time")
    except Exception as err:  # noqa: BLE001  any failure of the model: the answer without a model
        yield Fallback(list(passages), diagnosis, _why(err))
        return
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            try:
                close()
            except Exception:  # noqa: BLE001
                pass
    if leak is None:
        leak_found = guard(text, req, names)
        leak = leak_found if leak_found.leaked else None
        if leak is None and shown < len(text):
            yield Token(text[shown:])  # the end held back (an open code span, a number being written)
    tokens = usage if usage is not None else _estimate(msgs, text)
    estimated = usage is None
    if leak is not None:
        rung = cache.withheld(req.where) if cache is not None else 0
        done = Done(_withheld(leak, names, lang, rung, req.verdict), [], True, tokens, True, False, estimated,
                    leak.reason)
    else:
        answer, cited = map_citations(text.strip(), passages)
        done = Done(answer, cited, False, tokens, True, False, estimated, "")
    if cache is not None:
        cache.put(key, done)
    yield done
