"""A fresh start on the sample corpus embeds nothing and never loads the model (shipped embeddings)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from rag_metrics.sample import sample_paths

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = r"""
import json, sys
from streamlit.testing.v1 import AppTest
at = AppTest.from_file("app.py", default_timeout=120)
at.run()
print(json.dumps({"exceptions": [str(e.value) for e in at.exception],
                  "torch": "torch" in sys.modules,
                  "sentence_transformers": "sentence_transformers" in sys.modules,
                  "cards": [m.value for m in at.metric][:6]}))
"""


def test_first_start_with_empty_user_cache_loads_no_model(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "RAG_METRICS_CACHE": str(tmp_path / "cache"),
           "RAG_METRICS_WORKSPACE": str(tmp_path / "ws")}
    p = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["exceptions"] == []
    assert len(out["cards"]) == 6
    assert not out["torch"] and not out["sentence_transformers"], "the model was loaded on a cold start"


def test_shipped_sample_embeddings_are_up_to_date():
    p = subprocess.run([sys.executable, "sample_corpus/build_embeddings.py", "--check"], cwd=ROOT,
                       env={**os.environ, "HF_HUB_OFFLINE": "1"}, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == "up to date", (
        p.stdout + p.stderr + "\nrebuild with: python sample_corpus/build_embeddings.py")
    manifest = json.loads((sample_paths().embeddings / "manifest.json").read_text())
    assert sum(i.startswith("question:") for i in manifest["chunk_ids"]) >= 60
