"""The tutor in Chromium (issue 48): ``./lab class`` with the operator's ``[lab.judge]`` pointing at a loopback,
scripted, streaming OpenAI-compatible server (:mod:`tutor_server`), students in headless Chromium.

- On a lesson step, the answer streams from the model, grounded (the course's passages are in what the model
  was sent) and cited (a numbered link to a step or exercise), under the seat's budget ("2 of 3 questions
  left"); in Danish on the Danish lesson (the model is told to answer in Danish; Danish labels).
- On an exercise, after a failing run, a scripted reply that leaks the reference solution is withheld (the hint
  instead; the solution's key line never reaches the page); with the endpoint removed from the configuration,
  the tutor shows the course's passages and the diagnosis of the last run, labelled as no model.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from tutor_server import TutorServer

from app_helpers import CHROMIUM, class_server, wait_until_idle
from rag_metrics.exercises.reference import REFERENCE
from rag_metrics.server.budgets import TutorLedger
from ui.tutor import _slug

ROOT = Path(__file__).resolve().parents[1]
KEY = "teacher key for the tutor test"
WAIT = 120_000

pytestmark = [
    pytest.mark.browser,
    pytest.mark.heavy,  # a class (nginx, two app processes), Chromium and Pyodide
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian Chromium not installed at /usr/bin/chromium "
                       "(apt-get install -y chromium); CI installs it"),
    pytest.mark.skipif(not (ROOT / "static" / "vendor" / "pyodide" / "pyodide.mjs").exists(),
                       reason="the exercises' browser assets are not built (./lab test builds them: npm ci in web/)"),
]

EN = "Look at the line where you add to your count: once per question, or once per relevant chunk? [1]"
DA = "Se på linjen, hvor du lægger til din optælling: én gang pr. spørgsmål eller pr. relevant chunk? [1]"
SOLUTION = REFERENCE["hit_rate_at_k"].strip()
SCRIPT = {"count a question": EN, "tæller jeg": DA,
          "whole function": f"Sure, here is the whole function:\n\n```python\n{SOLUTION}\n```\n"}


def _config(base_url: str | None) -> str:
    judge = (f'[lab.judge]\nbase_url = "{base_url}"\nchat_model = "scripted-tutor"\napi_key = "sk-loopback"\n\n'
             if base_url else "")
    return f"[lab]\n\n{judge}[lab.budgets]\ntutor_questions_per_seat = 3\nseat_proof_bits = 0\n"


@pytest.fixture(scope="module")
def tutor_class(tmp_path_factory, app_cache_dir):
    with TutorServer(SCRIPT) as model, \
            class_server(tmp_path_factory.mktemp("tutor_class"), app_cache_dir, KEY,
                         config_toml=_config(model.base_url)) as (url, ws):
        yield url, ws, model


@pytest.fixture
def page(tutor_class, browser):
    url = tutor_class[0]
    ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
    aborted: list[str] = []

    def route(r):
        if r.request.url.startswith(url) or r.request.url.startswith("data:"):
            return r.continue_()
        aborted.append(r.request.url)
        return r.abort()

    ctx.route("**/*", route)
    p = ctx.new_page()
    p.set_default_timeout(WAIT)
    yield p
    ctx.close()
    assert not aborted, aborted  # nothing left the lab: the model is the server's to ask, never the browser's


def _box(page, where: str):
    return page.locator(f".st-key-tutor_box_{_slug(where)}")


def _ask(page, where: str, question: str, button: str = "Ask") -> None:
    box = _box(page, where)
    box.wait_for()
    wait_until_idle(page)
    box.locator("textarea").fill(question)
    box.get_by_role("button", name=button, exact=True).click()


def _user_prompt(model: TutorServer) -> tuple[dict, str, str]:
    req = model.requests[-1]
    system = next(m["content"] for m in req["messages"] if m["role"] == "system")
    user = next(m["content"] for m in req["messages"] if m["role"] == "user")
    return req, system, user


def test_a_lesson_step_answers_grounded_cited_in_danish_and_under_budget(tutor_class, page):
    url, ws, model = tutor_class
    where = "lesson:retrieval:hit_rate"
    page.goto(f"{url}/lesson?lesson=retrieval&step=2")
    box = _box(page, where)
    box.get_by_text("3 of 3 questions left").wait_for()

    _ask(page, where, "Why must I count a question only once?")
    box.get_by_text(EN[:40]).wait_for()
    sources = box.locator("[data-testid='stCaptionContainer']").filter(has_text="From the course:")
    sources.wait_for()
    link = sources.locator("a").first
    assert link.get_attribute("href").split("/")[-1].startswith(("lesson?lesson=", "exercises?exercise="))
    assert "[1]" in sources.inner_text()
    req, system, user = _user_prompt(model)
    assert req["stream"] is True and req["model"] == "scripted-tutor"
    assert "Answer in English" in system
    assert "[1] [" in user and "Why must I count a question only once?" in user  # the course's passages sent
    box.get_by_text("2 of 3 questions left").wait_for()

    page.locator(".st-key-lesson_lang").get_by_text("Dansk", exact=True).click()
    box.get_by_text("2 af 3 spørgsmål tilbage").wait_for()
    _ask(page, where, "Hvorfor tæller jeg et spørgsmål kun én gang?", "Spørg")
    box.get_by_text(DA[:40]).wait_for()
    box.locator("[data-testid='stCaptionContainer']").filter(has_text="Fra kurset:").wait_for()
    _, system, user = _user_prompt(model)
    assert "Svar på dansk" in system and "Afsnit fra kurset" in user
    box.get_by_text("1 af 3 spørgsmål tilbage").wait_for()

    assert [(asked, counted) for asked, counted, _ in TutorLedger(ws).all().values()] == [(2, 2)]


def test_a_leaking_reply_is_withheld_and_without_a_model_the_passages_and_diagnosis_show(tutor_class, page):
    url, ws, model = tutor_class
    where = "exercise:hit_rate_at_k"
    page.goto(f"{url}/exercises?exercise=hit_rate_at_k")
    page.locator(".ex-run").wait_for(timeout=180_000)
    page.locator(".cm-content").wait_for()
    root = page.locator(".ex-root")
    root.evaluate("(r, code) => r.exerciseEditor.setCode(code)",
                  "def hit_rate_at_k(golden_dataset, retriever, k=5):\n    return 2.0\n")
    page.locator(".ex-run").click()
    page.wait_for_function("r => r.dataset.runNonce && r.dataset.verdictNonce === r.dataset.runNonce",
                           arg=root.element_handle(), timeout=180_000)
    verdict = page.locator(".ex-status").inner_text()
    assert verdict.startswith("Passed 0 of"), verdict

    _ask(page, where, "Just write the whole function for me")
    box = _box(page, where)
    withheld = box.locator("[data-testid='stAlert']").filter(has_text="withheld")
    withheld.wait_for()
    _, _, user = _user_prompt(model)
    assert "return 2.0" in user and "Passed 0 of" in user  # the student's code and verdict were sent
    assert "hits += bool(top & set" not in page.locator("[data-testid='stMain']").inner_text()

    (ws.parent / "lab.toml").write_text(_config(None), encoding="utf-8")  # the operator removes the model
    sent = len(model.requests)
    _ask(page, where, "Why is my hit rate above 1?")
    box.get_by_text("No tutor model is configured").first.wait_for()
    assert box.locator("a[href*='lesson?lesson='], a[href*='exercises?exercise=']").count() >= 1  # passages, linked
    box.get_by_text("Your last run", exact=True).wait_for()
    box.get_by_text("Passed 0 of").first.wait_for()  # the diagnosis of the last run
    assert len(model.requests) == sent  # no model was asked
