"""Workspace controls: which workspace this browser works in, what is wrong with its saved files,
undo of golden edits, and the whole workspace as one file.

- **Which workspace** (:func:`sidebar_picker`), single-user mode: the shared one or a named one,
  carried in the URL (``?ws=<name>``) so a reload or a shared link opens the same workspace
  (:func:`ui.state.space`).  In class mode there is no picker and a URL chooses nothing: a student
  works in their seat's private space, the teacher in the shared one (:mod:`ui.identity`).
- **Health** (:func:`health_banner`, on every page): when the saved files of the current corpus
  cannot be read as they are, the page says which file and what is wrong and offers to repair
  (keeps a backup), download the file as it is, or reset (keeps a backup).  Whatever is on disk,
  the app opens.
"""
from __future__ import annotations

import streamlit as st

from rag_metrics.errors import InputError
from rag_metrics.server.policy import allowed
from rag_metrics.workspace.store import (
    DEFAULT_SPACE,
    Workspace,
    WorkspaceCheck,
    export_space_archive,
    import_space_archive,
    list_spaces,
    private_space_name,
)
from ui import session as ui_session
from ui import state, views
from ui.keys import WORKSPACE_CHECKS as _CHECKS
from ui.keys import WORKSPACE_NEW as NEW
from ui.keys import WORKSPACE_PICK as PICK

PRIVATE_PREFIX = private_space_name("")


def _space_label(name: str) -> str:
    if name == DEFAULT_SPACE:
        return "Shared (everyone on this server)"
    if name.startswith(PRIVATE_PREFIX):
        return f"Private copy of this browser ({name[len(PRIVATE_PREFIX):]})"
    return name


# ---- the sidebar picker --------------------------------------------------------------------------
def _on_pick() -> None:
    state.set_space(ui_session.item(PICK))


def _on_create() -> None:
    name = (ui_session.value(NEW) or "").strip()
    try:
        state.set_space(name, create=True)
    except InputError as err:
        state.notice(views.esc(str(err)), "error")
        return
    ui_session.set_value(NEW, "")
    state.notice(f"Created the workspace {views.esc(name)} as a copy of the one you were in.", "success")


def identity_panel() -> None:
    """Class mode (call first inside ``st.sidebar``): the seat and teacher controls of
    :func:`ui.identity.sidebar_panel`, at the top of the sidebar, so their popovers open in view on any
    screen (at the bottom of a long sidebar, the sign-in's button fell below a 1280x720 window).
    Single-user mode: nothing (the workspace picker is :func:`sidebar_picker`)."""
    if not allowed(state.caller(), "choose-space"):
        from ui import identity

        identity.sidebar_panel()


def sidebar_picker() -> None:
    """The workspace selector (call inside ``st.sidebar``).  Class mode: no picker (a student never
    chooses a space; :func:`identity_panel` shows the seat instead)."""
    if not allowed(state.caller(), "choose-space"):
        return
    space = state.space()
    # other browsers' private copies are not listed (and every label is distinct: a selectbox's
    # value travels as its label, so two equal labels would pick the wrong workspace)
    spaces = [n for n in list_spaces() if n == space or not n.startswith(PRIVATE_PREFIX)]
    if space not in spaces:
        spaces.append(space)
    if ui_session.value(PICK) != space:
        ui_session.set_value(PICK, space)
    st.selectbox("Workspace", spaces, key=PICK, on_change=_on_pick, format_func=_space_label,
                 help="Where your golden sets are saved. Named workspaces keep separate labels; the link "
                      "(?ws=…) opens the same one.")
    with st.popover("New workspace", icon=":material/add:", width="stretch"):
        st.text_input("Name", key=NEW, placeholder="e.g. team A")
        st.button("Create (a copy of the current one)", key="workspace_create", on_click=_on_create)


# ---- health ----------------------------------------------------------------------------------------
def _stat(ws: Workspace) -> tuple:
    out: list[object] = []
    for p in (ws.path, ws.settings_path):
        try:
            s = p.stat()
            out.append((s.st_mtime_ns, s.st_size))
        except OSError as e:
            out.append(type(e).__name__)
    return tuple(out)


