"""Labels proposed from reference answers: ranked by MiniLM-style similarity plus rapidfuzz over the
reference's sentences, into the labelling queue, never saved without a person accepting them."""
from __future__ import annotations

import numpy as np
import pytest

from rag_metrics.authoring.label_queue import LabelQueue
from rag_metrics.authoring.label_suggest import propose_supporting_chunks, questions_to_propose
from rag_metrics.errors import InputError
from rag_metrics.types import GoldenQuery, GoldenSet

IDS = ["a#0", "b#0", "c#0"]
TEXTS = ["The Free plan includes 2 GB of storage. Upgrade for more.",
         "Plus allows files of up to 200 MB each.",
         "Notes sync across devices every minute."]
# toy embeddings: the reference points at chunk 0, a little at chunk 2
VECS = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
REF_VEC = np.array([0.9, 0.0, 0.3])


def test_ranked_by_both_signals():
    df = propose_supporting_chunks("2 GB on the Free plan. It includes 2 GB of storage.", IDS, TEXTS, VECS, REF_VEC,
                                   top=3)
    assert df.columns.tolist() == ["rank", "chunk_id", "score", "semantic", "lexical", "best_sentence"]
    assert df["chunk_id"].iloc[0] == "a#0" and df["rank"].tolist() == [1, 2, 3]
    sem = 0.9 / np.linalg.norm(REF_VEC)
    assert df["semantic"].iloc[0] == pytest.approx(sem)
    assert df["score"].iloc[0] == pytest.approx(0.5 * sem + 0.5 * df["lexical"].iloc[0])
    assert df["score"].is_monotonic_decreasing
    assert (df["lexical"].between(0, 1)).all() and df["best_sentence"].iloc[0] == "It includes 2 GB of storage."


def test_lexical_signal_breaks_an_embedding_tie():
    vecs = np.ones((3, 3))
    df = propose_supporting_chunks("Plus allows files of up to 200 MB each.", IDS, TEXTS, vecs, np.ones(3), top=1)
    assert df["chunk_id"].tolist() == ["b#0"]


def test_bad_inputs_and_empty_reference():
    assert propose_supporting_chunks("", IDS, TEXTS, VECS, REF_VEC).empty
    with pytest.raises(InputError, match="one of each"):
        propose_supporting_chunks("x", IDS, TEXTS[:2], VECS, REF_VEC)
    with pytest.raises(InputError, match="top"):
        propose_supporting_chunks("x", IDS, TEXTS, VECS, REF_VEC, top=0)


def test_questions_to_propose_are_the_unlabelled_with_a_reference():
    g = GoldenSet((GoldenQuery("q1", "?", "", {}, "2 GB."), GoldenQuery("q2", "?", "", {"a#0": 1}, "x"),
                   GoldenQuery("q3", "?", "", {}, None), GoldenQuery("q4", "?", "out_of_scope", {}, "Not covered.")))
    assert [q.id for q in questions_to_propose(g)] == ["q1"]


def test_queue_proposals_are_saved_only_when_accepted():
    g = GoldenSet((GoldenQuery("q1", "how much room?", "", {}, "2 GB on the Free plan."),))
    q = LabelQueue.from_golden(g)
    q.propose("q1", [("a#0", 0.9), ("c#0", 0.4)])
    assert q.current_proposals() == [("a#0", 0.9), ("c#0", 0.4)]
    assert q.current_ticks() == {}
    assert q.apply(g).queries[0].relevant == {}  # a proposal is not a label
    q.accept(["a#0"])
    assert q.current_ticks() == {"a#0": 1}
    assert q.apply(g).queries[0].relevant == {"a#0": 1}
    with pytest.raises(InputError, match="was not proposed"):
        q.accept(["zz#9"])
    with pytest.raises(InputError, match="no question"):
        q.propose("nope", [])
