"""Write the tutor's shipped vectors (rag_metrics/tutor/embeddings/): every passage of the course in both
languages, and the questions of the tutor's golden set (embeddings/queries/), with multilingual e5-small.

Run after editing the course's texts (a passage whose text changed since is otherwise embedded when the
tutor's index is built)::

    HF_HUB_OFFLINE=1 .venv/bin/python tools/ship_tutor_embeddings.py
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag_metrics.tutor.retrieve import SHIPPED, ship_embeddings

if __name__ == "__main__":
    n, q = ship_embeddings()
    print(f"wrote {n} passage vectors and {q} question vectors to {SHIPPED}")
