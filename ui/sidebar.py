"""The shared sidebar: corpus, system (bundled retriever or your own), K and the conventions (docs/conventions.md)."""
from __future__ import annotations

import streamlit as st

from rag_metrics.metrics.presets import CUSTOM, PRESET_LABELS, PRESETS
from rag_metrics.retrieval.defaults import DEFAULT_DEPTH
from rag_metrics.retrieval.encoders import DEFAULT_MODEL
from ui import session, state
from ui.encoding import label

RETRIEVER_LABELS = {
    "dense": f"Dense ({DEFAULT_MODEL})",
    "bm25": "BM25 (lexical)",
    "hybrid": "Hybrid (RRF of both)",
}


def retriever_labels(model: str = "") -> dict[str, str]:
    """:data:`RETRIEVER_LABELS` for a corpus whose embedding model is ``model`` ("" = the bundled default)."""
    return {**RETRIEVER_LABELS, "dense": f"Dense ({label(model)})"}


def _corpus_model(name: str) -> str:
    try:
        return state.corpus_entry(name).model
    except Exception:  # noqa: BLE001 - the page shows the real error
        return ""
OOS_LABELS = {
    "exclude": "Excluded, measured by abstention (trec_eval)",
    "miss": "Counted as misses (lesson code)",
}
RECALL_LABELS = {
    "all": "|R|, all relevant (trec_eval)",
    "cap": "min(K, |R|) (BEIR R_cap)",
}
GAIN_LABELS = {
    "linear": "Linear g (trec_eval, ranx ndcg)",
    "exponential": "Exponential 2^g − 1 (Burges, ranx ndcg_burges)",
}
NDCG_REL_LABELS = {
    "graded": "Graded: gain = the grade (trec_eval)",
    "binary": "Binary: relevant = 1 (lesson code)",
}
PRESET_HELP = ("One switch for every convention: **trec_eval** (the defaults, reproducible with trec_eval) or "
               "**as in the lesson** (the lesson's code: binary relevance for NDCG, out-of-scope questions "
               "counted as misses; everything else as trec_eval). The conventions below show what it set.")
MISSING_LABELS = {
    "zero": "Count 0 (trec_eval -c)",
    "skip": "Evaluate only the answered questions (skip the absent: plain trec_eval, BEIR)",
}
MRR_LABELS = {
    "first": "1/rank of the first relevant (trec_eval recip_rank)",
    "granular": "Mean 1/rank over the relevant retrieved (LlamaIndex use_granular_mrr)",
}
NONPOS_LABELS = {
    "retrieved": "Retrieved (trec_eval)",
    "not_retrieved": "Not retrieved (torchmetrics)",
}


#: The bundled retrievers as the sidebar's System select shows them: short enough for its box (the full
#: labels, :data:`RETRIEVER_LABELS`, are in its help and on the Compare page).
SYSTEM_SHORT = {"dense": "Dense", "bm25": "BM25", "hybrid": "Hybrid"}


def system_label(name: str) -> str:
    """How the System select shows a name: ``Bundled: Dense`` for a bundled retriever; a stored system
    as ``Yours: <name>``."""
    return f"Bundled: {SYSTEM_SHORT[name]}" if name in SYSTEM_SHORT else f"Yours: {name}"


def depth_for(name: str) -> int:
    """Upper end of K: the retrieval depth of the corpus's chunking (:func:`ui.state.depth_of`)."""
    try:
        return state.depth_of(state.chunk_set(name))
    except Exception:  # noqa: BLE001 - the page shows the real error
        return DEFAULT_DEPTH


def _on_preset() -> None:
    name = session.value(state.KEY_PRESET)

    if name in PRESETS:
        state.apply_preset(name)


def _preset_switch() -> None:
    """The conventions preset (trec_eval / as in the lesson); "custom" is shown only while the settings
    match neither."""
    now = state.preset()
    options = [*PRESET_LABELS, *([CUSTOM] if now == CUSTOM else [])]
    session.set_value(state.KEY_PRESET, now)
    st.radio("Conventions", options, key=state.KEY_PRESET, horizontal=True, on_change=_on_preset,
             format_func=lambda n: PRESET_LABELS.get(n, "Custom"), help=PRESET_HELP)


