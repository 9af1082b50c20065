"""The tutor's passages: the course's own texts, cut into short plain-text passages with stable ids.

Sources, in order (:func:`course_passages`):

- **Lessons** (every lesson of :data:`rag_metrics.lesson.course.COURSE`): the lesson's title and
  introduction (``lesson.<lesson>``), each step's title and body (``lesson.<lesson>.step.<step>``) and each
  task's prompt, options and hint (``lesson.<lesson>.step.<step>.task.<task>``).  A task's ``ok`` text is
  left out: it is the answer, shown after a right one.
- **Exercises** (:data:`rag_metrics.exercises.catalogue.EXERCISES`): the title and prompt
  (``exercise.<name>``), each worked example (``exercise.<name>.example.<i>``, from 1), each hint
  (``exercise.<name>.hint.<i>``, from 1, gentlest first), the conventions the lesson's code implies
  (``exercise.<name>.conventions``) and the hint of each known mistake
  (``exercise.<name>.mistake.<key>``, :mod:`rag_metrics.exercises.mistakes`).  Never code: neither the
  reference solutions nor ``lesson_code`` (the tutor must not hand over a solution), nor the starter.
- **Docs** (the project's ``docs/`` pages on the conventions, the metrics, the lesson and the exercises,
  :data:`DOC_PAGES`), split at their ``##``/``###`` headings, a long section into parts:
  ``doc.<page>#<anchor>`` (``doc.conventions#options``, ``doc.guide.metrics#conventions-in-brief``), a
  further part ``#<anchor>.2``.  The docs are written in English only: the Danish passages hold the
  same English doc passages, so a Danish question may retrieve an English doc passage (the lesson and
  exercise passages are Danish).  The docs are read from the source tree (``<repo>/docs``); an
  installed copy without them has no doc passages.

Every text is plain text (markdown emphasis, links, backticks, HTML anchors and table pipes are
removed): the UI escapes what it shows.  ``link`` is app-relative: ``lesson?lesson=<key>&step=<n>`` (``n``
from 1), ``exercises?exercise=<name>``; a doc passage has no page in the app, so its ``link`` is ``""``
(its title names the page).  Ids are the same in both languages.

>>> ps = course_passages("en")
>>> p = next(p for p in ps if p.id == "lesson.retrieval.step.mrr")
>>> p.title, p.link
('MRR: how high is the first relevant chunk?', 'lesson?lesson=retrieval&step=3')
>>> any(p.id == "exercise.hit_rate_at_k.hint.2" for p in ps)
True
"""
from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rag_metrics.errors import InputError

__all__ = ["DOC_PAGES", "LANGS", "Passage", "course_passages", "docs_dir", "passage_map", "plain"]

#: The tutor's languages (the lesson's).
LANGS = ("en", "da")

#: The doc pages the tutor reads (path under docs/, page title), and the section anchors it leaves out.
DOC_PAGES: tuple[tuple[str, str, frozenset[str]], ...] = (
    ("conventions.md", "Metric conventions", frozenset()),
    ("guide/metrics.md", "The metrics", frozenset()),
    ("guide/lesson.md", "The lesson", frozenset()),
    ("guide/answers.md", "Answer metrics", frozenset()),
    ("exercises.md", "Code exercises", frozenset({"with-your-own-editor-rag-metrics-exercise", "for-developers"})),
)

#: A section longer than this (characters) is cut into parts at paragraph ends.
MAX_PART = 900
#: ... and a part is at least this long (a lone bold line joins the paragraph after it).
MIN_PART = 200


@dataclass(frozen=True)
class Passage:
    """One passage of the course: ``id`` stable across languages, ``lang`` ``"en"`` or ``"da"``, a plain-text
    ``title`` and ``text``, and ``link``: app-relative (``""`` for a doc passage)."""

    id: str
    lang: str
    title: str
    text: str
    link: str


# ---- plain text ---------------------------------------------------------------------------------------
_PLACEHOLDER_WORDS = {"k": "K", "n": "N", "total": "N"}


def _fill(template: str) -> str:
    """A lesson text with its placeholders (``{k}``, ``{n}``, ``{mrr}``) in words: ``K``, ``N``, ``...``."""
    template = re.sub(r"K = \{k\}", "K", template)
    return re.sub(r"\{(\w+)\}", lambda m: _PLACEHOLDER_WORDS.get(m.group(1), "..."), template)


