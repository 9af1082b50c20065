"""``python -m ui.launch [options]``: ``streamlit run app.py [options]``, with :mod:`ui.prewarm`.

``./lab app`` and every process of ``./lab class`` start the app this way: the app's modules are
imported while the first browser loads the page, instead of after it has asked for the first run.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "app.py"


def main(argv: list[str] | None = None) -> None:
    for k, v in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("TOKENIZERS_PARALLELISM", "false")):
        os.environ.setdefault(k, v)  # as app.py sets them, before any heavy import
    from rag_metrics.server import classlog
    from ui import prewarm, teacher_route, upload_budget

    classlog.configure()  # sign-ins, sign-outs, wrong guesses and refusals, with time and address, to stderr
    teacher_route.install()  # the teacher's HttpOnly cookie is set by the server (POST /_lab/teacher-session)
    upload_budget.install()  # every session's uploads under lab.budgets (the PUT endpoint keeps files in memory)
    prewarm.start()
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    cli.main()


if __name__ == "__main__":
    main()
