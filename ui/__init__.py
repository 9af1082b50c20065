"""Streamlit-aware code of the RAG Metrics Lab app (the library, ``rag_metrics``, never imports it).

- :mod:`ui.shell`   ``st.navigation`` over ``pages/`` (the ``PAGES`` table), the shared sidebar, and
                    :func:`ui.shell.ensure_shell`, the first call of every page
- :mod:`ui.sidebar` the shared sidebar (corpus, retriever, K, evaluation conventions)
- :mod:`ui.state`   session keys, defaults, the golden session, the evaluation key, :func:`ui.state.current`;
                    pages read and set session values only through it
- :mod:`ui.cache`   every ``st.cache_*`` (corpus, chunks, retrieval memo, evaluations, tables)
- :mod:`ui.views`   formatting (3 decimals), cards, Altair chart templates, reports, escaping

Adding a page
-------------
1. ``pages/<stem>.py``::

       from ui import state, views
       from ui.shell import ensure_shell

       ensure_shell()                      # runs the shell when opened by URL first
       ctx = state.current_or_stop()       # settings, chunks, memo, golden, EvaluationResult
       views.page_header("Title", ctx)
       ...                                 # call rag_metrics / ui functions; no arithmetic here

2. Add ``("pages/<stem>.py", "Title", ":material/icon:")`` to ``ui.shell.PAGES`` (``url_path`` is the
   file stem; the first page is the default, served at "/" and, through a hidden alias, at its stem).
3. Put any new ``st.cache_*`` in :mod:`ui.cache`, keyed by an explicit fingerprint (``ctx.key``, the
   :class:`ui.state.EvalKey`, for anything derived from the current evaluation).
4. Add an AppTest in ``tests/test_app_*.py`` and the page to ``tests/test_browser.py``.
"""
