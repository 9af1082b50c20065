"""Grading: compare what the harness reported with the expected values.  Never executes code.

:func:`grade` takes the harness's JSON as the browser sent it, which may be anything (a hostile
browser): wrong types, huge strings, NaN, missing ids.  Each problem becomes a failed check with a
plain message; nothing raises.  :func:`browser_payload` builds what the browser receives: the
harness, the checks' inputs and the limits, never an expected value or a reference solution.
"""
from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rag_metrics.exercises.catalogue import LANGS, exercise
from rag_metrics.exercises.checks import Check
from rag_metrics.exercises.harness_source import MAX_OUTPUT_CHARS
from rag_metrics.exercises.mistakes import MISTAKES, close, diagnose
from rag_metrics.types import OUT_OF_SCOPE

__all__ = ["CheckResult", "Verdict", "compare_values", "grade", "browser_payload", "printed", "HARNESS", "LIMITS",
           "MAX_REPORT_CHARS", "SHOWN_OUTPUT_CHARS"]


def _harness_text() -> str:
    from importlib import resources

    return resources.files("rag_metrics.exercises").joinpath("harness_source.py").read_text(encoding="utf-8")


#: The harness's source text (runs in Pyodide, and in a ``python -I`` process for the CLI).
HARNESS: str = _harness_text()
#: The limits the runner enforces (the browser's watchdog, the CLI's subprocess).
LIMITS = {"timeout_s": 10, "max_output_chars": MAX_OUTPUT_CHARS}
#: A report longer than this is refused unread.
MAX_REPORT_CHARS = 2_000_000
_MAX_SHOWN = 300  # characters of a student's value shown in a message
#: At most this many characters of what the student's code printed are kept in a verdict (and shown).
SHOWN_OUTPUT_CHARS = 4000
#: The mark the harness puts after output it cut at its own cap (harness_source._CappedOutput).
_HARNESS_CUT = "\n[output cut]"


def _lang(lang: str) -> str:
    return lang if lang in LANGS else "en"


@dataclass(frozen=True)
class CheckResult:
    """One check's outcome; ``message`` and ``hint`` are in the language asked for."""

    id: str
    label: str
    passed: bool
    expected: Any
    got: Any
    message: str
    input: Mapping[str, Any] = field(default_factory=dict)
    hint: str | None = None
    mistake: str | None = None


@dataclass(frozen=True)
class Verdict:
    """The outcome of one run of an exercise's checks.

    ``dashboard``: for a finished exercise (every check passed) whose check on the current data
    is a mean, ``{"metric", "student", "dashboard", "questions"}``: the student's mean beside the
    Dashboard's ("As in the lesson") for the same questions.
    """

    passed: int
    total: int
    results: tuple[CheckResult, ...]
    first_failure: CheckResult | None
    error: str | None
    dashboard: Mapping[str, Any] | None = None
    #: What the student's code printed (``print()``, stdout and stderr), at most :data:`SHOWN_OUTPUT_CHARS`
    #: characters; ``stdout_cut``: there was more (cut here, or by the harness's own cap).
    stdout: str = ""
    stdout_cut: bool = False

    def headline(self, lang: str = "en") -> str:
        if self.error is not None:   # nothing was checked: no "Passed 0 of N"
            return "Ikke tjekket" if _lang(lang) == "da" else "Not checked"
        if _lang(lang) == "da":
            return f"Bestod {self.passed} af {self.total} tjek"
        return f"Passed {self.passed} of {self.total} checks"

    @property
    def all_passed(self) -> bool:
        return self.total > 0 and self.passed == self.total

    def to_dict(self, lang: str = "en") -> dict[str, Any]:
        """JSON-safe, for the page and for storing an attempt: per check only id, label, passed and
        message; the expected value only of the first failing check (what the student is shown)."""
        f = self.first_failure
        first = None if f is None else {
            "id": f.id, "label": f.label, "input": _jsonsafe(dict(f.input)), "expected": _jsonsafe(f.expected),
            "got": _jsonsafe(f.got), "message": f.message, "hint": f.hint, "mistake": f.mistake}
        return {"headline": self.headline(lang), "passed": self.passed, "total": self.total, "error": self.error,
                "results": [{"id": r.id, "label": r.label, "passed": r.passed, "message": r.message}
                            for r in self.results],
                "first_failure": first, "dashboard": None if self.dashboard is None else dict(self.dashboard),
                "stdout": self.stdout, "stdout_cut": self.stdout_cut}


