"""The loopback OpenAI-compatible server of ``answers_server`` with scripted replies for the
drafting and relevance prompts (tests only).

``script(prompt) -> reply text`` decides each chat reply; :func:`default_script` recognises the
drafting prompt (writes a question from the passage's words) and UMBRELA's prompt (grades by the
number of content words the query shares with the passage).  ``Scenario.faults`` still applies
(a substring of the prompt -> ``http500``, ``refusal``, ``slow``...), and ``replies`` overrides
the reply of any prompt containing a key (garbage, HTML, JSON lists, huge replies).
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable

from answers_server import JudgeServer, Scenario, _Handler

from rag_metrics.authoring.drafting.questions import content_words


def _passages(prompt: str) -> list[str]:
    parts = re.split(r"\nPassage(?: \d)?:\n", prompt)
    return [p.strip() for p in parts[1:]]


def draft_reply(prompt: str) -> str:
    cat = re.search(r"Category: ([a-z_]+)\.", prompt).group(1)  # type: ignore[union-attr]
    words = [w for w in content_words(" ".join(_passages(prompt))) if len(w) > 3]
    w = (words + ["thing", "stuff", "item", "widget"])[:4]
    q = {"factual": f"what is the {w[0]} limit for {w[1]} on the {w[2]} plan?",
         "comparison": f"how do {w[0]} and {w[1]} differ for {w[2]}?",
         "procedural": f"how do I set up {w[0]} {w[1]} from my phone?",
         "out_of_scope": f"can I pay for {w[0]} with bitcoin?"}[cat]
    return json.dumps({"question": q})


def umbrela_reply(prompt: str) -> str:
    query = re.search(r"\nQuery: (.*)\n", prompt).group(1)  # type: ignore[union-attr]
    passage = prompt.split("\nPassage: ", 1)[1].split("\n\nSplit this problem", 1)[0]
    shared = len(set(content_words(query)) & set(content_words(passage)))
    grade = min(3, shared)
    return f"M: {grade}, T: 2\n##final score: {grade}"


def default_script(prompt: str) -> str:
    if prompt.startswith("You write test questions"):
        return draft_reply(prompt)
    if prompt.startswith("Given a query and a passage"):
        return umbrela_reply(prompt)
    return "I do not know this prompt."


class _ScriptHandler(_Handler):
    def _reply(self, prompt: str) -> str:
        srv: ScriptedJudge = self.server  # type: ignore[assignment]
        for key, reply in srv.replies.items():
            if key in prompt:
                return reply
        return srv.script(prompt)


class ScriptedJudge(JudgeServer):
    def __init__(self, script: Callable[[str], str] | None = None, scenario: Scenario | None = None,
                 replies: dict[str, str] | None = None) -> None:
        super().__init__(scenario)
        self.RequestHandlerClass = _ScriptHandler
        self.script = script or default_script
        self.replies = dict(replies or {})
