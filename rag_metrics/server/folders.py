"""Which server folders a session may open: corpus (BEIR) folders and Qdrant local folders.

The operator lists ``lab.data_roots`` (:mod:`rag_metrics.config`).  A folder is inside when
its real path (``os.path.realpath``: symbolic links and ``..`` resolved) is a root or lies under one,
so a link or a ``../`` cannot lead out.  Single user without data roots: any folder (the user is the
operator); with data roots, or in class mode, only inside them.  In class mode students choose from
:meth:`FolderPolicy.datasets`, the BEIR folders found directly under the roots.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_metrics.errors import InputError
from rag_metrics.server.policy import allowed

__all__ = ["FolderPolicy"]

_MAX_DATASETS = 500


@dataclass(frozen=True)
class FolderPolicy:
    """``roots``: the real paths of the data roots; ``any_folder``: no confinement."""

    roots: tuple[Path, ...] = ()
    any_folder: bool = True

    @classmethod
    def open(cls) -> FolderPolicy:
        """Any folder (the CLI)."""
        return cls()

    @classmethod
    def for_caller(cls, caller: Any, config: Any) -> FolderPolicy:
        """The folders ``caller`` may open under ``config`` (module docstring)."""
        roots = tuple(Path(os.path.realpath(r)) for r in config.data_roots)
        return cls(roots, allowed(caller, "any-folder") and not roots)

    def outside(self, setting: str) -> InputError:
        """The one message for a folder outside the data roots (it never says whether it exists)."""
        if not self.roots:
            return InputError(f"{setting}: this server has no data folders for the class; the operator lists them "
                              "in lab.data_roots")
        return InputError(f"{setting}: only folders inside the lab's data folders can be opened; choose one of "
                          "the class's datasets")

    def confine(self, path: str | os.PathLike[str], setting: str = "folder") -> Path:
        """``path`` as the folder to open (its real path when confined); InputError when outside."""
        raw = str(path).strip()
        if self.any_folder:
            return Path(raw).expanduser()
        if not raw or "\x00" in raw:
            raise self.outside(setting)
        try:
            real = Path(os.path.realpath(Path(raw).expanduser()))
        except (OSError, ValueError):
            raise self.outside(setting) from None
        if any(real == r or real.is_relative_to(r) for r in self.roots):
            return real
        raise self.outside(setting)

    def datasets(self) -> list[Path]:
        """BEIR folders (holding ``corpus.jsonl``) that are a data root or directly under one, by name."""
        found: list[Path] = []
        for root in self.roots:
            candidates = [root]
            try:
                candidates += sorted(p for p in root.iterdir() if p.is_dir())
            except OSError:
                continue
            for p in candidates:
                try:
                    real = Path(os.path.realpath(p))
                    if (real == root or real.is_relative_to(root)) and (real / "corpus.jsonl").is_file():
                        found.append(real)
                except OSError:
                    continue
                if len(found) >= _MAX_DATASETS:
                    return found
        return list(dict.fromkeys(found))
