"""Corpus map: a 2-D projection of chunk embeddings with the golden questions placed on it.

The projection is **fitted on the chunks only**, then the questions are transformed into the same
plane (``fit(chunks).transform(queries)``), so adding or editing questions never moves the chunks.
scikit-learn PCA is the default (deterministic, fast, distances along the two main axes are
meaningful); UMAP (``umap-learn``) is used when asked for and installed: it keeps local
neighbourhoods better but distorts global distances, and its ``transform`` of new points is an
approximation.

:func:`project_corpus` returns a :class:`CorpusMap` of plain DataFrames; :func:`corpus_map_chart`
draws it with Altair: chunks coloured by document (or category / cluster), chunks no question
covers drawn as hollow squares, questions as black diamonds; clicking a question (or passing
``query_id``) draws lines to its relevant chunks and to its retrieved chunks.
"""
from __future__ import annotations

import importlib.util
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from rag_metrics.errors import InputError
from rag_metrics.types import Chunk, GoldenSet

if TYPE_CHECKING:  # pragma: no cover
    import altair as alt

    from rag_metrics.evaluation import EvaluationResult

__all__ = ["CorpusMap", "project_corpus", "corpus_map_chart", "available_methods", "LINK_KINDS",
           "NOT_COVERED"]

#: Kinds of query -> chunk lines, in legend order.
LINK_KINDS = ("relevant, retrieved", "relevant, missed", "retrieved, not relevant")
#: ``category`` value of chunks that no question labels as relevant.
NOT_COVERED = "(not covered)"
_COVERAGE = ("covered by a question", "not covered")
_LINK_COLOURS = ("#1a9641", "#d7191c", "#f28e2b")
#: Colour legends longer than this are dropped (colours repeat past 20 anyway).
MAX_LEGEND_ENTRIES = 20


_HALOS: tuple[dict[str, Any], ...] = ({"stroke": "white", "strokeWidth": 4, "strokeOpacity": 0.9}, {})


def available_methods() -> list[str]:
    """Projection methods usable here: ``["pca"]`` plus ``"umap"`` when umap-learn is installed."""
    return ["pca"] + (["umap"] if importlib.util.find_spec("umap") is not None else [])


@dataclass(frozen=True, eq=False)
class CorpusMap:
    """The projected points and the query -> chunk links (all plain DataFrames).

    ``chunks``: ``chunk_id, doc_id, category, cluster, covered_by_any_question, n_questions,
    preview, x, y``.  ``queries``: ``query_id, question, category, in_scope, x, y``.
    ``links``: ``query_id, chunk_id, kind`` (one of :data:`LINK_KINDS`), ``rank`` (retrieval rank
    or <NA>), ``grade``, ``x, y`` (the question) and ``x2, y2`` (the chunk).
    """

    chunks: pd.DataFrame
    queries: pd.DataFrame
    links: pd.DataFrame
    method: str
    explained_variance: tuple[float, float] | None = None

    @property
    def axis_titles(self) -> tuple[str, str]:
        if self.method == "pca" and self.explained_variance is not None:
            a, b = self.explained_variance
            return (f"PC 1 ({a:.0%} of variance)", f"PC 2 ({b:.0%} of variance)")
        return (f"{self.method.upper()} 1", f"{self.method.upper()} 2")


