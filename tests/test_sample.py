"""Where the sample data is found: one function, a clear error when it is missing."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import rag_metrics.sample as sample
from rag_metrics.errors import InputError
from rag_metrics.sample import SAMPLE_DIR_ENV, sample_dir, sample_paths

CHECKOUT = Path(__file__).resolve().parent.parent / "sample_corpus"


def test_the_checkout_sample_folder_is_found(monkeypatch):
    monkeypatch.delenv(SAMPLE_DIR_ENV, raising=False)
    assert sample_dir() == CHECKOUT.resolve()
    p = sample_paths()
    assert (p.docs, p.golden, p.embeddings) == (CHECKOUT / "docs", CHECKOUT / "golden.jsonl", CHECKOUT / "embeddings")
    assert len(list(p.docs.glob("*.md"))) == 26 and p.golden.is_file() and (p.embeddings / "manifest.json").is_file()


def test_argument_then_environment_variable_choose_another_folder(tmp_path, monkeypatch):
    (tmp_path / "env" / "docs").mkdir(parents=True)
    (tmp_path / "arg" / "docs").mkdir(parents=True)
    monkeypatch.setenv(SAMPLE_DIR_ENV, str(tmp_path / "env"))
    assert sample_dir() == tmp_path / "env"
    assert sample_paths(tmp_path / "arg").golden == tmp_path / "arg" / "golden.jsonl"


def test_a_missing_sample_folder_is_one_clear_error_naming_the_setting(tmp_path, monkeypatch):
    monkeypatch.delenv(SAMPLE_DIR_ENV, raising=False)
    monkeypatch.setattr(sample, "_CHECKOUT_SAMPLE_DIR", tmp_path / "site-packages" / "sample_corpus")
    with pytest.raises(InputError) as err:
        sample_dir()
    msg = str(err.value)
    assert msg.startswith(f"{tmp_path / 'site-packages' / 'sample_corpus'}: the sample folder of this installation "
                          "does not exist.")
    assert f"set {SAMPLE_DIR_ENV} to a checkout's sample_corpus folder" in msg and "\n" not in msg
    # optional extras (the shipped embeddings) may ask without failing
    assert sample_paths(required=False).embeddings == tmp_path / "site-packages" / "sample_corpus" / "embeddings"
    monkeypatch.setenv(SAMPLE_DIR_ENV, str(tmp_path))
    with pytest.raises(InputError, match=rf"^{tmp_path}: \${SAMPLE_DIR_ENV} has no docs/ folder\."):
        sample_dir()


def test_the_embeddings_build_script_runs_outside_the_package(tmp_path):
    script = CHECKOUT.parent / "sample_corpus" / "build_embeddings.py"
    p = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "--check" in p.stdout
    p = subprocess.run([sys.executable, str(script), "--check", "--root", str(tmp_path)], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 2 and p.stdout == "" and "Traceback" not in p.stderr
    assert p.stderr.startswith(f"build_embeddings.py: error: {tmp_path}: the sample folder given has no docs/ folder.")
    assert not (Path(sample.__file__).parent / "retrieval" / "build_sample_cache.py").exists()
