"""CPU as a budget in the app (class mode, issue 50): embedding work and kept corpora per seat.

- :func:`meter`: the embedding meter of this browser session (:data:`rag_metrics.jobs.meter_provider`
  asks it in every run's thread, fragments included): a student's seat pays for the new texts it embeds
  (``lab.budgets.embed_texts_per_seat`` and ``embed_texts_per_class`` per ``embed_window_s``,
  :class:`rag_metrics.server.budgets.EmbedLedger`); the operator and the teacher are not metered.
- :func:`upload_refusal`: why a corpus upload may not be kept (its chunks would pass what the seat has
  left to embed, or the seat's corpora would pass ``corpora_per_seat`` / ``corpora_mb_per_seat``),
  said before anything is saved or embedded.
"""
from __future__ import annotations

from collections.abc import Callable

from streamlit.runtime.scriptrunner import get_script_run_ctx

from rag_metrics import jobs
from rag_metrics.config import class_mode_on
from rag_metrics.errors import InputError
from rag_metrics.server.access import Caller
from rag_metrics.server.budgets import CLASS_KEY, EmbedLedger, embed_meter, mb, minutes_text
from rag_metrics.server.policy import limit
from rag_metrics.workspace.corpora import stored_corpora_usage
from ui import class_budgets

__all__ = ["install", "meter", "upload_refusal"]


def _student() -> Caller | None:
    from ui.identity import session_caller

    try:
        who = session_caller()
    except InputError:  # no seat (yet): nothing it runs embeds
        return None
    return who if limit(who, "embed_texts_per_seat", class_budgets.budgets()) is not None and who.seat else None


def meter() -> Callable[[int], None] | None:
    """The charge function of the browser session this thread runs for (``None``: not metered)."""
    if get_script_run_ctx() is None or not class_mode_on():
        return None
    who = _student()
    return embed_meter(str(who.seat), class_budgets.budgets()) if who is not None else None


def install() -> None:
    """Make :func:`meter` the library's way to find a thread's meter (every run; idempotent)."""
    jobs.meter_provider = meter


def upload_refusal(who: Caller, new_texts: int, new_bytes: int) -> str | None:
    """Why a student's corpus of ``new_bytes`` with ``new_texts`` chunks to embed may not be loaded
    (``None``: it may)."""
    b = class_budgets.budgets()
    cap = limit(who, "corpora_per_seat", b)
    if cap is None or not who.seat:
        return None
    count, size = stored_corpora_usage(space=who.writes_to)
    if count + 1 > cap:
        return (f"This seat keeps {count} corpora, its budget (lab.budgets.corpora_per_seat = {cap}); remove one "
                "on the Corpus explorer, or ask the teacher.")
    size_cap = int(b.corpora_mb_per_seat)
    if size + new_bytes > mb(size_cap):
        return (f"This seat's corpora would hold {size + new_bytes:,} bytes; its budget is {size_cap} MB "
                f"(lab.budgets.corpora_mb_per_seat, {size:,} bytes used). Upload less, or ask the teacher.")
    window = int(b.embed_window_s)
    ledger = EmbedLedger()
    for key, cap_texts, name, whose in ((f"seat:{who.seat}", b.embed_texts_per_seat, "embed_texts_per_seat",
                                         "this seat's"),
                                        (CLASS_KEY, b.embed_texts_per_class, "embed_texts_per_class", "the class's")):
        used = ledger.used(key, window)
        if used + new_texts > cap_texts:
            again = f"; room again in {minutes_text(ledger.wait(key, window))}" if used else ""
            return (f"Embedding this corpus's {new_texts:,} chunks is over {whose} embedding budget: {used:,} of "
                    f"{cap_texts:,} texts used in the last {minutes_text(window)} (lab.budgets.{name}{again}). Upload "
                    "a smaller corpus, use larger chunks or the BM25 retriever, or ask the teacher.")
    return None
