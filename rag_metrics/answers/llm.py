"""LLM judge through any OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp server, OpenAI,
Azure): faithfulness and answer relevancy with ragas 0.4.3's prompts and arithmetic.

Over 500 lines: the judge's client, its retry and budget rules and the ragas prompt flow are one
protocol with the endpoint.

faithfulness (ragas ``metrics.collections.Faithfulness``)
    1. Ask for the answer's standalone statements given the question (:data:`~.prompts.STATEMENTS`).
       No statement: status ``no_statements`` (ragas: NaN).
    2. Ask for a verdict on each statement against the contexts joined with ``"\\n"``
       (:data:`~.prompts.VERDICTS_NLI`).
    3. score = (number of verdicts equal to 1) / (number of verdicts returned).
answer relevancy (ragas ``metrics.collections.AnswerRelevancy``, ``strictness`` = N, default 3)
    1. Ask N times for a question generated from the answer alone and a noncommittal flag
       (:data:`~.prompts.QUESTION_GEN`); empty questions are dropped (none left: score 0).
    2. Embed the question and the generated questions with the endpoint's embeddings model.
    3. score = mean cosine(question, generated question), times 0 when **every** generated question
       is flagged noncommittal.

Every call goes through :class:`~.llm_cache.JudgeCache` keyed by (endpoint, model, request, sample
number).  Calls run in a thread pool (``concurrency``); the openai client retries connection errors,
429 and 5xx (``max_retries``) with its own backoff, and gives up after ``timeout`` seconds per
request.  Failures become a per-item status (``unreachable``, ``timeout``, ``http_error``,
``invalid_json``, ``refusal``, ``cancelled``); the other items are still scored.
"""
from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import numpy as np

from rag_metrics.answers.llm_cache import (
    JudgeCache,
    cache_key,
    default_judge_cache_path,
)
from rag_metrics.answers.types import (
    SUPPORTED,
    UNSUPPORTED,
    AnswerItem,
    CancelCheck,
    GeneratedQuestion,
    ItemJudgement,
    JudgeProgress,
    MetricScore,
    ProgressCallback,
    StatementVerdict,
)
from rag_metrics.config import variable
from rag_metrics.errors import InputError

__all__ = ["DEFAULT_KEY_ENV", "LLM_METRICS", "JudgeCallError", "JudgeConfig", "LLMJudge"]

#: Environment variable read for the API key unless the config names another.
DEFAULT_KEY_ENV = "RAG_METRICS_JUDGE_KEY"
LLM_METRICS = ("faithfulness", "answer_relevancy")


