"""Calibrate the per-encoder cosine thresholds of :mod:`rag_metrics.retrieval.choice` from data.

The thresholds were set on all-MiniLM-L6-v2; multilingual-e5-small's cosines sit higher (unrelated
sentences around 0.8), so a threshold is a property of the model.  MiniLM's values are the reference;
each e5 value is the one whose decisions agree best with MiniLM's on the same English texts:

- **support** (context support's "supported" verdict, 0.6 on MiniLM): every claim sentence of the 128
  shipped sample answers (``sample_corpus/answers.jsonl``) gets its best cosine against the sentences of
  its contexts from both models (e5 on its query side, as the offline judge compares texts); the e5
  threshold (grid of 0.005) is the one whose supported/unsupported decisions agree with MiniLM at 0.6 on
  the most sentences (ties: the one nearest the quantile match, the e5 cosine at MiniLM's share of
  supported sentences).  The people's labels of the sample are printed beside it.
- **near duplicate** (Health page, 0.95 on MiniLM): every pair of chunks of the English sample corpus
  (default chunking), e5 on its passage side; the same agreement rule on the pairs when enough pairs reach
  MiniLM's threshold, else a line through the agreement matches at lower MiniLM thresholds, read at 0.95
  (:func:`pairs_lines`).
- **question duplicate** (drafted questions' near-duplicate badge, 0.9 on MiniLM): short texts on e5's
  query side: every pair of the English sample's questions (golden set and answers) and every (answer
  sentence, context sentence) pair of the sample answers (near copies among them); the same rule.

The Danish sample has no answer files, so the English data decides; the Danish sanity set of
``tests/test_encoder_thresholds.py`` checks that e5 at the calibrated value separates Danish paraphrases
from unrelated Danish sentences.  Embeddings come from the on-disk cache and the shipped vectors (the
first run embeds the English sample with e5 once).

Run::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/calibrate_thresholds.py [--out benchmarks/results/thresholds.txt]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag_metrics.answers.data import load_sample_answers  # noqa: E402
from rag_metrics.answers.embed import default_embedding_cache, embed  # noqa: E402
from rag_metrics.answers.text import carries_claim, split_sentences  # noqa: E402
from rag_metrics.retrieval.choice import text_encoders  # noqa: E402
from rag_metrics.retrieval.encoders import DEFAULT_MODEL, MULTILINGUAL_MODEL  # noqa: E402

GRID = np.round(np.arange(0.5, 1.0 + 1e-9, 0.005), 3)
#: Fewest pairs at or above MiniLM's threshold for a direct agreement match.
MIN_DECISIONS = 10


def best_cosines(encoder, cache, items) -> tuple[np.ndarray, list[str]]:
    """Best cosine of every claim sentence of ``items`` against its contexts' sentences (the offline judge's)."""
    plans = [(split_sentences(it.answer), [s for c in it.contexts for s in split_sentences(c)]) for it in items]
    texts = [t for sents, ctx in plans for t in (*sents, *ctx)]
    vec = embed(encoder, cache, texts)
    out, which = [], []
    for sents, ctx in plans:
        if not sents or not ctx:
            continue
        cmat = np.stack([vec[s] for s in ctx])
        for s in sents:
            if carries_claim(s):
                out.append(float(np.max(cmat @ vec[s])))
                which.append(s)
    return np.asarray(out), which


def match(reference: np.ndarray, ref_threshold: float, other: np.ndarray) -> dict:
    """The threshold on ``other`` agreeing best with ``reference >= ref_threshold``."""
    want = reference >= ref_threshold
    share = float(want.mean())
    quantile = float(np.quantile(other, 1 - share)) if 0 < share < 1 else float("nan")
    agree = np.array([float(((other >= t) == want).mean()) for t in GRID])
    best = agree.max()
    cands = GRID[agree == best]
    t = float(cands[np.argmin(np.abs(cands - quantile))]) if np.isfinite(quantile) else float(cands[0])
    return {"threshold": t, "agreement": float(best), "share": share, "quantile": quantile,
            "n": len(reference), "plateau": (float(cands.min()), float(cands.max())),
            "kappa": kappa(want, other >= t)}


def pair_cosines(encoder, cache, texts: list[str]) -> np.ndarray:
    """The cosine of every pair of ``texts``."""
    d = embed(encoder, cache, texts)
    x = np.stack([d[t] for t in texts])
    return (x @ x.T)[np.triu_indices(len(texts), 1)]


def sentence_pairs(encoder, cache, items) -> np.ndarray:
    """The cosine of every (answer sentence, context sentence) pair of each item (short texts, as questions)."""
    out = []
    for it in items:
        sents, ctx = split_sentences(it.answer), [s for c in it.contexts for s in split_sentences(c)]
        if sents and ctx:
            d = embed(encoder, cache, [*sents, *ctx])
            out.append((np.stack([d[t] for t in sents]) @ np.stack([d[t] for t in ctx]).T).ravel())
    return np.concatenate(out)


def pairs_lines(title: str, what: str, pm: np.ndarray, pe: np.ndarray, ref: float) -> list[str]:
    """Calibrate a near-duplicate threshold on pairs: the agreement match at MiniLM's ``ref`` when at
    least :data:`MIN_DECISIONS` pairs reach it; else (near duplicates are rare in a clean sample) the
    agreement matches at lower MiniLM thresholds (every 0.05 with at least :data:`MIN_DECISIONS` pairs
    above), a least-squares line through them, read at ``ref`` (an extrapolation, rounded to 0.005)."""
    direct = match(pm, ref, pe)
    out = [f"{title}: {what}, {direct['n']} pairs",
           f"  {DEFAULT_MODEL} at {ref:g}: {int((pm >= ref).sum())} pairs (largest cosine {pm.max():.3f}); "
           f"{MULTILINGUAL_MODEL}'s largest {pe.max():.3f}"]
    if (pm >= ref).sum() >= MIN_DECISIONS:
        out.append(f"  {MULTILINGUAL_MODEL}: best agreement {direct['agreement']:.4f} (Cohen's kappa "
                   f"{direct['kappa']:.3f}) at {direct['threshold']:.3f}; quantile match {direct['quantile']:.3f}")
        return out
    pts = []
    for t in np.round(np.arange(0.5, ref, 0.05), 2):
        if (pm >= t).sum() >= MIN_DECISIONS:
            r = match(pm, float(t), pe)
            pts.append((float(t), r["threshold"]))
            out.append(f"    MiniLM {t:.2f} ({int((pm >= t).sum())} pairs) ~ e5 {r['threshold']:.3f} "
                       f"(agreement {r['agreement']:.4f}, kappa {r['kappa']:.3f})")
    x, y = np.array(pts).T
    slope, icpt = np.polyfit(x, y, 1)
    value = float(min(0.995, round((icpt + slope * ref) / 0.005) * 0.005))
    out.append(f"  {MULTILINGUAL_MODEL}: {value:.3f} (line e5 = {icpt:.3f} + {slope:.3f} x MiniLM through the "
               f"{len(pts)} matches above, read at {ref:g}; {int((pe >= value).sum())} pairs at or above it)")
    return out


def kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's kappa of two boolean decisions."""
    po = float((a == b).mean())
    pe = float(a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean()))
    return (po - pe) / (1 - pe) if pe < 1 else 1.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "thresholds.txt"))
    ap.add_argument("--skip-near", action="store_true", help="skip the near-duplicate calibration")
    args = ap.parse_args()
    cache = default_embedding_cache()
    items, labels = load_sample_answers()
    mini = text_encoders(DEFAULT_MODEL).queries
    e5 = text_encoders(MULTILINGUAL_MODEL).queries
    m, sents = best_cosines(mini, cache, items)
    e, sents_e = best_cosines(e5, cache, items)
    assert sents == sents_e
    r = match(m, 0.6, e)
    lines = [f"support threshold (context support's 'supported' verdict): {len(items)} shipped English answers, "
             f"{r['n']} claim sentences",
             f"  {DEFAULT_MODEL} at 0.6: {r['share']:.3f} of sentences supported",
             f"  {MULTILINGUAL_MODEL}: best agreement {r['agreement']:.3f} (Cohen's kappa {r['kappa']:.3f}) at "
             f"{r['threshold']:.3f} (plateau {r['plateau'][0]:.3f}-{r['plateau'][1]:.3f}); quantile match "
             f"{r['quantile']:.3f}"]
    # the people's labels of the same sentences (supported / unsupported only)
    human = {t: lab for hl in labels.values() for t, lab in hl.sentences}
    keep = [i for i, s in enumerate(sents) if human.get(s) in ("supported", "unsupported")]
    if keep:
        h = np.array([human[sents[i]] == "supported" for i in keep])
        for name, v, t in ((DEFAULT_MODEL, m, 0.6), (MULTILINGUAL_MODEL, e, r["threshold"])):
            lines.append(f"  agreement with the people's labels ({len(keep)} sentences): {name} at {t:g}: "
                         f"{float(((v[keep] >= t) == h).mean()):.3f}")
        lines.append(f"  {MULTILINGUAL_MODEL} at 0.6 (the old threshold): {float((e >= 0.6).mean()):.3f} "
                     f"of sentences supported, agreement with the people {float(((e[keep] >= 0.6) == h).mean()):.3f}")
    if not args.skip_near:
        from rag_metrics.io.corpus import load_corpus_folder
        from rag_metrics.io.golden import load_golden
        from rag_metrics.retrieval.chunking import chunk_corpus
        from rag_metrics.sample import sample_paths

        texts = list(dict.fromkeys(c.text for c in chunk_corpus(load_corpus_folder(sample_paths().docs))))
        lines += pairs_lines("near-duplicate threshold (Health page)", f"{len(texts)} chunks of the English sample",
                             pair_cosines(text_encoders(DEFAULT_MODEL).passages, cache, texts),
                             pair_cosines(text_encoders(MULTILINGUAL_MODEL).passages, cache, texts), 0.95)
        qs = list(dict.fromkeys([q.question for q in load_golden(sample_paths().golden) if q.question.strip()]
                                + [it.question for it in items if it.question.strip()]))
        lines += pairs_lines("question near-duplicate threshold (drafting badge)",
                             f"{len(qs)} questions of the English sample (golden set and answers), every pair, "
                             f"and every (answer sentence, context sentence) pair of the {len(items)} answers",
                             np.concatenate([pair_cosines(mini, cache, qs), sentence_pairs(mini, cache, items)]),
                             np.concatenate([pair_cosines(e5, cache, qs), sentence_pairs(e5, cache, items)]), 0.9)
    text = "\n".join(lines) + "\n"
    print(text, end="")
    Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
