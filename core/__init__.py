"""Arbiter core: the testbed, resolvers, calibration and the DuckDB store (no Streamlit)."""