def _fit_transform(x: NDArray[np.float32], q: NDArray[np.float32], method: str, random_state: int
                   ) -> tuple[NDArray[np.float64], NDArray[np.float64], tuple[float, float] | None]:
    if x.shape[0] < 2:  # one chunk: nothing to project; put it at the origin
        return np.zeros((x.shape[0], 2)), np.zeros((len(q), 2)), None
    if method == "pca":
        from sklearn.decomposition import PCA

        n_comp = min(2, x.shape[0], x.shape[1])
        pca = PCA(n_components=n_comp, random_state=random_state)
        xy = pca.fit_transform(x)
        qy = pca.transform(q) if len(q) else np.zeros((0, n_comp))
        ev = [float(v) for v in pca.explained_variance_ratio_] + [0.0] * (2 - n_comp)
        if n_comp < 2:  # a single chunk or 1-d vectors: pad the second axis
            xy = np.hstack([xy, np.zeros((len(xy), 2 - n_comp))])
            qy = np.hstack([qy, np.zeros((len(qy), 2 - n_comp))])
        return xy, qy, (ev[0], ev[1])
    import umap  # type: ignore[import-not-found]  # optional extra, not installed by default

    reducer = umap.UMAP(n_components=2, n_neighbors=min(15, max(2, x.shape[0] - 1)), metric="cosine",
                        random_state=random_state)
    xy = reducer.fit_transform(x)
    qy = reducer.transform(q) if len(q) else np.zeros((0, 2))
    return np.asarray(xy, dtype=np.float64), np.asarray(qy, dtype=np.float64), None


def _resolve_level(level: str, chunks: Sequence[Chunk], golden: GoldenSet,
                   result: EvaluationResult | None) -> Literal["chunk", "document"]:
    if level == "chunk":
        return "chunk"
    if level == "document":
        return "document"
    if level != "auto":
        raise InputError(f"level must be 'auto', 'chunk' or 'document', got {level!r}")
    if result is not None:
        return result.options.level
    chunk_ids = {c.id for c in chunks}
    doc_ids = {c.doc_id for c in chunks}
    labels = {lid for gq in golden for lid in gq.relevant}
    return "document" if labels and not (labels & chunk_ids) and (labels & doc_ids) else "chunk"


class _Targets:
    """Document-level labels on a chunk map: each document's chunks, and the one nearest a question."""

    def __init__(self, chunks: Sequence[Chunk], x: NDArray[np.float32], q: NDArray[np.float32],
                 pos: dict[str, int]) -> None:
        self._by_doc: dict[str, list[int]] = {}
        for c in chunks:
            self._by_doc.setdefault(c.doc_id, []).append(pos[c.id])
        norm = np.linalg.norm(x, axis=1, keepdims=True)
        self._x = x / np.where(norm > 0, norm, 1.0)
        qn = np.linalg.norm(q, axis=1, keepdims=True) if len(q) else np.zeros((0, 1))
        self._q = q / np.where(qn > 0, qn, 1.0) if len(q) else q
        self._cache: dict[tuple[str, int], int | None] = {}

    def members(self, doc_id: str) -> list[int]:
        return self._by_doc.get(doc_id, [])

    def best(self, doc_id: str, query: int) -> int | None:
        key = (doc_id, query)
        if key not in self._cache:
            idx = self._by_doc.get(doc_id)
            if not idx:
                self._cache[key] = None
            else:
                sims = self._x[idx] @ self._q[query]
                self._cache[key] = idx[int(np.argmax(sims))]
        return self._cache[key]


