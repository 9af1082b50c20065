"""The working golden set of one corpus in one app session (no Streamlit here).

A :class:`GoldenSession` sits beside a :class:`~rag_metrics.workspace.store.Workspace` and is the only
owner of the golden set a user is editing:

- **one copy**: the current :class:`~rag_metrics.types.GoldenSet` and its fingerprint; the editor
  table (the base the data editor's edits are relative to) is built only when asked for and dropped
  on any change that did not come from that editor;
- **edits**: every change goes through :meth:`GoldenSession.replace`: an unchanged set costs one
  fingerprint (a hash, no serialisation); a changed one is serialised **once**, for the save;
- **autosave** (atomic, through the workspace) and **conflicts**: when another session saved since
  this one loaded, the workspace keeps the other session's file and writes ours beside it;
  :meth:`keep_mine` overwrites, :meth:`reload` takes the saved one;
- **the teacher's changes** (a reset, a push of the shared set: :mod:`rag_metrics.workspace.versions`):
  every save carries the generation the session loaded, so none writes over the teacher's change;
  :meth:`outdated` says when the teacher changed the set, :meth:`reload` takes it;
- **reset** to the seed (shipped) set, with labels carried to another chunking;
- **label carry-over** when the corpus is re-chunked (:meth:`carry_over`);
- **single-label judging** (the health page's label queue, :meth:`judge`) and the labelling
  helper's per-question save (:meth:`save_labels`), both through the golden editing functions.

The app keeps one ``GoldenSession`` per corpus in its session state; tests drive it directly.
"""
from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from rag_metrics.errors import InputError, ValidationReport
from rag_metrics.io.golden import LIST_SEPARATOR, golden_to_text, validate_golden
from rag_metrics.types import Chunk, GoldenSet
from rag_metrics.workspace.store import SaveResult, Workspace
from rag_metrics.workspace.versions import Change

if TYPE_CHECKING:  # pragma: no cover
    from rag_metrics.retrieval.relabel import LabelReport

__all__ = ["GoldenSession", "TableEdit", "apply_table_edits", "judge_label", "labelling_rows"]


def apply_table_edits(base: pd.DataFrame, edits: Mapping[str, Any]) -> pd.DataFrame:
    """The editor table after a data editor's edit state.

    ``edits`` is ``{"edited_rows": {row: {column: value}}, "deleted_rows": [row, ...],
    "added_rows": [{column: value}, ...]}`` with row positions in ``base`` (the shape Streamlit's
    ``st.data_editor`` keeps in its widget state).  Applied in the editor's order: cell edits,
    deletions, additions.  ``base`` is not modified.

    Examples
    --------
    >>> t = pd.DataFrame({"id": ["q1", "q2"], "question": ["a?", "b?"]})
    >>> apply_table_edits(t, {"edited_rows": {"0": {"question": "A?"}}, "deleted_rows": [1],
    ...                       "added_rows": [{"question": "c?"}]}).to_dict("list")
    {'id': ['q1', None], 'question': ['A?', 'c?']}
    """
    df = base.copy()
    columns = list(df.columns)
    for row, changes in (edits.get("edited_rows") or {}).items():
        pos = int(row)
        if not 0 <= pos < len(df):
            raise InputError(f"table edit names row {pos}, but the table has {len(df)} rows; reload the page")
        for col, value in dict(changes).items():
            if col in columns:
                df.iat[pos, columns.index(col)] = value
    deleted = sorted({int(r) for r in (edits.get("deleted_rows") or []) if 0 <= int(r) < len(df)})
    if deleted:
        df = df.drop(df.index[deleted])
    added = [{c: dict(r).get(c) for c in columns} for r in (edits.get("added_rows") or [])]
    if added:
        df = pd.concat([df, pd.DataFrame(added, columns=columns).astype(object)], ignore_index=True)
    return df.reset_index(drop=True)


