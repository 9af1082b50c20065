"""Plain-text chat calls to the judge endpoint: cached, counted, cancellable, in parallel.

The answer metrics' :class:`~rag_metrics.answers.llm.LLMJudge` asks for JSON of a fixed schema;
drafting questions and UMBRELA grades need the reply as text, read tolerantly
(:mod:`rag_metrics.authoring.judge_replies`).  This module reuses everything else of the judge: the
validated :class:`~rag_metrics.answers.llm.JudgeConfig`, the client construction and error
translation of ``LLMJudge`` (one place: a class-mode rule added there applies here too), the
on-disk :class:`~rag_metrics.answers.llm_cache.JudgeCache` with the same key layout (an identical
request made by the Answers page is a cache hit here), and the
:class:`~rag_metrics.answers.types.JudgeProgress` counters.

Counting: ``planned`` calls are known before running (one per prompt); after a run,
``progress.done - progress.cache_hits`` calls went to the endpoint, with their token counts.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from rag_metrics.answers.llm import JudgeCallError, JudgeConfig, LLMJudge
from rag_metrics.answers.llm_cache import cache_key
from rag_metrics.answers.types import CancelCheck, JudgeProgress, ProgressCallback

__all__ = ["CALL_STATUSES", "CallResult", "ChatCaller", "Prompt", "approx_tokens"]


def approx_tokens(text: str) -> int:
    """A rough token count of a prompt before sending it (4 characters a token, the usual rule of
    thumb for English with GPT-style tokenisers); the counts after a run are the endpoint's own."""
    return (len(text) + 3) // 4

#: Per-item statuses of the drafting and relevance steps (``ok`` and the network ones share their
#: meaning with :data:`rag_metrics.answers.types.STATUSES`).
CALL_STATUSES: Mapping[str, str] = {
    "ok": "usable reply",
    "unusable_reply": "the reply holds no usable answer (no grade 0-3, no question); see the reply kept",
    "empty_reply": "the judge returned an empty reply",
    "refusal": "the judge refused to answer",
    "unreachable": "the judge endpoint could not be reached",
    "timeout": "the judge endpoint did not answer in time",
    "http_error": "the judge endpoint answered with an HTTP error",
    "cancelled": "cancelled before this item was asked",
}


@dataclass(frozen=True)
class Prompt:
    """One call to make: the user message, the sample number (asked again with another number
    for a second independent sample) and whether to ask for JSON mode."""

    text: str
    sample: int = 0
    json_mode: bool = False


@dataclass(frozen=True)
class CallResult:
    """The reply of one call (``content`` is ``""`` unless ``status`` is ``"ok"``)."""

    content: str
    status: str = "ok"
    message: str = ""
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class _Cancelled(Exception):
    pass


class _Counter:
    def __init__(self, total: int) -> None:
        self.lock = threading.Lock()
        self.total, self.done, self.hits, self.prompt, self.completion = total, 0, 0, 0, 0
        self.start = time.perf_counter()

    def add(self, hit: bool, usage: Mapping[str, Any] | None = None) -> None:
        with self.lock:
            self.done += 1
            self.hits += int(hit)
            if usage and not hit:
                self.prompt += int(usage.get("prompt_tokens") or 0)
                self.completion += int(usage.get("completion_tokens") or 0)

    def snapshot(self) -> JudgeProgress:
        with self.lock:
            return JudgeProgress(self.done, max(self.total, self.done), self.hits, self.prompt, self.completion,
                                 time.perf_counter() - self.start)


