"""The upload endpoint's per-session budget (issue 27: 40 PUTs under made-up file ids grew a process
by 0.75 GB).  The manager ui.launch installs refuses a session's files past its budget."""
from __future__ import annotations

from pathlib import Path

import pytest
from starlette.exceptions import HTTPException
from streamlit.runtime.uploaded_file_manager import UploadedFileRec

from ui.upload_budget import BudgetedUploadManager, install


def rec(file_id: str, size: int) -> UploadedFileRec:
    return UploadedFileRec(file_id=file_id, name="x.txt", type="text/plain", data=b"x" * size)


@pytest.fixture
def manager(monkeypatch):
    monkeypatch.setattr(BudgetedUploadManager, "max_files", 3)
    monkeypatch.setattr(BudgetedUploadManager, "max_bytes", 1000)
    return BudgetedUploadManager("/_stcore/upload_file")


def test_files_per_session_are_capped(manager):
    for i in range(3):
        manager.add_file("s1", rec(f"made-up-{i}", 10))
    with pytest.raises(HTTPException) as err:
        manager.add_file("s1", rec("made-up-3", 10))
    assert err.value.status_code == 413 and "upload budget" in err.value.detail
    assert len(manager.file_storage["s1"]) == 3
    manager.add_file("s2", rec("other-session", 10))  # another session has its own budget
    manager.add_file("s1", rec("made-up-0", 20))  # replacing a file under its id is not one more


def test_bytes_per_session_are_capped(manager):
    manager.add_file("s1", rec("a", 600))
    with pytest.raises(HTTPException):
        manager.add_file("s1", rec("b", 600))
    assert manager.get_stats()  # the manager still answers
    assert sum(len(f.data) for f in manager.file_storage["s1"].values()) == 600


def test_the_launcher_installs_it_with_the_operators_budgets(tmp_path, monkeypatch):
    from streamlit.web.server import server

    conf = tmp_path / "lab.toml"
    conf.write_text("[lab.budgets]\nupload_files_per_session = 7\nupload_mb_per_session = 2\n", encoding="utf-8")
    monkeypatch.setenv("RAG_METRICS_CONFIG", str(conf))
    monkeypatch.setattr(server, "MemoryUploadedFileManager", server.MemoryUploadedFileManager)
    cls = install()
    assert server.MemoryUploadedFileManager is cls and cls.max_files == 7 and cls.max_bytes == 2 * 1024 * 1024
    import ui.launch

    assert "upload_budget.install()" in Path(ui.launch.__file__).read_text(encoding="utf-8")
