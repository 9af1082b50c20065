"""``rag-metrics exercise``: the lesson's code exercises on a local file (a self-learner's own editor).

::

    rag-metrics exercise list
    rag-metrics exercise check NAME FILE.py [--lang en|da] [--corpus PATH] [--golden PATH] [--retriever KIND]

``check`` runs the same harness as the browser, in a separate ``python -I`` process with a time limit
(:mod:`rag_metrics.exercises.runner`), on the user's own machine; the checks' inputs come from the
golden set and a retriever over the corpus (default: the bundled sample).  It prints "Passed X of Y
checks", the first failing check with its input, the expected and the student's value and a hint.
Exit code 0 when every check passes, 1 when some fail, 2 on bad input.  Refused on a class server
(``RAG_METRICS_CLASS_MODE``): there the exercises run in the students' browsers only.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rag_metrics.errors import InputError
from rag_metrics.retrieval.defaults import DEFAULT_RETRIEVER, RETRIEVER_KINDS

__all__ = ["add_parser", "run", "MAX_FILE_BYTES"]

#: A student's file larger than this is refused.
MAX_FILE_BYTES = 200_000
_DEPTH = 20  # results retrieved per question (every check's K plus a margin)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``exercise`` (with ``list`` and ``check``) on an ``argparse`` subparsers object."""
    p = subparsers.add_parser("exercise", help="check your own version of a lesson function (code exercises)",
                              description="The lesson's code exercises: write a metric function in your own editor "
                                          "and check it against the lab's engine, on the bundled sample or your data.")
    sub = p.add_subparsers(dest="exercise_command", metavar="ACTION", parser_class=type(p))
    sub.required = True
    sub.add_parser("list", help="list the exercises, in the lesson's order")
    c = sub.add_parser("check", help="run the checks of exercise NAME on FILE.py",
                       description="Run the checks of exercise NAME on the function in FILE.py, in a separate "
                                   "process with a time limit. Exit 0 when every check passes, 1 when some fail.")
    c.add_argument("name", metavar="NAME", help="exercise name (see `rag-metrics exercise list`)")
    c.add_argument("file", metavar="FILE.py", help="your Python file defining the function NAME")
    c.add_argument("--lang", choices=["en", "da"], default="en", help="language of the messages (default en)")
    c.add_argument("--corpus", default=None, metavar="PATH",
                   help="folder of .md/.txt files, a .jsonl corpus or a BEIR folder (default: the bundled sample)")
    c.add_argument("--golden", default=None, metavar="PATH",
                   help="golden set (.csv/.json/.jsonl; default: the bundled sample's)")
    c.add_argument("--retriever", choices=RETRIEVER_KINDS, default=DEFAULT_RETRIEVER,
                   help=f"the system the checks retrieve with (default {DEFAULT_RETRIEVER}, as the app)")
    c.add_argument("--timeout", type=float, default=None, metavar="S", help="time limit in seconds (default 10)")
    return p


def _refuse_in_class_mode() -> None:
    from rag_metrics.workspace.store import class_mode

    if class_mode(argv=[]):
        raise InputError("exercise: not available on a class server (RAG_METRICS_CLASS_MODE is set); students "
                         "run the exercises in the browser, on the Exercises page")


def _read_code(path: str) -> str:
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{path}: file not found; give the Python file that defines your function")
    if p.stat().st_size > MAX_FILE_BYTES:
        raise InputError(f"{path}: {p.stat().st_size:,} bytes is too large for one function (at most "
                         f"{MAX_FILE_BYTES:,})")
    try:
        return p.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text; save the file as UTF-8") from None


def _data(args: argparse.Namespace) -> tuple[Any, Any, dict[str, str] | None, str]:
    """(golden set, run, chunk_to_doc or None, description) of the data the checks run on."""
    from rag_metrics.io.golden import load_golden
    from rag_metrics.sample import sample_paths

    golden = load_golden(args.golden if args.golden else sample_paths().golden)
    if not len(golden):
        raise InputError(f"{args.golden}: the golden set has no question")
    questions = {q.id: q.question for q in golden if q.question.strip()}
    if args.corpus is None:
        from rag_metrics.retrieval import load_sample_index
        from rag_metrics.retrieval.cache import EmbeddingCache

        index = load_sample_index(kind=args.retriever, cache=EmbeddingCache())
        run = index.retriever.retrieve(questions, k=_DEPTH)
        return golden, run, None, f"the bundled sample corpus, {args.retriever} retriever"
    from rag_metrics.io.corpus import load_corpus
    from rag_metrics.retrieval import chunk_corpus, make_retriever

    chunks = chunk_corpus(load_corpus(args.corpus))
    if not chunks:
        raise InputError(f"{args.corpus}: the corpus has no text to chunk")
    labelled = {i for q in golden for i in q.relevant}
    chunk_ids = {c.id for c in chunks}
    c2d = {c.id: c.doc_id for c in chunks}
    doc_level = bool(labelled) and not (labelled & chunk_ids) and bool(labelled & set(c2d.values()))
    if labelled and not (labelled & chunk_ids) and not doc_level:
        raise InputError(f"{args.golden or 'the sample golden set'}: none of its labels names a chunk or document of "
                         f"--corpus {args.corpus}; pass the golden set of that corpus with --golden")
    retriever = make_retriever(args.retriever)
    retriever.index(chunks)
    run = retriever.retrieve(questions, k=_DEPTH * (10 if doc_level else 1))
    return golden, run, c2d if doc_level else None, f"{args.corpus}, {args.retriever} retriever"


