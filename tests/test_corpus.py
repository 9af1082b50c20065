"""Corpus loading: folders, JSONL, BEIR folders, uploads; every error message asserted."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_metrics.errors import InputError, ValidationReport
from rag_metrics.io.corpus import MAX_FILE_BYTES, corpus_from_files, load_corpus, load_corpus_jsonl, parse_corpus_jsonl

DATASETS = Path("/work/shared/datasets")


def _write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


def _jsonl(rows: list[object]) -> str:
    return "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n"


# -- folders ---------------------------------------------------------------------------------------
def test_folder_ids_titles_and_order(tmp_path: Path) -> None:
    _write(tmp_path / "guides" / "setup.md", "Intro line\n\n## Setting up  \n\nDo this.")
    _write(tmp_path / "faq.txt", "# not a heading in txt\nQ and A")
    _write(tmp_path / "notes.markdown", "no heading here")
    _write(tmp_path / ".hidden" / "x.md", "# skipped")
    _write(tmp_path / "image.png", b"\x89PNG")
    corpus = load_corpus(tmp_path)
    assert [d.id for d in corpus] == ["faq", "guides/setup", "notes"]
    titles = {d.id: d.title for d in corpus}
    assert titles == {"faq": "faq", "guides/setup": "Setting up", "notes": "notes"}
    assert corpus.get("guides/setup").text == "Intro line\n\n## Setting up  \n\nDo this."
    assert corpus.name == tmp_path.name


def test_single_file(tmp_path: Path) -> None:
    p = _write(tmp_path / "one.md", "# One\ntext")
    corpus = load_corpus(p)
    assert [(d.id, d.title) for d in corpus] == [("one", "One")]


def test_empty_documents_are_skipped_with_a_warning(tmp_path: Path) -> None:
    _write(tmp_path / "a.md", "# A\ntext")
    _write(tmp_path / "blank.md", "  \n\n ")
    report = ValidationReport()
    corpus = load_corpus(tmp_path, report=report)
    assert [d.id for d in corpus] == ["a"]
    assert report.ok and len(report.warnings) == 1
    assert report.lines()[0] == f"warning: {tmp_path / 'blank.md'}: document 'blank' is empty; skipped."


def test_all_empty_folder(tmp_path: Path) -> None:
    _write(tmp_path / "blank.md", "")
    with pytest.raises(InputError, match="every document is empty; add text to the files"):
        load_corpus(tmp_path)


def test_folder_without_documents(tmp_path: Path) -> None:
    _write(tmp_path / "x.pdf", b"%PDF")
    with pytest.raises(InputError) as err:
        load_corpus(tmp_path)
    assert str(err.value) == (f"{tmp_path}: no .md or .txt files found; pass a folder of documents, "
                              "a .jsonl corpus, or a BEIR folder containing corpus.jsonl.")


def test_non_utf8_names_file_line_and_byte_offset(tmp_path: Path) -> None:
    p = _write(tmp_path / "latin.md", b"caf\n\nna\xefve")
    with pytest.raises(InputError) as err:
        load_corpus(tmp_path)
    msg = str(err.value)
    assert msg.startswith(f"{p}:3: not valid UTF-8: byte 0xEF at byte offset 7; re-encode the file as UTF-8")
    assert "iconv" in msg


def test_utf8_bom_is_removed(tmp_path: Path) -> None:
    _write(tmp_path / "bom.md", "\ufeff# Title\nbody".encode("utf-8"))
    (doc,) = load_corpus(tmp_path)
    assert doc.text.startswith("# Title") and doc.title == "Title"


def test_duplicate_ids_in_folder(tmp_path: Path) -> None:
    _write(tmp_path / "a.md", "one")
    p = _write(tmp_path / "a.txt", "two")
    with pytest.raises(InputError) as err:
        load_corpus(tmp_path)
    assert str(err.value) == (f"{p}: duplicate document id 'a': also from {tmp_path / 'a.md'}; "
                              "rename one of the files (ids are paths without extension).")


def test_oversized_file_and_limit_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = _write(tmp_path / "big.md", "x" * 100)
    with pytest.raises(InputError) as err:
        load_corpus(tmp_path, max_file_bytes=50)
    assert str(err.value) == (f"{p}: file is 100 bytes, over the 50-byte limit; split it, or raise "
                              "the limit with max_file_bytes= or the environment variable "
                              "RAG_METRICS_MAX_FILE_BYTES.")
    monkeypatch.setenv("RAG_METRICS_MAX_FILE_BYTES", "10")
    with pytest.raises(InputError, match="over the 10-byte limit"):
        load_corpus(tmp_path)
    assert len(load_corpus(tmp_path, max_file_bytes=100)) == 1
    assert MAX_FILE_BYTES == 5 * 1024 * 1024


def test_several_errors_are_counted(tmp_path: Path) -> None:
    _write(tmp_path / "a.md", b"\xff")
    _write(tmp_path / "b.md", b"\xfe")
    with pytest.raises(InputError) as err:
        load_corpus(tmp_path)
    assert "(and 1 more error(s)" in str(err.value)
    assert len(err.value.report.errors) == 2


# -- JSONL -----------------------------------------------------------------------------------------
def test_jsonl_title_folding_and_beir_id() -> None:
    text = _jsonl([
        {"id": "1", "title": "Wings", "text": "Lift and drag."},
        {"_id": 2, "title": "Only a title", "text": ""},
        {"id": "3", "title": "same start", "text": "same start . then more"},
        {"id": "4", "text": "no title"},
    ])
    corpus = parse_corpus_jsonl(text, "c.jsonl")
    docs = {d.id: d for d in corpus}
    assert docs["1"].text == "Wings\n\nLift and drag." and docs["1"].title == "Wings"
    assert docs["2"].text == "Only a title"
    assert docs["3"].text == "same start . then more"
    assert docs["4"].text == "no title" and docs["4"].title == "4"
    assert docs["1"].source == "c.jsonl:1"


@pytest.mark.parametrize(
    "lines, message",
    [
        (['{"id": "a", "text": "x"}', "{oops"],
         "c.jsonl:2: invalid JSON (Expecting property name enclosed in double quotes at column 2); "
         'each line must be one JSON object like {"id": "d1", "title": "...", "text": "..."}.'),
        (['{"id": "a", "title": "t"}'],
         "c.jsonl:1: document 'a' has no \"text\" field; add \"text\" (it may be \"\" when "
         '"title" is given).'),
        (['{"text": "x"}'],
         'c.jsonl:1: missing document id: add "id" (or BEIR "_id") with a string value.'),
        (['{"id": "a", "text": "x"}', "", '{"id": "a", "text": "y"}'],
         "c.jsonl:3: duplicate document id 'a' (first seen at c.jsonl:1); ids must be unique."),
        (['["a", "b"]'],
         'c.jsonl:1: expected a JSON object, got list; each line must look like {"id": "d1", '
         '"text": "..."}.'),
        (['{"id": "a", "text": 5}'],
         'c.jsonl:1: document \'a\': "text" must be a string, got int.'),
    ],
)
def test_jsonl_errors(lines: list[str], message: str) -> None:
    with pytest.raises(InputError) as err:
        parse_corpus_jsonl("\n".join(lines), "c.jsonl")
    assert str(err.value) == message


def test_jsonl_empty_document_warning() -> None:
    report = ValidationReport()
    corpus = parse_corpus_jsonl(_jsonl([{"id": "a", "text": "x"}, {"id": "b", "text": " "}]),
                                "c.jsonl", report=report)
    assert [d.id for d in corpus] == ["a"]
    assert report.lines() == ["warning: c.jsonl:2: document 'b' is empty (no text and no title); skipped."]


def test_jsonl_with_no_documents() -> None:
    with pytest.raises(InputError, match="c.jsonl: no documents found"):
        parse_corpus_jsonl("\n\n", "c.jsonl")


def test_jsonl_file_and_beir_folder(tmp_path: Path) -> None:
    rows = [{"id": "d1", "title": "T", "text": "body"}]
    f = _write(tmp_path / "beir" / "corpus.jsonl", _jsonl(rows))
    assert [d.id for d in load_corpus_jsonl(f)] == ["d1"]
    beir = load_corpus(tmp_path / "beir")
    assert beir.name == "beir" and beir.documents[0].text == "T\n\nbody"
    assert [d.id for d in load_corpus(f)] == ["d1"]


def test_jsonl_non_utf8_names_line(tmp_path: Path) -> None:
    p = _write(tmp_path / "c.jsonl", b'{"id": "a", "text": "x"}\n{"id": "b", "text": "\xe9"}\n')
    with pytest.raises(InputError) as err:
        load_corpus(p)
    assert str(err.value).startswith(f"{p}:2: not valid UTF-8: byte 0xE9 at byte offset 46;")


def test_missing_path_and_unsupported_type(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        load_corpus(tmp_path / "nope")
    assert str(err.value) == (f"{tmp_path / 'nope'}: corpus not found; pass a folder of .md/.txt "
                              "files, a .jsonl corpus, or a BEIR folder containing corpus.jsonl.")
    p = _write(tmp_path / "c.csv", "id,text")
    with pytest.raises(InputError, match=r"unsupported corpus file type '\.csv'"):
        load_corpus(p)


# -- uploads ---------------------------------------------------------------------------------------
def test_corpus_from_files() -> None:
    corpus = corpus_from_files({
        "b.md": b"# Bee\nbuzz",
        "sub/a.txt": b"ay",
        "more.jsonl": _jsonl([{"id": "x1", "text": "from jsonl"}]).encode(),
    })
    assert [d.id for d in corpus] == ["b", "x1", "sub/a"]
    assert corpus.get("b").title == "Bee"


def test_corpus_from_files_errors() -> None:
    with pytest.raises(InputError, match="no files given"):
        corpus_from_files({})
    with pytest.raises(InputError) as err:
        corpus_from_files({"doc.pdf": b"%PDF"})
    assert str(err.value) == "doc.pdf: unsupported file type '.pdf'; upload .md, .txt or a .jsonl corpus."
    with pytest.raises(InputError, match="over the 3-byte limit"):
        corpus_from_files({"a.md": b"abcd"}, max_file_bytes=3)
    with pytest.raises(InputError, match="every uploaded document is empty"):
        corpus_from_files({"a.md": b"  "})


# -- the shared collections ------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["cranfield", "cisi", "med", "adi", "cacm"])
def test_shared_collections_load(name: str) -> None:
    folder = DATASETS / name
    if not folder.is_dir():
        pytest.skip(f"{folder} not available")
    stats = json.loads((folder / "stats.json").read_text())
    report = ValidationReport()
    corpus = load_corpus(folder, report=report)
    # documents without text *and* title are skipped; title-only documents are kept
    assert len(corpus) + len(report.warnings) == stats["docs"]
    assert report.ok
    assert all(d.text.strip() for d in corpus)