def browser_payload(name: str, checks: Sequence[Check], lang: str = "en") -> dict[str, Any]:
    """The JSON-safe payload the browser runs: exercise, function, harness, checks' inputs, limits.

    Never an expected value, a hint tied to the answer or a reference solution."""
    ex = exercise(name)
    return {"exercise": ex.name, "function": ex.name, "lang": _lang(lang), "harness": HARNESS,
            "checks": [{"id": c.id, "args": c.args} for c in checks], "limits": dict(LIMITS)}


# ---- messages -------------------------------------------------------------------------------------
_TEXT = {
    "syntax": ("Your code has a syntax error on line {line}: {msg}. Python stopped before running anything.",
               "Din kode har en syntaksfejl i linje {line}: {msg}. Python stoppede, før noget blev kørt."),
    "syntax_noline": ("Your code has a syntax error: {msg}.", "Din kode har en syntaksfejl: {msg}."),
    "exception": ("Your code stopped on line {line} with {msg}.", "Din kode stoppede i linje {line} med {msg}."),
    "exception_noline": ("Your code stopped with {msg}.", "Din kode stoppede med {msg}."),
    "missing": ("Your code defines {msg}: write `def {fn}(...)` with exactly that name.",
                "Din kode definerer {msg}: skriv `def {fn}(...)` med præcis det navn."),
    "bad_report": ("The result of the run could not be read ({msg}); run the checks again.",
                   "Resultatet af kørslen kunne ikke læses ({msg}); kør tjekkene igen."),
    "no_result": ("No result came back for this check.", "Der kom intet resultat for dette tjek."),
    "ok": ("Correct.", "Rigtigt."),
    "expected": ("Expected {exp}, got {got}.", "Forventet {exp}, fik {got}."),
    "not_number": ("Expected a number ({exp}), got {got}.", "Forventede et tal ({exp}), fik {got}."),
    "not_dict": ("Expected a dict {{category: {{'hits', 'count', 'hit_rate'}}}}, got {got}.",
                 "Forventede en dict {{kategori: {{'hits', 'count', 'hit_rate'}}}}, fik {got}."),
    "cat_missing": ("Category {cat!r} is missing from your result.", "Kategorien {cat!r} mangler i dit resultat."),
    "cat_extra": ("Your result has a category {cat!r} that the data does not have.",
                  "Dit resultat har en kategori {cat!r}, som data ikke har."),
    "cat_value": ("Category {cat!r}: expected {exp}, got {got}.", "Kategori {cat!r}: forventet {exp}, fik {got}."),
    "not_list": ("Expected a list of failures (dicts), got {got}.",
                 "Forventede en liste af fejl (dicts), fik {got}."),
    "fail_missing": ("Question {q!r} should be listed as a failure and is not.",
                     "Spørgsmålet {q!r} skulle stå som fejl og gør det ikke."),
    "fail_extra": ("Question {q!r} is listed, but it has a relevant chunk in the top k.",
                   "Spørgsmålet {q!r} står på listen, men det har en relevant chunk i top k."),
    "fail_order": ("The failures are right but not in the golden set's order.",
                   "Fejlene er rigtige, men ikke i guldsættets rækkefølge."),
    "fail_field": ("Question {q!r}: {field} should be {exp}, got {got}.",
                   "Spørgsmålet {q!r}: {field} skulle være {exp}, fik {got}."),
    # the generic comparison (compare_values): where = the place in the value, e.g. [2]["score"]
    "at_expected": ("At {where}: expected {exp}, got {got}.", "Ved {where}: forventet {exp}, fik {got}."),
    "length": ("Expected a list of {n} items, got {m}: {got}.", "Forventede en liste med {n} elementer, fik {m}: "
               "{got}."),
    "at_length": ("At {where}: expected a list of {n} items, got {m}.",
                  "Ved {where}: forventede en liste med {n} elementer, fik {m}."),
    "key_missing": ("Key {name} is missing{at}.", "Nøglen {name} mangler{at}."),
    "key_extra": ("Key {name} is not expected{at}.", "Nøglen {name} er ikke forventet{at}."),
    "item_missing": ("{exp} is missing from your list{at} (the order does not matter).",
                     "{exp} mangler i din liste{at} (rækkefølgen er ligegyldig)."),
    "item_extra": ("{got} in your list{at} is not expected (the order does not matter).",
                   "{got} i din liste{at} er ikke forventet (rækkefølgen er ligegyldig)."),
    "at": (" at {where}", " ved {where}"),
}

