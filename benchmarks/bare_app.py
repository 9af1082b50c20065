"""The bare Streamlit app of the class-load benchmark (issue 18): a slider and six ``st.metric``.

``bench_class.py`` runs it at the same N as the class load, without think time, so the lab's
reruns per second can be compared with what Streamlit itself manages on the same machine.
"""
import streamlit as st

k = st.slider("k", 1, 20, 5, key="k")
cols = st.columns(6)
for i, c in enumerate(cols):
    c.metric(f"metric {i + 1}", f"{(k * (i + 3)) % 97 / 97:.3f}", f"{(k - 5) * (i + 1) / 100:+.2f}")
