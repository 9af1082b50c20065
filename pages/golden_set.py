"""Golden set editor: table editing, labelling with retrieval, import/export, reset; autosaved.

Every change goes through the corpus's golden session (:mod:`rag_metrics.authoring.golden_session`): the
table saves from the editor's ``on_change`` callback, once per edit; a rerun parses nothing."""
from __future__ import annotations

from ui import golden_set
from ui.shell import ensure_shell

ensure_shell()

golden_set.render()
