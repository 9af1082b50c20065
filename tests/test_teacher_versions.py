"""Issue 50: the teacher's changes to a student's files are versioned, and a save never writes an older
copy over them (compare-and-swap on the generation, under the file's lock: rag_metrics.workspace.versions).

A student's session is a ``ProgressStore`` / ``GoldenSession`` that loaded before the teacher's reset or
push; its next save must be refused (nothing written), and the session then holds the teacher's state."""
from __future__ import annotations

from rag_metrics.authoring.golden_session import GoldenSession
from rag_metrics.lesson import Progress, store_for_space, teacher, teacher_change_text
from rag_metrics.types import GoldenQuery, GoldenSet
from rag_metrics.workspace import versions
from rag_metrics.workspace.store import Workspace, space_dir

SPACE, CORPUS = "private-ada", "sample_corpus"
SHARED = GoldenSet((GoldenQuery("q1", "shared?", "factual", {"a": 1}),), name=CORPUS)
PUSHED = GoldenSet((GoldenQuery("p1", "pushed?", "factual", {"b": 1}),), name=CORPUS)


def _two_steps_done() -> Progress:
    return Progress().with_answer("why_pick", "mrr", True).with_step(3)


def test_a_stale_progress_save_is_refused_after_the_teachers_reset(tmp_path):
    store = store_for_space(SPACE, tmp_path)
    store.save(_two_steps_done())
    held, generation = store.load_versioned()           # the student's open Lesson page
    assert held.step == 3 and generation == 0
    assert teacher.reset_student(SPACE, CORPUS, golden=False, root=tmp_path) == ["progress"]
    refused = store.save(held.with_step(2), generation)  # her next click ("Previous step")
    assert refused is not None and refused.kind == "reset" and refused.generation == 1
    assert store.load() == Progress()                   # the reset holds
    p, generation = store.load_versioned()              # the session takes the new state, then saves on
    assert store.save(p.with_step(1), generation) is None and store.load().step == 1


def test_a_reset_keeps_the_lessons_language_and_writes_nothing_for_an_unused_seat(tmp_path):
    store = store_for_space(SPACE, tmp_path)
    store.save(_two_steps_done().with_language("da"))
    teacher.reset_progress([SPACE, "private-unused"], tmp_path)
    assert store.load() == Progress(language="da")
    assert teacher_change_text("progress", "reset", "da", refused=True) == (
        "Din lærer har nulstillet dine fremskridt: lektionen starter forfra fra trin 1. Det, du lige gjorde, blev "
        "ikke gemt: gør det igen, hvis du stadig vil.")  # what her open Lesson page then says, in her language
    assert teacher_change_text("golden", "push") == "Your teacher replaced your golden set with the class's shared set."
    assert not space_dir("private-unused", tmp_path).exists()  # a new seat still costs nothing on disk


def _student(tmp_path) -> tuple[Workspace, GoldenSession]:
    """A student who saved a private golden set and keeps the editor open."""
    Workspace(CORPUS, tmp_path).save(SHARED, None)
    ws = Workspace(CORPUS, tmp_path, space=SPACE)
    s = GoldenSession(ws, SHARED, name=CORPUS, session_id="ada")
    s.replace(GoldenSet((*SHARED, GoldenQuery("mine", "my own?", "factual", {"c": 1})), name=CORPUS))
    assert ws.path.exists() and [q.id for q in s.golden] == ["q1", "mine"]
    return ws, s


def test_a_stale_golden_save_is_refused_after_the_teachers_reset(tmp_path):
    ws, s = _student(tmp_path)
    teacher.reset_student(SPACE, CORPUS, progress=False, root=tmp_path)
    assert s.outdated() is not None and s.outdated().kind == "reset"  # noticed before the next save
    res = s.replace(GoldenSet((*s.golden, GoldenQuery("more", "more?", "factual", {})), name=CORPUS))
    assert res is not None and not res.saved and res.teacher is not None and res.conflict_path is None
    assert not ws.path.exists()                          # her whole old set was not saved back
    s.reload(seed=SHARED)                                # the session takes the shared set again
    assert [q.id for q in s.golden] == ["q1"] and s.outdated() is None
    s.replace(GoldenSet((*s.golden, GoldenQuery("new", "new?", "factual", {})), name=CORPUS))
    assert [q.id for q in ws.load()[0]] == ["q1", "new"]  # and saves on from there


def test_a_stale_golden_save_is_refused_after_the_teachers_push_even_when_forced(tmp_path):
    ws, s = _student(tmp_path)
    assert teacher.push_golden(PUSHED, CORPUS, [SPACE], tmp_path) == [SPACE]
    res = s.keep_mine()                                  # a forced save of her old copy
    assert res is not None and res.teacher is not None and res.teacher.kind == "push"
    assert [q.id for q in ws.load()[0]] == ["p1"]        # the push holds
    assert [q.id for q in s.golden] == ["p1"]            # and is what the session now holds
    assert versions.current(space_dir(SPACE, tmp_path), versions.golden_target(CORPUS)).generation == 1
