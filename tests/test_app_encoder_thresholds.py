"""AppTest (issue 27, in Danish end to end): the Answers page scores Danish answers with multilingual-e5-small's
own calibrated support threshold, and says which; English answers keep all-MiniLM-L6-v2's 0.6.  The Health
page's near-duplicate slider starts at the corpus model's own threshold, again when the model changes."""
from __future__ import annotations

import json

from app_helpers import goto, no_exception
from rag_metrics.answers.types import NOT_A_CLAIM, SUPPORTED, UNSUPPORTED
from rag_metrics.retrieval.choice import thresholds_for
from rag_metrics.retrieval.encoders import MULTILINGUAL_MODEL

DA = "sample_corpus_da"


def _texts(at) -> str:
    return "\n".join(str(e.value) for kind in ("caption", "markdown", "info", "warning", "success")
                     for e in getattr(at, kind)).replace("\\", "")


def _danish_log() -> bytes:
    ctx = "Prøveperioden varer 30 dage, og du behøver ikke et betalingskort for at prøve Tidsrum."
    rows = [{"id": "a1", "question": "hvor lang tid kan jeg prøve det gratis?",
             "answer": "Du kan prøve Tidsrum gratis i 30 dage uden at oplyse et betalingskort.", "contexts": [ctx]},
            {"id": "a2", "question": "hvor lang tid kan jeg prøve det gratis?",
             "answer": "Min bedstemor bager boller med kardemomme hver søndag morgen.", "contexts": [ctx]}]
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in rows).encode("utf-8")


def test_danish_answers_show_and_use_the_e5_threshold(app):
    e5 = thresholds_for(MULTILINGUAL_MODEL).support
    app.selectbox(key="corpus").set_value(DA).run()
    at = goto(app, "pages/answers.py")
    at.radio(key="answers_source").set_value("Upload a RAG log").run()
    at.file_uploader(key="answers_upload").set_value([("svar.jsonl", _danish_log(), "application/json")]).run()
    no_exception(at)
    text = _texts(at)
    assert f"context support's 'supported' threshold for this model: {e5:g}." in text
    assert f"at least {e5:g} ({MULTILINGUAL_MODEL}'s threshold)" in text
    # the statement view of each answer: the paraphrase is supported, the unrelated sentence is not
    verdicts = {}
    for item_id in ("a1", "a2"):
        at.selectbox(key="answers_item").set_value(item_id).run()
        tables = [d.value for d in at.dataframe if "verdict" in getattr(d.value, "columns", [])]
        assert tables, item_id
        verdicts[item_id] = [v for v in tables[0]["verdict"] if v != NOT_A_CLAIM]
    assert verdicts == {"a1": [SUPPORTED], "a2": [UNSUPPORTED]}


def test_english_answers_keep_minilms_threshold(app):
    at = goto(app, "pages/answers.py")
    no_exception(at)
    assert "context support's 'supported' threshold for this model: 0.6." in _texts(at)


def test_the_health_near_duplicate_default_follows_the_corpus_model(app):
    e5 = thresholds_for(MULTILINGUAL_MODEL).near_duplicate
    health = goto(app, "pages/health.py")
    assert health.slider(key="health_near_threshold").value == 0.95
    health.slider(key="health_near_threshold").set_value(0.9).run()   # the person's choice, kept for this model
    assert health.slider(key="health_near_threshold").value == 0.9
    health.selectbox(key="corpus").set_value(DA).run()
    no_exception(health)
    assert health.slider(key="health_near_threshold").value == e5
    assert f"Its calibrated default threshold: {e5:g}." in _texts(health)
    near = next(m for m in health.metric if m.label == "Near duplicates")
    assert f"cosine ≥ {e5:g} " in near.help
