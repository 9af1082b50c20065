"""Paging of large tables: only the visible rows are sent to the browser.

A table of a 5,000-chunk corpus is 1.6-1.8 MB of text; sending it on every run of a page costs
seconds.  :func:`page` keeps the whole table on the server (the caller caches it) and shows one
page of it, with a page selector and the rows shown.
"""
from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from ui import session

__all__ = ["PAGE_SIZE", "page", "page_bounds"]

#: Rows sent per page.
PAGE_SIZE = 100


def page_bounds(n_rows: int, page_no: int, page_size: int = PAGE_SIZE) -> tuple[int, int, int]:
    """``(start, stop, n_pages)`` of page ``page_no`` (1-based, clamped to the pages that exist)
    of a table of ``n_rows`` rows.

    >>> page_bounds(250, 3), page_bounds(250, 9), page_bounds(0, 1)
    ((200, 250, 3), (200, 250, 3), (0, 0, 1))
    """
    n_pages = max(1, math.ceil(n_rows / page_size))
    p = min(max(int(page_no), 1), n_pages)
    start = (p - 1) * page_size
    return start, min(start + page_size, n_rows), n_pages


def page(table: pd.DataFrame, key: str, page_size: int = PAGE_SIZE, what: str = "rows") -> pd.DataFrame:
    """The rows of ``table`` on the page chosen with a page selector (widget ``key``); a caption
    says which rows are shown.  Tables of one page show no selector."""
    n = len(table)
    n_pages = page_bounds(n, 1, page_size)[2]
    if n_pages == 1:
        session.pop(key, None)
        return table
    if int(session.value(key, 1)) > n_pages:  # the filter shrank the table
        session.set_value(key, n_pages)
    c1, c2 = st.columns([1, 4], vertical_alignment="bottom")
    no = c1.number_input(f"Page (of {n_pages})", min_value=1, max_value=n_pages, step=1, key=key)
    start, stop, _ = page_bounds(n, int(no), page_size)
    c2.caption(f"{what.capitalize()} {start + 1:,}–{stop:,} of {n:,} ({page_size} per page; only this page is "
               "sent to the browser).")
    return table.iloc[start:stop]
