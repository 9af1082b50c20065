"""Evidence judging (rag_metrics.metrics.evidence): the rule, the locator and the properties issue 28 asks for.

- with the lab's own chunking, evidence judging equals chunk judging;
- a perfect retriever scores hit@1 = MRR = 1 under any chunking;
- the same retrieval as lab chunk ids, as their texts and as sections holding them gives one hit rate.
"""
from __future__ import annotations

import re
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_metrics import Run
from rag_metrics.evaluation import evaluate
from rag_metrics.io.corpus import load_corpus
from rag_metrics.io.golden import load_golden, parse_golden
from rag_metrics.metrics.evidence import (
    UNLOCATED_LIMIT,
    CorpusIndex,
    EvidenceJudge,
    held_grade,
    query_passages,
)
from rag_metrics.retrieval.chunking import chunk_corpus
from rag_metrics.sample import sample_dir
from rag_metrics.types import Evidence, GoldenQuery, GoldenSet

METRICS = ("hit_rate", "mrr", "precision", "recall", "ndcg", "map")


@cache
def sample():
    d = sample_dir()
    corpus = load_corpus(str(d / "docs"))
    chunks = chunk_corpus(corpus)
    return corpus, chunks, load_golden(d / "golden.jsonl"), load_golden(d / "golden_evidence.jsonl")


def sections(text: str) -> list[tuple[int, int]]:
    """Spans of a markdown document's sections (a new section at every heading line), stripped."""
    starts = [0] + [m.start() for m in re.finditer(r"(?m)^#{1,6} ", text) if m.start() > 0]
    out = []
    for a, b in zip(starts, starts[1:] + [len(text)]):
        seg = text[a:b]
        lead = len(seg) - len(seg.lstrip())
        a2, b2 = a + lead, a + len(seg.rstrip())
        if b2 > a2:
            out.append((a2, b2))
    return out


def windows(text: str, size: int = 800, step: int = 400) -> list[tuple[int, int]]:
    return [(a, min(a + size, len(text))) for a in range(0, max(len(text) - size, 0) + step, step)]


def units(corpus, kind: str) -> dict[str, tuple[str, int, int]]:
    """``{unit id: (doc, start, end)}`` of one chunking of the sample."""
    if kind == "lab":
        return {c.id: (c.doc_id, c.start, c.end) for c in sample()[1]}
    out = {}
    for d in corpus:
        spans = {"sections": sections, "windows": windows, "documents": lambda t: [(0, len(t))]}[kind](d.text)
        for n, (a, b) in enumerate(spans):
            out[f"{kind}:{d.id}:{n}"] = (d.id, a, b)
    return out


def text_judge(corpus, unit_spans, chunks=()):
    texts = {u: corpus.get(d).text[a:b] for u, (d, a, b) in unit_spans.items()}
    return EvidenceJudge(CorpusIndex.of(corpus), chunks, texts)


# ---- the rule ----------------------------------------------------------------------------------------
def test_held_grade_rule_by_hand():
    # passage of 400 characters, grade 3
    assert held_grade(3, 400, 400) == 3          # the whole passage
    assert held_grade(3, 120, 400) == 3          # 30% of it
    assert held_grade(3, 60, 400) == 3           # a sentence (60 characters)
    assert held_grade(3, 59, 400) == 2           # a fragment: one grade lower
    assert held_grade(1, 20, 400) == 1           # ... never below 1
    assert held_grade(3, 19, 400) is None        # a sliver
    assert held_grade(0, 400, 400) == 0          # judged not relevant stays 0
    assert held_grade(2, 0, 400) is None


def test_build_golden_uses_the_rule():
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_golden", sample_dir() / "build_golden.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.chunk_grade is held_grade


# ---- worked examples of docs/evidence.md ---------------------------------------------------------------
DOC = ("Plans. The Free plan includes 2 GB of storage and sync on up to three devices. "
       "Plus costs 5 dollars a month and raises storage to 100 GB. Team adds shared workspaces and admin roles.")
QUOTE = "The Free plan includes 2 GB of storage and sync on up to three devices."


def tiny():
    idx = CorpusIndex({"plans": DOC, "other": "Nothing about storage here, only the weather and some trains."})
    golden = GoldenSet((GoldenQuery("q", "how much storage on free?", evidence=(Evidence("plans", 3, QUOTE),)),))
    return idx, golden


def judge_texts(texts: list[str]):
    idx, golden = tiny()
    ids = [f"ctx{i}" for i in range(len(texts))]
    ej = EvidenceJudge(idx, (), dict(zip(ids, texts)))
    res = evaluate(golden, Run.from_rankings({"q": ids}), evidence=ej)
    return res, list(res.judged.grades[0][: len(ids)])


