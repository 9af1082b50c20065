"""Bring your system: when sniffing cannot decide, the user says it.  A column mapping per dropped file
(which field is the question, the contexts, the ids, the scores, the answer, the labels), with a preview
of the first rows as the mapping reads them; the same mapping as the CLI's ``--map``
(:mod:`rag_metrics.io.mapping`).  A mapping that reads a file is kept in the workspace's settings
(``column_maps``, keyed by the file's shape: its top-level field names) and used for the next file of
that shape."""
from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

import pandas as pd
import streamlit as st

from rag_metrics.errors import InputError
from rag_metrics.formats import describe_bytes
from rag_metrics.io.mapping import TARGETS, field_paths, parse_map, preview_rows, read_rows, shape_key
from ui import session, state, views
from ui.context import SAMPLE
from ui.keys import BRING_MAPS as KEY_MAPS
from ui.keys import KEY_CORPUS

__all__ = ["SETTING", "form", "limited", "mapping_for", "saved_maps"]

#: The workspace setting that keeps mappings: ``{shape: spec}``.
SETTING = "column_maps"
_ROWS_SUFFIXES = (".json", ".jsonl", ".ndjson", ".csv", ".tsv", ".parquet", ".gz")
_NONE = "—"
_SHAPES = "_bring_shapes"


def limited(fn: Any, *args: Any, what: str) -> Any:
    """``fn(*args)``; in class mode in a worker process with a memory limit (:mod:`rag_metrics.io.worker`),
    as the page reads every dropped file there."""
    from rag_metrics.config import class_mode_on

    if not class_mode_on():
        return fn(*args)
    from rag_metrics.io.worker import run_limited

    return run_limited(fn, *args, what=what)


def _key(name: str, data: bytes) -> str:
    return f"{name}\0{hashlib.sha256(data).hexdigest()}"


def _workspace() -> Any:
    from ui.spaces import workspace

    return workspace(session.value(KEY_CORPUS, SAMPLE))


def saved_maps() -> dict[str, str]:
    """The mappings kept in this corpus's workspace settings, by shape."""
    try:
        got = _workspace().load_settings().get(SETTING, {})
    except (OSError, InputError):
        return {}
    return {str(k): str(v) for k, v in got.items()} if isinstance(got, Mapping) else {}


def _shape(name: str, data: bytes) -> tuple[str, list[Any]] | None:
    """The file's shape and its first rows (None when it holds no rows of objects), once per content."""
    memo: dict[str, Any] = session.default(_SHAPES, {})
    key = _key(name, data)
    if key not in memo:
        try:
            rows, _, _ = limited(read_rows, data, name, 50, what=name)
        except InputError:
            rows = []
        rows = [r for r in rows if isinstance(r, Mapping)]
        memo[key] = (shape_key(rows), rows) if rows else None
        if len(memo) > 64:
            memo.clear()
            memo[key] = (shape_key(rows), rows) if rows else None
    return memo[key]


def mapping_for(name: str, data: bytes) -> str | None:
    """The mapping to read a dropped file with: the one given for it on this page, else the one kept
    for its shape, else None (read as it is)."""
    given = session.value(KEY_MAPS, {}).get(_key(name, data))
    if given is not None:
        return given or None  # "": read without a mapping (the user said so)
    saved = saved_maps()
    if not saved or PurePath(name).suffix.lower() not in _ROWS_SUFFIXES:
        return None
    shape = _shape(name, data)
    return saved.get(shape[0]) if shape is not None else None


def _cell(v: Any) -> str:
    text = ", ".join(map(str, v)) if isinstance(v, list) else str(v)
    return text if len(text) <= 120 else text[:117] + "..."


def form(name: str, data: bytes, read_ok: bool) -> None:
    """The mapping of one dropped file: a field per key, a preview of the first rows as read, and the
    button that reads the file with it (and keeps it for the next file of the same shape)."""
    if PurePath(name).suffix.lower() not in _ROWS_SUFFIXES:
        return
    shape = _shape(name, data)
    if shape is None:
        return
    paths = field_paths(shape[1])
    in_use = mapping_for(name, data)
    digest = hashlib.sha256(data).hexdigest()[:12]
    title = f"Map the fields of {views.esc(name)}" + (" (read with your mapping)" if in_use else "")
    with st.expander(title, expanded=not read_ok, icon=":material/table_edit:"):
        st.caption("Say which field holds what: nested fields are dotted, `[]` takes a field from every item "
                   "of a list. The same as the command line's `--map`.")
        current = dict(parse_map(in_use).fields) if in_use else {}
        cols = st.columns(4)
        chosen: dict[str, str] = {}
        for n, (target, words) in enumerate(TARGETS.items()):
            options = [_NONE, *paths]
            default = current.get(target, _NONE)
            if default not in options:
                options.append(default)
            got = cols[n % 4].selectbox(target, options, index=options.index(default),
                                        key=f"bring_map_{digest}_{target}", help=words)
            if got != _NONE:
                chosen[target] = got
        if not chosen:
            return
        try:
            cmap = parse_map(chosen, "mapping")
            preview = limited(preview_rows, data, name, cmap, what=name)
        except InputError as e:
            st.error(views.esc(str(e)), icon=":material/error:")
            return
        st.caption(f"The first {len(preview)} row(s) as this mapping reads them · on the command line: --map "
                   f"{views.esc(cmap.spec)}")
        st.dataframe(pd.DataFrame([{k: _cell(v) for k, v in r.items()} for r in preview]), hide_index=True,
                     width="stretch")
        left, right = st.columns(2)
        if left.button("Read with this mapping", key=f"bring_map_go_{digest}", type="primary"):
            try:
                limited(describe_bytes, data, name, None, cmap, what=name)
            except InputError as e:
                st.error(views.esc(str(e)), icon=":material/error:")
                return
            session.default(KEY_MAPS, {})[_key(name, data)] = cmap.spec
            kept = ""
            try:
                _workspace().save_settings(**{SETTING: {**saved_maps(), shape[0]: cmap.spec}})
                kept = "; kept for the next file with the same fields"
            except OSError:
                pass
            state.notice(f"{views.esc(name)} read with the mapping {views.esc(cmap.spec)}{kept}.")
            st.rerun()
        if in_use and right.button("Read without a mapping", key=f"bring_map_off_{digest}"):
            session.default(KEY_MAPS, {})[_key(name, data)] = ""
            st.rerun()
