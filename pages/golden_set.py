import streamlit as st
st.title("golden_set")
