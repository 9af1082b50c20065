"""The whole lesson in Danish, end to end (issue 27): switching the lesson to Danish selects the Danish sample
and its golden set, every step's numbers are the Danish corpus's (the cards, the task prompts, the right
answers), and no English corpus text (questions, chunk ids, the English handbook's name) shows in a
Danish step's main area; the code exercises' checks run on the Danish golden set too."""
from __future__ import annotations

import json

from test_app_danish import DA, LABEL, danish_result

from app_helpers import app_golden, goto, no_exception
from rag_metrics.io.golden import load_golden
from rag_metrics.lesson import STEPS
from rag_metrics.lesson import steps as LSteps
from rag_metrics.metrics.registry import METRICS
from rag_metrics.sample import sample_paths
from ui.views import fmt

K = 5


def _english_texts() -> list[str]:
    """Text only the English sample has: its questions, its chunk and document ids, its name."""
    golden = load_golden(sample_paths(language="en").golden)
    ids = {i for q in golden for i in q.relevant}
    return ["Lumen", *(q.question for q in golden), *(i for i in ids if "#" in i)]


def _main_text(at) -> str:
    """Everything the page's main area shows: texts, widget labels and options, table cells."""
    main = at.main
    parts: list[str] = []
    for kind in ("title", "subheader", "markdown", "caption", "info", "success", "warning", "error", "code"):
        parts += [str(e.value) for e in getattr(main, kind)]
    for kind in ("selectbox", "radio", "multiselect"):
        for w in getattr(main, kind):
            parts += [str(w.label), *(str(o) for o in w.options)]
    parts += [f"{m.label} {m.value}" for m in main.metric]
    parts += [df.value.to_csv() for df in main.dataframe]
    return "\n".join(parts).replace("\\", "")


def _da(v: float) -> str:
    return fmt(v, 3).replace(".", ",")


def test_the_lesson_in_danish_runs_on_the_danish_corpus_at_every_step(app):
    at = goto(app, "pages/lesson.py")
    at.segmented_control(key="lesson_lang").set_value("da").run()
    no_exception(at)
    assert at.selectbox(key="corpus").value == DA
    assert [q.id for q in app_golden(at, DA)] == [q.id for q in load_golden(sample_paths(language="da").golden)]
    result = danish_result()
    english = _english_texts()
    danish_questions = [q.question for q in result.golden]
    for i, step in enumerate(STEPS):
        at.selectbox(key="lesson_step_pick").set_value(i).run()
        no_exception(at)
        text = _main_text(at)
        leaked = [t for t in english if t in text]
        assert not leaked, (step.key, leaked[:5])
        # the step's live numbers are the Danish evaluation's, in Danish notation
        want = {METRICS[m].label + ("" if k is None else f"@{k}"): _da(v)
                for m, k, v in LSteps.live_numbers(step, result, K, "ndcg")}
        shown = {m.label: m.value for m in at.main.metric if m.label in want}
        assert shown == want, step.key
        if want:
            assert LABEL in text, step.key  # the Danish sample's name (sample_corpus_da/sample.json)
        if step.key in ("recall", "disagree", "failures"):  # tasks that list the set's questions
            assert any(q in text for q in danish_questions), step.key
    # a task's prompt counts the Danish questions, and the Danish answer is the right one
    at.selectbox(key="lesson_step_pick").set_value([s.key for s in STEPS].index("hit_rate")).run()
    assert f"de {result.n_queries} spørgsmål" in _main_text(at)
    right = round((result.mean("hit_rate", 10) - result.mean("hit_rate", 1)) * result.n_queries)
    at.text_input(key="lesson_ans_hit_count").input(str(right)).run()
    at.button(key="lesson_check_hit_count").click().run()
    no_exception(at)
    assert at.success and "Rigtigt" in at.success[0].value
    at.selectbox(key="lesson_step_pick").set_value([s.key for s in STEPS].index("mrr")).run()
    assert _da(result.mean("mrr")) in _main_text(at)


def test_the_code_exercises_check_the_danish_golden_set(app):
    at = goto(app, "pages/lesson.py")
    at.segmented_control(key="lesson_lang").set_value("da").run()
    at = goto(at, "pages/exercises.py")
    comps = list(at.get("bidi_component"))
    if not comps:  # the browser assets are not built here: the checks are still built server-side
        checks = at.session_state["_ex_checks"][2]
        payload = json.dumps([c.args for c in checks], ensure_ascii=False, default=str)
    else:
        payload = json.loads(comps[0].proto.json)["payload"]
    assert any(q.question in payload for q in danish_result().golden)
    assert not [t for t in _english_texts() if t in payload]


def test_the_precision_steps_targets_read_in_danish(app):
    at = goto(app, "pages/lesson.py")
    at.segmented_control(key="lesson_lang").set_value("da").run()
    at.selectbox(key="lesson_step_pick").set_value([s.key for s in STEPS].index("precision")).run()
    no_exception(at)
    result = danish_result()
    lines = [str(e.value).replace("\\", "") for e in (*at.main.info, *at.main.success, *at.main.warning)]
    precision = next(t for t in lines if t.startswith("Precision@5 = "))
    assert precision.startswith(f"Precision@5 = {_da(result.mean('precision', 5))} (mål > 0,6; bedst mulige")
    assert "Uden for rækkevidde" in precision and "spørgsmål" in precision and "Out of reach" not in precision
    assert any(t.startswith("MRR (hele rangeringen) = ") for t in lines), lines
