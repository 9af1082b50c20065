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

There is one sample per lesson language (:data:`SAMPLE_FOLDERS`): ``sample_corpus/`` (English, the
default) and ``sample_corpus_da/`` (Danish; ``language="da"``, environment variable
``RAG_METRICS_SAMPLE_DA_DIR``).  A sample folder may declare itself in ``sample.json``
(:class:`SampleInfo`: its language, the label the app shows, and the embedding model it is
evaluated with); without one it is the English sample with the default model.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from rag_metrics.config import SETTINGS, setting
from rag_metrics.errors import InputError

__all__ = ["SAMPLE_DIR_ENV", "SAMPLE_FOLDERS", "SampleInfo", "SamplePaths", "sample_dir", "sample_paths"]

#: Environment variable naming the sample folder (overrides the checkout's ``sample_corpus/``).
SAMPLE_DIR_ENV = "RAG_METRICS_SAMPLE_DIR"

#: Lesson language -> (the sample folder's name in a checkout, the setting naming another folder:
#: ``rag_metrics.config.SETTINGS``, ``$RAG_METRICS_SAMPLE_DIR`` / ``$RAG_METRICS_SAMPLE_DA_DIR``).
SAMPLE_FOLDERS = {"en": ("sample_corpus", "sample_dir"), "da": ("sample_corpus_da", "sample_dir_da")}

#: The sample folder of a repository checkout: ``sample_corpus/`` beside the package folder.
_CHECKOUT = Path(__file__).resolve().parent.parent
_CHECKOUT_SAMPLE_DIR = _CHECKOUT / "sample_corpus"


@dataclass(frozen=True)
class SampleInfo:
    """What a sample folder declares in its ``sample.json`` (all optional)."""

    language: str = "en"                          # the lesson language it is written in
    label: str = "Sample: Lumen Notes handbook"   # its name in the app's corpus list
    model: str = ""                               # embedding model it is evaluated with ("" = the default)


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

    @property
    def query_embeddings(self) -> Path:
        """The shipped golden-question vectors of a model that embeds queries apart from passages
        (e5: ``"query: "``), under that model's query name; absent for the default model."""
        return self.embeddings / "queries"

    @property
    def info(self) -> SampleInfo:
        """The folder's ``sample.json`` (:class:`SampleInfo`); the defaults when it has none.

        Raises
        ------
        InputError
            When ``sample.json`` exists but is not a JSON object of strings.
        """
        path = self.root / "sample.json"
        if not path.is_file():
            return SampleInfo()
        try:
            from rag_metrics.io.files import loads_json

            data, problem, _ = loads_json(path.read_text(encoding="utf-8"))
            if problem is not None:
                raise ValueError(problem)
            if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
                raise ValueError("expected an object of strings")
            known = {k: data[k] for k in ("language", "label", "model") if k in data}
            return SampleInfo(**known)
        except (OSError, ValueError) as err:
            raise InputError(f"{path}: not a valid sample description ({err}); it holds a JSON object with "
                             'the strings "language", "label" and "model".') from None


def sample_dir(root: str | os.PathLike[str] | None = None, *, required: bool = True, language: str = "en") -> Path:
    """The sample folder (``root``, else ``$RAG_METRICS_SAMPLE_DIR``, else the checkout's ``sample_corpus``).

    Parameters
    ----------
    root : path-like, optional
        A sample folder to use instead of the default.
    required : bool
        ``True`` (default): the folder must hold ``docs/``.  ``False``: return the place looked at
        even when it is missing, for optional extras such as the shipped embeddings (readers of a
        missing folder find nothing).
    language : str
        Whose sample (:data:`SAMPLE_FOLDERS`): ``"en"`` (default) or ``"da"`` (``sample_corpus_da``,
        ``$RAG_METRICS_SAMPLE_DA_DIR``).

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
    if language not in SAMPLE_FOLDERS:
        raise InputError(f"no sample corpus in language {language!r}; use one of {', '.join(SAMPLE_FOLDERS)}")
    folder, key = SAMPLE_FOLDERS[language]
    env = SETTINGS[key].env
    if root is not None:
        path, how = Path(root), "the sample folder given"
    elif setting(key):
        path, how = Path(setting(key)), f"${env}"
    else:
        path, how = (_CHECKOUT_SAMPLE_DIR if language == "en" else _CHECKOUT / folder), \
            "the sample folder of this installation"
    if required and not (path / "docs").is_dir():
        what = "has no docs/ folder" if path.is_dir() else "does not exist"
        raise InputError(f"{path}: {how} {what}. The sample corpus ships with the repository checkout "
                         f"({folder}/), not with a regular pip install: set {env} to a "
                         f"checkout's {folder} folder (or install the checkout with pip install -e .)")
    return path


def sample_paths(root: str | os.PathLike[str] | None = None, *, required: bool = True,
                 language: str = "en") -> SamplePaths:
    """The files of :func:`sample_dir` (``.docs``, ``.golden``, ``.embeddings``, ``.info``); same arguments."""
    return SamplePaths(sample_dir(root, required=required, language=language))