def plain(md: str) -> str:
    """Markdown to plain text: links to their text, no emphasis, backticks, HTML tags or comments,
    heading anchors, table pipes; whitespace collapsed (paragraph breaks kept as one blank line).

    >>> plain("**Divide** by `k`, see [Conventions](docs/conventions.md#metrics) {#x}")
    'Divide by k, see Conventions'
    """
    s = re.sub(r"<!--.*?-->", " ", md, flags=re.S)
    s = re.sub(r"!\[[^\]]*\]\([^)]*\)", " ", s)                  # images
    s = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", s)               # links -> their text
    s = re.sub(r"\{#[\w-]+\}", " ", s)                           # heading anchors
    s = re.sub(r"</?(?:a|br|span|div|details|summary|sup|sub|p|b|i|em|strong|code)\b[^>]*>", " ", s)  # html tags
    s = s.replace("**", "").replace("`", "").replace("\\|", "|")
    s = re.sub(r"(?<!\w)\*(\S[^*\n]*?)\*(?!\w)", r"\1", s)        # *emphasis*
    lines: list[str] = []
    last_row = False
    for line in s.splitlines():
        t = line.strip()
        if re.fullmatch(r"\|?[\s:|-]+\|?", t) and "-" in t:       # a table's rule: its header row goes too
            if last_row:
                lines.pop()
            last_row = False
            continue
        last_row = t.startswith("|")
        if last_row:                                             # a row: "first: the others; ...".
            cells = [c.strip() for c in t.strip("|").split("|")]
            first, rest = cells[0], [c for c in cells[1:] if c]
            t = (f"{first}: " if first and rest else first) + "; ".join(rest) + "."
        lines.append(t)
    paras = re.split(r"\n\s*\n", "\n".join(lines))
    return "\n\n".join(" ".join(p.split()) for p in paras if p.strip())


# ---- the lessons --------------------------------------------------------------------------------------
def _lessons() -> tuple:
    """The course's lessons (``COURSE``), or lesson 2 alone when the course module is not there."""
    try:
        from rag_metrics.lesson.course import COURSE
        return tuple(COURSE)
    except ImportError:  # pragma: no cover - the course framework is part of the lab since issue 49
        from types import SimpleNamespace

        from rag_metrics.lesson.steps import QUIZ, STEPS
        return (SimpleNamespace(key="retrieval", number=2, steps=STEPS, quiz=QUIZ),)


def _text(key: str, lang: str) -> str:
    from rag_metrics.lesson.texts import TEXTS

    row = TEXTS.get(key)
    return _fill(row.get(lang) or row.get("en", "")) if row else ""


def _lesson_passages(lang: str) -> Iterator[Passage]:
    from rag_metrics.lesson.texts import TEXTS

    for les in _lessons():
        base = f"lesson.{les.key}"
        title = _text(f"lesson.{les.key}.title", lang)
        intro = _text(f"lesson.{les.key}.intro", lang)
        if title or intro:
            yield Passage(base, lang, title or les.key, plain(intro or title), f"lesson?lesson={les.key}")
        for n, step in enumerate(les.steps, start=1):
            link = f"lesson?lesson={les.key}&step={n}"
            st_title = plain(_text(step.title, lang)) or step.key
            body = plain(_text(step.body, lang))
            if body:
                yield Passage(f"{base}.step.{step.key}", lang, st_title, body, link)
            for task in step.tasks:
                prefix = f"opt.{task.option_prefix or task.key}."
                options = [plain(_fill(row.get(lang) or row["en"])) for key, row in TEXTS.items()
                           if key.startswith(prefix)]
                parts = [plain(_text(task.prompt, lang))]
                if options:
                    parts.append(("Options: " if lang == "en" else "Svarmuligheder: ") + "; ".join(options) + ".")
                hint = plain(_text(task.hint, lang))
                if hint:
                    parts.append(("Hint: " if lang == "en" else "Ledetråd: ") + hint)
                text = " ".join(p for p in parts if p)
                if text:
                    yield Passage(f"{base}.step.{step.key}.task.{task.key}", lang, st_title, text, link)


# ---- the exercises ------------------------------------------------------------------------------------
def _mistakes_of(name: str, extra: tuple[str, ...]) -> list[str]:
    """The keys of exercise ``name``'s known mistakes (:data:`rag_metrics.exercises.mistakes.MISTAKES`): lesson 2's
    in the diagnosis order of :mod:`~rag_metrics.exercises.mistakes`; a later lesson's (registered by its own
    module, keys prefixed as ``faith_`` for ``faithfulness``, ``rel_`` for ``answer_relevancy``, ``pd_`` for
    ``paired_difference``) by that prefix: a part of the name, or its initials."""
    from rag_metrics.exercises import mistakes

    order: dict[str, tuple[str, ...]] = getattr(mistakes, "_ORDER", {})
    keys: dict[str, None] = {}
    for fn in (name, *extra):
        keys.update(dict.fromkeys(order.get(fn, ())))
    if not keys:
        ordered = {k for ks in order.values() for k in ks}
        initials = "".join(w[:1] for w in name.split("_"))       # paired_difference: pd_
        keys = dict.fromkeys(k for k in mistakes.MISTAKES if k not in ordered and (
            (pre := k.split("_")[0]) == initials or (len(pre) >= 3 and pre in name)))
    return [k for k in keys if k in mistakes.MISTAKES]


