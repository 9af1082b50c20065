"""AppTest of lesson 3, "Generation metrics" (issue 49): a student walks every step in English and in Danish, passes
each task with the live answer (a wrong one first gets the task's hint), sees each step's example, and the judge step
says honestly that the class has no judge and is passable without it; no English text on the Danish path."""
from __future__ import annotations

import pytest

from app_helpers import goto, no_exception
from rag_metrics.lesson import generation as G
from ui.keys import lesson_answer

PAGE = "pages/lesson.py"


def _right(key: str, lang: str) -> str | None:
    """The right answer of task ``key`` from the lab's engine (typed as the student types it)."""
    numbers = {"l3_supported_n": float(sum(G.example().supported)), "l3_share": G.extra_claim_share(),
               "l3_rel_value": next(s.value for r, s in G.relevancy_rows() if r.item.id == G.RELEVANCY_EXAMPLE)}
    if key in numbers:
        v = numbers[key]
        s = str(int(v)) if v == int(v) else f"{v:.3f}"
        return s.replace(".", ",") if lang == "da" else s
    return None


def _main_text(at) -> str:
    parts: list[str] = []
    for kind in ("title", "subheader", "markdown", "caption", "info", "success", "warning", "error"):
        parts += [str(e.value) for e in getattr(at.main, kind)]
    for w in list(at.main.radio) + list(at.main.selectbox):
        parts += [str(w.label), *(str(o) for o in w.options)]
    parts += [f"{m.label} {m.value}" for m in at.main.metric]
    return "\n".join(parts).replace("\\", "")


def _answer(at, task, lang: str) -> None:
    if task.kind == "choice":
        at.radio(key=lesson_answer(task.key)).set_value(task.answer).run()
    elif task.kind == "number":
        at.text_input(key=lesson_answer(task.key)).input(_right(task.key, lang)).run()
    at.button(key=f"lesson_check_{task.key}").click().run()
    no_exception(at)


@pytest.mark.parametrize("lang", ["en", "da"])
def test_a_student_walks_lesson_three(app, app_env, lang):
    at = goto(app, PAGE)
    if lang == "da":
        at.segmented_control(key="lesson_lang").set_value("da").run()
    at.button(key="lesson_course_generation").click().run()
    no_exception(at)
    title = G.TEXTS["lesson.generation.title"][1 if lang == "da" else 0]
    assert any(title in t.value for t in at.title)
    english = [en for key, (en, da) in G.TEXTS.items() if en != da and len(en) > 12] + \
        [en for en in G.SAMPLE_DA if len(en) > 12]
    for i, step in enumerate(G.LESSON.steps):
        at.selectbox(key="lesson_step_pick").set_value(i).run()
        no_exception(at)
        text = _main_text(at)
        assert G.TEXTS[step.body][1 if lang == "da" else 0].split("\n")[0].replace("*", "")[:40] in \
            text.replace("*", ""), step.key
        if lang == "da":
            leaked = [e for e in english if e in text]
            assert not leaked, (step.key, leaked[:3])
        if step.key == "l3_claims":   # the example: its claims, a column per chunk
            assert G.example().item.id in text and ("Chunk 5" in text)
        if step.key == "l3_relevancy":
            assert all(r.item.id in text for r, _ in G.relevancy_rows())
        if step.key == "l3_judge":    # no judge in the tests' configuration: said so, and the step passes
            assert any("[lab.judge]" in e.value for e in at.main.info)
        for n, task in enumerate(step.tasks):
            if task.kind == "number" and n == 0:   # a wrong answer first: the task's hint, not a pass
                at.text_input(key=lesson_answer(task.key)).input("9").run()
                at.button(key=f"lesson_check_{task.key}").click().run()
                assert at.warning and G.TEXTS[task.hint][1 if lang == "da" else 0][:30] in at.warning[0].value
            _answer(at, task, lang)
            ok = G.TEXTS[task.ok][1 if lang == "da" else 0]
            assert any(ok[:40] in s.value for s in at.success), (step.key, task.key)
    done = "6 af 6" if lang == "da" else "6 of 6"
    assert any(done in str(p.text) for p in at.main.get("progress")) or done in _main_text(at)


def test_with_the_class_judge_the_step_runs_it_on_the_students_own_question(app_env, monkeypatch, tmp_path):
    """A loopback OpenAI-compatible judge as lab.judge: the student picks a golden question, writes an answer with
    an invented detail, runs the judge, and sees the judge's part (claims, verdicts, generated questions) beside the
    arithmetic's part; the task then passes."""
    from answers_server import JudgeServer, Scenario
    from streamlit.testing.v1 import AppTest

    from app_helpers import ROOT

    invented = "Refunds are paid back within 90 days."
    with JudgeServer(Scenario(unsupported={invented})) as srv:
        cfg = tmp_path / "lab.toml"
        cfg.write_text(f'[lab.judge]\nbase_url = "{srv.base_url}"\nchat_model = "class-model"\n'
                       'embed_model = "class-embed"\n')
        monkeypatch.setenv("RAG_METRICS_CONFIG", str(cfg))
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
        at.run()
        goto(at, PAGE)
        at.button(key="lesson_course_generation").click().run()
        at.selectbox(key="lesson_step_pick").set_value(4).run()
        no_exception(at)
        assert not any("[lab.judge]" in e.value for e in at.main.info)
        key = lesson_answer("l3_judge_run")
        at.text_area(key=key + "_a").input(f"Free accounts get 2 GB of storage. {invented}").run()
        at.button(key=key + "_run").click().run()
        no_exception(at)
        text = _main_text(at)
        assert "class-model" in text and "Faithfulness = 1 / 2 = 0.500" in text
        assert "Answer relevancy = (" in text and srv.chat_requests() >= 2
        claims = at.main.dataframe[0].value
        assert list(claims.iloc[:, 1]) == ["yes", "no"] and invented in list(claims.iloc[:, 0])
        at.button(key="lesson_check_l3_judge_run").click().run()
        assert any(G.TEXTS["task.l3_judge_run.ok"][0][:40] in s.value for s in at.success)
