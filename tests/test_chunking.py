"""Chunking: exact spans, stable ids, bounded overlap, boundary preference, argument checks."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_metrics.errors import InputError
from rag_metrics.retrieval.chunking import (
    DEFAULT_CHUNK_OVERLAP,
    DEFAULT_CHUNK_SIZE,
    chunk_corpus,
    chunk_document,
    chunk_spans,
    chunk_to_doc,
)
from rag_metrics.types import Corpus, Document


def _sentences(n: int, words: int = 8) -> str:
    return " ".join(f"Sentence {i} " + " ".join(["word"] * words) + "." for i in range(n))


def _check_invariants(text: str, spans: list[tuple[int, int]], size: int, overlap: int) -> None:
    for s, e in spans:
        assert 0 <= s < e <= len(text)
        assert e - s <= size
        assert not text[s].isspace() and not text[e - 1].isspace()
    for (s1, e1), (s2, e2) in zip(spans, spans[1:]):
        assert s2 > s1 and e2 > e1
        assert max(0, e1 - s2) <= overlap  # shared characters
    covered = set()
    for s, e in spans:
        covered.update(range(s, e))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())


def test_defaults_are_module_constants() -> None:
    assert (DEFAULT_CHUNK_SIZE, DEFAULT_CHUNK_OVERLAP) == (500, 100)


def test_chunk_text_is_exact_span_and_ids_count_from_zero() -> None:
    doc = Document("guides/setup", _sentences(40))
    chunks = chunk_document(doc, 200, 40)
    assert len(chunks) > 3
    assert [c.id for c in chunks] == [f"guides/setup#{i}" for i in range(len(chunks))]
    for c in chunks:
        assert c.doc_id == "guides/setup"
        assert c.text == doc.text[c.start:c.end]
    _check_invariants(doc.text, [(c.start, c.end) for c in chunks], 200, 40)


def test_deterministic() -> None:
    doc = Document("d", _sentences(30))
    assert chunk_document(doc, 120, 30) == chunk_document(doc, 120, 30)


def test_short_document_is_one_chunk_without_surrounding_whitespace() -> None:
    doc = Document("d", "\n\n  Hello there.  \n")
    (c,) = chunk_document(doc)
    assert c.text == "Hello there." and (c.start, c.end) == (4, 16)


def test_whitespace_only_document_gives_no_chunks() -> None:
    assert chunk_document(Document("d", " \n\t ")) == []
    assert chunk_document(Document("d", "")) == []


def test_prefers_paragraph_boundaries() -> None:
    paras = [f"P{i} " + "x" * 150 + "." for i in range(6)]  # 156 chars each
    text = "\n\n".join(paras)
    spans = chunk_spans(text, 400, 0)
    # two paragraphs (314 chars) fit; the chunk must end at the end of a paragraph
    for s, e in spans:
        assert text[s:e].startswith("P") and text[s:e].endswith(".")
    assert text[spans[0][0]:spans[0][1]] == "\n\n".join(paras[:2])


def test_falls_back_to_sentence_boundaries() -> None:
    text = _sentences(20)  # one paragraph, sentences of ~58 chars
    spans = chunk_spans(text, 150, 0)
    for _, e in spans[:-1]:
        assert text[e - 1] == "."


def test_falls_back_to_whitespace_then_hard_cut() -> None:
    words = " ".join(["alpha"] * 100)  # no sentence punctuation
    spans = chunk_spans(words, 64, 0)
    for s, e in spans:
        assert words[s:e].split(" ") == ["alpha"] * len(words[s:e].split(" "))  # whole words
    blob = "x" * 230
    assert chunk_spans(blob, 100, 0) == [(0, 100), (100, 200), (200, 230)]


def test_overlap_starts_on_a_sentence_when_possible() -> None:
    text = _sentences(20)
    spans = chunk_spans(text, 200, 80)
    assert len(spans) > 2
    for (_, e1), (s2, _) in zip(spans, spans[1:]):
        assert 0 < e1 - s2 <= 80  # really overlapping, bounded
        assert text[s2:].startswith("Sentence")  # starts at a sentence start


def test_zero_overlap_chunks_are_disjoint() -> None:
    text = _sentences(20)
    spans = chunk_spans(text, 150, 0)
    for (_, e1), (s2, _) in zip(spans, spans[1:]):
        assert s2 >= e1


@pytest.mark.parametrize(
    "size, overlap, message",
    [
        (49, 0, "chunk size must be at least 50 characters, got 49; the default is 500."),
        (100, 100, "chunk overlap (100) must be smaller than chunk size (100)"),
        (100, -1, "chunk overlap must be 0 or more characters, got -1."),
        ("500", 10, "chunk size must be a whole number of characters, got '500'"),
        (500, 1.5, "chunk overlap must be a whole number of characters, got 1.5"),
        (True, 0, "chunk size must be a whole number"),
    ],
)
def test_invalid_arguments(size: object, overlap: object, message: str) -> None:
    with pytest.raises(InputError) as err:
        chunk_document(Document("d", "text"), size, overlap)  # type: ignore[arg-type]  # bad input on purpose
    assert message in str(err.value)


def test_chunk_corpus_keeps_document_order_and_maps_to_docs() -> None:
    corpus = Corpus((Document("b", _sentences(10)), Document("a", "Short."),
                     Document("empty", "  ")))
    chunks = chunk_corpus(corpus, 200, 50)
    assert chunks[0].id == "b#0" and chunks[-1].id == "a#0"
    assert chunk_to_doc(chunks)["a#0"] == "a"
    assert all(c.doc_id != "empty" for c in chunks)


_alphabet = st.sampled_from(list("abc de.!?\n\n\t,") + ["Word", ". ", "\n\n", "  "])


@settings(max_examples=200, deadline=None)
@given(st.lists(_alphabet, max_size=400).map("".join),
       st.integers(50, 200), st.integers(0, 49))
def test_invariants_hold_for_any_text(text: str, size: int, overlap: int) -> None:
    spans = chunk_spans(text, size, overlap)
    _check_invariants(text, spans, size, overlap)
    assert spans == chunk_spans(text, size, overlap)