_HINTS = {
    "unknown": ("A question without a `category` key belongs to 'unknown': `item.get('category', 'unknown')`.",
                "Et spørgsmål uden nøglen `category` hører til 'unknown': `item.get('category', 'unknown')`."),
    "oos_listed": ("An out-of-scope question has no relevant chunk, so it is always a failure: list it too.",
                   "Et spørgsmål uden for emnet har ingen relevant chunk, så det er altid en fejl: tag det med."),
    "oos_counts": ("Out-of-scope questions count too: each is a miss in its own category.",
                   "Spørgsmål uden for emnet tæller også med: hvert er en bom i sin egen kategori."),
    "cut_k": ("Keep only the first k retrieved ids: `retrieved_ids[:k]`.",
              "Behold kun de første k hentede id'er: `retrieved_ids[:k]`."),
    "top_score": ("`top_score` is the score of the best result, `results[0]['score']`.",
                  "`top_score` er scoren for det bedste resultat, `results[0]['score']`."),
    "zero_division": ("Division by zero: a log2 of 1 is 0 (positions counted from 0 need `log2(i + 2)`), or a "
                      "list you divide by is empty (guard it with `if ...:`).",
                      "Division med nul: log2 af 1 er 0 (positioner talt fra 0 kræver `log2(i + 2)`), eller en "
                      "liste, du dividerer med, er tom (beskyt den med `if ...:`)."),
}


def _say(key: str, lang: str, **kw: Any) -> str:
    en, da = _TEXT[key]
    return (da if lang == "da" else en).format(**kw)


def _hint(key: str, lang: str) -> str:
    en, da = _HINTS[key]
    return da if lang == "da" else en


def _short(value: Any) -> str:
    if isinstance(value, str):
        value = value[:_MAX_SHOWN + 1]
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= _MAX_SHOWN else text[:_MAX_SHOWN] + "…"


def _fmt(v: Any) -> str:
    """A value as the student's Python shows it (``None``, ``True``; not JSON's ``null``, ``true``)."""
    if v is None or isinstance(v, bool):
        return repr(v)
    if isinstance(v, float):
        return f"{v:.6g}"
    return _short(v)


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        f = float(v)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


def _clean(text: Any, limit: int = 300) -> str:
    s = str(text)[:limit + 1] if text is not None else ""
    s = "".join(ch if ch.isprintable() else " " for ch in s)
    return s if len(s) <= limit else s[:limit] + "…"


def _line(err: Mapping[str, Any]) -> int | None:
    line = err.get("line")
    return line if isinstance(line, int) and not isinstance(line, bool) and 0 < line < 10**7 else None


def _error_text(err: Any, fn: str, lang: str) -> str:
    """Plain words for the harness's ``{"kind", "line", "message"}``."""
    if not isinstance(err, Mapping):
        return _say("bad_report", lang, msg="an error that is not a record")
    kind, line, msg = err.get("kind"), _line(err), _clean(err.get("message"))
    if kind == "syntax":
        return _say("syntax" if line else "syntax_noline", lang, line=line, msg=msg or "invalid syntax")
    if kind == "missing":
        return _say("missing", lang, msg=msg, fn=fn)
    return _say("exception" if line else "exception_noline", lang, line=line, msg=msg or "an error")


# ---- comparing one value ----------------------------------------------------------------------------
def _compare_number(check: Check, name: str, got: Any, lang: str) -> tuple[bool, str, str | None, str | None]:
    exp = float(check.expected)
    v = _number(got)
    if v is None:
        return False, _say("not_number", lang, exp=_fmt(exp), got=_fmt(got)), None, None
    if close(v, exp):
        return True, _say("ok", lang), None, None
    mistake = diagnose(name, check.args, exp, v)
    hint = None if mistake is None else MISTAKES[mistake][1 if lang == "da" else 0]
    return False, _say("expected", lang, exp=_fmt(exp), got=_fmt(v)), hint, mistake


