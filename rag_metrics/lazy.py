"""Heavy modules imported on first use, for modules whose common paths do not need them.

``from rag_metrics.lazy import pandas as pd`` behaves like ``import pandas as pd`` except that
pandas (about 0.3 s of CPU to import, more than NumPy and pyarrow together) is imported only when
an attribute is first read.  ``rag-metrics evaluate`` on TREC files then never imports it.
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["LazyModule", "pandas"]


class LazyModule:
    """Stands for the module ``name``; the first attribute read imports it."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") or attr in ("_name", "_module"):
            raise AttributeError(attr)
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}{' (imported)' if self._module is not None else ''}>"


pandas = LazyModule("pandas")
