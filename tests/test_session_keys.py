"""Every session key is named in ui/keys.py (issue 25): no module of ui/ or pages/ spells one as a string.

A key written as a string literal where the session is read or written (``st.session_state["x"]``,
``ss.get("x")``, ``state.value("x")``, ``"x" in st.session_state``, ...) fails this test; import its name from
``ui.keys`` instead (a key made per item: a function there).
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_LIT = r"""[rbfuRBFU]{0,2}["']"""  # the start of a string literal (f-strings included)
_SESSION = r"(?:\bst\.session_state|\bsession_state|\bss)"
_ACCESSORS = r"(?:\bstate|\bsession)\.(?:value|default|set_value|pop|keep_choice|set_widget)"
PATTERNS = [
    re.compile(_SESSION + r"\s*\[\s*" + _LIT),                                     # ss["x"]
    re.compile(_SESSION + r"\.(?:get|pop|setdefault|__contains__)\(\s*" + _LIT),     # ss.get("x")
    re.compile(_ACCESSORS + r"\(\s*" + _LIT),                                       # state.value("x")
    re.compile(r"(?<![.\w])(?:keep_choice|set_widget)\(\s*" + _LIT),                # keep_choice("x", ...)
    re.compile(_LIT + r"[^\"'\n]*[\"']\s+(?:not\s+)?in\s+" + _SESSION + r"\b"),      # "x" in ss
]


def offending_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if any(p.search(line) for p in PATTERNS)]


def test_the_patterns_find_a_literal_key() -> None:
    found = offending_lines('a = st.session_state["x"]\nb = ss.get(f"k_{i}")\nstate.value("lesson")\n'
                            'if "x" in st.session_state:\n    pass\nkeep_choice("pick", [], 1)\n')
    assert len(found) == 5
    assert offending_lines("a = st.session_state[KEY]\nb = ss.get(draft_text(i))\nstate.value(LANG, 'en')\n") == []


def test_no_session_key_is_spelled_outside_ui_keys() -> None:
    files = sorted([*ROOT.glob("ui/*.py"), *ROOT.glob("pages/*.py")])
    assert files
    bad = {str(f.relative_to(ROOT)): lines for f in files if f.name != "keys.py" or f.parent.name != "ui"
           for lines in [offending_lines(f.read_text(encoding="utf-8"))] if lines}
    assert not bad, f"session keys written as strings (name them in ui/keys.py): {bad}"