def project_corpus(
    chunks: Sequence[Chunk],
    chunk_embeddings: NDArray[np.floating],
    golden: GoldenSet,
    query_embeddings: NDArray[np.floating],
    result: EvaluationResult | None = None,
    *,
    k: int = 5,
    method: Literal["pca", "umap", "auto"] = "pca",
    n_clusters: int | None = None,
    relevance_level: int = 1,
    random_state: int = 0,
    preview_chars: int = 140,
    level: Literal["auto", "chunk", "document"] = "auto",
) -> CorpusMap:
    """Project chunks to 2-D (fitted on the chunks) and place the golden questions in that plane.

    Parameters
    ----------
    chunks, chunk_embeddings
        ``chunk_embeddings[i]`` is the vector of ``chunks[i]``.
    golden, query_embeddings
        ``query_embeddings[j]`` is the vector of ``golden.queries[j].question``.
    result
        Optional evaluation of a run on ``golden``: adds lines to the top-``k`` retrieved chunks.
    method
        ``"pca"`` (default), ``"umap"`` (needs umap-learn) or ``"auto"`` (UMAP when installed).
    n_clusters
        K-means clusters on the embeddings for the ``cluster`` column (default
        ``min(8, number of chunks)``; 0 disables it).
    relevance_level
        Grade at or above which a label counts as relevant (coverage and "relevant" lines).
    level
        ``"chunk"``: labels and retrieved ids are chunk ids.  ``"document"``: they are document ids
        (BEIR/TREC collections judged per document); a chunk is covered when its document is
        relevant to a question, and a question's line to a document goes to that document's chunk
        most similar to the question (the chunk a dense retriever would rank first for it).
        ``"auto"`` (default): ``result.options.level`` when a result is given, else ``"document"``
        when the labels name documents and no chunk, else ``"chunk"``.
    """
    x = np.asarray(chunk_embeddings, dtype=np.float32)
    q = np.asarray(query_embeddings, dtype=np.float32)
    if x.ndim != 2 or x.shape[0] != len(chunks):
        raise InputError(f"chunk_embeddings must have one row per chunk: got shape {x.shape} for {len(chunks)} chunks")
    if len(chunks) == 0:
        raise InputError("no chunks to project; load a corpus first")
    if q.ndim != 2 or q.shape[0] != len(golden) or (len(golden) and q.shape[1] != x.shape[1]):
        raise InputError(f"query_embeddings must have one row per golden query and {x.shape[1]} columns: "
                         f"got shape {q.shape} for {len(golden)} queries")
    if method == "auto":
        method = "umap" if "umap" in available_methods() else "pca"
    if method not in ("pca", "umap"):
        raise InputError(f"unknown projection method {method!r}; use 'pca' or 'umap'")
    if method == "umap" and "umap" not in available_methods():
        raise InputError("UMAP is not installed; `pip install umap-learn` or use method='pca'")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"k must be an integer >= 1, got {k!r}")
    if result is not None and tuple(result.query_ids) != tuple(golden.ids):
        raise InputError("result was computed on a different golden set; evaluate the run on this golden set")

    xy, qy, ev = _fit_transform(x, q, method, random_state)

    ids = [c.id for c in chunks]
    pos = {cid: i for i, cid in enumerate(ids)}
    level = _resolve_level(level, chunks, golden, result)
    target = _Targets(chunks, x, q, pos) if level == "document" else None
    covering: dict[str, list[str]] = {}
    for gq in golden:
        for lid, g in gq.relevant.items():
            if g < relevance_level:
                continue
            members = target.members(lid) if target is not None else ([pos[lid]] if lid in pos else [])
            for i in members:
                covering.setdefault(ids[i], []).append(gq.category or "(none)")
    n_cl = min(8, len(chunks)) if n_clusters is None else int(n_clusters)
    if n_cl >= 2 and len(chunks) >= n_cl:
        from sklearn.cluster import KMeans

        labels = KMeans(n_clusters=n_cl, n_init=4, random_state=random_state).fit_predict(x)
        clusters = [f"cluster {int(c) + 1}" for c in labels]
    else:
        clusters = ["cluster 1"] * len(chunks)
    chunk_df = pd.DataFrame({
        "chunk_id": ids,
        "doc_id": [c.doc_id for c in chunks],
        "category": [Counter(covering[c.id]).most_common(1)[0][0] if c.id in covering else NOT_COVERED
                     for c in chunks],
        "cluster": clusters,
        "covered_by_any_question": [c.id in covering for c in chunks],
        "n_questions": [len(covering.get(c.id, [])) for c in chunks],
        "preview": [" ".join(c.text.split())[:preview_chars] for c in chunks],
        "x": xy[:, 0], "y": xy[:, 1],
    })
    query_df = pd.DataFrame({
        "query_id": golden.ids,
        "question": [gq.question for gq in golden],
        "category": [gq.category or "(none)" for gq in golden],
        "in_scope": [gq.in_scope for gq in golden],
        "x": qy[:, 0] if len(qy) else np.zeros(0), "y": qy[:, 1] if len(qy) else np.zeros(0),
    })

    rows = []
    for j, gq in enumerate(golden):
        # map index of the chunk each label / retrieved id points to (None: not on the map)
        at: dict[str, int | None] = {lid: (target.best(lid, j) if target is not None else pos.get(lid))
                                     for lid in gq.relevant}
        relevant = {lid: g for lid, g in gq.relevant.items() if g >= relevance_level and at[lid] is not None}
        retrieved: dict[str, int] = {}
        if result is not None:
            r_ids, _, _ = result.judged.ranking(j)
            for r, lid in enumerate(r_ids[:k], 1):
                if lid not in at:
                    at[lid] = target.best(lid, j) if target is not None else pos.get(lid)
                if at[lid] is not None:
                    retrieved[lid] = r
        for lid in list(dict.fromkeys([*relevant, *retrieved])):
            if lid in relevant:
                kind = LINK_KINDS[0] if lid in retrieved else LINK_KINDS[1]
            else:
                kind = LINK_KINDS[2]
            point = at[lid]
            if point is None:  # pragma: no cover - filtered above
                continue
            rows.append({"query_id": gq.id, "chunk_id": ids[point], "kind": kind,
                         "rank": retrieved.get(lid, pd.NA), "grade": int(gq.relevant.get(lid, 0)),
                         "x": qy[j, 0], "y": qy[j, 1], "x2": xy[point, 0], "y2": xy[point, 1]})
    links = pd.DataFrame(rows, columns=["query_id", "chunk_id", "kind", "rank", "grade", "x", "y", "x2", "y2"])
    links["rank"] = links["rank"].astype("Int64")
    if result is None:
        links = links[links["kind"] != LINK_KINDS[2]]
    return CorpusMap(chunk_df, query_df, links.reset_index(drop=True), method, ev)


