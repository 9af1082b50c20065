import streamlit as st
st.title("corpus_explorer")
