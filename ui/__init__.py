"""Streamlit-aware code of the RAG Metrics Lab app (the library, ``rag_metrics``, never imports it).

Two tiers (``tools/check_imports.py`` declares them and the lint checks them): the **core** below, which every
page stands on and which never imports a feature; and **one feature module per page**, ``ui/<page>.py``, named
after ``pages/<page>.py``, with :func:`render` drawing the page (plus a few declared parts of a feature).

- :mod:`ui.navigation` the ``PAGES`` table: sections, who sees which page, ``st.navigation``'s sections
- :mod:`ui.shell`   ``st.navigation`` over ``pages/``, the shared sidebar, and
                    :func:`ui.shell.ensure_shell`, the first call of every page
- :mod:`ui.session` the one door to ``st.session_state`` (no other module reads or writes it)
- :mod:`ui.sidebar` the shared sidebar (corpus, retriever, K, evaluation conventions)
- :mod:`ui.state`   :func:`ui.state.current` (the :class:`ui.state.Lab` every page reads) and, re-exported, every
                    session accessor; pages read and set session values only through it
- :mod:`ui.keys`    every session key; :mod:`ui.context` the plain types and pure logic (no Streamlit)
- :mod:`ui.cache`   the core ``st.cache_*`` (corpus, chunks, retrieval memo, evaluations, tables);
                    :mod:`ui.cache_insights`, :mod:`ui.cache_answers` the other pages' caches
- :mod:`ui.views`   formatting (3 decimals), cards, Altair chart templates, reports, escaping

Adding a page
-------------
1. ``ui/<stem>.py``, the page's feature module::

       from ui import state, views

       def render() -> None:
           ctx = state.current_or_stop()   # settings, chunks, memo, golden, EvaluationResult
           views.page_header("Title", ctx)
           ...                             # call rag_metrics / ui functions; no arithmetic here

   and ``pages/<stem>.py``, a thin script that imports only ``ui``::

       from ui import <stem>
       from ui.shell import ensure_shell

       ensure_shell()                      # runs the shell when opened by URL first
       <stem>.render()

2. Add ``("pages/<stem>.py", "Title", ":material/icon:")`` to ``ui.navigation.PAGES`` (``url_path`` is the
   file stem; the first page is the default, served at "/" and, through a hidden alias, at its stem).
3. Put any new ``st.cache_*`` in :mod:`ui.cache` (or :mod:`ui.cache_insights`), keyed by an explicit fingerprint
   (``ctx.key``, the :class:`ui.context.EvalKey`, for anything derived from the current evaluation).
4. Add an AppTest in ``tests/test_app_*.py`` and the page to ``tests/test_browser.py``.
5. Keep anything in the session under a key named in :mod:`ui.keys` (``tests/test_session_keys.py`` fails on a
   key spelled as a string).
"""