def test_example_partial_overlap():
    q0 = DOC.index(QUOTE)
    # holds the last 39 of 71 characters (55% >= 30%): the passage's grade
    res, grades = judge_texts([DOC[q0 + 32: q0 + 72 + 40]])
    assert grades == [3]
    # holds its last 14 characters: a sliver, not relevant
    res, grades = judge_texts([DOC[q0 + 57:]])
    assert grades == [0] and res.mean("hit_rate", 1) == 0


def test_example_split_across_two_contexts():
    q0 = DOC.index(QUOTE)
    cut = q0 + 30  # "The Free plan includes 2 GB of" | " storage and sync ..."
    res, grades = judge_texts([DOC[:cut], DOC[cut:]])
    # 30 of 71 characters (42%) and 41 of 71 (58%): each holds the passage; it credits the first only
    assert grades == [3, 0]
    assert res.mean("hit_rate", 1) == 1 and res.mean("recall", 2) == 1 and res.mean("precision", 2) == 0.5


def test_example_two_contexts_same_passage():
    res, grades = judge_texts([DOC, QUOTE])
    assert grades == [3, 0]  # the second repeats a passage already found: not a second hit
    assert res.mean("recall", 2) == 1.0  # |R| = 1 passage, found once


def test_example_context_not_in_corpus():
    res, grades = judge_texts(["A paragraph from a different knowledge base entirely, about billing in euros."])
    assert grades == [0]
    assert res.located.unlocated_texts == 1 and res.unlocated_share == 1.0
    assert not res.comparable and "your corpus differs" in res.located.line()


def test_unlocated_ids_point_to_chunking():
    idx, golden = tiny()
    res = evaluate(golden, Run.from_rankings({"q": ["my-chunk-7", "my-chunk-9", "plans"]}), evidence=EvidenceJudge(idx))
    assert res.located.unlocated_ids == 2 and res.located.document == 1
    assert res.unlocated_share == 2 / 3 and not res.comparable
    assert "your chunking differs: label evidence, or evaluate at document level" in res.located.line()
    assert res.located.line().startswith("Not comparable: 2 of 3 contexts (67%)")
    assert res.mean("hit_rate", 3) == 1  # the document holds the passage
    # at the limit (half of them): the number stands, with the share and the fix beside it
    res = evaluate(golden, Run.from_rankings({"q": ["my-chunk-7", "plans"]}), evidence=EvidenceJudge(idx))
    assert res.unlocated_share == UNLOCATED_LIMIT == 0.5 and res.comparable
    assert res.located.line().startswith("1 of 2 contexts (50%) could not be located")


def test_limit_is_mostly():
    assert UNLOCATED_LIMIT == 0.5  # "computed mostly from contexts found nowhere" (docs/evidence.md)


# ---- locating ----------------------------------------------------------------------------------------------
def test_locate_exact_fuzzy_and_not_found():
    corpus, _, _, _ = sample()
    idx = CorpusIndex.of(corpus)
    assert CorpusIndex.of(corpus) is idx  # indexed once
    d = corpus.documents[5]
    a, b = 200, 700
    loc = idx.locate("  " + d.text[a:b].upper().replace(" ", "\n  ") + " ")
    assert (loc.doc, loc.start, loc.end, loc.kind) == (d.id, a, b, "exact")
    noisy = d.text[a:b].replace("the ", "teh ", 3).replace(".", "", 2)
    loc = idx.locate(noisy)
    assert loc.kind == "fuzzy" and loc.doc == d.id and abs(loc.start - a) <= 5 and abs(loc.end - b) <= 5
    assert not idx.locate("Quantum chromodynamics of the early universe, explained for cats.").located


def test_locate_markdown_stripped_section():
    corpus, _, _, _ = sample()
    idx = CorpusIndex.of(corpus)
    d = corpus.documents[2]
    a, b = sections(d.text)[1]
    stripped = d.text[a:b].replace("## ", "").replace("**", "")
    loc = idx.locate(stripped)
    assert loc.located and loc.doc == d.id and abs(loc.start - a) <= 5 and abs(loc.end - b) <= 5


def test_index_from_chunks_equals_corpus_texts():
    corpus, chunks, _, _ = sample()
    idx = CorpusIndex.of(chunks)
    for d in corpus:
        assert idx.texts[d.id].strip() == d.text.strip()


# ---- golden sets with evidence -------------------------------------------------------------------------------
def test_golden_evidence_file_loads_in_scope():
    _, _, golden, ev = sample()
    assert len(ev) == len(golden)
    assert sum(q.in_scope for q in ev) == sum(q.in_scope for q in golden)
    q1 = ev.get("q001")
    assert q1.evidence[0].doc == "plans-and-pricing" and q1.evidence[0].grade == 3