def _summary(inp: dict[str, Any], lang: str) -> str:
    da = lang == "da"
    if "relevances" in inp:
        return f"relevances {inp['relevances']}, k = {inp['k']}"
    if "ranking" in inp:
        text = (f"{'rangering' if da else 'ranking'} {inp['ranking']}, {'relevante' if da else 'relevant'} "
                f"{inp['relevant']}, K = {inp['k']}")
        return text + (f", {'karakterer' if da else 'grades'} {inp['grades']}" if "grades" in inp else "")
    if isinstance(inp.get("questions"), list):
        return "; ".join(f"{q['question']!r}: {q['ranking']} / {q['relevant']}" for q in inp["questions"]) + \
            f"; K = {inp['k']}"
    return f"{inp.get('questions')} {'spørgsmål' if da else 'questions'}, K = {inp.get('k')}"


_SHOWN_LINES = 20


def _printed(report: str) -> list[str]:
    """The first lines the student's code printed (from the harness's report)."""
    from rag_metrics.io.files import loads_json

    value, _, _ = loads_json(report)
    text = value.get("stdout", "") if isinstance(value, dict) else ""
    lines = str(text).splitlines()
    return [line[:200] for line in lines[:_SHOWN_LINES]]


def _list() -> int:
    from rag_metrics.exercises import EXERCISES
    from rag_metrics.lesson.course import COURSE

    numbers = {x.key: x.number for x in COURSE}
    for n, ex in enumerate(EXERCISES, 1):
        extra = f" (+ {', '.join(ex.extra_functions)})" if ex.extra_functions else ""
        print(f"{n}. {ex.name}{extra}: {ex.title['en']} (lesson {numbers.get(ex.lesson, ex.lesson)}, "
              f"step {ex.step!r})")
    print("\nrag-metrics exercise check NAME FILE.py   checks your function NAME in FILE.py")
    return 0


def run(args: argparse.Namespace) -> int:
    """Handler of ``rag-metrics exercise``; the exit code (0 all checks pass, 1 some fail)."""
    _refuse_in_class_mode()
    if args.exercise_command == "list":
        return _list()
    from rag_metrics.exercises import browser_payload, build_checks, exercise, grade
    from rag_metrics.exercises.runner import TimedOut, run_harness

    ex = exercise(args.name)
    code = _read_code(args.file)
    if args.timeout is not None and not 0 < args.timeout <= 600:
        raise InputError(f"--timeout {args.timeout:g}: give a number of seconds between 0 and 600")
    golden, trec_run, c2d, where = _data(args)
    checks = build_checks(ex.name, golden, trec_run, chunk_to_doc=c2d)
    payload = browser_payload(ex.name, checks, args.lang)
    da = args.lang == "da"
    try:
        report = run_harness(code, payload, timeout=args.timeout)
    except TimedOut as e:
        msg = (f"Din kode blev stoppet: den kørte for længe ({e}). En uendelig løkke?" if da else
               f"Your code was stopped: it ran too long ({e}). An endless loop?")
        stopped = {"ok": False, "results": {}, "error": {"kind": "exception", "line": None, "message": msg}}
        print(msg)
        print(grade(ex.name, checks, stopped, args.lang).headline(args.lang))
        return 1
    verdict = grade(ex.name, checks, report, args.lang)
    out = sys.stdout
    out.write(f"{ex.name} (data: {where})\n")
    printed = _printed(report)
    if printed:
        out.write(("Din kode udskrev" if da else "Your code printed") + f" ({_SHOWN_LINES} lines at most):\n")
        out.write("".join(f"  | {line}\n" for line in printed))
    out.write(verdict.headline(args.lang) + "\n")
    if verdict.error:
        out.write(verdict.error + "\n")
    f = verdict.first_failure
    if f is not None and not verdict.error:
        out.write(f"\n{'Første fejlede tjek' if da else 'First failing check'}: {f.label}\n")
        out.write(f"  {'input' if not da else 'input'}: {_summary(dict(f.input), args.lang)}\n")
        out.write(f"  {f.message}\n")
    if f is not None and f.hint:
        out.write(f"  {'Tip' if da else 'Hint'}: {f.hint}\n")
    if verdict.dashboard:
        d = verdict.dashboard
        out.write((f"Dit gennemsnit {d['student']:.4f}; Dashboardets {d['metric']} (As in the lesson) "
                   f"{d['dashboard']:.4f}, samme {d['questions']} spørgsmål\n") if da else
                  (f"Your mean {d['student']:.4f}; the Dashboard's {d['metric']} (As in the lesson) "
                   f"{d['dashboard']:.4f}, the same {d['questions']} questions\n"))
    return 0 if verdict.all_passed else 1
