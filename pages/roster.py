"""Class (teacher only, class mode): the seats of the class and their cleanup.  Anyone else who
reaches this page by its URL gets a refusal and nothing more."""
from __future__ import annotations

from ui import identity
from ui.shell import ensure_shell

ensure_shell()

identity.class_page()