def render() -> None:
    state.init_state()
    ss = session.store()
    with st.sidebar:
        from ui import workspace_ui

        workspace_ui.identity_panel()  # class mode: the seat and the teacher's sign-in first
        names = state.corpus_names()
        labels = {n: state.corpus_label(n) for n in names}  # a pure format_func (AppTest calls it later)
        # a selectbox's value travels as its label: two equal labels would select the wrong corpus
        seen = [labels[n] for n in names]
        labels = {n: (f"{lab} ({n})" if seen.count(lab) > 1 else lab) for n, lab in labels.items()}
        st.selectbox("Corpus", names, key=state.KEY_CORPUS, format_func=lambda n: labels.get(n, n),
                     help="Load another corpus on the Corpus explorer page.")
        systems = state.system_names(ss[state.KEY_CORPUS])
        state.keep_choice(state.KEY_SYSTEM, systems, ss.get(state.KEY_RETRIEVER, systems[0]))
        st.selectbox("System", systems, key=state.KEY_SYSTEM, format_func=system_label,
                     help="A bundled retriever, "
                          + ", ".join(retriever_labels(_corpus_model(ss[state.KEY_CORPUS])).values())
                          + f" (each question is retrieved once to depth {DEFAULT_DEPTH} per retriever and "
                          "chunking; switching back is instant). Or one of your systems: an uploaded run or RAG "
                          "log, or a live backend, added on the Systems page.")
        depth = depth_for(ss[state.KEY_CORPUS])
        state.sync_k(depth)
        if depth > 1:
            st.slider("K (cutoff)", 1, depth, key=state.KEY_K,
                      help="Metrics are read at this cutoff. Changing K never re-runs retrieval.")
        else:  # a slider needs min < max
            st.caption("K (cutoff) = 1: the corpus has a single chunk.")
        _preset_switch()
        with st.expander("Evaluation conventions", icon=":material/tune:"):
            st.caption("Defaults follow trec_eval; each alternative is labelled with where it comes from.")
            st.number_input("Relevance level (grade ≥ L is relevant)", min_value=1, max_value=10, step=1,
                            key=state.KEY_LEVEL, help="trec_eval `-l`, ranx `-lN`. NDCG uses the grades "
                            "themselves and ignores L (as trec_eval does).")
            st.radio("Out-of-scope queries", list(OOS_LABELS), key=state.KEY_OOS, format_func=OOS_LABELS.get,
                     help="Questions the golden set marks out of scope (category out_of_scope, or no judgment at "
                          "all). trec_eval never sees them; the classic lesson code divides by all queries. A "
                          "question judged with none relevant is in scope and scores 0, as in trec_eval.")
            st.radio("Recall denominator", list(RECALL_LABELS), key=state.KEY_RECALL,
                     format_func=RECALL_LABELS.get)
            st.radio("NDCG gain", list(GAIN_LABELS), key=state.KEY_GAIN, format_func=GAIN_LABELS.get,
                     help="Equal for binary labels; differ with graded labels (the sample uses grades 1–3).")
            st.radio("NDCG relevance", list(NDCG_REL_LABELS), key=state.KEY_NDCG_REL, format_func=NDCG_REL_LABELS.get,
                     help="The lesson's code only knows which chunks are relevant: every relevant chunk has gain 1 "
                          "(grade ≥ L). trec_eval uses the grades themselves.")
            st.radio("Questions absent from the system's results", list(MISSING_LABELS), key=state.KEY_MISSING,
                     format_func=MISSING_LABELS.get,
                     help="A RAG log or run that covers part of the golden set: its absent questions count 0 in "
                          "every mean (trec_eval -c, the default) or are left out (CLI --only-answered). The "
                          "answered and absent counts are shown beside the numbers either way.")
            st.caption("Other tools' conventions (off by default):")
            st.text_input("Custom NDCG gain per grade (trec_eval gain parameters, ir_measures nDCG(gains=…))",
                          key=state.KEY_GAINS, placeholder="e.g. 1=1,2=3,3=7",
                          help="GRADE=GAIN pairs for the linear NDCG; unlisted grades keep gain = grade, the ideal "
                               "ranking sorts the gains. Empty: gain = grade (trec_eval's default).")
            bad = state.gains_setting()[1]
            if bad:
                st.error(f"{bad}. No custom gain is applied.", icon=":material/error:")
            st.checkbox("Judged results only (trec_eval -J, ir_measures judged_only=True)", key=state.KEY_JUDGED_ONLY,
                        help="Unlabelled chunks are removed from every ranking before the metrics; the rest move up.")
            st.radio("MRR", list(MRR_LABELS), key=state.KEY_MRR, format_func=MRR_LABELS.get)
            st.radio("Results scored ≤ 0", list(NONPOS_LABELS), key=state.KEY_NONPOS, format_func=NONPOS_LABELS.get)
        workspace_ui.sidebar_picker()
        state.sync_space_param()
        size, overlap = state.chunking()
        st.caption(f"Chunking: {size} characters, {overlap} overlap · change it on the Corpus explorer page.")