def _compare_categories(check: Check, got: Any, lang: str) -> tuple[bool, str, str | None, str | None]:
    exp: Mapping[str, Mapping[str, Any]] = check.expected
    if not isinstance(got, Mapping):
        return False, _say("not_dict", lang, got=_fmt(got)), None, None
    for cat in exp:
        if cat not in got:
            hint = _hint("unknown", lang) if cat == "unknown" else _hint("oos_counts", lang) if cat == OUT_OF_SCOPE \
                else None
            return False, _say("cat_missing", lang, cat=cat), hint, None
    for cat in got:
        if cat not in exp:
            return False, _say("cat_extra", lang, cat=_clean(cat, 80)), None, None
    for cat, e in exp.items():
        g = got[cat]
        for key in ("count", "hits", "hit_rate"):
            gv = _number(g.get(key)) if isinstance(g, Mapping) else None
            if gv is None or not close(gv, float(e[key])):
                shown = g.get(key) if isinstance(g, Mapping) else g
                return False, _say("cat_value", lang, cat=cat, exp=_fmt({key: e[key]}),
                                   got=_fmt({key: shown})), None, None
    return True, _say("ok", lang), None, None


def _compare_failures(check: Check, got: Any, lang: str) -> tuple[bool, str, str | None, str | None]:
    exp: list[dict[str, Any]] = check.expected
    if not isinstance(got, list) or not all(isinstance(x, Mapping) for x in got):
        return False, _say("not_list", lang, got=_fmt(got)), None, None
    got_q = [_clean(x.get("question"), 500) for x in got]
    exp_q = [e["question"] for e in exp]
    oos = {item["question"] for item in check.args["dataset"] if not item.get("relevant_chunk_ids")}
    for q in exp_q:
        if q not in got_q:
            return False, _say("fail_missing", lang, q=q), _hint("oos_listed", lang) if q in oos else None, None
    for q in got_q:
        if q not in exp_q:
            return False, _say("fail_extra", lang, q=q[:120]), None, None
    if got_q != exp_q:
        return False, _say("fail_order", lang), None, None
    k = int(check.args["k"])
    for e, g in zip(exp, got):
        gids = g.get("retrieved_ids")
        if not isinstance(gids, list) or [str(x) for x in gids] != e["retrieved_ids"]:
            hint = _hint("cut_k", lang) if isinstance(gids, list) and len(gids) > k else None
            return False, _say("fail_field", lang, q=e["question"], field="retrieved_ids", exp=_fmt(e["retrieved_ids"]),
                               got=_fmt(gids)), hint, None
        ge = g.get("expected_ids")
        if not isinstance(ge, list) or sorted(str(x) for x in ge) != e["expected_ids"]:
            return False, _say("fail_field", lang, q=e["question"], field="expected_ids", exp=_fmt(e["expected_ids"]),
                               got=_fmt(ge)), None, None
        gs, es = g.get("top_score"), e["top_score"]
        ok = (gs is None) if es is None else (_number(gs) is not None and close(float(gs), es))
        if not ok:
            return False, _say("fail_field", lang, q=e["question"], field="top_score", exp=_fmt(es), got=_fmt(gs)), \
                _hint("top_score", lang), None
    return True, _say("ok", lang), None, None


#: A difference :func:`compare_values` found: ``(kind, where, expected part, got part)``; kind is one of
#: ``value``, ``length``, ``key_missing``, ``key_extra``, ``item_missing``, ``item_extra``.
Difference = tuple[str, str, Any, Any]


def _is_number(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, float))


def _same(expected: Any, got: Any) -> bool:
    return compare_values(expected, got) is None