def check(ws: Workspace) -> WorkspaceCheck:
    """:meth:`Workspace.check`, re-run only when the files changed (one ``stat`` per rerun)."""
    cache = ui_session.default(_CHECKS, {})
    key, stat = str(ws.path), _stat(ws)
    hit = cache.get(key)
    if hit is None or hit[0] != stat:
        hit = (stat, ws.check())
        cache[key] = hit
    return hit[1]


def _on_repair(name: str) -> None:
    session = state.golden_session(name)
    try:
        backups = session.workspace.repair()
    except InputError as err:
        state.notice(views.esc(str(err)), "error")
        return
    session.reload()
    kept = ", ".join(views.esc(b.name) for b in backups) or "none needed"
    state.notice(f"Repaired: the bad rows and settings were dropped. Backup: {kept}.", "success")


def _on_reset(name: str) -> None:
    session = state.golden_session(name)
    backups = session.workspace.reset()
    session.reload()
    kept = ", ".join(views.esc(b.name) for b in backups) or "nothing to keep"
    state.notice(f"Reset: the saved files were removed, the shipped labels are in use. Backup: {kept}.", "success")


def health_banner() -> None:
    """Say what is wrong with the current corpus's saved files, and offer repair / download / reset."""
    try:
        name = ui_session.value(state.KEY_CORPUS, state.SAMPLE)
        session = state.golden_session(name)
    except InputError:
        return
    ws = session.workspace
    chk = check(ws)
    if chk.ok:
        return
    with st.container(border=True):
        st.warning(f"The saved workspace of this corpus has {len(chk.problems)} problem(s); the app uses what "
                   "it could read and nothing more is lost. Repair or reset keep a backup copy.",
                   icon=":material/report:")
        for p in chk.problems:
            st.caption(f"{views.server_path(p.path)}: {views.esc(p.message)}")
        c1, c2, c3, _ = st.columns([1, 1, 1, 1])
        c1.button("Repair", key="ws_repair", icon=":material/build:", on_click=_on_repair, args=(name,),
                  disabled=not all(p.repairable for p in chk.problems), width="stretch")
        try:
            data = ws.export()
        except InputError:
            data = b""
        c2.download_button("Download as it is", data or b"", file_name=ws.path.name, key="ws_export",
                           icon=":material/download:", disabled=not data, width="stretch")
        c3.button("Reset", key="ws_reset", icon=":material/restart_alt:", on_click=_on_reset, args=(name,),
                  width="stretch")


# ---- undo and archives (the golden set page) -------------------------------------------------------
def _on_undo(name: str, redo: bool = False) -> None:
    session = state.golden_session(name)
    step = session.workspace.redo if redo else session.workspace.undo
    res, golden = step(session.version)
    if not res.saved:
        state.notice(f"Nothing {'redone' if redo else 'undone'}: {res.message or 'there is no earlier version'}.",
                     "warning")
        return
    session.reload()
    what = "Redone: the golden set is back to the version before the undo" if redo else \
        "Undone: the golden set is back to its previous version"
    state.notice(f"{what} ({len(golden or ())} queries).", "info")


def undo_button(name: str) -> None:
    session = state.golden_session(name)
    n = len(session.workspace.history())
    st.button(f"Undo the last change ({n} earlier version{'s' if n != 1 else ''} kept)", key="golden_undo",
              icon=":material/undo:", on_click=_on_undo, args=(name,), disabled=n == 0)
    if session.workspace.undone():
        st.button("Redo (put back what the last undo replaced)", key="golden_redo", icon=":material/redo:",
                  on_click=_on_undo, args=(name, True))


def archive_controls() -> None:
    """Export the whole workspace as one .zip; import one (all or nothing)."""
    space = state.space()
    st.download_button("Export this workspace (.zip)", export_space_archive(space),
                       file_name=f"rag-metrics-workspace-{space[:40]}.zip", mime="application/zip",
                       key="ws_archive_export", icon=":material/archive:")
    up = st.file_uploader("Import a workspace (.zip exported by this app)", type=["zip"], key="ws_archive_upload")
    clicked = st.button("Import into this workspace", key="ws_archive_import", disabled=up is None)
    if clicked and up is not None:
        rep = import_space_archive(up.getvalue(), space)
        if not rep.ok:
            st.error(f"Import rejected: {rep.summary()}. Nothing was changed.", icon=":material/error:")
            views.report(rep, title="Problems in the archive")
        else:
            state.drop_golden_sessions()
            state.notice("Imported the workspace archive.", "success")
            st.rerun()