def test_evidence_round_trip_and_proposals_not_judged():
    text = ('{"id": "a", "question": "q?", "evidence": [{"doc": "plans", "quote": "2 GB", "grade": 2}, '
            '{"doc": "plans", "start": 0, "end": 6, "grade": 1, "status": "proposed", "score": 0.5}]}\n'
            '{"id": "b", "question": "r?", "ground_truth": "Two gigabytes."}\n')
    golden, report = parse_golden(text, "jsonl", "g.jsonl")
    assert report.ok
    a, b = golden.queries
    assert [e.reviewed for e in a.evidence] == [True, False] and a.evidence[1].start == 0
    assert a.in_scope and not b.in_scope and b.awaiting_labels
    from rag_metrics.io.golden import golden_to_text

    again, _ = parse_golden(golden_to_text(golden, "jsonl"), "jsonl")
    assert again.fingerprint() == golden.fingerprint()
    idx = CorpusIndex({"plans": DOC})
    assert [p.start for p in query_passages(a, idx, {})] == [DOC.index("2 GB")]  # the proposal is left out


def test_bad_evidence_items_are_named():
    text = '{"id": "a", "question": "q?", "evidence": [{"doc": "x"}, {"quote": "y", "grade": "high"}, 3]}\n'
    _, report = parse_golden(text, "jsonl", "g.jsonl")
    msgs = " | ".join(str(p) for p in report.errors)
    assert "neither a quote nor a start/end span" in msgs and "g.jsonl" in msgs
    assert "must be an object" in msgs and len(report.errors) == 3


def test_evidence_set_without_judge_is_refused_with_the_fix():
    _, _, _, ev = sample()
    from rag_metrics.errors import InputError

    with pytest.raises(InputError, match="evidence"):
        evaluate(ev, Run.from_rankings({"q001": ["plans-and-pricing#0"]}))


# ---- properties ------------------------------------------------------------------------------------------------
def _assert_same(a, b, ks=(1, 3, 5, 10), metrics=METRICS):
    for m in metrics:
        for k in ks:
            np.testing.assert_allclose(a.values(m, k), b.values(m, k), err_msg=f"{m}@{k}")


rankings = st.lists(st.integers(0, 191), min_size=0, max_size=12, unique=True)


@settings(max_examples=40, deadline=None)
@given(st.lists(rankings, min_size=76, max_size=76))
def test_lab_chunking_evidence_equals_chunk_judging(picks):
    """Chunk labels converted to evidence, judged on the lab's chunks: every metric unchanged."""
    corpus, chunks, golden, _ = sample()
    run = Run.from_rankings({q.id: [chunks[i].id for i in p] for q, p in zip(golden.queries, picks)})
    by_chunk = evaluate(golden, run)
    by_evidence = evaluate(golden, run, evidence=EvidenceJudge.for_chunks(chunks, corpus=corpus))
    np.testing.assert_array_equal(by_chunk.judged.grades, by_evidence.judged.grades)
    np.testing.assert_array_equal(by_chunk.judged.ideal_grades, by_evidence.judged.ideal_grades)
    _assert_same(by_chunk, by_evidence)
    assert by_evidence.located.share == 0  # an empty run is no verdict, but never for unlocated contexts
    assert by_evidence.no_verdict is None or by_evidence.no_verdict.kind != "unlocated"


@settings(max_examples=40, deadline=None)
@given(st.lists(rankings, min_size=76, max_size=76))
def test_sample_quotes_on_lab_chunks_equal_the_generated_chunk_labels(picks):
    """The sample's quotes (golden_evidence.jsonl) judged on lab chunks give the hit rate and MRR of
    golden.jsonl, which build_golden.py derived from the same quotes by the same rule."""
    corpus, chunks, golden, ev = sample()
    run = Run.from_rankings({q.id: [chunks[i].id for i in p] for q, p in zip(golden.queries, picks)})
    a = evaluate(golden, run)
    b = evaluate(ev, run, evidence=EvidenceJudge.for_chunks(chunks, corpus=corpus))
    _assert_same(a, b, metrics=("hit_rate", "mrr"))


def _holder(passage, unit_spans):
    """The unit holding most of ``passage``."""
    best, best_ov = None, 0
    for u, (d, a, b) in unit_spans.items():
        if d == passage.doc:
            ov = min(b, passage.end) - max(a, passage.start)
            if ov > best_ov:
                best, best_ov = u, ov
    return best


