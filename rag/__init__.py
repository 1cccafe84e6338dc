"""ragscope engine: loaders, chunker, encoders, Qdrant store, retrieval, answers and evaluation.

Nothing in this package imports Streamlit, so the CLI, the tests and the benchmarks run exactly the
code the pages run.
"""
