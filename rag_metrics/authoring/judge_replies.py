"""Tolerant reading of judge replies: a JSON value anywhere in the text, or UMBRELA's
``##final score: N``.

Local models wrap JSON in prose, Markdown fences or HTML, return a list where an object was
asked for, or reply with the grade alone.  These readers take what is usable and return ``None``
otherwise; the caller turns ``None`` into a per-item status (never a made-up value).
"""
from __future__ import annotations

import html
import json
import re
from typing import Any

from rag_metrics.io.files import loads_json

__all__ = ["MAX_REPLY_CHARS", "find_json", "parse_grade", "parse_question", "plain_text"]

#: Replies are read up to this many characters (a runaway reply of megabytes is cut, not scanned).
MAX_REPLY_CHARS = 100_000
_MAX_STARTS = 200            # JSON start positions tried in one reply
_TAG = re.compile(r"<[^>]{0,500}>")
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
#: UMBRELA's answer line; also "Final score: 2", "**Final Score:** 2", "final score = 2".
_FINAL = re.compile(r"#*\s*\**\s*final\s+score\s*\**\s*[:=]\s*\**\s*([0-9]+(?:\.0+)?)\b", re.IGNORECASE)
_GRADE_KEYS = ("final score", "final_score", "score", "grade", "relevance", "relevance_score", "label", "o")
_QUESTION_KEYS = ("question", "query", "q")


def plain_text(reply: str) -> str:
    """The reply with HTML tags removed and entities decoded; a reply longer than
    :data:`MAX_REPLY_CHARS` keeps its first and last halves of that size (the grade line is last)."""
    half = MAX_REPLY_CHARS // 2
    text = reply if len(reply) <= MAX_REPLY_CHARS else reply[:half] + "\n" + reply[-half:]
    if "<" in text and ">" in text:
        text = html.unescape(_TAG.sub(" ", text))
    return text


def find_json(reply: str) -> Any | None:
    """The first JSON object or list in ``reply`` (whole reply, a fenced block, or embedded in
    prose), or ``None``.  Objects are preferred to lists found earlier only when the list holds
    no object."""
    text = plain_text(reply).strip()
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    found_list: Any | None = None
    for cand in candidates:
        cand = cand.strip()
        value, msg, _ = loads_json(cand)  # the safe parser: deep nesting and huge numbers are messages
        if msg is None and isinstance(value, (dict, list)):
            return value
        starts = [m.start() for m in re.finditer(r"[\[{]", cand)][:_MAX_STARTS]
        for i in starts:
            try:
                value, _ = decoder.raw_decode(cand, i)
            except (ValueError, RecursionError):
                continue
            if isinstance(value, dict):
                return value
            if isinstance(value, list) and found_list is None:
                found_list = value
    return found_list


def _as_grade(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and float(value).is_integer() and 0 <= int(value) <= 3:
        return int(value)
    if isinstance(value, str):
        m = re.fullmatch(r"\s*([0-3])(?:\.0+)?\s*", value)
        return int(m.group(1)) if m else None
    return None


def _grade_in(obj: Any) -> int | None:
    if isinstance(obj, dict):
        lowered = {str(k).strip().lower(): v for k, v in obj.items()}
        for k in _GRADE_KEYS:
            if k in lowered:
                g = _as_grade(lowered[k])
                if g is not None:
                    return g
        return None
    if isinstance(obj, list):
        for x in obj:
            g = _grade_in(x) if isinstance(x, (dict, list)) else _as_grade(x)
            if g is not None:
                return g
    return None


def parse_grade(reply: str) -> int | None:
    """A relevance grade 0-3 from a judge reply, or ``None`` when none can be read.

    In order: the last ``##final score: N`` (UMBRELA asks for it after the intermediate scores);
    a JSON object (anywhere) with ``score``/``grade``/``relevance``/``final score``; a JSON list
    holding one; a reply that is only a digit.  A number outside 0-3 is not a grade.

    >>> parse_grade("M: 2, T: 1\\n##final score: 2")
    2
    >>> parse_grade('Sure! {"score": 3, "why": "exact answer"}')
    3
    >>> parse_grade("I think it is relevant.") is None
    True
    """
    text = plain_text(reply)
    finals = _FINAL.findall(text)
    if finals:
        return _as_grade(finals[-1])
    value = find_json(text)
    if value is not None:
        g = _grade_in(value)
        if g is not None:
            return g
    return _as_grade(text.strip().strip(".*#'\"`"))


def _clean_question(s: str) -> str | None:
    s = re.sub(r"^\s*(?:\*\*)?(?:question|q)\s*\d*\s*[:.)-]\s*(?:\*\*)?\s*", "", s.strip(), flags=re.IGNORECASE)
    s = s.strip().strip("\"'`*").strip()
    s = re.sub(r"\s+", " ", s)
    if not s or len(s) > 500 or len(s.split()) < 2:
        return None
    return s


def parse_question(reply: str) -> str | None:
    """A drafted question from a judge reply, or ``None``.

    A JSON object with ``question`` (anywhere in the reply, or the first such object of a list;
    a list of strings gives its first); else the first line that ends with ``?``.  Questions of
    more than 500 characters or a single word are refused.

    >>> parse_question('Here you go: {"question": "How long is the trial?"}')
    'How long is the trial?'
    >>> parse_question("Question: What does Plus cost per month?")
    'What does Plus cost per month?'
    """
    text = plain_text(reply)
    value = find_json(text)
    items = value if isinstance(value, list) else [value] if value is not None else []
    for x in items:
        if isinstance(x, dict):
            lowered = {str(k).strip().lower(): v for k, v in x.items()}
            for k in _QUESTION_KEYS:
                if isinstance(lowered.get(k), str):
                    q = _clean_question(lowered[k])
                    if q:
                        return q
        elif isinstance(x, str):
            q = _clean_question(x)
            if q:
                return q
    if value is not None:
        return None
    for line in text.splitlines():
        if line.strip().endswith("?"):
            q = _clean_question(line)
            if q:
                return q
    return None
