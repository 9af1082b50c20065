"""Learn: a metric sandbox.  Edit one ranked list (grades, order, relevant ids not retrieved) and
watch every metric's arithmetic at K; the lesson's scenarios in one click; the conventions."""
from __future__ import annotations

from ui import learn
from ui.shell import ensure_shell

ensure_shell()

learn.render()