def _exercise_passages(lang: str) -> Iterator[Passage]:
    from rag_metrics.exercises import mistakes
    from rag_metrics.exercises.catalogue import EXERCISES

    words = {"en": ("example", "Hint", "Conventions of the lesson's code", "A likely mistake"),
             "da": ("eksempel", "Ledetråd", "Konventioner i lektionens kode", "En sandsynlig fejl")}[lang]
    li = 1 if lang == "da" else 0
    for ex in EXERCISES:
        base, link = f"exercise.{ex.name}", f"exercises?exercise={ex.name}"
        title = plain(ex.text("title", lang))
        yield Passage(base, lang, title, plain(ex.text("prompt", lang)), link)
        examples = ex.examples.get(lang) or ex.examples.get("en", ())
        for i, e in enumerate(examples, start=1):
            yield Passage(f"{base}.example.{i}", lang, f"{title}: {words[0]} {i}", plain(e), link)
        hints = ex.hints.get(lang) or ex.hints.get("en", ())
        for i, h in enumerate(hints, start=1):
            yield Passage(f"{base}.hint.{i}", lang, f"{title}: {words[1]} {i}", plain(h), link)
        conv = ex.conventions.get(lang) or ex.conventions.get("en", ())
        if conv:
            yield Passage(f"{base}.conventions", lang, f"{title}: {words[2]}", plain("; ".join(conv)) + ".", link)
        for key in _mistakes_of(ex.name, tuple(ex.extra_functions)):
            yield Passage(f"{base}.mistake.{key}", lang, f"{title}: {words[3]}", plain(mistakes.MISTAKES[key][li]),
                          link)


# ---- the docs -----------------------------------------------------------------------------------------
def docs_dir() -> Path:
    """The project's ``docs/`` folder (beside the package in the source tree; may not exist when installed)."""
    return Path(__file__).resolve().parents[2] / "docs"


def _slug(heading: str) -> str:
    """mkdocs' default anchor of a heading (lower case, words joined by ``-``)."""
    s = re.sub(r"[^\w\s-]", "", heading.lower()).strip()
    return re.sub(r"[\s]+", "-", s)


def _parts(text: str) -> list[str]:
    """``text`` cut at paragraph ends into parts of at most about :data:`MAX_PART` characters."""
    out: list[str] = []
    cur = ""
    for para in text.split("\n\n"):
        if len(cur) >= MIN_PART and len(cur) + len(para) > MAX_PART:
            out.append(cur)
            cur = para
        else:
            cur = f"{cur}\n\n{para}" if cur else para
    if cur:
        out.append(cur)
    return out


def _doc_sections(md: str) -> Iterator[tuple[str, str, str]]:
    """``(anchor, heading, body)`` of a page, cut at its ``##``/``###`` headings and at a paragraph that
    opens with an HTML anchor (``<a id="ranking"></a>**Ranking.** ...``, its heading the bold words); the
    part above the first cut has anchor ``""``.  Code blocks are left out."""
    anchor, heading, body = "", "", list[str]()
    in_code = False
    for line in md.splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue          # code blocks are not course text the tutor quotes
        m = re.match(r"(#{1,3})\s+(.*)$", line)
        a = re.match(r"\s*(?:-\s+)?<a id=\"([\w-]+)\"></a>\s*(?:\*\*([^*]+)\*\*)?", line)
        if m and len(m.group(1)) >= 2:
            yield anchor, heading, "\n".join(body)
            raw = m.group(2)
            explicit = re.search(r"\{#([\w-]+)\}", raw)
            heading = plain(raw)
            anchor = explicit.group(1) if explicit else _slug(heading)
            body = []
        elif m:
            continue          # the page's own title
        elif a:
            yield anchor, heading, "\n".join(body)
            anchor = a.group(1)
            heading = plain(a.group(2) or "").rstrip(".") or anchor.replace("-", " ").capitalize()
            body = [line]
        else:
            body.append(line)
    yield anchor, heading, "\n".join(body)


def _doc_passages(lang: str) -> Iterator[Passage]:
    root = docs_dir()
    for path, page_title, skip in DOC_PAGES:
        file = root / path
        if not file.is_file():
            continue
        page = "doc." + path.removesuffix(".md").replace("/", ".")
        for anchor, heading, body in _doc_sections(file.read_text(encoding="utf-8")):
            if anchor in skip:
                continue
            text = plain(body)
            if not text:
                continue
            title = f"Docs: {page_title}" + (f": {heading}" if heading else "")
            for i, part in enumerate(_parts(text), start=1):
                pid = f"{page}#{anchor or 'intro'}"
                yield Passage(pid if i == 1 else f"{pid}.{i}", lang, title, part, "")


# ---- all ----------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=4)
def course_passages(lang: str) -> tuple[Passage, ...]:
    """Every passage of the course in ``lang`` (``"en"`` or ``"da"``), in the course's order: lessons,
    exercises, docs (English, in both languages).  Cached per process."""
    if lang not in LANGS:
        raise InputError(f"the tutor speaks {' and '.join(LANGS)}, not {str(lang)[:20]!r}")
    out = [*_lesson_passages(lang), *_exercise_passages(lang), *_doc_passages(lang)]
    seen: set[str] = set()
    for p in out:
        if p.id in seen:  # a programming error in the course's data: ids must stay unique
            raise InputError(f"two tutor passages have the id {p.id!r}")
        seen.add(p.id)
    return tuple(out)


def passage_map(lang: str) -> dict[str, Passage]:
    """``{id: passage}`` of :func:`course_passages`."""
    return {p.id: p for p in course_passages(lang)}