@pytest.mark.parametrize("kind", ["lab", "sections", "documents", "windows"])
@pytest.mark.parametrize("labels", ["chunk ids", "quotes"])
def test_perfect_retriever_scores_one_under_any_chunking(kind, labels):
    corpus, chunks, golden, ev = sample()
    gs = golden if labels == "chunk ids" else ev
    spans = units(corpus, kind)
    ej = text_judge(corpus, spans, chunks) if kind != "lab" else EvidenceJudge.for_chunks(chunks, corpus=corpus)
    rng = np.random.default_rng(0)
    ids = list(spans)
    ranked = {}
    for q in gs.queries:
        if not q.in_scope:
            continue
        ps = [p for p in query_passages(q, ej.index, ej.cores) if p.grade > 0]
        top = _holder(max(ps, key=lambda p: p.grade), spans)
        ranked[q.id] = [top] + [ids[i] for i in rng.choice(len(ids), 4, replace=False) if ids[i] != top]
    if kind != "lab":  # give the units as texts, as a RAG log would
        ej = text_judge(corpus, spans, chunks)
    res = evaluate(gs, Run.from_rankings(ranked), evidence=ej)
    assert res.mean("hit_rate", 1) == 1.0 and res.mean("mrr") == 1.0
    assert res.located.unlocated == 0


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_same_retrieval_as_ids_texts_and_sections_same_hit_rate(data):
    """A retrieval of lab chunks: given as chunk ids, as the chunks' texts, and as the markdown
    sections containing them, hit@k is the same for every k."""
    corpus, chunks, golden, _ = sample()
    ej = EvidenceJudge.for_chunks(chunks, corpus=corpus)
    sec = units(corpus, "sections")
    by_ids, by_texts, by_sections = {}, {}, {}
    texts = {}
    for q in golden.queries:
        if not q.in_scope:
            continue
        labelled_docs = {p.doc for p in query_passages(q, ej.index, ej.cores)}
        # a relevant chunk lying inside one section, or none (a miss), at a random rank among distractors
        # from documents the query has no label in (their sections hold no evidence either)
        rel = [c for c in chunks if q.relevant.get(c.id, 0) > 0
               and any(d == c.doc_id and a <= c.start and c.end <= b for d, a, b in sec.values())]
        others = [c for c in chunks if c.doc_id not in labelled_docs]
        picks = data.draw(st.lists(st.sampled_from(others), min_size=2, max_size=4, unique_by=lambda c: c.doc_id))
        if rel and data.draw(st.booleans()):
            picks.insert(data.draw(st.integers(0, len(picks))), data.draw(st.sampled_from(rel)))
        by_ids[q.id] = [c.id for c in picks]
        by_texts[q.id] = [f"t:{c.id}" for c in picks]
        by_sections[q.id] = []
        for c in picks:
            texts[f"t:{c.id}"] = c.text
            s = next(u for u, (d, a, b) in sec.items() if d == c.doc_id and a <= c.start < b)
            texts[s] = corpus.get(c.doc_id).text[sec[s][1]:sec[s][2]]
            by_sections[q.id].append(s)
    judge_texts_ = EvidenceJudge(ej.index, chunks, texts)
    a = evaluate(golden, Run.from_rankings(by_ids))
    b = evaluate(golden, Run.from_rankings(by_texts), evidence=judge_texts_)
    c = evaluate(golden, Run.from_rankings(by_sections), evidence=judge_texts_)
    for k in (1, 2, 3, 5):
        assert a.mean("hit_rate", k) == b.mean("hit_rate", k) == c.mean("hit_rate", k)
    assert b.located.unlocated == 0 and c.located.unlocated == 0


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=list("ab Z.,\n\t\x1c"), max_size=40))
def test_normalise_fast_path_equals_the_general_one(text):
    """ASCII text takes a vectorised path; it maps every character as the general path does."""
    from rag_metrics.metrics.evidence import _normalise

    n, pos = _normalise(text)
    n2, pos2 = _normalise(text + " é")  # a non-ASCII character forces the general path
    assert n2.startswith(n) and list(pos) == list(pos2)[: len(n)]
    assert all(text[p].isspace() if c == " " else text[p].lower() == c for c, p in zip(n, pos))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_any_span_of_the_corpus_is_placed_where_it_is(data):
    """A context cut anywhere from a document (whitespace reflowed, case changed) is placed at its
    own span, or at an identical text elsewhere."""
    corpus, _, _, _ = sample()
    idx = CorpusIndex.of(corpus)
    d = data.draw(st.sampled_from(corpus.documents))
    a = data.draw(st.integers(0, len(d.text) - 80))
    b = data.draw(st.integers(a + 60, min(len(d.text), a + 1500)))
    piece = d.text[a:b]
    if not piece.strip():
        return
    variant = data.draw(st.sampled_from([piece, piece.upper(), " ".join(piece.split()), "\n" + piece + "  "]))
    loc = idx.locate(variant)
    assert loc.kind == "exact"
    s = a + len(piece) - len(piece.lstrip())
    e = a + len(piece.rstrip())
    found = idx.texts[loc.doc][loc.start:loc.end]
    assert (loc.doc, loc.start, loc.end) == (d.id, s, e) or " ".join(found.split()).lower() == \
        " ".join(piece.split()).lower()
