import json
import streamlit as st
from ui import exercise_editor as E
harness = open("/work/wt/ex-lib/rag_metrics/exercises/harness_source.py").read()
payload = {"exercise": "add", "function": "add", "harness": "", "checks": [{"id": "a", "args": {"function": "add", "params": [1, 2]}}],
           "limits": {"timeout_s": 5, "max_output_chars": 1000}}
if E.REPORT in st.session_state:
    st.session_state["last"] = st.session_state.pop(E.REPORT)
last = st.session_state.get("last")
labels = {k: k for k in ["run", "running", "loading", "stopped", "failed", "too_large", "grading", "too_long", "editor"]}
E.editor(doc_id="add", code="def add(a, b):\n    return a + b\n", payload=payload, harness=harness, labels=labels,
         verdict={"text": "got " + (last or {}).get("status", "-"), "kind": "pass"} if last else None)
st.write("REPORT:")
st.code(json.dumps(last))
