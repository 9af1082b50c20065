"""Answer items from files: uploaded RAG logs and the shipped sample answers.

RAG logs are read by :func:`rag_metrics.io.raglog.parse_rag_log` (CSV, JSON, JSONL, the
columnar ``ragas.evaluate`` shape; aliases ``response``/``generated_answer``,
``retrieved_contexts``/``retrieved_texts``, ``reference``/``expected_answer`` ...).  On top of its
columns, JSON Lines rows may carry ``system``, ``category`` and ``question_id`` (several systems
answering one golden question); other formats take the file name as the system.

The shipped sample (``sample_corpus/answers.jsonl``) adds the human labels: ``sentences`` (each
``{"text", "label"}`` with label ``supported`` / ``unsupported`` / ``not a claim``) and
``relevancy`` (``relevant`` / ``partly`` / ``noncommittal`` / ``off-topic``).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from rag_metrics.answers.types import VERDICTS, AnswerItem
from rag_metrics.errors import InputError, ValidationReport
from rag_metrics.io.containers import unwrap
from rag_metrics.io.files import loads_json

__all__ = [
    "RELEVANCY_LABELS",
    "HumanLabels",
    "merge_answer_sets",
    "load_sample_answers",
    "parse_answers",
    "read_answers",
    "sample_answers_path",
]

#: Relevancy labels of the shipped answers; the last two both mean "does not answer".
RELEVANCY_LABELS = ("relevant", "partly", "noncommittal", "off-topic")


@dataclass(frozen=True)
class HumanLabels:
    """The people's labels of one shipped answer: ``(sentence, label)`` pairs and relevancy."""

    sentences: tuple[tuple[str, str], ...]
    relevancy: str

    @property
    def has_unsupported(self) -> bool:
        return any(lab == "unsupported" for _, lab in self.sentences)


def _extras(text: str, suffix: str) -> dict[int, dict]:
    """``{line: object}`` of a JSON Lines file (for the optional system/category fields)."""
    if suffix not in (".jsonl", ".ndjson"):
        return {}
    out = {}
    for n, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            obj, msg, _ = loads_json(line)
            if msg is None and isinstance(obj, dict):
                out[n] = obj
    return out


def parse_answers(data: bytes | str, filename: str, system: str | None = None, mapping: Any = None
                  ) -> tuple[list[AnswerItem], ValidationReport]:
    """Answer items of a RAG log file (or trace export), and every problem found (see the module doc).

    Rows without an answer column are kept (their answer metrics get status ``empty_answer``).
    ``system`` names the answering system of rows that do not say (default: the file name).
    ``mapping`` (a ``--map`` spec, :mod:`rag_metrics.io.mapping`) names the fields first.
    """
    from rag_metrics.io.raglog import parse_rag_log

    if mapping:
        from rag_metrics.io.mapping import apply_mapping

        system = system or PurePath(filename).name.split(".")[0]
        data, filename = apply_mapping(data.encode("utf-8") if isinstance(data, str) else data, filename, mapping)

    if isinstance(data, bytes):
        try:
            data, filename, _wraps = unwrap(data, filename)  # gzip, Parquet rows
        except InputError:
            pass  # parse_rag_log reports the damaged file
    log, report = parse_rag_log(data, filename)
    # the reader warns when two rows share a question (it matters when rows are matched to golden
    # questions by text); several systems answering one question is normal here
    report.problems = [p for p in report.problems
                       if not (p.severity == "warning" and p.message.startswith("same question as"))]
    suffix = PurePath(filename).suffix.lower()
    text = data.decode("utf-8-sig", errors="replace") if isinstance(data, bytes) else data
    extras = _extras(text, suffix) if log.rows else {}
    default_system = system or log.name
    items = []
    for r in log.rows:
        ex = extras.get(r.line or -1, {})
        items.append(AnswerItem(
            id=r.id, question=r.question, answer=r.answer or "", contexts=r.contexts,
            ground_truth=r.ground_truth, system=str(ex.get("system") or default_system),
            category=str(ex.get("category") or ""), question_id=str(ex.get("question_id") or ""),
            context_ids=r.context_ids or ()))
    if not log.has_answers and log.rows:
        report.error("no answer column; answer metrics need the generated answer in 'answer' (or "
                     "'response' / 'generated_answer')", file=filename, field="answer")
    return items, report


def merge_answer_sets(sets: list[tuple[str, list[AnswerItem] | tuple[AnswerItem, ...]]]) -> list[AnswerItem]:
    """The answers of several files as one list: each item's id prefixed with its set's name
    (``"my traces:trace-007"``; row numbers repeat across files), its system the set's name unless
    the row names its own.  One set is returned as it is."""
    from dataclasses import replace

    if len(sets) == 1:
        return list(sets[0][1])
    out: list[AnswerItem] = []
    for name, items in sets:
        out.extend(replace(it, id=f"{name}:{it.id}", system=it.system or name) for it in items)
    return out


def read_answers(path: str | os.PathLike[str], mapping: Any = None) -> tuple[list[AnswerItem], ValidationReport]:
    """:func:`parse_answers` of a file on disk (``mapping``: a ``--map`` spec)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"answers file {str(p)!r} not found; give a RAG log (.jsonl, .json, .csv) with "
                         "question, answer and contexts columns")
    return parse_answers(p.read_bytes(), str(p), mapping=mapping)


def sample_answers_path() -> Path:
    from rag_metrics.sample import sample_dir

    return sample_dir() / "answers.jsonl"


def load_sample_answers(path: str | os.PathLike[str] | None = None
                        ) -> tuple[list[AnswerItem], dict[str, HumanLabels]]:
    """The shipped sample answers and their human labels (``{item id: HumanLabels}``)."""
    p = Path(path) if path is not None else sample_answers_path()
    items, report = read_answers(p)
    report.raise_if_errors("sample answers")
    labels: dict[str, HumanLabels] = {}
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        obj, msg, _ = loads_json(line)
        if msg is not None or not isinstance(obj, dict):
            raise InputError(f"{p}:{n}: {msg or 'not a JSON object'}; the shipped answers file is damaged")
        sents = tuple((s["text"], s["label"]) for s in obj.get("sentences", []))
        bad = [lab for _, lab in sents if lab not in VERDICTS]
        if bad or obj.get("relevancy") not in RELEVANCY_LABELS:
            raise InputError(f"{p}:{n}: unknown label {(bad or [obj.get('relevancy')])[0]!r}; sentence "
                             f"labels are {', '.join(VERDICTS)}; relevancy is one of "
                             f"{', '.join(RELEVANCY_LABELS)}")
        labels[str(obj["id"])] = HumanLabels(sents, obj["relevancy"])
    return items, labels


def items_fingerprint(items: list[AnswerItem] | tuple[AnswerItem, ...]) -> str:
    """Content hash of answer items (cache keys)."""
    import hashlib

    h = hashlib.sha256()
    for it in items:
        h.update(json.dumps([it.id, it.question, it.answer, list(it.contexts), it.ground_truth, it.system,
                             it.category, it.question_id], ensure_ascii=False).encode("utf-8"))
    return h.hexdigest()[:16]
