"""What students read (issue 27): no "Right. Right: …", no server path, a quiz that names the
convention it asks about."""
from __future__ import annotations

from app_helpers import goto, no_exception
from rag_metrics.lesson.texts import LANGUAGES, TEXTS
from tests.test_app_class import edit_first, klass, shown_text  # noqa: F401


def test_no_verdict_repeats_right():
    right = {lang: TEXTS["ui.right"][lang].rstrip(".").lower() for lang in LANGUAGES}
    for key, texts in TEXTS.items():
        if key.endswith(".ok"):
            for lang in LANGUAGES:
                assert not texts[lang].lower().startswith(right[lang]), (key, lang, texts[lang])


def test_the_out_of_scope_quiz_names_its_convention():
    for lang in LANGUAGES:
        prompt = TEXTS["task.quiz_oos.prompt"][lang]
        assert "as in the lesson" in prompt and ("default" in prompt or "standard" in prompt)


def test_a_student_sees_no_server_path(klass):  # noqa: F811
    at = klass.tab("s")
    edit_first(at, "saved")
    goto(at, "pages/golden_set.py")
    no_exception(at)
    text = shown_text(at)
    assert "Autosaved" in text and str(klass.root) not in text and "/.rag_metrics" not in text
