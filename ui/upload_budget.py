"""Streamlit's upload endpoint under the per-session budget (issue 27).

``PUT /_stcore/upload_file/<session>/<file id>`` keeps every file in memory under any file id the
browser makes up, with no cap on how many or how much per session: one student could grow an app
process by gigabytes.  :func:`install` (called by :mod:`ui.launch` before the server starts) puts
:class:`BudgetedUploadManager` in place of Streamlit's in-memory manager: a session holds at most
``lab.budgets.upload_files_per_session`` files and ``upload_mb_per_session`` MB; a PUT over that is
answered ``413`` and keeps nothing.  (Each file's own size is Streamlit's ``server.maxUploadSize``;
nginx additionally limits the request rate on the upload path per address: rag_metrics.server.deploy.)
"""
from __future__ import annotations

import logging

from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.uploaded_file_manager import UploadedFileRec

__all__ = ["BudgetedUploadManager", "UploadBudgetExceeded", "install"]

_LOG = logging.getLogger("rag_metrics.class")


class UploadBudgetExceeded(Exception):
    """A session's uploads would pass its budget."""


def _refuse(message: str) -> Exception:
    try:  # the web server answers an HTTPException with its status (413), not a 500
        from starlette.exceptions import HTTPException

        return HTTPException(status_code=413, detail=message)
    except ImportError:  # pragma: no cover - Streamlit without starlette
        return UploadBudgetExceeded(message)


class BudgetedUploadManager(MemoryUploadedFileManager):
    """Streamlit's in-memory upload manager with a per-session cap on files and bytes."""

    max_files = 30
    max_bytes = 60 * 1024 * 1024

    def add_file(self, session_id: str, file: UploadedFileRec) -> None:
        with self._lock:
            held = self.file_storage.get(session_id, {})
            others = {k: v for k, v in held.items() if k != file.file_id}
            n, size = len(others) + 1, sum(len(f.data) for f in others.values()) + len(file.data)
        if n > self.max_files or size > self.max_bytes:
            _LOG.warning("class: upload refused for session %s: %d files, %d bytes (budget %d files, %d bytes)",
                         session_id[:8], n, size, self.max_files, self.max_bytes)
            raise _refuse(f"this session's upload budget is {self.max_files} files and "
                          f"{self.max_bytes // (1024 * 1024)} MB (lab.budgets.upload_*_per_session)")
        super().add_file(session_id, file)


def install() -> type[BudgetedUploadManager]:
    """Use :class:`BudgetedUploadManager` (with the operator's budgets) for the server about to start."""
    from streamlit.web.server import server

    from rag_metrics.config import Budgets, load_server_config
    from rag_metrics.errors import InputError
    from rag_metrics.server.budgets import mb

    try:
        budgets = load_server_config().budgets
    except InputError:
        budgets = Budgets()
    BudgetedUploadManager.max_files = budgets.upload_files_per_session
    BudgetedUploadManager.max_bytes = mb(budgets.upload_mb_per_session)
    server.MemoryUploadedFileManager = BudgetedUploadManager  # type: ignore[misc]  # what Server() builds
    return BudgetedUploadManager
