"""Where the bundled sample data lives: the one place the app and the library look for it.

The sample corpus (``docs/``), its golden set (``golden.jsonl``) and its shipped embeddings
(``embeddings/``) live in the ``sample_corpus/`` folder at the root of the repository, beside the
``rag_metrics`` package.  :func:`sample_dir` finds that folder, in this order:

1. the ``root`` argument, when given;
2. the ``RAG_METRICS_SAMPLE_DIR`` environment variable (:data:`SAMPLE_DIR_ENV`);
3. ``sample_corpus/`` next to the ``rag_metrics`` package: a repository checkout, or an editable
   install (``pip install -e .``).

A regular (non-editable) install does not carry the sample data: :func:`sample_dir` then raises
:class:`~rag_metrics.errors.InputError` saying how to point at a checkout's ``sample_corpus``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from rag_metrics.errors import InputError
from rag_metrics.server_config import setting

__all__ = ["SAMPLE_DIR_ENV", "SamplePaths", "sample_dir", "sample_paths"]

#: Environment variable naming the sample folder (overrides the checkout's ``sample_corpus/``).
SAMPLE_DIR_ENV = "RAG_METRICS_SAMPLE_DIR"

#: The sample folder of a repository checkout: ``sample_corpus/`` beside the package folder.
_CHECKOUT_SAMPLE_DIR = Path(__file__).resolve().parent.parent / "sample_corpus"


@dataclass(frozen=True)
class SamplePaths:
    """The files of a sample folder (they need not all exist: see :func:`sample_dir`)."""

    root: Path

    @property
    def docs(self) -> Path:
        """The corpus: one Markdown file per document."""
        return self.root / "docs"

    @property
    def golden(self) -> Path:
        """The golden set with chunk-level labels (default chunking)."""
        return self.root / "golden.jsonl"

    @property
    def embeddings(self) -> Path:
        """The shipped embeddings of the default chunking and of the golden questions."""
        return self.root / "embeddings"


def sample_dir(root: str | os.PathLike[str] | None = None, *, required: bool = True) -> Path:
    """The sample folder (``root``, else ``$RAG_METRICS_SAMPLE_DIR``, else the checkout's ``sample_corpus``).

    Parameters
    ----------
    root : path-like, optional
        A sample folder to use instead of the default.
    required : bool
        ``True`` (default): the folder must hold ``docs/``.  ``False``: return the place looked at
        even when it is missing, for optional extras such as the shipped embeddings (readers of a
        missing folder find nothing).

    Returns
    -------
    Path
        A folder holding ``docs/`` and usually ``golden.jsonl`` and ``embeddings/``.

    Raises
    ------
    InputError
        When ``required`` and the folder, or its ``docs/`` subfolder, does not exist; the message
        names where it looked and the setting that points elsewhere.

    Examples
    --------
    >>> (sample_dir() / "golden.jsonl").is_file()  # in a repository checkout
    True
    """
    if root is not None:
        path, how = Path(root), "the sample folder given"
    elif setting("sample_dir"):
        path, how = Path(setting("sample_dir")), f"${SAMPLE_DIR_ENV}"
    else:
        path, how = _CHECKOUT_SAMPLE_DIR, "the sample folder of this installation"
    if required and not (path / "docs").is_dir():
        what = "has no docs/ folder" if path.is_dir() else "does not exist"
        raise InputError(f"{path}: {how} {what}. The sample corpus ships with the repository checkout "
                         f"(sample_corpus/), not with a regular pip install: set {SAMPLE_DIR_ENV} to a "
                         "checkout's sample_corpus folder (or install the checkout with pip install -e .)")
    return path


def sample_paths(root: str | os.PathLike[str] | None = None, *, required: bool = True) -> SamplePaths:
    """The files of :func:`sample_dir` (``.docs``, ``.golden``, ``.embeddings``); same arguments."""
    return SamplePaths(sample_dir(root, required=required))
