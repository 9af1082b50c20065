"""Convention presets: one switch between trec_eval's defaults and the lesson's code.

The lesson this lab teaches computes its metrics in a few lines of Python that differ from
trec_eval in two places (docs/conventions.md#options):

- NDCG over **binary** relevance: a chunk is in the list of relevant ids or it is not
  (``EvalOptions(ndcg_relevance="binary")``);
- out-of-scope questions counted as **misses**: the mean divides by every question
  (``EvalOptions(out_of_scope="miss")``; on the sample, hit rate@5 0.724 instead of 0.859);
- except in recall: the lesson's ``recall_at_k`` **skips** a question with no relevant id
  (``EvalOptions(recall_empty="skip")``; on the sample, recall@5 0.651 instead of 0.548).

Everything else is the same as trec_eval's defaults (relevance level 1, recall over all relevant
ids, linear gain, a question missing from the run scores 0).  A preset changes only these
settings; the evaluation level (chunk or document) stays the corpus's.

>>> from rag_metrics.metrics.options import EvalOptions
>>> preset_of(apply_preset(EvalOptions(), "lesson")), preset_of(EvalOptions())
('lesson', 'trec_eval')
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from rag_metrics.errors import InputError
from rag_metrics.metrics.options import EvalOptions

__all__ = ["PRESETS", "PRESET_LABELS", "CUSTOM", "apply_preset", "preset_of", "describe_conventions"]

#: The settings each preset fixes (``EvalOptions`` fields, plus ``ndcg_gain``, the app's choice of
#: NDCG metric: ``"linear"`` is ``ndcg``, ``"exponential"`` is ``ndcg_exp``).
PRESETS: dict[str, dict[str, Any]] = {
    "trec_eval": {"relevance_level": 1, "out_of_scope": "exclude", "out_of_scope_rule": "golden_set",
                  "recall_denominator": "all", "recall_empty": "zero", "missing_queries": "zero",
                  "ndcg_relevance": "graded", "ndcg_gain": "linear"},
    "lesson": {"relevance_level": 1, "out_of_scope": "miss", "out_of_scope_rule": "golden_set",
               "recall_denominator": "all", "recall_empty": "skip", "missing_queries": "zero",
               "ndcg_relevance": "binary", "ndcg_gain": "linear"},
}
#: What the switch says.
PRESET_LABELS = {"trec_eval": "trec_eval (defaults)", "lesson": "As in the lesson"}
#: :func:`preset_of` for settings that match no preset.
CUSTOM = "custom"

_DIFFERS = {  # how a setting that differs from trec_eval is named
    ("out_of_scope", "miss"): "out-of-scope questions counted as misses",
    ("ndcg_relevance", "binary"): "binary relevance for NDCG",
    ("recall_denominator", "cap"): "recall over min(K, |R|)",
    ("recall_empty", "skip"): "recall skips questions with no relevant id",
    ("missing_queries", "skip"): "questions missing from the run skipped",
    ("out_of_scope_rule", "no_relevant_id"): "no relevant id means out of scope",
    ("ndcg_gain", "exponential"): "exponential NDCG gain",
}

_DIFFERS_DA = {  # the same, in Danish (the Danish lesson's conventions line)
    ("out_of_scope", "miss"): "spørgsmål uden for emnet tælles som forbier",
    ("ndcg_relevance", "binary"): "binær relevans for NDCG",
    ("recall_denominator", "cap"): "recall over min(K, |R|)",
    ("recall_empty", "skip"): "recall springer spørgsmål uden relevante id'er over",
    ("missing_queries", "skip"): "spørgsmål, der mangler i kørslen, springes over",
    ("out_of_scope_rule", "no_relevant_id"): "intet relevant id betyder uden for emnet",
    ("ndcg_gain", "exponential"): "eksponentiel NDCG-gevinst",
}


def _check(name: str) -> dict[str, Any]:
    if name not in PRESETS:
        raise InputError(f"unknown conventions preset {name!r}; one of {', '.join(PRESETS)}")
    return PRESETS[name]


def apply_preset(options: EvalOptions, name: str) -> EvalOptions:
    """``options`` with the settings of preset ``name`` (the evaluation level is kept)."""
    fields = {k: v for k, v in _check(name).items() if k != "ndcg_gain"}
    return replace(options, **fields)


def preset_of(options: EvalOptions, ndcg_gain: str = "linear") -> str:
    """The preset ``options`` (and the NDCG gain) match, else :data:`CUSTOM`."""
    values = {**{k: getattr(options, k) for k in PRESETS["trec_eval"] if k != "ndcg_gain"}, "ndcg_gain": ndcg_gain}
    for name, fields in PRESETS.items():
        if all(values[k] == v for k, v in fields.items()):
            return name
    return CUSTOM


def describe_conventions(options: EvalOptions, ndcg_gain: str = "linear", lang: str = "en") -> str:
    """One line naming the conventions behind every number shown, e.g.
    ``"Conventions: as in the lesson (binary relevance for NDCG, out-of-scope questions counted as misses)"``.

    >>> describe_conventions(EvalOptions())
    'Conventions: trec_eval (the defaults)'
    >>> describe_conventions(EvalOptions(relevance_level=2))
    'Conventions: custom (relevance level 2)'
    """
    da = lang == "da"
    preset = preset_of(options, ndcg_gain)
    if preset == "trec_eval":
        return "Konventioner: trec_eval (standard)" if da else "Conventions: trec_eval (the defaults)"
    values = {**{k: getattr(options, k) for k in PRESETS["trec_eval"] if k != "ndcg_gain"}, "ndcg_gain": ndcg_gain}
    differs = _DIFFERS_DA if da else _DIFFERS
    parts = [differs[(k, v)] for k, v in values.items() if (k, v) in differs]
    if values["relevance_level"] != 1:
        parts.insert(0, f"{'relevansniveau' if da else 'relevance level'} {values['relevance_level']}")
    if preset == "lesson":
        return (f"Konventioner: som i lektionen ({', '.join(parts)})" if da
                else f"Conventions: as in the lesson ({', '.join(parts)})")
    return f"{'Konventioner: egne' if da else 'Conventions: custom'} ({', '.join(parts)})"