def compare_values(expected: Any, got: Any, *, unordered: bool = False, where: str = "") -> Difference | None:
    """The first difference between an expected value and what a student's function returned, ``None`` when
    they agree: numbers within the tolerance of every check (:func:`~rag_metrics.exercises.mistakes.close`),
    in lists and dicts too; strings, bools and ``None`` exactly (``True`` is not ``1``); a dict by its keys
    (as text: JSON's keys) and each value; a list (or tuple) item by item, or, with ``unordered``, as a
    collection in any order (each expected item matched by one returned item; nested lists keep their order).

    >>> compare_values({"a": [0.5, "x"]}, {"a": [0.5000000001, "x"]}) is None
    True
    >>> compare_values([1, 2], [2, 1]), compare_values([1, 2], [2, 1], unordered=True)
    (('value', '[0]', 1, 2), None)
    >>> compare_values({"share": 0.5}, {"share": True})
    ('value', '["share"]', 0.5, True)
    """
    if _is_number(expected):
        g = _number(got)
        ok = g is not None and (close(g, float(expected)) if math.isfinite(float(expected)) else False)
        return None if ok else ("value", where, expected, got)
    if expected is None or isinstance(expected, (bool, str)):
        ok = type(got) is type(expected) and got == expected
        return None if ok else ("value", where, expected, got)
    if isinstance(expected, Mapping):
        if not isinstance(got, Mapping):
            return "value", where, expected, got
        exp = {str(k): v for k, v in expected.items()}
        have = {str(k): v for k, v in got.items()}
        for key in exp:
            if key not in have:
                return "key_missing", where, key, None
        for key in have:
            if key not in exp:
                return "key_extra", where, None, key
        for key, v in exp.items():
            diff = compare_values(v, have[key], where=f"{where}[{json.dumps(key, ensure_ascii=False)}]")
            if diff is not None:
                return diff
        return None
    if isinstance(expected, (list, tuple)):
        if not isinstance(got, (list, tuple)):
            return "value", where, expected, got
        if len(got) != len(expected):
            return "length", where, expected, got
        if not unordered:
            for i, (e, g) in enumerate(zip(expected, got)):
                diff = compare_values(e, g, where=f"{where}[{i}]")
                if diff is not None:
                    return diff
            return None
        left = list(got)
        for e in expected:
            j = next((j for j, g in enumerate(left) if _same(e, g)), None)
            if j is None:
                return "item_missing", where, e, None
            left.pop(j)
        return None
    return None if got == expected else ("value", where, expected, got)


def _difference_text(diff: Difference, lang: str) -> str:
    kind, where, exp, got = diff
    at = _say("at", lang, where=where) if where else ""
    if kind == "length":
        if where:
            return _say("at_length", lang, where=where, n=len(exp), m=len(got))
        return _say("length", lang, n=len(exp), m=len(got), got=_fmt(got))
    if kind == "key_missing":
        return _say("key_missing", lang, name=_short(exp), at=at)
    if kind == "key_extra":
        return _say("key_extra", lang, name=_short(_clean(got, 80)), at=at)
    if kind == "item_missing":
        return _say("item_missing", lang, exp=_fmt(exp), at=at)
    if kind == "item_extra":   # pragma: no cover - equal lengths: a missing item is found first
        return _say("item_extra", lang, got=_fmt(got), at=at)
    if where:
        return _say("at_expected", lang, where=where, exp=_fmt(exp), got=_fmt(got))
    return _say("expected", lang, exp=_fmt(exp), got=_fmt(got))


def _compare_generic(check: Check, name: str, got: Any, lang: str) -> tuple[bool, str, str | None, str | None]:
    unordered = check.unordered or bool(check.summary.get("unordered"))
    diff = compare_values(check.expected, got, unordered=unordered)
    if diff is None:
        return True, _say("ok", lang), None, None
    mistake = diagnose(name, check.args, check.expected, got)
    hint = None if mistake is None else MISTAKES[mistake][1 if lang == "da" else 0]
    return False, _difference_text(diff, lang), hint, mistake


def _compare(name: str, check: Check, got: Any, lang: str) -> tuple[bool, str, str | None, str | None]:
    if name == "evaluate_by_category":
        return _compare_categories(check, got, lang)
    if name == "analyze_failures":
        return _compare_failures(check, got, lang)
    if _is_number(check.expected):
        return _compare_number(check, name, got, lang)
    return _compare_generic(check, name, got, lang)


# ---- grade ----------------------------------------------------------------------------------------
def _parse(reported: Mapping[str, Any] | str | bytes) -> tuple[Mapping[str, Any] | None, str | None]:
    if isinstance(reported, (bytes, bytearray)):
        if len(reported) > MAX_REPORT_CHARS:
            return None, "too large"
        reported = reported.decode("utf-8", "replace")
    if isinstance(reported, str):
        if len(reported) > MAX_REPORT_CHARS:
            return None, "too large"
        from rag_metrics.io.files import loads_json

        reported, problem, _ = loads_json(reported)
        if problem is not None:
            return None, "not JSON"
    if not isinstance(reported, Mapping):
        return None, f"a {type(reported).__name__}, not a record"
    return reported, None


