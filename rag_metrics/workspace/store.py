"""The app's workspace: the user's golden sets on disk, saved atomically, with conflict detection.

This module is the workspace's one import path: every name below lives in a module of its job and
is importable from here (as before the split, issue 25):

- :mod:`rag_metrics.workspace.layout`: folders, injective names, file names and size limits;
- :mod:`rag_metrics.workspace.golden_store`: :class:`Workspace` (load, save, conflicts, undo/redo, settings);
- :mod:`rag_metrics.workspace.history`: the undo entries on disk;
- :mod:`rag_metrics.workspace.checks`: check, repair and reset (:class:`WorkspaceCheck`);
- :mod:`rag_metrics.workspace.archive`: ``.zip`` archives and the all-or-nothing import journal;
- :mod:`rag_metrics.workspace.spaces`: named and private spaces, :func:`class_mode`, :func:`choose_space`;
- :mod:`rag_metrics.workspace.corpora`: the corpora users add (not re-exported here).

Setting a name here (a test's ``monkeypatch.setattr(store, "MAX_GOLDEN_BYTES", ...)``) sets it in
every module of the package that uses it, so the limits stay tunable in one place.

Layout
------
``<root>/<corpus folder>/golden.jsonl`` for the shared (default) space, and
``<root>/spaces/<space folder>/<corpus folder>/golden.jsonl`` for a named space.  ``root`` is
``$RAG_METRICS_WORKSPACE`` or ``~/.rag_metrics/workspace``.

Folder names are **injective**: :func:`folder_name` is a readable slug of the name plus the
first 10 hex digits of the SHA-256 of the exact name (``sample corpus`` ->
``sample_corpus-5c8f0e2c1a``), so two different names never share files, whatever their case,
spaces, unicode or path characters (``..``, ``/``).  Each folder records its exact name in
``name.txt`` (used to list spaces and corpora).

**Migration** from the old scheme (folder = slug only): when a name's folder does not exist and
the old folder ``<root>/<slug>`` has files, they are copied into the new folder and the old
folder is marked ``.claimed`` with that name, so only the first name that opens it takes it over
(the app opens the sample, whose old folder is ``sample_corpus``, first).  The old files are
left in place.

Saving
------
Every save is atomic (temporary file + ``os.replace``) and runs under an exclusive lock file, so
two app sessions never interleave a write.  A session remembers the *version* (SHA-256 of the
file content) it last loaded or saved; if the file on disk has another version when it saves,
another session saved in between: the save does **not** overwrite it, the session's copy is
written beside it (``golden.conflict-<session>.jsonl``) and the conflict is reported.

**Undo**: before a save replaces the file, the previous content is kept in ``history/``
(the last :data:`HISTORY_SIZE` versions, each written atomically and named by time and content
hash); :meth:`Workspace.undo` puts the newest back after checking it (its hash, UTF-8, the load
limit, every row valid: a damaged entry is refused with a message and set aside in
``history/damaged/``), and keeps the version it replaces in ``history/undone/``, so
:meth:`Workspace.redo` undoes the undo.

**Imports** (:func:`import_space_archive`, :meth:`Workspace.import_archive`) are all or
nothing: the archive is validated in memory first (caps per member and on the manifest), its
files are written into a staging folder of the space, and one atomic write of the space's
``.import-commit.json`` swaps them in at once; an import interrupted after that point (``kill
-9``) is finished by the next access to the space, one interrupted before it leaves nothing.

**Health**: :meth:`Workspace.check` lists what is wrong with which file (unreadable, not
UTF-8, too large, invalid rows, bad grades, unknown format, bad settings) without raising;
:meth:`Workspace.repair` keeps a backup and rewrites the good rows; :meth:`Workspace.reset`
keeps a backup and removes the saved files; :meth:`Workspace.export_archive` /
:meth:`Workspace.import_archive` move a workspace as one ``.zip`` file.

Private spaces (class mode)
---------------------------
:func:`class_mode` is on when ``RAG_METRICS_CLASS_MODE=1`` or the app is started with
``streamlit run app.py -- --class-mode``.  Then each student works in the private space of their
seat (:mod:`rag_metrics.server.seats`), never one named by a URL.  A private space is **copy-on-write**:
it holds nothing until the student's first change, and until then reads the shared space's files
(:func:`read_through`), so a new seat costs no disk and no copy.
"""
from __future__ import annotations

import sys
from types import ModuleType

from rag_metrics.io.files import locked as _locked  # noqa: F401 (re-exported: the lock the workspace takes)
from rag_metrics.workspace import archive, checks, golden_store, history, layout, spaces
from rag_metrics.workspace.archive import (  # noqa: F401 (re-exported)
    _MEMBER,
    _STAGE_NAME,
    ARCHIVE_FORMAT,
    MAX_ARCHIVE_BYTES,
    MAX_ARCHIVE_CORPORA,
    MAX_ARCHIVE_ENTRIES,
    MAX_ARCHIVE_UNPACKED,
    MAX_MANIFEST_BYTES,
    MAX_SETTINGS_BYTES,
    ArchiveEntry,
    _apply_import,
    _commit_import,
    _settle_import,
    export_archive,
    read_archive,
)
from rag_metrics.workspace.checks import (  # noqa: F401 (re-exported)
    WorkspaceCheck,
    WorkspaceProblem,
    _check_saveable,
)
from rag_metrics.workspace.golden_store import (
    SaveResult,
    Workspace,
)
from rag_metrics.workspace.history import (  # noqa: F401 (re-exported)
    _HISTORY_NAME,
    _entries,
    _keep_entry,
    _read_entry,
    _set_aside,
)
from rag_metrics.workspace.layout import (  # noqa: F401 (re-exported)
    _MAX_NAME_CHARS,
    _SETTING_BOUNDS,
    DAMAGED_DIR,
    DEFAULT_SPACE,
    GOLDEN_FILE,
    HISTORY_DIR,
    HISTORY_SIZE,
    IMPORT_MARK,
    MAX_GOLDEN_BYTES,
    NAME_FILE,
    SETTINGS_FILE,
    SPACES_DIR,
    UNDONE_DIR,
    _check_name,
    _read_name,
    _slug,
    _version,
    _write_name,
    default_workspace_dir,
    folder_name,
    list_spaces,
    space_dir,
)
from rag_metrics.workspace.spaces import (
    choose_space,
    class_mode,
    ensure_space,
    export_space_archive,
    import_space_archive,
    list_corpora,
    private_space_name,
    read_through,
)

__all__ = [
    "DEFAULT_SPACE",
    "HISTORY_SIZE",
    "MAX_ARCHIVE_BYTES",
    "MAX_GOLDEN_BYTES",
    "SaveResult",
    "Workspace",
    "WorkspaceCheck",
    "WorkspaceProblem",
    "class_mode",
    "default_workspace_dir",
    "ensure_space",
    "folder_name",
    "list_corpora",
    "list_spaces",
    "private_space_name",
    "read_through",
    "space_dir",
]
__all__ += ["ArchiveEntry", "choose_space", "export_archive", "export_space_archive", "import_space_archive",
            "read_archive"]

_PARTS = (layout, history, checks, archive, golden_store, spaces)


class _Store(ModuleType):
    """This module, with one difference: setting a name sets it in every part that holds it too."""

    def __setattr__(self, name: str, value: object) -> None:
        for part in _PARTS:
            if name in vars(part):
                setattr(part, name, value)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Store
