"""The golden session of each corpus (:class:`rag_metrics.authoring.golden_session.GoldenSession` in
``st.session_state[_golden]``): the one working copy, loaded from the workspace (or the shipped set) and
changed only through its methods, which autosave atomically and record conflicts.  The golden editor saves
from its ``on_change`` callback (:func:`on_golden_edit`), never on a rerun.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rag_metrics.authoring.golden_change import save_outcome
from rag_metrics.authoring.golden_session import GoldenSession
from rag_metrics.errors import InputError
from rag_metrics.retrieval.chunking import DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE
from rag_metrics.types import GoldenSet
from rag_metrics.workspace.store import Workspace, read_through
from ui import cache, context
from ui import session as ui_session
from ui.context import SAMPLE, esc, is_sample
from ui.corpora import chunking, corpus_entry, lesson_language
from ui.keys import EDITOR_PREFIX, GOLDEN, KEY_CORPUS, LABEL_QUEUE, TOKEN
from ui.session import notice, notice_also, notice_outcome
from ui.spaces import workspace

__all__ = ["golden_editor", "golden_judge", "golden_keep_mine", "golden_reload", "golden_reset", "golden_session",
           "on_golden_edit", "reset_wording"]


def _read_through(name: str, ws: Workspace, seed: GoldenSet | None) -> GoldenSet | None:
    """The set a space shows while it saved none of its own: the shared one it reads through
    (copy-on-write: the first change saves a private copy), else ``seed``."""
    source = read_through(name, ws.space)
    if source is not ws:
        try:
            loaded = source.load()
        except InputError:
            loaded = None
        if loaded is not None:
            return loaded[0]
    return seed


def _session(name: str | None = None) -> tuple[GoldenSession, bool]:
    """The golden session of a corpus, and whether it just took a teacher's change (a reset or a push of
    the shared set, :mod:`rag_metrics.workspace.versions`: the student is told; an action decided on the
    old set is dropped)."""
    ss = ui_session.store()
    name = name or ss.get(KEY_CORPUS, SAMPLE)
    session = ss[GOLDEN].get(name)
    if session is None:
        ws, seed = workspace(name), corpus_entry(name).seed_golden
        shipped = seed if seed is not None else GoldenSet((), name=name)  # what "Reset" restores, in every space
        session = GoldenSession(ws, _read_through(name, ws, seed), name=name, session_id=ss.get(TOKEN, "session"),
                                shipped=shipped)
        ss[GOLDEN][name] = session
        return session, False
    change = session.outdated()  # one stat() when nothing moved
    if change is None:
        return session, False
    from rag_metrics.lesson.texts import teacher_change_text  # the lesson's texts: loaded when needed only

    refused = session.teacher_change is not None
    session.reload(seed=_read_through(name, session.workspace, corpus_entry(name).seed_golden))
    ss.pop(LABEL_QUEUE, None)
    notice_also(teacher_change_text("golden", change.kind, lesson_language(), refused=refused))
    return session, True


def golden_session(name: str | None = None) -> GoldenSession:
    """The golden session of a corpus: loaded from the workspace, else the seed set; a teacher's change
    made since is taken first (and the student told)."""
    return _session(name)[0]


def golden_editor(relevant_as_text: bool) -> tuple[str, int, Any]:
    """``(widget key, table id, base table)`` of the golden editor.  A new base (and key) when the
    set changed elsewhere or the editor's own state was dropped (another page was shown)."""
    session = golden_session()
    tid, table = session.table(relevant_as_text=relevant_as_text)
    if not ui_session.has(EDITOR_PREFIX + str(tid)) and not session.table_is_current:
        tid, table = session.table(relevant_as_text=relevant_as_text, rebuild=True)
    return EDITOR_PREFIX + str(tid), tid, table


def on_golden_edit(key: str, table_id: int) -> None:
    """The golden editor's ``on_change``: apply its edit state and autosave (once per edit)."""
    session, taken = _session()
    if taken:  # the edit was made on the set the teacher has just replaced: dropped (the notice says so)
        return
    out = session.apply_table_edits(table_id, ui_session.value(key) or {})
    if out.saved is not None and out.saved.teacher is not None:  # the teacher changed the set meanwhile
        _session()  # nothing was saved: take theirs, and say so
    elif out.saved is not None and out.saved.saved:
        notice("Saved", "toast")


def _golden_action(action: Callable[[GoldenSession], Any], done: str) -> Any:
    """Run ``action`` on the golden session with a notice for the next run, worded by what was saved
    (:func:`rag_metrics.authoring.golden_change.save_outcome`: green only when it was written); an
    ``InputError`` becomes an error notice."""
    session, taken = _session()
    if taken:  # decided on the set the teacher has just replaced: dropped (the notice says so)
        return None
    try:
        res = action(session)
    except InputError as err:
        notice(f"Could not change the golden set: {esc(str(err))}", "error")
        return None
    if getattr(res, "teacher", None) is not None:  # the teacher changed the set meanwhile: nothing saved
        _session()  # take it, and say so
        return None
    notice_outcome(save_outcome(session, res, done), escaped=True)
    return res


def golden_keep_mine() -> None:
    _golden_action(lambda s: s.keep_mine(), "Your version is saved.")


def golden_reload() -> None:
    session = golden_session()
    beside = session.conflict_path
    session.reload()
    notice("Loaded the saved golden set." + (f" Your copy stays in {esc(str(beside))}." if beside else ""), "info")


def golden_judge(query_id: str, item_id: str, grade: int) -> None:
    """A label queue button: judge one id for one question (the editor's path; autosaved)."""
    what = f"relevant (grade {grade})" if grade > 0 else "not relevant"
    _golden_action(lambda s: s.judge(query_id, item_id, grade),
                   f"Labelled {esc(item_id)} as {what} for {esc(query_id)}; every metric is updated.")


def reset_wording(name: str | None = None) -> tuple[str, str, str]:
    """What resetting the golden set of corpus ``name`` does, in words: (button, question, notice)
    (:func:`ui.context.reset_wording`)."""
    name = name or ui_session.value(KEY_CORPUS, SAMPLE)
    sample = is_sample(name)
    return context.reset_wording(sample, not sample and corpus_entry(name).seed_golden is not None)


def golden_reset() -> None:
    """Restore the seed set (the shipped set, the queries an uploaded corpus came with, or none), its labels
    carried to the current chunking when it differs."""
    name = ui_session.value(KEY_CORPUS, SAMPLE)
    entry = corpus_entry(name)
    size, overlap = chunking(name)
    old = new = None
    if entry.level == "chunk" and (size, overlap) != (DEFAULT_CHUNK_SIZE, DEFAULT_CHUNK_OVERLAP):
        old = cache.chunk_set(entry.corpus, entry.fingerprint, DEFAULT_CHUNK_SIZE, DEFAULT_CHUNK_OVERLAP).chunks
        new = cache.chunk_set(entry.corpus, entry.fingerprint, size, overlap).chunks
    _golden_action(lambda s: s.reset(old, new), reset_wording(name)[2])