class ChatCaller:
    """Cached plain-text chat calls through an OpenAI-compatible endpoint.

    Parameters
    ----------
    config : JudgeConfig
        Endpoint, model, sampling, concurrency, timeout (its ``json_mode`` is used only for
        prompts that ask for it).
    api_key, cache, client, policy
        As for :class:`~rag_metrics.answers.llm.LLMJudge` (``cache=False``: no cache; ``None``:
        the default on-disk cache; ``policy``: the session's outbound policy, open by default).
    """

    def __init__(self, config: JudgeConfig, api_key: str | None = None, cache: Any = None,
                 client: Any = None, policy: Any = None) -> None:
        # one client construction, through the session's outbound policy (rag_metrics.server.outbound)
        base = LLMJudge(config, api_key=api_key, cache=cache, client=client, policy=policy)
        self.config = config
        self.name = config.name
        self.cache = base.cache
        self._client = base._client
        self._translate = base._translate
        self._stop = threading.Event()
        self._count = _Counter(0)

    def _ask(self, prompt: Prompt) -> CallResult:
        if self._stop.is_set():
            raise _Cancelled()
        cfg = self.config
        messages = [{"role": "user", "content": prompt.text}]
        params: dict[str, Any] = {"temperature": cfg.temperature, "top_p": cfg.top_p, "max_tokens": cfg.max_tokens}
        if prompt.json_mode and cfg.json_mode:
            params["response_format"] = {"type": "json_object"}
        key = cache_key(kind="chat", endpoint=cfg.base_url, model=cfg.chat_model, messages=messages,
                        params=params, sample=prompt.sample)
        reply = self.cache.get(key) if self.cache is not None else None
        hit = reply is not None
        if reply is None:
            try:
                resp = self._client.chat.completions.create(model=cfg.chat_model, messages=messages, **params)
            except Exception as err:  # noqa: BLE001 - every failure becomes a status
                self._count.add(False)
                e: JudgeCallError = self._translate(err)
                return CallResult("", e.status, e.message)
            choice = resp.choices[0] if resp.choices else None
            msg = choice.message if choice is not None else None
            usage = resp.usage.model_dump() if getattr(resp, "usage", None) is not None else {}
            reply = {"content": (msg.content if msg is not None else None) or "",
                     "refusal": getattr(msg, "refusal", None) if msg is not None else None,
                     "finish_reason": choice.finish_reason if choice is not None else None, "usage": usage}
            if self.cache is not None:
                self.cache.put(key, "chat", reply)
        self._count.add(hit, reply.get("usage"))
        if reply.get("refusal") or reply.get("finish_reason") == "content_filter":
            refused = str(reply.get("refusal") or "content filter")[:200]
            return CallResult("", "refusal", f"the judge refused: {refused}", hit)
        content = str(reply.get("content") or "")
        if not content.strip():
            return CallResult("", "empty_reply", CALL_STATUSES["empty_reply"], hit)
        return CallResult(content, "ok", "", hit)

    def _one(self, prompt: Prompt) -> CallResult:
        try:
            return self._ask(prompt)
        except _Cancelled:
            return CallResult("", "cancelled", CALL_STATUSES["cancelled"])

    def ask(self, prompts: Sequence[Prompt], progress: ProgressCallback | None = None,
            cancel: CancelCheck | None = None) -> list[CallResult]:
        """One :class:`CallResult` per prompt, in order.  ``progress`` is called about 5 times a
        second from this thread; ``cancel()`` is polled as often (prompts not yet asked get
        ``cancelled``; replies already paid for stay in the cache)."""
        self._stop.clear()
        self._count = _Counter(len(prompts))
        out: list[CallResult | None] = [None] * len(prompts)
        with ThreadPoolExecutor(max_workers=self.config.concurrency, thread_name_prefix="judge-text") as pool:
            futures = {pool.submit(self._one, p): n for n, p in enumerate(prompts)}
            pending = set(futures)
            try:
                while pending:
                    done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
                    for f in done:
                        out[futures[f]] = f.result()
                    if cancel is not None and not self._stop.is_set() and cancel():
                        self._stop.set()
                    if progress is not None:
                        progress(self._count.snapshot())
            except BaseException:
                self._stop.set()
                for f in pending:
                    f.cancel()
                raise
        with self._count.lock:  # cancelled prompts were planned but never asked
            self._count.total = self._count.done
        if progress is not None:
            progress(self._count.snapshot())
        return [r if r is not None else CallResult("", "cancelled", CALL_STATUSES["cancelled"]) for r in out]

    @property
    def last_progress(self) -> JudgeProgress:
        """Counters of the last :meth:`ask`: calls done, cache hits, tokens, seconds."""
        return self._count.snapshot()