@dataclass(frozen=True)
class JudgeConfig:
    """Settings of an OpenAI-compatible judge endpoint (validated on creation; holds no secret).

    Parameters
    ----------
    base_url : str
        E.g. ``http://localhost:11434/v1`` (Ollama) or ``https://api.openai.com/v1``.
    chat_model : str
        Chat model for statements, verdicts and question generation.
    embed_model : str or None
        Embeddings model for answer relevancy; ``None`` computes faithfulness only.
    api_key_env : str
        Name of the environment variable holding the API key (may be unset for local servers).
    n_questions : int
        Questions generated per answer (ragas ``strictness``, default 3).
    concurrency : int
        Calls in flight at once.
    timeout : float
        Seconds per request before it counts as ``timeout``.
    max_retries : int
        Retries of the openai client (connection errors, 408, 409, 429, 5xx).
    temperature, top_p, max_tokens
        Sampling parameters (ragas ``InstructorModelArgs`` defaults: 0.01, 0.1, 1024).
    json_mode : bool
        Send ``response_format={"type": "json_object"}`` (as ragas's instructor JSON mode does);
        turn it off for servers that reject the parameter.
    """

    base_url: str
    chat_model: str
    embed_model: str | None = None
    api_key_env: str = DEFAULT_KEY_ENV
    n_questions: int = 3
    concurrency: int = 4
    timeout: float = 60.0
    max_retries: int = 2
    temperature: float = 0.01
    top_p: float = 0.1
    max_tokens: int = 1024
    json_mode: bool = True

    def __post_init__(self) -> None:
        url = urlparse(str(self.base_url))
        if url.scheme not in ("http", "https") or not url.netloc:
            raise InputError(f"judge base URL must be http(s)://host[:port]/path, got {self.base_url!r}; "
                             "for Ollama use http://localhost:11434/v1")
        object.__setattr__(self, "base_url", str(self.base_url).rstrip("/"))
        if not str(self.chat_model).strip():
            raise InputError("judge chat model name is empty; give the model to ask, e.g. 'llama3.1:8b'")
        if self.embed_model is not None and not str(self.embed_model).strip():
            object.__setattr__(self, "embed_model", None)
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(self.api_key_env)):
            raise InputError(f"API key variable name {self.api_key_env!r} is not an environment variable "
                             "name; give the variable's name (e.g. OPENAI_API_KEY), never the key itself")
        for name, lo in (("n_questions", 1), ("concurrency", 1), ("max_retries", 0), ("max_tokens", 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise InputError(f"judge setting {name} must be an integer >= {lo}, got {v!r}")
        from rag_metrics.server.outbound import check_timeout

        object.__setattr__(self, "timeout", check_timeout(self.timeout, "judge timeout"))
        if self.max_retries > 5:
            raise InputError(f"judge setting max_retries must be at most 5, got {self.max_retries!r}")

    @property
    def name(self) -> str:
        return f"llm:{self.chat_model}@{self.base_url}"


class JudgeCallError(Exception):
    """A call that could not give a usable reply; ``status`` is a key of ``STATUSES``."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class _Cancelled(Exception):
    pass


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def _parse(content: str, model: Any) -> Any:
    text = content.strip()
    m = _FENCE.match(text)
    if m:
        text = m.group(1)
    if not text.startswith(("{", "[")):
        i = text.find("{")
        j = text.rfind("}")
        if i >= 0 and j > i:
            text = text[i:j + 1]
    return model.model_validate_json(text)


#: Longest reply content used (characters); a longer one is a per-item status, never parsed or cached.
MAX_REPLY_CHARS = 64 * 1024
#: Largest HTTP response read from the judge (bytes).
MAX_RESPONSE_BYTES = 16 * 1024 * 1024


def _usage(resp: Any) -> dict[str, Any]:
    usage = getattr(resp, "usage", None)
    try:
        out = usage.model_dump() if usage is not None and hasattr(usage, "model_dump") else {}
    except Exception:  # noqa: BLE001  a malformed usage block only loses the token counts
        return {}
    return {k: v for k, v in out.items() if isinstance(v, int) and not isinstance(v, bool)} if \
        isinstance(out, dict) else {}


def _chat_reply(resp: Any) -> dict[str, Any]:
    """The parts of a chat completion the judge keeps; JudgeCallError for anything that is not one
    (a JSON list, a string, HTML, no choices, a content that is not text or is over the cap)."""
    choices = getattr(resp, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise JudgeCallError("invalid_json", "the judge's reply is not a chat completion (no choices); check the "
                             "base URL (it usually ends in /v1)")
    choice = choices[0]
    msg = getattr(choice, "message", None)
    content = getattr(msg, "content", None) if msg is not None else None
    refusal = getattr(msg, "refusal", None) if msg is not None else None
    finish = getattr(choice, "finish_reason", None)
    if content is not None and not isinstance(content, str) or refusal is not None and not isinstance(refusal, str):
        raise JudgeCallError("invalid_json", "the judge's reply content is not text")
    if content is not None and len(content) > MAX_REPLY_CHARS:
        raise JudgeCallError("invalid_json", f"the judge's reply is {len(content):,} characters, over the "
                             f"{MAX_REPLY_CHARS:,} the lab reads; lower max_tokens")
    return {"content": content or "", "refusal": (refusal or None) and refusal[:500],
            "finish_reason": finish if isinstance(finish, str) else None, "usage": _usage(resp)}


def _embedding_vectors(resp: Any, n: int) -> list[list[float]]:
    """``n`` vectors of one length, every value a finite number; JudgeCallError otherwise."""
    data = getattr(resp, "data", None)
    if not isinstance(data, list):
        raise JudgeCallError("invalid_json", "the embeddings reply is not a list of embedding objects; check the "
                             "base URL and the embeddings model")
    if len(data) != n:
        raise JudgeCallError("invalid_json", f"the embeddings endpoint returned {len(data)} vectors for {n} texts")
    try:
        data = sorted(data, key=lambda d: int(d.index))
        vectors = [d.embedding for d in data]
    except (AttributeError, TypeError, ValueError):
        raise JudgeCallError("invalid_json", "the embeddings reply has items without index or embedding") from None
    out: list[list[float]] = []
    for v in vectors:
        if not isinstance(v, list) or not v or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in v):
            raise JudgeCallError("invalid_json", "the embeddings reply holds something that is not a vector of "
                                 "numbers")
        out.append([float(x) for x in v])
    if len({len(v) for v in out}) > 1:
        raise JudgeCallError("invalid_json", "the embeddings reply holds vectors of different lengths")
    return out


class _TransportError(Exception):
    """A transport failure of a judge call, in words (the cause of openai's connection error)."""


def _http_client(policy: Any, config: JudgeConfig) -> Any:
    """An httpx client whose every request goes through :func:`rag_metrics.server.outbound.request`: the
    outbound policy on the resolved address, the pinned connection, the total deadline, the size cap,
    no redirect followed, no compressed body."""
    import httpx

    from rag_metrics.server.outbound import OutboundError, request

    class PolicyTransport(httpx.BaseTransport):
        def handle_request(self, req: httpx.Request) -> httpx.Response:
            headers = {k: v for k, v in req.headers.items() if k.lower() not in ("accept-encoding", "host")}
            headers["Accept-Encoding"] = "identity"
            try:
                resp = request(req.method, str(req.url), req.read(), headers, policy=policy,
                               timeout=config.timeout, max_bytes=MAX_RESPONSE_BYTES)
            except OutboundError as e:
                if e.kind == "timeout":
                    raise httpx.ReadTimeout(e.message, request=req) from _TransportError(e.message)
                raise httpx.ConnectError(e.message, request=req) from _TransportError(e.message)
            keep = [(n, v) for n, v in resp.headers
                    if n not in ("content-length", "transfer-encoding", "content-encoding", "connection")]
            return httpx.Response(resp.status, headers=keep, content=resp.body, request=req)

    return httpx.Client(transport=PolicyTransport(), follow_redirects=False,
                        timeout=httpx.Timeout(config.timeout))


class _Stats:
    def __init__(self, total: int) -> None:
        self.lock = threading.Lock()
        self.total, self.done, self.hits, self.prompt, self.completion = total, 0, 0, 0, 0
        self.start = time.perf_counter()

    def add(self, hit: bool, usage: dict | None = None, planned: bool = True) -> None:
        with self.lock:
            self.done += 1
            if not planned:
                self.total += 1
            self.hits += int(hit)
            if usage and not hit:
                self.prompt += int(usage.get("prompt_tokens") or 0)
                self.completion += int(usage.get("completion_tokens") or 0)

    def skip(self, n: int) -> None:
        with self.lock:
            self.total -= n

    def snapshot(self) -> JudgeProgress:
        with self.lock:
            return JudgeProgress(self.done, max(self.total, self.done), self.hits, self.prompt,
                                 self.completion, time.perf_counter() - self.start)


class LLMJudge:
    """Faithfulness and answer relevancy through an OpenAI-compatible endpoint (module doc).

    Parameters
    ----------
    config : JudgeConfig
    api_key : str, optional
        Overrides the environment variable (e.g. from Streamlit secrets); never stored or exported.
    cache : JudgeCache, None or False
        Default: the on-disk cache (:func:`~.llm_cache.default_judge_cache_path`); ``False``: none.
    client : openai.OpenAI, optional
        A ready client (tests); by default one is built from the config.
    """

    def __init__(self, config: JudgeConfig, api_key: str | None = None, cache: Any = None,
                 client: Any = None, policy: Any = None) -> None:
        from rag_metrics.server.outbound import OutboundPolicy

        self.config = config
        self.name = config.name
        self.metrics = LLM_METRICS if config.embed_model else LLM_METRICS[:1]
        self.policy = policy if policy is not None else OutboundPolicy.open()
        if self.policy.class_mode:  # a refused judge fails here, before any call (PolicyError)
            from rag_metrics.server.outbound import OutboundError

            try:
                self.policy.check_url(config.base_url)
            except OutboundError:
                pass  # allowed but not resolvable now: every call says so, per item
        if client is None:
            try:
                import openai
            except ImportError:
                raise InputError("the LLM judge needs the openai client; install it with `pip install openai` "
                                 "(or `pip install rag-metrics[answers]`)") from None

            if self.policy.class_mode:
                # class mode: no variable of the server is read, and a key goes only to the operator's judge
                key = (api_key if self.policy.may_send_judge_key(config.base_url) else None) or "not-needed"
            else:
                key = api_key or variable(config.api_key_env) or "not-needed"
            client = openai.OpenAI(base_url=config.base_url, api_key=key, timeout=config.timeout,
                                   max_retries=config.max_retries, http_client=_http_client(self.policy, config))
        self.cache = None if cache is False else (cache if cache is not None
                                                  else JudgeCache(default_judge_cache_path()))
        self._client = client
        self._stop = threading.Event()
        self._stats = _Stats(0)

    # ---- calls -------------------------------------------------------------------------------
    def _check(self) -> None:
        if self._stop.is_set():
            raise _Cancelled()

    def _translate(self, err: Exception) -> JudgeCallError:
        import openai

        if not isinstance(err, openai.OpenAIError) or isinstance(err, openai.APIResponseValidationError):
            # the reply could not be read as the object asked for (a JSON list, HTML, a bad vector)
            return JudgeCallError("invalid_json", f"the judge's reply from {self.config.base_url} is not an "
                                  "OpenAI-compatible reply object; check the base URL (it usually ends in /v1)")
        if isinstance(err, openai.APITimeoutError):
            return JudgeCallError("timeout", f"no reply within {self.config.timeout:g} s from "
                                  f"{self.config.base_url} (after {self.config.max_retries} retries); "
                                  "raise the timeout or lower the concurrency")
        if isinstance(err, openai.APIConnectionError):
            cause = err.__cause__
            words = str(cause) if cause is not None and isinstance(cause.__cause__, _TransportError) \
                else type(cause or err).__name__
            return JudgeCallError("unreachable", f"cannot connect to {self.config.base_url} "
                                  f"({words}); is the server running "
                                  "and the base URL right (it usually ends in /v1)?")
        if isinstance(err, openai.APIStatusError):
            if 300 <= err.status_code < 400:
                return JudgeCallError("http_error", f"HTTP {err.status_code} from {self.config.base_url} "
                                      "(redirects are not followed); give the final base URL")
            body = str(getattr(err, "message", "") or err)[:200] if self.policy.echo_bodies else \
                "reply not shown in class mode"
            hint = " (the server may not support response_format: turn JSON mode off)" \
                if err.status_code == 400 and self.config.json_mode else ""
            if err.status_code in (401, 403):
                hint = f" (check the API key in ${self.config.api_key_env})"
            if err.status_code == 404:
                hint = " (check the model name and the base URL)"
            return JudgeCallError("http_error", f"HTTP {err.status_code} from {self.config.base_url}: "
                                  f"{body}{hint}")
        return JudgeCallError("http_error", f"{type(err).__name__}: {str(err)[:200]}")

    def _chat(self, prompt: str, model: Any, sample: int = 0) -> Any:
        """One structured call: cached reply, else ask (one re-ask on a reply that is not valid
        JSON, as instructor does); returns the validated output model."""
        cfg = self.config
        messages: list[dict[str, str]] = [{"role": "user", "content": prompt}]
        last_error = ""
        for attempt in range(2):
            self._check()
            params: dict[str, Any] = {"temperature": cfg.temperature, "top_p": cfg.top_p,
                                      "max_tokens": cfg.max_tokens}
            if cfg.json_mode:
                params["response_format"] = {"type": "json_object"}
            key = cache_key(kind="chat", endpoint=cfg.base_url, model=cfg.chat_model, messages=messages,
                            params=params, sample=sample)
            reply = self.cache.get(key) if self.cache is not None else None
            hit = reply is not None
            if reply is None:
                try:
                    resp = self._client.chat.completions.create(model=cfg.chat_model, messages=messages,
                                                                **params)
                except Exception as err:  # noqa: BLE001 - every failure becomes a status
                    self._stats.add(False, planned=attempt == 0)
                    raise self._translate(err) from None
                try:
                    reply = _chat_reply(resp)
                except JudgeCallError:
                    self._stats.add(False, planned=attempt == 0)
                    raise
                if self.cache is not None:
                    self.cache.put(key, "chat", reply)
            self._stats.add(hit, reply.get("usage"), planned=attempt == 0)
            if reply.get("refusal") or reply.get("finish_reason") == "content_filter":
                refused = str(reply.get("refusal") or "content filter")[:200]
                raise JudgeCallError("refusal", f"the judge refused: {refused}")
            try:
                return _parse(reply["content"], model)
            except Exception as err:  # noqa: BLE001 - pydantic or JSON errors
                last_error = str(err).splitlines()[0][:200]
                messages = messages[:1] + [
                    {"role": "assistant", "content": reply["content"]},
                    {"role": "user", "content": "The reply above is not valid JSON for the schema "
                     f"({last_error}). Reply again with only the JSON object."}]
        snippet = (reply or {}).get("content", "")[:120].replace("\n", " ")
        if reply and reply.get("finish_reason") == "length":
            last_error += f"; the reply was cut at max_tokens={cfg.max_tokens}: raise it"
        raise JudgeCallError("invalid_json", f"the judge's reply is not the JSON asked for ({last_error}); "
                             f"reply began: {snippet!r}")

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        cfg = self.config
        keys = [cache_key(kind="embedding", endpoint=cfg.base_url, model=cfg.embed_model, text=t)
                for t in texts]
        found = {k: self.cache.get(k) for k in keys} if self.cache is not None else {}
        missing = [t for t, k in zip(texts, keys) if found.get(k) is None]
        self._check()
        if missing:
            todo = list(dict.fromkeys(missing))
            try:
                resp = self._client.embeddings.create(model=cfg.embed_model, input=todo)
            except Exception as err:  # noqa: BLE001
                self._stats.add(False)
                raise self._translate(err) from None
            try:
                vectors = _embedding_vectors(resp, len(todo))
            except JudgeCallError:
                self._stats.add(False)
                raise
            for t, vec in zip(todo, vectors):
                k = cache_key(kind="embedding", endpoint=cfg.base_url, model=cfg.embed_model, text=t)
                found[k] = vec
                if self.cache is not None:
                    self.cache.put(k, "embedding", vec)
            self._stats.add(False, _usage(resp))
        else:
            self._stats.add(True)
        return np.asarray([found[k] for k in keys], dtype=np.float64)

    # ---- metrics -----------------------------------------------------------------------------
    def faithfulness(self, it: AnswerItem) -> MetricScore:
        from rag_metrics.answers.prompts import (
            STATEMENTS,
            VERDICTS_NLI,
            NLIStatementInput,
            NLIStatementOutput,
            StatementGeneratorInput,
            StatementGeneratorOutput,
            render,
        )

        if not it.answer.strip():
            self._stats.skip(2)
            return MetricScore.failed("empty_answer")
        if not it.question.strip():
            self._stats.skip(2)
            return MetricScore.failed("missing_question")
        if not [c for c in it.contexts if c.strip()]:
            self._stats.skip(2)
            return MetricScore.failed("missing_contexts")
        out = self._chat(render(STATEMENTS, StatementGeneratorInput(question=it.question, answer=it.answer)),
                         StatementGeneratorOutput)
        statements = list(out.statements)
        if not statements:
            self._stats.skip(1)
            return MetricScore.failed("no_statements", "the judge found no statement in the answer "
                                      "(ragas gives NaN here)")
        context = "\n".join(it.contexts)
        verdicts = self._chat(render(VERDICTS_NLI, NLIStatementInput(context=context, statements=statements)),
                              NLIStatementOutput).statements
        if not verdicts:
            return MetricScore.failed("no_statements", "the judge returned no verdict (ragas gives NaN here)")
        supported = sum(1 if v.verdict else 0 for v in verdicts)
        value = supported / len(verdicts)
        verdict_rows = tuple(StatementVerdict(v.statement, SUPPORTED if v.verdict else UNSUPPORTED,
                                              reason=v.reason) for v in verdicts)
        note = "" if len(verdicts) == len(statements) else \
            (f" (the judge returned {len(verdicts)} verdicts for {len(statements)} statements; "
             "ragas divides by the verdicts)")
        return MetricScore(value, statements=verdict_rows,
                           arithmetic=f"{supported} of {len(verdicts)} statements supported = "
                                      f"{supported}/{len(verdicts)} = {value:.3f}{note}")

    def answer_relevancy(self, it: AnswerItem) -> MetricScore:
        from rag_metrics.answers.prompts import (
            QUESTION_GEN,
            AnswerRelevanceInput,
            AnswerRelevanceOutput,
            render,
        )

        n = self.config.n_questions
        if not it.answer.strip():
            self._stats.skip(n + 1)
            return MetricScore.failed("empty_answer")
        if not it.question.strip():
            self._stats.skip(n + 1)
            return MetricScore.failed("missing_question")
        prompt = render(QUESTION_GEN, AnswerRelevanceInput(response=it.answer))
        gen: list[tuple[str, int]] = []
        for i in range(n):
            r = self._chat(prompt, AnswerRelevanceOutput, sample=i)
            if r.question:
                gen.append((r.question, int(r.noncommittal)))
        if not gen:
            self._stats.skip(1)
            return MetricScore(0.0, arithmetic=f"no question generated in {n} tries: 0 (ragas's definition)")
        all_noncommittal = bool(np.all([f for _, f in gen]))
        vecs = self._embed([it.question] + [q for q, _ in gen])
        qv, gv = vecs[:1], vecs[1:]
        norm = np.linalg.norm(gv, axis=1) * np.linalg.norm(qv, axis=1)
        cos = (gv @ qv.T).reshape(-1) / norm
        value = float(cos.mean() * int(not all_noncommittal))
        questions = tuple(GeneratedQuestion(q, bool(f), float(c)) for (q, f), c in zip(gen, cos))
        arith = (f"mean cosine of {len(gen)} generated question(s) = (" + " + ".join(f"{c:.3f}" for c in cos)
                 + f") / {len(gen)} = {float(cos.mean()):.3f}")
        if all_noncommittal:
            arith += "; every generated question is flagged noncommittal, so the score is 0"
        if math.isnan(value):
            return MetricScore.failed("invalid_json", "the embeddings endpoint returned a zero vector",
                                      questions=questions)
        return MetricScore(value, questions=questions, arithmetic=arith)

    # ---- the Judge protocol ------------------------------------------------------------------
    def _run_one(self, it: AnswerItem, metric: str) -> MetricScore:
        fn: Callable[[AnswerItem], MetricScore] = getattr(self, metric)
        try:
            return fn(it)
        except JudgeCallError as err:
            return MetricScore.failed(err.status, err.message)
        except _Cancelled:
            return MetricScore.failed("cancelled")

    def planned_calls(self, n_items: int) -> int:
        per = 2 + ((self.config.n_questions + 1) if "answer_relevancy" in self.metrics else 0)
        return n_items * per

    def judge(self, items: Sequence[AnswerItem], progress: ProgressCallback | None = None,
              cancel: CancelCheck | None = None) -> list[ItemJudgement]:
        """Score every item; ``progress`` is called from this thread about 5 times a second, and
        ``cancel()`` is polled as often (pending items get status ``cancelled``)."""
        self._stop.clear()
        self._stats = _Stats(self.planned_calls(len(items)))
        results: dict[tuple[int, str], MetricScore] = {}
        with ThreadPoolExecutor(max_workers=self.config.concurrency, thread_name_prefix="judge") as pool:
            futures = {pool.submit(self._run_one, it, m): (i, m)
                       for i, it in enumerate(items) for m in self.metrics}
            pending = set(futures)
            try:
                while pending:
                    done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
                    for f in done:
                        results[futures[f]] = f.result()
                    if cancel is not None and not self._stop.is_set() and cancel():
                        self._stop.set()
                    if progress is not None:
                        progress(self._stats.snapshot())
            except BaseException:
                # interrupted (Ctrl-C, a Streamlit rerun or stop): stop the workers before the pool
                # waits for them; replies already paid for are in the cache
                self._stop.set()
                for f in pending:
                    f.cancel()
                raise
        with self._stats.lock:  # calls planned but never made (an item failed early) are not pending
            self._stats.total = self._stats.done
        if progress is not None:
            progress(self._stats.snapshot())
        return [ItemJudgement(it.id, {m: results[(i, m)] for m in self.metrics}) for i, it in enumerate(items)]

    @property
    def last_progress(self) -> JudgeProgress:
        """Counters of the last :meth:`judge` run."""
        return self._stats.snapshot()
