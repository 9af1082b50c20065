"""What one seat may spend of what the class shares: the budgets, the rate limiter and the ledger.

The numbers are settings (the operator's ``[lab.budgets]`` table, :class:`Budgets`); who they apply
to is decided in :mod:`rag_metrics.server.policy` (a student's seat; never the operator or the teacher).
Two small stores keep the counts every app process of a class shares, in the workspace root's
``.class`` folder, each a JSON file changed under an exclusive lock:

- :class:`RateLimiter` (``rates.json``): sliding windows of events per key (new seats per client
  address and for the whole server; wrong teacher keys and rejoin codes per address and in total).
- :class:`SpendLedger` (``spend.json``): judge calls and tokens spent per seat, shown to the teacher.
- :class:`EmbedLedger` (``embed.json``): texts embedded per seat and for the whole class in a sliding
  window (CPU as a budget: :func:`embed_meter` refuses a batch that would pass either).
- :class:`TutorLedger` (``tutor.json``): the tutor's questions and tokens per seat, and the questions
  asked (the teacher reads them on Class progress).
- :class:`TutorSettings` (``tutor_settings.json``): what the teacher set for the tutor: on or off, and
  its budgets per seat (each ``None``: the operator's ``[lab.budgets]`` number).

Example ``[lab.budgets]`` (every key optional; these are the defaults):

.. code-block:: toml

    [lab.budgets]
    seats_per_address = 8            # new seats one client address may make per seat_window_s
    seats_per_server = 300           # new seats the whole server makes per seat_window_s (a class arriving)
    seat_window_s = 600
    seat_proof_bits = 16             # a new seat first proves a real browser: SHA-256 work of 2**bits hashes
                                     # (about 0.1-1 s in a browser; 0 turns it off; rag_metrics.server.proof)
    guesses_per_address = 10         # wrong teacher keys + rejoin codes per address per guess_window_s
    guesses_per_server = 40          # ... and for the whole server
    guess_window_s = 600
    upload_files_per_session = 30    # files one browser session may hold uploaded
    upload_mb_per_session = 60       # bytes (MB) one browser session may hold uploaded
    corpus_mb = 2                    # largest corpus (all files) a student uploads (its embedding work)
    corpora_per_seat = 5             # corpora one seat may keep (uploads, in its own space)
    corpora_mb_per_seat = 4          # ... and their documents' total size (MB)
    embed_texts_per_seat = 1500      # new texts (cache misses) one seat may embed per embed_window_s: about
                                     # 0.05 CPU-s each for a 500-character chunk (0.11 for the model's longest)
    embed_texts_per_class = 15000    # ... and every seat together
    embed_window_s = 3600
    golden_questions = 1000          # questions in a student's golden set (import or edit)
    judge_calls_per_seat = 2000      # judge calls one seat may make in total
    judge_tokens_per_seat = 1000000  # judge prompt + completion tokens one seat may spend
    judge_confirm_over = 100         # a judge run planning more calls asks to confirm first
    tutor_questions_per_seat = 20    # questions one seat may ask the tutor's model (the teacher may set another
                                     # number on Class progress: TutorSettings; cached replies cost nothing)
    tutor_tokens_per_seat = 40000    # the tutor model's prompt + completion tokens one seat may spend
    sweep_configs = 12               # configurations in one sweep of the Tune page
    workers = 2                      # costly jobs (embedding, judge runs) at once per app process
    process_memory_mb = 3072         # resident memory one app process may reach (the noisy-neighbour bench
                                     # checks every process's peak against it; the Class page shows this process's)
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rag_metrics.config import Budgets, parse_budgets
from rag_metrics.errors import InputError

__all__ = ["Budgets", "EmbedLedger", "EmbeddingBudgetExceeded", "RateLimiter", "SpendLedger", "TutorLedger",
           "TutorPlan", "TutorSettings", "client_address", "embed_meter", "minutes_text", "parse_budgets",
           "process_rss_mb"]


def process_rss_mb(pid: int | str = "self") -> tuple[float, float]:
    """``(resident now, peak resident)`` of a process in MB (``VmRSS``, ``VmHWM`` of ``/proc/<pid>/status``;
    ``nan`` where there is no ``/proc``), checked against ``lab.budgets.process_memory_mb``."""
    now = peak = math.nan
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    now = int(line.split()[1]) / 1024
                elif line.startswith("VmHWM:"):
                    peak = int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return now, peak


def client_address(peer: str | None, forwarded_for: str | None) -> str:
    """The address of the browser behind a request.  nginx (``./lab class`` with several processes)
    connects from loopback and appends the real peer to ``X-Forwarded-For``; that last entry is
    trusted only when the direct peer is loopback (a browser cannot forge it past nginx; Streamlit
    gives no peer address, ``None``, for a loopback connection)."""
    peer = (peer.strip() if isinstance(peer, str) else "") or "127.0.0.1"
    if peer in ("127.0.0.1", "::1", "localhost") and isinstance(forwarded_for, str) and forwarded_for:
        last = forwarded_for.split(",")[-1].strip()
        if last and len(last) <= 64:
            return last
    return peer


class _JsonStore:
    """A JSON object named ``name``, shared by every process (and host) of a class: the file
    ``<root>/.class/<name>`` changed under an exclusive lock, or a row in PostgreSQL changed in a
    transaction (``lab.state``; ``state``: a backend of :mod:`rag_metrics.io.state`, default the
    class's own, :func:`~rag_metrics.io.state.class_state`)."""

    name = ""

    def __init__(self, root: str | os.PathLike[str] | None = None, state: Any = None) -> None:
        from rag_metrics.io.state import class_state
        from rag_metrics.workspace.store import default_workspace_dir

        self.root = Path(root) if root is not None else default_workspace_dir()
        self.path = self.root / ".class" / self.name
        self.state = state if state is not None else class_state(self.root)

    @staticmethod
    def _parse(text: str | None) -> dict[str, Any]:
        from rag_metrics.io.files import loads_json

        if not text:
            return {}
        try:
            data, msg, _ = loads_json(text)
        except ValueError:
            return {}
        return data if msg is None and isinstance(data, dict) else {}

    def _read(self) -> dict[str, Any]:
        return self._parse(self.state.read(self.name))

    @contextlib.contextmanager
    def _change(self) -> Iterator[dict[str, Any]]:
        with self.state.change(self.name) as doc:
            data = self._parse(doc.text)
            yield data
            doc.text = json.dumps(data) + "\n"


class RateLimiter(_JsonStore):
    """Sliding windows of events per key, shared by every process of a class.

    >>> import tempfile
    >>> r = RateLimiter(tempfile.mkdtemp())
    >>> [r.hit("seat:10.0.0.5", 2, 60, now=t) for t in (0, 1, 2, 61)]
    [True, True, False, True]
    """

    name = "rates.json"

    def hit(self, key: str, limit: int, window: float, now: float | None = None, *, count: bool = True) -> bool:
        """True when one more event of ``key`` fits ``limit`` events per ``window`` seconds (then it
        is counted, unless ``count`` is False); False when the key is over its limit."""
        now = time.time() if now is None else now
        with self._change() as data:
            for k in list(data):  # forget windows that ended
                kept = [t for t in data[k] if isinstance(t, (int, float)) and now - t < window]
                if kept:
                    data[k] = kept
                else:
                    del data[k]
            events = data.get(key, [])
            if len(events) >= limit:
                return False
            if count:
                data[key] = [*events, now]
            return True

    def full(self, key: str, limit: int, window: float, now: float | None = None) -> bool:
        """True when ``key`` is at its limit (nothing is counted)."""
        return not self.hit(key, limit, window, now, count=False)

    def wait(self, key: str, window: float, now: float | None = None) -> float:
        """Seconds until the oldest event of ``key`` leaves its window."""
        now = time.time() if now is None else now
        events = [t for t in self._read().get(key, []) if isinstance(t, (int, float))]
        return max(0.0, min(events) + window - now) if events else 0.0


class SpendLedger(_JsonStore):
    """Judge calls and tokens spent per seat (the teacher's Class page shows them).

    >>> import tempfile
    >>> led = SpendLedger(tempfile.mkdtemp())
    >>> led.add("s1", calls=3, tokens=900); led.add("s1", calls=1, tokens=100); led.spent("s1")
    (4, 1000)
    """

    name = "spend.json"

    def add(self, seat: str, calls: int, tokens: int) -> None:
        with self._change() as data:
            got = data.get(seat)
            row: dict[str, Any] = got if isinstance(got, dict) else {}
            data[seat] = {"calls": int(row.get("calls", 0)) + int(calls),
                          "tokens": int(row.get("tokens", 0)) + int(tokens)}

    def spent(self, seat: str) -> tuple[int, int]:
        row = self._read().get(seat)
        if not isinstance(row, dict):
            return 0, 0
        return int(row.get("calls", 0)), int(row.get("tokens", 0))

    def reset(self, seat: str) -> None:
        with self._change() as data:
            data.pop(seat, None)

    def all(self) -> dict[str, tuple[int, int]]:
        return {k: (int(v.get("calls", 0)), int(v.get("tokens", 0)))
                for k, v in self._read().items() if isinstance(v, dict)}


class TutorLedger(_JsonStore):
    """The tutor's questions and tokens per seat (``questions``, ``tokens``: what the budgets count), how many
    questions the seat asked in all (``asked``, with and without a model) and the last :data:`KEPT` of them
    (``recent``: ``[time, where, question]``), shared by every process of a class.

    >>> import tempfile
    >>> led = TutorLedger(tempfile.mkdtemp())
    >>> [led.take("s1", 2, 1000) for _ in range(3)]
    [None, None, 'questions']
    >>> led.add_tokens("s1", 1200); led.take("s1", 5, 1000), led.spent("s1")
    ('tokens', (2, 1200))
    >>> led.refund("s1"); led.spent("s1")
    (1, 1200)
    """

    name = "tutor.json"
    #: Questions kept per seat (the oldest go first); each kept to :data:`QUESTION_CHARS` characters.
    KEPT = 200
    QUESTION_CHARS = 2000

    @staticmethod
    def _row(data: dict[str, Any], seat: str) -> dict[str, Any]:
        got = data.get(seat)
        row: dict[str, Any] = got if isinstance(got, dict) else {}
        recent = row.get("recent")
        return {"questions": int(row.get("questions", 0) or 0), "tokens": int(row.get("tokens", 0) or 0),
                "asked": int(row.get("asked", 0) or 0), "recent": recent if isinstance(recent, list) else []}

    def take(self, seat: str, questions: int | None, tokens: int | None) -> str | None:
        """Count one question to the model against the seat's budgets (``None``: no limit), all or nothing:
        ``None`` when it fits (counted), else the budget that is spent (``"questions"`` or ``"tokens"``)."""
        with self._change() as data:
            row = self._row(data, seat)
            if questions is not None and row["questions"] + 1 > questions:
                return "questions"
            if tokens is not None and row["tokens"] >= tokens:
                return "tokens"
            row["questions"] += 1
            data[seat] = row
            return None

    def refund(self, seat: str) -> None:
        """Give back a question that cost nothing (a cached reply, or no model answered)."""
        with self._change() as data:
            row = self._row(data, seat)
            row["questions"] = max(0, row["questions"] - 1)
            data[seat] = row

    def add_tokens(self, seat: str, tokens: int) -> None:
        if tokens > 0:
            with self._change() as data:
                row = self._row(data, seat)
                row["tokens"] += int(tokens)
                data[seat] = row

    def record(self, seat: str, where: str, question: str, now: float | None = None) -> None:
        """Keep a question the seat asked (its teacher reads it), and count it."""
        with self._change() as data:
            row = self._row(data, seat)
            row["asked"] += 1
            row["recent"] = [*row["recent"], [time.time() if now is None else now, str(where)[:200],
                                              str(question)[:self.QUESTION_CHARS]]][-self.KEPT:]
            data[seat] = row

    def spent(self, seat: str) -> tuple[int, int]:
        """``(questions, tokens)`` the seat spent of its budgets."""
        row = self._row(self._read(), seat)
        return row["questions"], row["tokens"]

    def asked(self, seat: str) -> list[tuple[float, str, str]]:
        """The seat's questions kept, oldest first: ``(time, where, question)``."""
        return [(float(e[0]), str(e[1]), str(e[2])) for e in self._row(self._read(), seat)["recent"]
                if isinstance(e, list) and len(e) == 3 and isinstance(e[0], (int, float))]

    def all(self) -> dict[str, tuple[int, int, int]]:
        """``{seat: (questions asked in all, questions counted, tokens)}``."""
        data = self._read()
        return {k: (r["asked"], r["questions"], r["tokens"]) for k in data for r in [self._row(data, k)]}

    def reset(self, seat: str) -> None:
        with self._change() as data:
            data.pop(seat, None)


@dataclass(frozen=True)
class TutorPlan:
    """What the teacher set for the tutor (:class:`TutorSettings`): ``enabled``, and the budgets per seat
    that replace the operator's (``None``: the operator's ``[lab.budgets]`` number)."""

    enabled: bool = True
    questions: int | None = None
    tokens: int | None = None

    def budgets(self, operator: Budgets) -> Budgets:
        """The operator's budgets with the teacher's tutor budgets in their place.

        >>> TutorPlan(True, 5).budgets(Budgets()).tutor_questions_per_seat, Budgets().tutor_questions_per_seat
        (5, 20)
        """
        return replace(operator, tutor_questions_per_seat=operator.tutor_questions_per_seat
                       if self.questions is None else self.questions,
                       tutor_tokens_per_seat=operator.tutor_tokens_per_seat if self.tokens is None else self.tokens)


class TutorSettings(_JsonStore):
    """The teacher's tutor settings for the class (``tutor_settings.json``): on or off, and the budgets per seat.

    >>> import tempfile
    >>> s = TutorSettings(tempfile.mkdtemp()); s.load()
    TutorPlan(enabled=True, questions=None, tokens=None)
    >>> s.save(TutorPlan(False, 3, None)); s.load()
    TutorPlan(enabled=False, questions=3, tokens=None)
    """

    name = "tutor_settings.json"
    #: The largest budget the teacher may type (as for [lab.budgets]).
    MAX = 10**9

    def load(self) -> TutorPlan:
        data = self._read()

        def number(key: str) -> int | None:
            v = data.get(key)
            return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= self.MAX else None

        enabled = data.get("enabled", True)
        return TutorPlan(enabled if isinstance(enabled, bool) else True, number("questions"), number("tokens"))

    def save(self, plan: TutorPlan) -> None:
        for v in (plan.questions, plan.tokens):
            if v is not None and not 0 <= int(v) <= self.MAX:
                raise InputError(f"a tutor budget must be a whole number from 0 to {self.MAX:,}, got {v!r}")
        with self._change() as data:
            data.clear()
            data.update(enabled=plan.enabled, questions=plan.questions, tokens=plan.tokens)


def mb(n: int) -> int:
    """Megabytes as bytes."""
    return int(n) * 1024 * 1024


def estimate_tokens(texts: int, chars: int) -> int:
    """A judge run's planned prompt tokens: about four characters a token, plus a prompt frame per call."""
    return int(math.ceil(chars / 4)) + 200 * int(texts)


class EmbeddingBudgetExceeded(InputError):
    """A batch of new texts to embed would pass a seat's or the class's embedding budget."""


#: The key of the whole class in :class:`EmbedLedger`.
CLASS_KEY = "class"
#: Batches embedded within this many seconds of a key's last entry are added to it (the window is kept to
#: the minute; the file stays small however many small batches a class embeds).
BUCKET_S = 60


class EmbedLedger(_JsonStore):
    """Texts embedded (cache misses) per seat and for the whole class, in a sliding window, shared by
    every process of a class: ``{key: [[time, texts], ...]}``.

    >>> import tempfile
    >>> led = EmbedLedger(tempfile.mkdtemp())
    >>> led.spend([("s1", 100), ("class", 150)], 60, 3600, now=0)
    >>> led.spend([("s2", 100), ("class", 150)], 100, 3600, now=10)[:2]
    ('class', 60)
    >>> led.used("s1", 3600, now=20), led.used("s1", 3600, now=3601)
    (60, 0)
    """

    name = "embed.json"

    @staticmethod
    def _kept(events: Any, window: float, now: float) -> list[list[float]]:
        out = []
        for e in events if isinstance(events, list) else []:
            if isinstance(e, list) and len(e) == 2 and all(isinstance(x, (int, float)) for x in e) \
                    and now - e[0] < window:
                out.append([float(e[0]), float(e[1])])
        return out

    def spend(self, limits: list[tuple[str, int]], texts: int, window: float,
              now: float | None = None) -> tuple[str, int, int, float] | None:
        """Count ``texts`` against every ``(key, limit)``, all or none: ``None`` when they fit (counted),
        else ``(key, used, limit, seconds until the oldest counted batch leaves the window)``."""
        now = time.time() if now is None else now
        with self._change() as data:
            for k in list(data):  # forget batches that left their window
                kept = self._kept(data[k], window, now)
                if kept:
                    data[k] = kept
                else:
                    del data[k]
            for key, cap in limits:
                events = data.get(key, [])
                used = int(sum(n for _, n in events))
                if used + texts > cap:
                    reset = min(t for t, _ in events) + window - now if events else 0.0
                    return key, used, int(cap), max(0.0, reset)
            if texts > 0:
                for key, _ in limits:
                    events = data.get(key, [])
                    if events and now - events[-1][0] < BUCKET_S:  # one entry a minute: a small file
                        events[-1][1] += texts
                    else:
                        events.append([now, texts])
                    data[key] = events
            return None

    def used(self, key: str, window: float, now: float | None = None) -> int:
        """Texts ``key`` embedded in the last ``window`` seconds."""
        now = time.time() if now is None else now
        return int(sum(n for _, n in self._kept(self._read().get(key), window, now)))

    def wait(self, key: str, window: float, now: float | None = None) -> float:
        """Seconds until the oldest batch ``key`` embedded leaves the window (0: nothing counted)."""
        now = time.time() if now is None else now
        events = self._kept(self._read().get(key), window, now)
        return max(0.0, min(t for t, _ in events) + window - now) if events else 0.0

    def all_used(self, window: float, now: float | None = None) -> dict[str, int]:
        now = time.time() if now is None else now
        return {k: int(sum(n for _, n in self._kept(v, window, now))) for k, v in self._read().items()}


def minutes_text(seconds: float) -> str:
    """``seconds`` as whole minutes, rounded up ("1 minute", "23 minutes")."""
    m = max(1, int(math.ceil(seconds / 60)))
    return f"{m} minute{'s' if m != 1 else ''}"


def embed_meter(seat: str, budgets: Budgets, root: str | os.PathLike[str] | None = None):
    """The charge function for one student's seat (:func:`rag_metrics.jobs.metered`): counts a batch of
    new texts against ``embed_texts_per_seat`` and ``embed_texts_per_class`` per ``embed_window_s``, and
    raises :class:`EmbeddingBudgetExceeded` (nothing counted) when it would pass either.

    >>> import tempfile
    >>> charge = embed_meter("s1", Budgets(embed_texts_per_seat=10), tempfile.mkdtemp())
    >>> charge(8)
    >>> try:
    ...     charge(5)
    ... except EmbeddingBudgetExceeded as err:
    ...     print(str(err)[:101])
    Embedding 5 new texts is over this seat's embedding budget: 8 of 10 texts used in the last 60 minutes
    """
    ledger = EmbedLedger(root)
    window = int(budgets.embed_window_s)

    def charge(texts: int) -> None:
        over = ledger.spend([(f"seat:{seat}", int(budgets.embed_texts_per_seat)),
                             (CLASS_KEY, int(budgets.embed_texts_per_class))], int(texts), window)
        if over is None:
            return
        key, used, cap, reset = over
        whose, name = (("the class's", "embed_texts_per_class") if key == CLASS_KEY
                       else ("this seat's", "embed_texts_per_seat"))
        raise EmbeddingBudgetExceeded(
            f"Embedding {int(texts):,} new texts is over {whose} embedding budget: {used:,} of {cap:,} texts used in "
            f"the last {minutes_text(window)} (lab.budgets.{name}); it resets in {minutes_text(reset)}. Use a smaller "
            "corpus or chunking, switch the retriever to BM25 (no embedding), or ask the teacher.")
    return charge
