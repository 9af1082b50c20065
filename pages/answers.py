"""Answers: faithfulness and answer relevancy with an LLM judge, offline approximations (context
support, answer-question similarity), reference similarity, and how each judge agrees with people
on the shipped labelled answers."""
from __future__ import annotations

from ui import answers
from ui.shell import ensure_shell

ensure_shell()

answers.render()