def corpus_map_chart(
    cmap: CorpusMap,
    query_id: str | None = None,
    color: Literal["doc_id", "category", "cluster"] = "doc_id",
    width: int | str = 640,
    height: int = 460,
    title: str | None = "Corpus map",
) -> alt.LayerChart:
    """Altair chart of a :class:`CorpusMap`.

    Chunks are points coloured by ``color``; chunks no question covers are hollow squares (a
    ``coverage`` legend explains the shapes).  Questions are black diamonds.  Clicking a question
    selects it (Altair parameter ``query``; double-click clears); ``query_id`` preselects one.
    The selected question gets lines to its chunks: green for relevant and retrieved, red dashed
    for relevant but missed, orange dotted for retrieved but not relevant, and a ring on each
    target chunk.
    """
    import altair as alt

    if color not in ("doc_id", "category", "cluster"):
        raise InputError(f"color must be 'doc_id', 'category' or 'cluster', got {color!r}")
    if query_id is not None and query_id not in set(cmap.queries["query_id"]):
        raise InputError(f"query {query_id!r} is not on the map (not in the golden set)")

    chunks = cmap.chunks.assign(coverage=np.where(cmap.chunks["covered_by_any_question"], *_COVERAGE))
    xt, yt = cmap.axis_titles
    x = alt.X("x:Q", title=xt, axis=alt.Axis(labels=False, ticks=False, grid=False))
    y = alt.Y("y:Q", title=yt, axis=alt.Axis(labels=False, ticks=False, grid=False))
    sel = alt.selection_point(name="query", fields=["query_id"], on="click", clear="dblclick", empty=False,
                              value=[{"query_id": query_id}] if query_id is not None else alt.Undefined)
    colour_title = {"doc_id": "document", "category": "question category", "cluster": "cluster"}[color]
    n_colours = int(chunks[color].nunique())
    # More than 20 values cannot get distinct colours (tableau20) and a long legend squeezes the
    # plot: drop the legend and say so; the tooltip still names each point's document.
    legend = (alt.Legend(columns=2 if n_colours > 14 else 1, symbolLimit=60, labelLimit=150)
              if n_colours <= MAX_LEGEND_ENTRIES else None)
    colour = alt.Color(f"{color}:N", title=colour_title, scale=alt.Scale(scheme="tableau20"), legend=legend)
    shape = alt.Shape("coverage:N", title="coverage",
                      scale=alt.Scale(domain=list(_COVERAGE), range=["circle", "square"]))
    tooltip = [alt.Tooltip("chunk_id:N", title="chunk"), alt.Tooltip("doc_id:N", title="document"),
               alt.Tooltip("n_questions:Q", title="questions labelling it"), alt.Tooltip("preview:N", title="text")]
    covered = alt.Chart(chunks).transform_filter(alt.datum.covered_by_any_question).mark_point(
        filled=True, size=70, opacity=0.85).encode(x=x, y=y, color=colour, shape=shape, tooltip=tooltip
                                                   ).add_params(alt.selection_interval(bind="scales", name="zoom"))
    uncovered = alt.Chart(chunks).transform_filter(~alt.datum.covered_by_any_question).mark_point(
        filled=False, size=80, strokeWidth=1.6, opacity=0.9).encode(x=x, y=y, color=colour, shape=shape,
                                                                    tooltip=tooltip)
    kind_scale = alt.Scale(domain=list(LINK_KINDS), range=list(_LINK_COLOURS))
    dash_scale = alt.Scale(domain=list(LINK_KINDS), range=[[1, 0], [6, 4], [2, 3]])
    link_tip = [alt.Tooltip("query_id:N", title="question"), alt.Tooltip("chunk_id:N", title="chunk"),
                alt.Tooltip("kind:N"), alt.Tooltip("rank:Q", title="retrieved at rank"), alt.Tooltip("grade:Q")]
    links = alt.Chart(cmap.links).transform_filter(sel).mark_rule(strokeWidth=2.2, opacity=0.9).encode(
        x=x, y=y, x2="x2:Q", y2="y2:Q",
        color=alt.Color("kind:N", scale=kind_scale, title="selected question's chunks"),
        strokeDash=alt.StrokeDash("kind:N", scale=dash_scale, legend=None), tooltip=link_tip)
    rings = alt.Chart(cmap.links).transform_filter(sel).mark_point(
        filled=False, size=320, strokeWidth=2.5).encode(
        x=alt.X("x2:Q", axis=None), y=alt.Y("y2:Q", axis=None),
        color=alt.Color("kind:N", scale=kind_scale, legend=None), tooltip=link_tip)
    q_tip = [alt.Tooltip("query_id:N", title="question id"), alt.Tooltip("question:N"),
             alt.Tooltip("category:N")]
    queries = alt.Chart(cmap.queries).mark_point(shape="diamond", filled=True, color="#222",
                                                 stroke="white", strokeWidth=0.8).encode(
        x=x, y=y, tooltip=q_tip,
        size=alt.condition(sel, alt.value(260), alt.value(90)),
        opacity=alt.condition(sel, alt.value(1.0), alt.value(0.55)),
    ).add_params(sel)
    qd = cmap.queries.assign(right_half=cmap.queries["x"] > float(np.median(chunks["x"])))
    labels = [alt.Chart(qd).transform_filter(sel).transform_filter(
        alt.datum.right_half if right else ~alt.datum.right_half).mark_text(
        align="right" if right else "left", dx=-12 if right else 12, dy=-12, fontSize=12, fontWeight="bold",
        color="#222", limit=440, **halo).encode(x=x, y=y, text="question:N")
        for right in (False, True) for halo in _HALOS]
    points = alt.layer(covered, uncovered)  # one shared colour and shape scale, one legend each
    chart = alt.layer(links, points, rings, queries, *labels).resolve_scale(
        color="independent", shape="independent").properties(width=width, height=height)
    if title:
        chart = chart.properties(title=alt.Title(title, subtitle=(
            "Click a question (◆) to draw lines to its relevant and retrieved chunks; double-click clears. "
            "Hollow squares: chunks no question covers."
            + (f" {n_colours} {colour_title}s share 20 colours: hover a point to see its {colour_title}."
               if n_colours > MAX_LEGEND_ENTRIES else ""))))
    return chart
