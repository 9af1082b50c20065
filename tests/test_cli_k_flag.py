"""``--k`` means cutoffs in every command (issue 51): the depth of ``retrieve`` is ``--depth``, the pool depth
of ``judge-relevance`` is ``--pool-depth``; the old spelling still works for one release, with a warning."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_metrics.cli import main
from rag_metrics.cli._common import RENAMED_GO_IN


@pytest.fixture()
def beir(tmp_path: Path) -> Path:
    d = tmp_path / "tiny"
    d.mkdir()
    docs = {"1": "Refunds are paid within 30 days.", "2": "Shipping takes five days.", "3": "Warranty: two years."}
    (d / "corpus.jsonl").write_text("".join(json.dumps({"id": i, "title": "", "text": t}) + "\n"
                                            for i, t in docs.items()))
    (d / "queries.jsonl").write_text(json.dumps({"id": "q1", "text": "refund days"}) + "\n")
    return d


def _retrieve(beir: Path, out: Path, *flag: str) -> int:
    return main(["retrieve", "--corpus", str(beir), "--queries", str(beir / "queries.jsonl"), "--retriever", "bm25",
                 "--level", "document", "--out", str(out), *flag])


def test_depth_is_the_results_per_query(beir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _retrieve(beir, tmp_path / "r.trec", "--depth", "2") == 0
    assert len((tmp_path / "r.trec").read_text().splitlines()) == 2
    assert "is now" not in capsys.readouterr().err


def test_old_k_still_works_and_says_what_it_is_now(beir: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert _retrieve(beir, tmp_path / "r.trec", "--k", "1") == 0
    assert len((tmp_path / "r.trec").read_text().splitlines()) == 1
    err = capsys.readouterr().err
    assert "--k is now --depth" in err and RENAMED_GO_IN in err


def test_a_bad_value_is_named_as_typed(beir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _retrieve(beir, tmp_path / "r.trec", "--depth", "0") == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith("--depth must be at least 1, got 0.")


def test_judge_relevance_takes_pool_depth_and_the_old_k(capsys: pytest.CaptureFixture[str]) -> None:
    for flag in ("--pool-depth", "--k"):
        assert main(["judge-relevance", flag, "3", "--help"]) == 0
    help_text = capsys.readouterr().out
    assert "--pool-depth N" in help_text and "--k N" not in help_text   # the old spelling is not advertised