def printed(report: Mapping[str, Any] | None) -> tuple[str, bool]:
    """What the student's code printed, from a parsed report (any shape: a hostile browser), and whether it was
    cut: at most :data:`SHOWN_OUTPUT_CHARS` characters, as plain text (the page shows it escaped)."""
    text = report.get("stdout") if isinstance(report, Mapping) else None
    if not isinstance(text, str):
        return "", False
    cut = False
    if text.endswith(_HARNESS_CUT):
        text, cut = text[:-len(_HARNESS_CUT)], True
    if len(text) > SHOWN_OUTPUT_CHARS:
        text, cut = text[:SHOWN_OUTPUT_CHARS], True
    return text, cut


def grade(name: str, checks: Sequence[Check], reported: Mapping[str, Any] | str | bytes, lang: str = "en") -> Verdict:
    """Compare the harness's report (``reported``, JSON text or parsed) with ``checks``' expected values.

    Never raises for any ``reported``; an unknown ``name`` raises :class:`InputError` (server bug)."""
    ex = exercise(name)
    lang = _lang(lang)
    report, problem = _parse(reported)
    error: str | None = None
    results_in: Mapping[str, Any] = {}
    if report is None:
        error = _say("bad_report", lang, msg=problem)
    else:
        if report.get("error") is not None:
            error = _error_text(report.get("error"), ex.name, lang)
        raw = report.get("results")
        results_in = raw if isinstance(raw, Mapping) else {}
    results: list[CheckResult] = []
    out, out_cut = printed(report)
    if error is not None:   # one message (with its line), no check counted
        return Verdict(0, 0, (), None, error, None, out, out_cut)
    for check in checks:
        label = check.label.get(lang) or check.label.get("en", check.id)
        entry = results_in.get(check.id) if error is None else None
        passed, hint, mistake, got = False, None, None, None
        if error is not None:
            message = error
        elif not isinstance(entry, Mapping):
            message = _say("no_result", lang)
        elif "error" in entry and entry.get("error") is not None:
            err = entry.get("error")
            message = _error_text(err, ex.name, lang)
            if isinstance(err, Mapping) and "ZeroDivisionError" in str(err.get("message", ""))[:100]:
                hint = _hint("zero_division", lang)
        else:
            got = entry.get("value")
            try:
                passed, message, hint, mistake = _compare(ex.name, check, got, lang)
            except (TypeError, ValueError, KeyError, AttributeError, OverflowError, RecursionError):
                passed, message = False, _say("expected", lang, exp=_fmt(check.expected), got=_fmt(got))
            got = _shown(got)
        if not passed and hint is None and error is None:
            hint = check.hint.get(lang) or check.hint.get("en")
        results.append(CheckResult(check.id, label, passed, check.expected, got, message, dict(check.summary),
                                   None if passed else hint, None if passed else mistake))
    n_passed = sum(r.passed for r in results)
    # the most telling failed check first: one whose value the mistake that explains the most failed checks
    # explains (one check can fit two mistakes), else the first failed
    explained = Counter(r.mistake for r in results if not r.passed and r.mistake)
    likely = explained.most_common(1)[0][0] if explained else None
    first = next((r for r in results if not r.passed and likely and r.mistake == likely), None) \
        or next((r for r in results if not r.passed), None)
    if first is not None and first.hint is None and error is None:
        first = CheckResult(first.id, first.label, False, first.expected, first.got, first.message, first.input,
                            ex.hints[lang][0], first.mistake)
        results = [first if r.id == first.id else r for r in results]
    dashboard = None
    cur = next((c for c in checks if c.id == "current" and c.metric), None)
    res = next((r for r in results if r.id == "current"), None)
    if cur is not None and res is not None and res.passed and n_passed == len(results):
        dashboard = {"metric": cur.metric, "student": float(res.got), "dashboard": float(cur.expected),
                     "questions": int(cur.summary.get("questions", 0))}
    return Verdict(n_passed, len(results), tuple(results), first, error, dashboard, out, out_cut)


def _jsonsafe(value: Any) -> Any:
    """``value`` as JSON-safe data (non-finite numbers as text)."""
    try:
        from rag_metrics.io.files import loads_json

        return loads_json(json.dumps(value, allow_nan=False, default=str))[0]
    except ValueError:
        return _short(value)


def _shown(value: Any) -> Any:
    """A student's value as kept in a result: numbers as they are, anything else cut to a short text."""
    if _number(value) is not None or value is None:
        return value
    if isinstance(value, (Mapping, list)):
        text = _short(value)
        return value if len(text) <= _MAX_SHOWN else text
    return _clean(value, _MAX_SHOWN)
