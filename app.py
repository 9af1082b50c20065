"""RAG Metrics Lab: entry point (``streamlit run app.py``, or ``python -m ui.launch`` as ``./lab`` does).

Sets the offline environment before any heavy import, then runs the shell (:mod:`ui.shell`):
``st.navigation`` over the files in ``pages/`` and the shared sidebar (corpus, retriever, K,
evaluation conventions).  Every page reads the same choices through ``ui.state.current()``.
"""
from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from ui import prewarm

prewarm.join()  # under `python -m ui.launch` the server imports the modules below meanwhile: wait for them
from ui import shell  # noqa: E402

shell.main()
