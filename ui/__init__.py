"""Streamlit-aware code of the RAG Metrics Lab app (the library, ``rag_metrics``, never imports it).

- :mod:`ui.state`   session keys, defaults, the golden working copy, :func:`ui.state.current`
- :mod:`ui.cache`   every ``st.cache_*`` (corpus, chunks, retrieval memo, evaluations, tables)
- :mod:`ui.views`   formatting, cards, Altair charts, reports
- :mod:`ui.sidebar` the shared sidebar (corpus, retriever, K, evaluation conventions)
"""
