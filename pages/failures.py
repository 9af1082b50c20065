import streamlit as st
st.title("failures")