def judge_label(golden: GoldenSet, query_id: str, item_id: str, grade: int) -> GoldenSet:
    """``golden`` with ``item_id`` judged for ``query_id``.

    A grade > 0 labels it relevant through the editor's own ``upsert_labels``; grade 0 keeps it as
    a judged non-relevant id (so it stops being a judging candidate, as in TREC qrels).
    """
    from rag_metrics.authoring.golden_edit import upsert_labels

    q = golden.get(query_id)
    if q is None:
        raise InputError(f"query {query_id!r} is no longer in the golden set; reload the page")
    if isinstance(grade, bool) or int(grade) < 0:
        raise InputError(f"grade must be an integer >= 0, got {grade!r}")
    if grade > 0:
        return upsert_labels(golden, q.question, {item_id: int(grade)}, query_id=query_id)
    rel = dict(q.relevant)
    rel[item_id] = 0
    return GoldenSet(tuple(x.relabelled(rel) if x.id == query_id else x for x in golden), golden.name)


def labelling_rows(ranking: Sequence[tuple[str, float]], n: int, texts: Mapping[str, str],
                   labels: Mapping[str, int] | None = None,
                   chunk_to_doc: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The labelling helper's list: the top ``n`` of one question's ranking with text and label.

    ``ranking`` is ``[(chunk_id, score), ...]`` in rank order.  With ``chunk_to_doc`` (labels are
    document ids) the ranking is collapsed to documents first by the library's rule
    (:func:`rag_metrics.retrieval.ranking.collapse_to_documents`: a document takes the rank of its
    best chunk) and a document's text is that chunk's.  Columns: ``rank, id, score, grade, text``
    (``grade`` 0 when unlabelled).
    """
    labels = labels or {}
    if chunk_to_doc is not None:
        from rag_metrics.retrieval.ranking import collapse_to_documents
        from rag_metrics.types import Run

        best: dict[str, str] = {}
        for cid, _ in ranking:
            best.setdefault(chunk_to_doc.get(cid, cid), cid)
        docs = collapse_to_documents(Run.from_rankings({"q": list(ranking)}), chunk_to_doc, k=n)
        items = docs.rankings().get("q", [])
        text = [texts.get(best.get(d, d), "") for d, _ in items]
    else:
        items = list(ranking[:n])
        text = [texts.get(i, "") for i, _ in items]
    return pd.DataFrame({"rank": list(range(1, len(items) + 1)), "id": [i for i, _ in items],
                         "score": [float(s) for _, s in items], "grade": [int(labels.get(i, 0)) for i, _ in items],
                         "text": text}, columns=["rank", "id", "score", "grade", "text"])


@dataclass(frozen=True)
class TableEdit:
    """Outcome of one editor edit: the parse report, and the save (``None``: not saved, either
    because the table has errors or because nothing changed)."""

    report: ValidationReport
    saved: SaveResult | None

    @property
    def ok(self) -> bool:
        return self.report.ok


class GoldenSession:
    """The working golden set of one corpus, autosaved to its workspace.

    Parameters
    ----------
    workspace
        Where the set is saved (``<root>/<corpus>/golden.jsonl``).
    seed
        The set to start from when nothing is saved yet (the shipped set), or ``None``.
    shipped
        The set :meth:`reset` restores (default ``seed``).
    name
        The golden set's name (the corpus name).
    session_id
        Names this session's conflict file (``golden.conflict-<session_id>.jsonl``).
    """

    def __init__(self, workspace: Workspace, seed: GoldenSet | None = None, *, name: str = "",
                 session_id: str = "session", shipped: GoldenSet | None = None) -> None:
        self.workspace = workspace
        self.name = name
        self.session_id = session_id
        self.seed = GoldenSet(seed.queries, name=name) if seed is not None else GoldenSet((), name=name)
        #: What :meth:`reset` restores (the shipped set; default ``seed``).  It differs from ``seed`` in a
        #: private space, which starts from the shared set it reads through but resets to the shipped one.
        self.shipped = GoldenSet(shipped.queries, name=name) if shipped is not None else self.seed
        #: Bumped on every change of the set (views rebuild on it).
        self.revision = 0
        self.last_save: SaveResult | None = None
        self.conflict_path: Path | None = None
        self.save_error: str | None = None
        #: Problems of the last table edit (errors: the edit was not saved).
        self.edit_report = ValidationReport()
        self._table: pd.DataFrame | None = None
        self._table_id = -1
        self._table_as_text = False
        self._table_fp = ""
        self._load()

    def __repr__(self) -> str:
        return (f"GoldenSession({self.workspace.path}, {len(self.golden)} queries, rev {self.revision}, "
                f"version {str(self.version)[:8]})")

    # ---- loading -----------------------------------------------------------------------------
    def _load(self) -> None:
        self.load_report = ValidationReport()
        #: The teacher's generation of the set loaded (read before the file: see rag_metrics.workspace.versions).
        self.generation = self.workspace.change(fresh=True).generation
        #: The teacher's change that refused this session's last save (take it: :meth:`reload`).
        self.teacher_change: Change | None = None
        loaded = None
        try:
            loaded = self.workspace.load()
        except InputError as err:
            self.load_report.error(str(err))
        if loaded is not None:
            golden, self.load_report, version = loaded
            self.golden = GoldenSet(golden.queries, name=self.name)
            self.version: str | None = version
        else:
            self.golden, self.version = self.seed, None
        self.fingerprint = self.golden.fingerprint()
        self._disk_stat = self._stat()
        self._table = None

    def _stat(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.workspace.path)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size)

    def disk_changed(self) -> bool:
        """Whether another session saved the file since this one loaded or saved it.

        One ``stat`` call per check; the file is read and hashed only when its size or
        modification time moved."""
        stat = self._stat()
        if stat == self._disk_stat:
            return False
        on_disk = self.workspace.version()
        if on_disk == self.version:
            self._disk_stat = stat
            return False
        return on_disk is not None

    @property
    def saved(self) -> bool:
        """Whether this session's set came from (or was written to) the workspace."""
        return self.version is not None

    # ---- the one way to change the set --------------------------------------------------------
    def replace(self, golden: GoldenSet, *, force: bool = False, _keep_table: bool = False) -> SaveResult | None:
        """Make ``golden`` the working set and autosave it.

        Returns the save result, or ``None`` when the set did not change (and ``force`` is off) or
        the workspace could not be written (:attr:`save_error` then says why; the set is kept in
        memory).  A conflicting save is written beside the saved file (:attr:`conflict_path`).
        """
        golden = GoldenSet(golden.queries, name=self.name)
        fp = golden.fingerprint()
        if fp == self.fingerprint and not force:
            return None
        text = golden_to_text(golden, "jsonl")
        # nothing saved yet: the set shown (shipped, or the shared one read through) goes to the undo history
        replacing = golden_to_text(self.golden, "jsonl") if self.version is None and len(self.golden) else None
        try:  # a set that cannot be saved (InputError) changes nothing, in memory or on disk
            res = self.workspace.save(golden, self.version, session=self.session_id, force=force, text=text,
                                      replacing=replacing, generation=self.generation)
        except OSError as err:  # unwritable workspace: keep working in memory, say so
            self._take(golden, fp, _keep_table)
            self.save_error = (f"Cannot save to {self.workspace.path} ({err.strerror or err}); your edits are kept "
                               "in this browser session only. Set RAG_METRICS_WORKSPACE to a writable folder.")
            return None
        self.save_error = None
        if res.teacher is not None:  # the teacher changed the set since: nothing written, take theirs
            self.reload()
            self.teacher_change = res.teacher
            return res
        self._take(golden, fp, _keep_table)
        self.last_save = res
        if res.saved:
            self.version = res.version
            self.conflict_path = None
            self._disk_stat = self._stat()
        else:
            self.conflict_path = res.conflict_path
        return res

    def _take(self, golden: GoldenSet, fp: str, keep_table: bool) -> None:
        self.golden, self.fingerprint = golden, fp
        self.revision += 1
        if not keep_table:
            self._table = None

    def undo(self, *, redo: bool = False) -> SaveResult:
        """Put back the version before the last save (``redo``: the one the last undo replaced) and load
        it; refused (``saved`` False, ``message`` says why, nothing changed) as :meth:`Workspace.undo` is."""
        step = self.workspace.redo if redo else self.workspace.undo
        res, _ = step(self.version)
        if res.saved:
            self.reload()
        return res

    # ---- the editor table ---------------------------------------------------------------------
    def table(self, *, relevant_as_text: bool = False, rebuild: bool = False) -> tuple[int, pd.DataFrame]:
        """``(table_id, table)``: the editor's base table and an id that changes whenever a new
        base is built (name the editor widget after it, so its edits stay relative to this base).

        The base is kept while the only changes come from :meth:`apply_table_edits`; any other
        change (labelling, judging, import, reset, reload) drops it.  ``rebuild`` forces a new base
        (the editor's own state was lost, e.g. after visiting another page)."""
        if self._table is None or rebuild or relevant_as_text != self._table_as_text:
            from rag_metrics.authoring.golden_edit import golden_to_table

            table = golden_to_table(self.golden)
            if relevant_as_text:
                table["relevant"] = [LIST_SEPARATOR.join(ids) for ids in table["relevant"]]
            self._table, self._table_as_text, self._table_fp = table, relevant_as_text, self.fingerprint
            self._table_id += 1
        return self._table_id, self._table

    @property
    def table_is_current(self) -> bool:
        """Whether the editor's base table shows the current set (no edit applied on it since)."""
        return self._table is not None and self._table_fp == self.fingerprint

    def apply_table_edits(self, table_id: int, edits: Mapping[str, Any]) -> TableEdit:
        """Apply a data editor's edit state (relative to the base ``table_id``) and autosave.

        A table with errors is not saved (the report lists them; the set stays the last valid
        one).  Validation against the corpus ids is :meth:`problems`' job, not a reason to refuse."""
        from rag_metrics.authoring.golden_edit import table_to_golden

        if self._table is None or table_id != self._table_id:
            report = ValidationReport()
            report.error("the table changed since this edit started (another change was saved); your edit "
                         "was not applied: make it again")
            self.edit_report = report
            return TableEdit(report, None)
        try:
            edited = apply_table_edits(self._table, edits)
        except InputError as err:
            report = ValidationReport()
            report.error(str(err))
            self.edit_report = report
            return TableEdit(report, None)
        parsed, report = table_to_golden(edited, None, name=self.name)
        self.edit_report = report
        if not report.ok:
            return TableEdit(report, None)
        evidence = {q.id: q.evidence for q in self.golden if q.evidence}  # the table has no evidence column: kept
        if evidence:
            from dataclasses import replace as _with

            parsed = GoldenSet(tuple(_with(q, evidence=evidence[q.id]) if q.id in evidence and not q.evidence else q
                                     for q in parsed), parsed.name)
        return TableEdit(report, self.replace(parsed, _keep_table=True))

    def problems(self, known_ids: Iterable[str] | None) -> ValidationReport:
        """Problems of the current set: the last edit's parse warnings plus every label that names no
        known id and every unlabelled in-scope question."""
        report = ValidationReport()
        validate_golden(self.golden, set(known_ids) if known_ids is not None else None, report)
        report.extend(self.edit_report.problems)
        return report

    # ---- labelling --------------------------------------------------------------------------
    def save_labels(self, question: str, labels: Mapping[str, int], *, category: str = "",
                    query_id: str | None = None) -> SaveResult | None:
        """Set one question's labels (the labelling helper); appends the question when new."""
        from rag_metrics.authoring.golden_edit import upsert_labels

        return self.replace(upsert_labels(self.golden, question, labels, category=category, query_id=query_id))

    def judge(self, query_id: str, item_id: str, grade: int) -> SaveResult | None:
        """Judge one id for one question: relevant with ``grade`` (> 0) or not relevant (0)."""
        return self.replace(judge_label(self.golden, query_id, item_id, grade))

    def import_file(self, data: bytes, filename: str, known_ids: Collection[str] | None = None,
                    chunks: Sequence[Chunk] | None = None, max_questions: int | None = None
                    ) -> tuple[GoldenSet | None, ValidationReport]:
        """Import an uploaded golden set or qrels file; the set is replaced only when the file has
        no error (and, with ``max_questions``, at most that many questions: a seat's budget,
        :func:`rag_metrics.server.policy.limit`).  Returns the imported set (``None`` when rejected) and the report.

        With ``chunks`` (the current chunking), questions labelled with reviewed evidence also get
        the labels of the chunks that hold it (:func:`rag_metrics.authoring.evidence_proposals.with_chunk_labels`),
        so every view that judges chunk ids reads the same relevance."""
        new, report = self.check_import(data, filename, known_ids, chunks, max_questions)
        if new is not None:
            self.replace(new)
        return new, report

    def check_import(self, data: bytes, filename: str, known_ids: Collection[str] | None = None,
                     chunks: Sequence[Chunk] | None = None, max_questions: int | None = None
                     ) -> tuple[GoldenSet | None, ValidationReport]:
        """What :meth:`import_file` would make the set (``None`` when it refuses), changing nothing."""
        from rag_metrics.authoring.golden_edit import import_golden

        new, report = import_golden(data, filename, self.golden, known_ids, max_questions=max_questions)
        if new is not None and max_questions is not None and len(new) > max_questions:
            report.error(f"{filename}: {len(new):,} questions is over this seat's budget of {max_questions:,} "
                         "(lab.budgets.golden_questions); import a smaller set, or ask the teacher")
            new = None
        if new is not None and chunks and any(q.reviewed_evidence for q in new):
            from rag_metrics.authoring.evidence_proposals import with_chunk_labels

            new = with_chunk_labels(new, chunks)
        return new, report

    # ---- conflicts, reset, carry-over ----------------------------------------------------------
    def keep_mine(self) -> SaveResult | None:
        """Resolve a conflict for this session: overwrite the saved file with this session's set."""
        return self.replace(self.golden, force=True)

    def outdated(self) -> Change | None:
        """The teacher's change this session's copy is older than (one ``stat`` when nothing moved), or
        ``None``.  Take it with :meth:`reload` before the next change."""
        if self.teacher_change is not None:
            return self.teacher_change
        now = self.workspace.change()
        return now if now.generation != self.generation else None

    def reload(self, seed: GoldenSet | None = None) -> None:
        """Take the saved file (resolves a conflict in favour of disk); this session's copy stays
        in the conflict file when there was one.  ``seed``: the set to show while nothing is saved (a
        private space reads the shared set again after the teacher's reset)."""
        if seed is not None:
            self.seed = GoldenSet(seed.queries, name=self.name)
        self._load()
        self.conflict_path = None
        self.save_error = None
        self.edit_report = ValidationReport()
        self.revision += 1

    def reset(self, old_chunks: Sequence[Chunk] | None = None,
              new_chunks: Sequence[Chunk] | None = None) -> SaveResult | None:
        """Restore the shipped set (:attr:`shipped`) and save it over the workspace (the set it replaces
        stays in the undo history).

        The shipped labels name the chunks of the chunking they were made on (``old_chunks``); pass
        both chunk lists to carry them to the current chunking (``new_chunks``)."""
        seed = self.shipped
        if old_chunks is not None and new_chunks is not None and len(seed):
            from rag_metrics.retrieval.relabel import carry_labels

            seed, _ = carry_labels(seed, old_chunks, new_chunks)
        self.edit_report = ValidationReport()
        return self.replace(seed, force=True)

    def carry_over(self, old_chunks: Sequence[Chunk], new_chunks: Sequence[Chunk]) -> LabelReport:
        """Carry every label from ``old_chunks`` to ``new_chunks`` (re-chunking) and save."""
        from rag_metrics.retrieval.relabel import carry_labels

        carried, report = carry_labels(self.golden, old_chunks, new_chunks)
        self.replace(carried)
        return report
