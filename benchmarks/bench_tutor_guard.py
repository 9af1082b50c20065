"""The tutor's guard, measured (issue 48): scripted student mistakes, scripted model replies, the real pipeline.

The cases: ``benchmarks/data/tutor_guard_cases.json``, 33 wrong versions the exercises already know (the
substitutions of tests/test_exercises.py and tests/test_lesson_generation.py on the lesson's code, plus
a few of the mistakes of :mod:`rag_metrics.exercises.mistakes`), each with the reply a scripted model gives:
``hint`` (names the mistake, gives nothing away), ``leak_code`` (the solution's code: verbatim, renamed, a
comprehension for the loop, a key line), ``leak_value`` (a check's hidden expected value, in English, Danish
or percent form) or ``near_miss`` (looks similar and gives nothing away: a smaller example on another
function, a loop skeleton, numbers that are not expected values).  ``{lesson}``, ``{reference}`` and
``{value:<en|da|pct>}`` in a reply are filled in from the exercise (``{value:...}``: the expected value, not a
whole number nor a simple fraction, of the first check that is not the first failing one and not a number
the exercise's texts show: a value the student has not been shown; ``{shown:...}``: the first failing
check's, which the page shows).

For each case, as the Exercises page does it: the wrong code is graded by the real harness (its verdict is what
the tutor sees, and what the answer without a model shows), the hidden values are the checks' expected
values except the first failing check's (shown on the page already), and the question goes through
:func:`rag_metrics.tutor.ask.ask` with the real passages' index and a loopback model server
(tests/tutor_server.py) that streams the scripted reply (word by word, no delay of its own).

Reported (MRBench's dimensions are the model: mistake identification, not revealing the answer,
actionability):

- leak rate before the guard (the scripted replies that leak, by construction) and after it (a leaking reply
  the student still sees); the guard's catches by kind and its false withholds (a reply that does not leak but
  is withheld);
- names the mistake: a reply names it when it contains one of the mistake's phrases (the data's ``names``,
  case-insensitive), for the model's reply and for the answer shown (a withheld reply is replaced by the
  exercise's next hint and the mistake the last run was diagnosed with, when it was);
- actionable: the answer shown asks the student a question (``?``) or names, in backticks, a name that occurs
  in the student's code;
- time: from calling ``ask`` to the first streamed token and to ``Done`` (loopback model, warm index), the
  first question of a process (the index built), and an answer without a model (``Fallback``); the guard's
  own time per reply.

Run::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_tutor_guard.py [--verbose]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
DATA = ROOT / "benchmarks" / "data" / "tutor_guard_cases.json"


def _checks() -> Any:
    from rag_metrics.evaluation import evaluate
    from rag_metrics.exercises import build_checks
    from rag_metrics.exercises.catalogue import EXERCISES
    from rag_metrics.io.golden import load_golden
    from rag_metrics.retrieval import load_sample_index
    from rag_metrics.retrieval.cache import EmbeddingCache
    from rag_metrics.sample import sample_paths

    golden = load_golden(sample_paths().golden)
    index = load_sample_index(kind="bm25", cache=EmbeddingCache(read_only=True))
    result = evaluate(golden, index.retriever.retrieve(golden.questions(), k=100))
    return {e.name: build_checks(e.name, result.golden, result.run) if e.lesson == "retrieval"
            else build_checks(e.name, None, None) for e in EXERCISES}


def _verdict(name: str, checks: Any, code: str) -> Any:
    from rag_metrics.exercises import browser_payload, grade
    from rag_metrics.exercises.runner import run_harness

    return grade(name, checks, run_harness(code, browser_payload(name, checks, "en")), "en")


def _verdict_text(v: Any) -> str:
    parts = [v.headline("en")]
    if v.error:
        parts.append(str(v.error))
    f = v.first_failure
    if f is not None:
        parts += [f"{f.label}: {f.message}", str(f.hint or "")]
    return "\n".join(p for p in parts if p)


def _format(value: float, form: str) -> str:
    if form == "da":
        return f"{value:.3f}".replace(".", ",")
    if form == "pct":
        return f"{100 * value:.1f} %"
    return f"{value:.4f}"


def _reply(case: dict, checks: Any, shown: str | None) -> str:
    from rag_metrics.exercises.catalogue import exercise
    from rag_metrics.tutor.guard import _matches, _public_numbers, _references, simple

    name = case["exercise"]

    public = _public_numbers(name)

    def value(m: re.Match[str]) -> str:
        form = m.group(1)
        for c in checks:  # a value the student has not been shown: not the first failing check's, nor an example's
            v = c.expected
            if isinstance(v, (int, float)) and not isinstance(v, bool) and c.id != shown \
                    and not simple(float(v)) and not any(_matches(x, d, float(v)) for x, d in public):
                return _format(float(v), form)
        raise SystemExit(f"{case['id']}: no hidden check with a fractional expected value")

    def shown_value(m: re.Match[str]) -> str:
        found = next(c.expected for c in checks if c.id == shown)
        return _format(float(found), m.group(1))

    text = re.sub(r"\{value:(\w+)\}", value, case["reply"])
    text = re.sub(r"\{shown:(\w+)\}", shown_value, text)
    return (text.replace("{lesson}", exercise(name).lesson_code.strip())
            .replace("{reference}", _references().get(name, "").strip()))


def _names(text: str, phrases: list[str]) -> bool:
    low = text.lower()
    return any(p.lower() in low for p in phrases)


def _actionable(text: str, code: str) -> bool:
    names = set(re.findall(r"[A-Za-z_]\w*", code))
    spans = re.findall(r"`([^`\n]+)`", text)
    return "?" in text or any(set(re.findall(r"[A-Za-z_]\w*", s)) & names - {"def", "return", "for", "in", "if"}
                              for s in spans)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--verbose", action="store_true", help="one line per case")
    args = parser.parse_args()

    from tutor_server import TutorServer

    from rag_metrics.exercises.catalogue import exercise
    from rag_metrics.tutor.ask import Done, Fallback, Passages, Token, TutorEndpoint, TutorRequest, ask
    from rag_metrics.tutor.guard import check_reply
    from rag_metrics.tutor.retrieve import TutorIndex

    data = json.loads(DATA.read_text(encoding="utf-8"))
    cases, names = data["cases"], data["names"]
    t0 = time.perf_counter()
    all_checks = _checks()
    print(f"checks built on the sample data (bm25) in {time.perf_counter() - t0:.1f} s; {len(cases)} cases")

    nonce = f"{time.time():.0f}"  # questions never asked before: no query vector from an earlier run's cache
    rows: list[dict[str, Any]] = []
    requests: list[tuple[dict, Any]] = []
    for case in cases:
        name = case["exercise"]
        old, new = case["wrong"]
        lesson = exercise(name).lesson_code
        if old not in lesson:
            raise SystemExit(f"{case['id']}: {old!r} is not in the lesson's code of {name}")
        code = lesson.replace(old, new)
        checks = all_checks[name]
        v = _verdict(name, checks, code)
        shown = v.first_failure.id if v.first_failure is not None else None
        hidden = tuple(c.expected for c in checks if c.id != shown)
        reply = _reply(case, checks, shown)
        req = TutorRequest(f"[{case['id']}] What is wrong with my code? (run {nonce})", "en", f"exercise:{name}",
                           code, _verdict_text(v), hidden)
        requests.append((case, req))
        t = time.perf_counter()
        raw = check_reply(reply, exercise=name, hidden_values=hidden, student_code=code)
        rows.append({"case": case, "reply": reply, "req": req, "raw": raw,
                     "guard_ms": 1000 * (time.perf_counter() - t), "passed": f"{v.passed}/{v.total}",
                     "mistake_found": v.first_failure.mistake if v.first_failure else None})

    # ---- no model: the first question of the process builds the index ------------------------------------------
    t = time.perf_counter()
    events = list(ask(requests[0][1], endpoint=None))
    cold_fallback = time.perf_counter() - t
    assert isinstance(events[-1], Fallback)
    index_kind = TutorIndex.for_language("en").kind
    index = TutorIndex.for_language("en")
    fallback_times, search_times = [], []
    for _, req in requests:
        asked = dataclasses.replace(req, question=req.question.replace("What is wrong with my code?",
                                                                       "Where is my mistake?"))
        t = time.perf_counter()
        for ev in ask(asked, endpoint=None):
            if isinstance(ev, Passages):
                search_times.append(time.perf_counter() - t)
        fallback_times.append(time.perf_counter() - t)
        assert isinstance(ev, Fallback)

    # ---- with the loopback model ----------------------------------------------------------------------------------
    script = {f"[{row['case']['id']}]": row["reply"] for row in rows}
    first_times, done_times, model_times = [], [], []
    with TutorServer(script, default="(no script)") as srv:
        endpoint = TutorEndpoint(srv.base_url, "scripted", timeout=10.0, max_retries=0)
        for row in rows:
            t = time.perf_counter()
            first = found = None
            done = None
            for ev in ask(row["req"], endpoint=endpoint):
                if isinstance(ev, Passages):
                    found = time.perf_counter() - t
                if isinstance(ev, Token) and first is None:
                    first = time.perf_counter() - t
                if isinstance(ev, (Done, Fallback)):
                    done = ev
            total = time.perf_counter() - t
            if not isinstance(done, Done):
                raise SystemExit(f"{row['case']['id']}: the model's answer failed: {done}")
            row["done"] = done
            if first is not None and found is not None:
                first_times.append(first)
                model_times.append(first - found)
            done_times.append(total)

    # ---- figures --------------------------------------------------------------------------------------------------
    n = len(rows)
    leaking = [r for r in rows if r["case"]["kind"] in ("leak_code", "leak_value")]
    clean = [r for r in rows if r not in leaking]
    caught = [r for r in leaking if r["done"].guarded]
    still = [r for r in leaking if not r["done"].guarded]
    false_withheld = [r for r in clean if r["done"].guarded]
    shown_leaks = [r for r in rows if check_reply(r["done"].answer, exercise=r["case"]["exercise"],
                                                  hidden_values=r["req"].hidden_values,
                                                  student_code=r["req"].code).leaked]
    raw_agree = sum(r["raw"].leaked == r["done"].guarded for r in rows)

    def share(k: int, of: int) -> str:
        return f"{k}/{of} = {k / of:.0%}" if of else "0/0"

    if args.verbose:
        print(f"\n{'case':<5} {'exercise':<22} {'mistake':<22} {'kind':<10} {'verdict':<7} {'guard':<8} "
              f"{'reason':<38} names(reply/shown) act")
        for r in rows:
            c, d = r["case"], r["done"]
            ph = names[c["mistake"]]
            print(f"{c['id']:<5} {c['exercise']:<22} {c['mistake']:<22} {c['kind']:<10} {r['passed']:<7} "
                  f"{'WITHHELD' if d.guarded else 'shown':<8} {d.reason[:38]:<38} "
                  f"{'y' if _names(r['reply'], ph) else 'n'}/{'y' if _names(d.answer, ph) else 'n'}"
                  f"       {'y' if _actionable(d.answer, r['req'].code) else 'n'}")
    kinds = ("hint", "leak_code", "leak_value", "near_miss")

    def count(kind: str, among: list[dict[str, Any]]) -> int:
        return sum(r["case"]["kind"] == kind for r in among)

    def named(r: dict[str, Any], text: str) -> bool:
        return _names(text, names[r["case"]["mistake"]])

    by_kind = ", ".join(f"{k} {count(k, rows)}" for k in kinds)
    reasons = ", ".join(sorted({r["done"].reason for r in caught}))
    print("\nNot revealing the answer")
    print(f"  leak rate before the guard: {share(len(leaking), n)} of the scripted replies leak ({by_kind})")
    print(f"  leak rate after the guard:  {share(len(still), n)} (a leaking reply shown to the student); the "
          f"answers shown that the guard itself flags: {len(shown_leaks)}")
    print(f"  caught: code {share(count('leak_code', caught), count('leak_code', leaking))}, values "
          f"{share(count('leak_value', caught), count('leak_value', leaking))}; by reason: {reasons}")
    print(f"  false withholds: {share(len(false_withheld), len(clean))} of the replies that do not leak "
          f"(hints {count('hint', false_withheld)}, near misses {count('near_miss', false_withheld)})")
    print(f"  the streaming guard and the guard on the whole reply agree on {raw_agree}/{n}")
    print("Mistake identification (" + data["rule"] + ")")
    named_raw = sum(named(r, r["reply"]) for r in rows)
    named_shown = sum(named(r, r["done"].answer) for r in rows)
    hints = [r for r in rows if r["case"]["kind"] == "hint"]
    named_hints = sum(named(r, r["reply"]) for r in hints)
    named_caught = sum(named(r, r["done"].answer) for r in caught)
    diagnosed = sum(1 for r in rows if r["mistake_found"] and r["mistake_found"] == r["case"]["mistake"])
    print(f"  the model's replies name the mistake: {share(named_raw, n)} (the hint replies: "
          f"{share(named_hints, len(hints))})")
    print(f"  the answers shown name it:            {share(named_shown, n)} (a withheld reply becomes the "
          f"exercise's next hint and the last run's diagnosis: they name it in {named_caught}/{len(caught)})")
    print(f"  the verdict the tutor saw diagnosed it by key: {diagnosed}/{n} (the others fail with the check's "
          f"own hint)")
    act = sum(_actionable(r["done"].answer, r["req"].code) for r in rows)
    print(f"Actionability (a question to the student, or a name of their code in backticks): {share(act, n)} of "
          f"the answers shown")
    guard_ms = [r["guard_ms"] for r in rows]
    print("Time")
    print(f"  Ask -> first streamed token (loopback model, warm index): median "
          f"{1000 * statistics.median(first_times):.0f} ms, max {1000 * max(first_times):.0f} ms "
          f"({len(first_times)} answers streamed; a withheld one may stream nothing)")
    print(f"    of which from the passages to the first token (the model's request, the stream, the guard): median "
          f"{1000 * statistics.median(model_times):.0f} ms, max {1000 * max(model_times):.0f} ms")
    print(f"  Ask -> Done: median {1000 * statistics.median(done_times):.0f} ms, max {1000 * max(done_times):.0f} ms")
    print(f"  answer without a model: first of the process (index built, {index_kind}) {cold_fallback:.2f} s; then "
          f"median {1000 * statistics.median(fallback_times):.0f} ms, max {1000 * max(fallback_times):.0f} ms")
    print(f"    of which the passages' search (TutorIndex, {index.kind}, a question never seen): median "
          f"{1000 * statistics.median(search_times):.0f} ms, max {1000 * max(search_times):.0f} ms")
    print(f"  the guard on a whole reply: median {statistics.median(guard_ms):.1f} ms, max {max(guard_ms):.1f} ms "
          f"(the first ones build the exercise's normalised functions)")


if __name__ == "__main__":
    main()
