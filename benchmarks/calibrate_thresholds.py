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
  (default chunking), e5 on its passage side; the same agreement rule on the pairs.
- **question duplicate** (drafted questions' near-duplicate badge, 0.9 on MiniLM): every pair of questions
  of the English sample's golden set, e5 on its query side; the same rule.

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
        from rag_metrics.retrieval.chunking import chunk_corpus
        from rag_metrics.sample import sample_paths

        texts = list(dict.fromkeys(c.text for c in chunk_corpus(load_corpus_folder(sample_paths().docs))))
        dm = embed(text_encoders(DEFAULT_MODEL).passages, cache, texts)
        de = embed(text_encoders(MULTILINGUAL_MODEL).passages, cache, texts)
        xm = np.stack([dm[t] for t in texts])
        xe = np.stack([de[t] for t in texts])
        iu = np.triu_indices(len(texts), 1)
        pm, pe = (xm @ xm.T)[iu], (xe @ xe.T)[iu]
        n = match(pm, 0.95, pe)
        lines += [f"near-duplicate threshold (Health page): {len(texts)} chunks of the English sample, {n['n']} pairs",
                  f"  {DEFAULT_MODEL} at 0.95: {int(round(n['share'] * n['n']))} pairs",
                  f"  {MULTILINGUAL_MODEL}: best agreement {n['agreement']:.5f} (Cohen's kappa {n['kappa']:.3f}) at "
                  f"{n['threshold']:.3f} (plateau {n['plateau'][0]:.3f}-{n['plateau'][1]:.3f}); quantile match "
                  f"{n['quantile']:.3f}; {int((pe >= n['threshold']).sum())} pairs"]
        from rag_metrics.io.golden import load_golden

        qs = list(dict.fromkeys(q.question for q in load_golden(sample_paths().golden) if q.question.strip()))
        qm, qe = embed(mini, cache, qs), embed(e5, cache, qs)
        xm, xe = np.stack([qm[t] for t in qs]), np.stack([qe[t] for t in qs])
        iu = np.triu_indices(len(qs), 1)
        pm, pe = (xm @ xm.T)[iu], (xe @ xe.T)[iu]
        n = match(pm, 0.9, pe)
        lines += [f"question near-duplicate threshold (drafting badge): {len(qs)} golden questions of the English "
                  f"sample, {n['n']} pairs",
                  f"  {DEFAULT_MODEL} at 0.9: {int(round(n['share'] * n['n']))} pairs",
                  f"  {MULTILINGUAL_MODEL}: best agreement {n['agreement']:.5f} (Cohen's kappa {n['kappa']:.3f}) at "
                  f"{n['threshold']:.3f} (plateau {n['plateau'][0]:.3f}-{n['plateau'][1]:.3f}); quantile match "
                  f"{n['quantile']:.3f}; {int((pe >= n['threshold']).sum())} pairs"]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
