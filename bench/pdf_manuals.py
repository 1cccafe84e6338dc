"""Issue 35's PDF bench: the product's defaults, before and after, beside two plain baselines, on the PDF manuals set.

Set: tests/data/pdf_manuals.jsonl over bashref.pdf and gnuplot.pdf (Debian bash-doc and gnuplot-doc; how to get
them and how the set was written: tests/data/README.md). Rows, all in one run, scored on the same 101 answerable
questions so every gain is paired:

- product before / after: the product's defaults (every RAGSCOPE_ variable cleared), the two PDFs ingested into a
  fresh data dir and run through the Eval path (`run_eval`, last stage). Each runs in a subprocess whose
  PYTHONPATH is the code measured: "before" a worktree of b934889 (`git worktree add /tmp/before b934889`),
  "after" this checkout. Each writes its per-question values to JSON in the cache.
- plain DBSF: the whole document as pypdf reads it (page texts joined), 800-character recursive chunks (100
  overlap, langchain-text-splitters' RecursiveCharacterTextSplitter), the same dense model (all-MiniLM-L6-v2 on
  the product's ONNX runtime, which gives PyTorch's vectors) and BM25 model (fastembed Qdrant/bm25, the product's
  vocabulary files), BM25 with Qdrant's IDF modifier, Qdrant DBSF fusion of 50 dense and 50 sparse candidates
  (the product's candidate count); nothing else.
- LangChain recipe: PyPDFLoader's documents (one per page, pypdf page text), the same splitter, dense + BM25 in
  Qdrant as langchain-qdrant's HYBRID mode builds them (sparse vectors without a modifier: no IDF) and queries them
  (RRF of k dense and k sparse candidates, k = 10 here). Written with pypdf, the splitter and qdrant-client
  directly, not through langchain-qdrant (not installed here): the same calls it makes.

Metrics: MRR@10, recall@5 (one gold section per question, so equal to hit@5) and hit@10, with section gold.
A product chunk matches when its heading path is the gold heading or lies under it (rag.eval.gold). A baseline
chunk has no heading: it matches when most of its characters lie under the gold section, or when it holds the
question's answer text (words hyphenated across a line joined, whitespace collapsed). Sections are laid over
pypdf's page text from the PDF outline: each bookmark starts its section at the line on its page that carries
its title (numbered or not: bash's "3.1.2.1 Escape Character"), else at the top of that page. Paired-bootstrap
95% intervals: rag.eval.bootstrap.

Usage (under nice: the machine is shared):
    nice -n 10 python bench/pdf_manuals.py [--before /tmp/before] [--after TREE] [--cache DIR] [--resamples 2000]

--cache (default /tmp/pdf-manuals-bench) keeps the product runs' JSON (keyed by the code's commit and diff) and
the baselines' chunk vectors; a second run with the same code re-ingests nothing. --models-seed copies an
existing models/ folder (the ONNX export) once into the cache, and every fresh data dir gets it as hard links.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
SET = ROOT / "tests" / "data" / "pdf_manuals.jsonl"
PDFS = {
    "bashref.pdf": Path("/usr/share/doc/bash/bashref.pdf"),
    "gnuplot.pdf": Path("/usr/share/doc/gnuplot/gnuplot.pdf"),
}
BEFORE_COMMIT = "b934889"
METRICS = ("mrr@10", "recall@5", "hit@10")
LAST_STAGE = "rerank"
CHUNK_SIZE, CHUNK_OVERLAP = 800, 100
DBSF_CANDIDATES = 50  # the product's default candidates per stage (RetrievalConfig.candidates)
LANGCHAIN_K = 10  # langchain-qdrant prefetches k per vector and returns k; k = 10 to score @10
DENSE_MODEL = "all-MiniLM-L6-v2"
_NUMBERED = re.compile(r"^(?:\d+(?:\.\d+)*|[A-Z](?:\.\d+)+|Appendix [A-Z])\s+")
_LINE_HYPHEN = re.compile(r"(?<=[^\W\d_])-\n(?=[^\W\d_])")


def files() -> list[tuple[str, bytes]]:
    missing = [str(p) for p in PDFS.values() if not p.is_file()]
    if missing:
        sys.exit(f"PDFs missing ({', '.join(missing)}): apt-get install bash-doc gnuplot-doc")
    return [(name, path.read_bytes()) for name, path in PDFS.items()]


# --- the product, under whichever `rag` the subprocess's PYTHONPATH holds -----------------------------------


def product_worker(data_dir: Path, out: Path) -> None:
    """Ingest both PDFs with the defaults, run the set through run_eval, write per-question values to `out`.

    Imports only what b934889 also has, so the same function measures the code before and after."""
    import rag
    from rag.components import build_components
    from rag.eval.qsets import read_question_set_file
    from rag.eval.runner import run_eval
    from rag.ingest.pipeline import ingest_files
    from rag.settings.config import Settings

    components = build_components(Settings(data_dir=data_dir))
    try:
        started = time.perf_counter()
        summary = ingest_files(components, files())
        ingest_s = time.perf_counter() - started
        if summary.errors:
            sys.exit(f"ingest failed: {summary.errors}")
        run = run_eval(components, read_question_set_file(SET), save=False)
        chunks = len(components.store.records())
    finally:
        components.close()
    per_q = {q.id: {m: q.scores[LAST_STAGE][m] for m in METRICS} for q in run.questions if q.scored}
    meta = {
        "rag": str(Path(rag.__file__).parent),
        "chunks": chunks,
        "ingest_s": round(ingest_s, 1),
        "invalid": {q.id: q.invalid for q in run.questions if q.invalid},
    }
    out.write_text(json.dumps({"meta": meta, "per_question": per_q}, indent=1))


def code_key(tree: Path) -> str:
    """The measured code's commit, plus a hash of its uncommitted changes under rag/ (others edit the tree)."""
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=tree, capture_output=True, text=True
    ).stdout.strip()
    diff = subprocess.run(["git", "diff", "HEAD", "--", "rag"], cwd=tree, capture_output=True, text=True).stdout
    return head + (f"+{hashlib.sha256(diff.encode()).hexdigest()[:8]}" if diff else "")


def product_run(tree: Path, cache: Path) -> tuple[str, dict]:
    """The product's defaults measured on the code in `tree` (cached per code key)."""
    key = code_key(tree)
    out = cache / f"product-{key}.json"
    if not out.is_file():
        data_dir = cache / f"data-{key}"
        if data_dir.exists():  # a run that died half way: its chunks may be half stored
            subprocess.run(["rm", "-rf", str(data_dir)], check=True)
        if (cache / "models").is_dir():  # the ONNX export, made once (hard links: nothing writes into it)
            data_dir.mkdir(parents=True)
            subprocess.run(["cp", "-rl", str(cache / "models"), str(data_dir / "models")], check=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAGSCOPE_")}
        env["PYTHONPATH"] = str(tree)
        cmd = [sys.executable, __file__, "--worker", str(data_dir), str(out)]
        subprocess.run(cmd, env=env, cwd=cache, check=True)
    return key, json.loads(out.read_text())


# --- the baselines: pypdf, the splitter and qdrant-client, nothing of the product's pipeline ------------------


@dataclass(frozen=True)
class Piece:
    """A baseline chunk: its text and, per page it covers, the (page, start, end) span of that page's text."""

    source: str
    text: str
    spans: tuple[tuple[int, int, int], ...]


@dataclass(frozen=True)
class Manual:
    """One PDF as pypdf reads it, with the outline's sections laid over its page text."""

    source: str
    pages: tuple[str, ...]
    marks: tuple[tuple[tuple[int, int], str], ...]  # ((page, offset), heading path), in text order

    def path_at(self, page: int, offset: int) -> str:
        path = ""
        for (p, o), heading in self.marks:
            if (p, o) > (page, offset):
                break
            path = heading
        return path


def read_manual(source: str, data: bytes) -> Manual:
    import io

    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    pages = tuple(page.extract_text() or "" for page in reader.pages)
    marks: list[tuple[tuple[int, int], str]] = []
    stack: list[str] = []

    def walk(items: list, level: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, level + 1)
                continue
            title = " ".join(str(item.title).split())
            page = reader.get_destination_page_number(item)
            if not title or page is None or page < 0:
                continue
            del stack[level - 1 :]
            stack.append(title)
            marks.append(((page, _title_offset(pages[page], title)), " > ".join(stack)))

    walk(reader.outline, 1)
    return Manual(source, pages, tuple(sorted(marks, key=lambda m: m[0])))


def _title_offset(page_text: str, title: str) -> int:
    """Where the line carrying `title` starts on its page (a leading section number allowed); 0 if none does."""
    want = title.lower()
    offset = 0
    for line in page_text.split("\n"):
        words = " ".join(line.split())
        if words.lower() == want or _NUMBERED.sub("", words, count=1).lower() == want:
            return offset
        offset += len(line) + 1
    return 0


def whole_document_pieces(manual: Manual) -> list[Piece]:
    """The plain baseline's chunks: the pages joined into one text, split by the recursive splitter."""
    joined, starts = "", []
    for text in manual.pages:
        starts.append(len(joined))
        joined += text + "\n\n"
    pieces = []
    for doc in _splitter().create_documents([joined]):
        start = doc.metadata["start_index"]
        end = start + len(doc.page_content)
        spans = tuple(
            (p, max(start, s) - s, min(end, s + len(manual.pages[p])) - s)
            for p, s in enumerate(starts)
            if s < end and s + len(manual.pages[p]) > start
        )
        pieces.append(Piece(manual.source, doc.page_content, spans))
    return pieces


def page_pieces(manual: Manual) -> list[Piece]:
    """The LangChain recipe's chunks: PyPDFLoader's one document per page, each split by the recursive splitter."""
    pieces = []
    for p, text in enumerate(manual.pages):
        for doc in _splitter().create_documents([text]):
            start = doc.metadata["start_index"]
            pieces.append(Piece(manual.source, doc.page_content, ((p, start, start + len(doc.page_content)),)))
    return pieces


def _splitter():  # noqa: ANN202 - a langchain_text_splitters.RecursiveCharacterTextSplitter
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    return RecursiveCharacterTextSplitter(chunk_size=CHUNK_SIZE, chunk_overlap=CHUNK_OVERLAP, add_start_index=True)


def majority_path(piece: Piece, manual: Manual) -> str:
    """The heading path most of the piece's characters lie under."""
    count: Counter[str] = Counter()
    for page, start, end in piece.spans:
        cuts = sorted({start, end, *(o for (p, o), _ in manual.marks if p == page and start < o < end)})
        for a, b in zip(cuts, cuts[1:]):
            count[manual.path_at(page, a)] += b - a
    return count.most_common(1)[0][0] if count else ""


def reader_text(text: str) -> str:
    return " ".join(_LINE_HYPHEN.sub("", text).split())


def matches(piece: Piece, path: str, source: str, heading: str, answer: str | None) -> bool:
    if piece.source != source:
        return False
    if path == heading or path.startswith(heading + " > "):
        return True
    return bool(answer) and reader_text(answer) in reader_text(piece.text)


class Encoders:
    """The two models, as the product and the peer load them; chunk vectors cached on disk by text."""

    def __init__(self, cache: Path) -> None:
        from fastembed import SparseTextEmbedding
        from importlib import resources

        from rag.encoders.factory import dense_encoder

        self.dense = dense_encoder(DENSE_MODEL, "onnx", cache / "models")
        bm25 = str(resources.files("rag") / "resources" / "bm25")
        self.sparse = SparseTextEmbedding("Qdrant/bm25", specific_model_path=bm25)
        self.path = cache / "dense-vectors.npz"
        self.vectors: dict[str, object] = {}
        if self.path.is_file():
            import numpy as np

            stored = np.load(self.path, allow_pickle=False)
            self.vectors = dict(zip(json.loads(str(stored["texts"])), stored["vectors"]))

    def documents(self, texts: list[str]):  # noqa: ANN201 - (dense array, fastembed sparse embeddings)
        import numpy as np

        missing = sorted({t for t in texts if t not in self.vectors})
        if missing:
            self.vectors.update(zip(missing, self.dense.encode_documents(missing)))
            keys = list(self.vectors)
            np.savez(self.path, texts=json.dumps(keys), vectors=np.array([self.vectors[k] for k in keys]))
        return np.array([self.vectors[t] for t in texts]), list(self.sparse.embed(texts, batch_size=256))


def baseline_run(
    pieces: list[Piece], manuals: dict[str, Manual], questions: list, encoders: Encoders, fusion: str
) -> dict:
    """Per-question metrics of one baseline: its pieces in an in-memory Qdrant collection, queried per question."""
    from qdrant_client import QdrantClient, models

    dbsf = fusion == "dbsf"
    client = QdrantClient(":memory:")
    client.create_collection(
        "baseline",
        vectors_config={"dense": models.VectorParams(size=encoders.dense.dim, distance=models.Distance.COSINE)},
        sparse_vectors_config={"bm25": models.SparseVectorParams(modifier=models.Modifier.IDF if dbsf else None)},
    )
    dense, sparse = encoders.documents([p.text for p in pieces])
    client.upload_points(
        "baseline",
        [
            models.PointStruct(
                id=i,
                vector={
                    "dense": dense[i].tolist(),
                    "bm25": models.SparseVector(indices=s.indices.tolist(), values=s.values.tolist()),
                },
            )
            for i, s in enumerate(sparse)
        ],
    )
    paths = [majority_path(p, manuals[p.source]) for p in pieces]
    limit = DBSF_CANDIDATES if dbsf else LANGCHAIN_K
    per_q = {}
    for q in questions:
        query_sparse = next(iter(encoders.sparse.query_embed(q.question)))
        hits = client.query_points(
            "baseline",
            prefetch=[
                models.Prefetch(query=encoders.dense.encode_query(q.question).tolist(), using="dense", limit=limit),
                models.Prefetch(
                    query=models.SparseVector(
                        indices=query_sparse.indices.tolist(), values=query_sparse.values.tolist()
                    ),
                    using="bm25",
                    limit=limit,
                ),
            ],
            query=models.FusionQuery(fusion=models.Fusion.DBSF if dbsf else models.Fusion.RRF),
            limit=10,
        ).points
        ref = q.gold.sections[0]
        rank = next(
            (r for r, h in enumerate(hits, 1) if matches(pieces[h.id], paths[h.id], ref.source, ref.heading, q.answer)),
            None,
        )
        per_q[q.id] = {
            "mrr@10": 1.0 / rank if rank else 0.0,
            "recall@5": float(rank is not None and rank <= 5),
            "hit@10": float(rank is not None),
        }
    client.close()
    return per_q


# --- the table ------------------------------------------------------------------------------------------------


def table(runs: dict[str, dict[str, dict[str, float]]], pairs: list[tuple[str, str]], resamples: int) -> list[str]:
    from rag.eval.bootstrap import paired_interval

    qids = sorted(set.intersection(*(set(r) for r in runs.values())))
    lines = ["| row | " + " | ".join(METRICS) + " |", "|---|" + "---|" * len(METRICS)]
    for label, per_q in runs.items():
        cells = [f"{sum(per_q[q][m] for q in qids) / len(qids):.3f}" for m in METRICS]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Paired gains (b − a, 95% interval, {len(qids)} questions, {resamples} resamples; * excludes 0):",
        "",
    ]
    lines += ["| b − a | " + " | ".join(METRICS) + " |", "|---|" + "---|" * len(METRICS)]
    for a, b in pairs:
        cells = [
            paired_interval({q: runs[a][q][m] for q in qids}, {q: runs[b][q][m] for q in qids}, resamples).words()
            for m in METRICS
        ]
        lines.append(f"| {b} − {a} | " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, default=Path("/tmp/before"), help=f"a worktree of {BEFORE_COMMIT}")
    parser.add_argument(
        "--after",
        type=Path,
        default=ROOT,
        help="the code measured as after (default this checkout; a worktree of a "
        "commit leaves out what others have not committed)",
    )
    parser.add_argument("--cache", type=Path, default=Path("/tmp/pdf-manuals-bench"))
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument(
        "--models-seed",
        type=Path,
        default=Path("/work/bench-cache/fastapi/models"),
        help="a data dir's models/ folder to copy once (its ONNX export), instead of exporting the model again",
    )
    parser.add_argument("--skip-before", action="store_true", help="leave out the before row")
    args = parser.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    if args.models_seed.is_dir() and not (args.cache / "models").exists():
        subprocess.run(["cp", "-r", str(args.models_seed), str(args.cache / "models")], check=True)
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()[0]:.1f}", flush=True)
    from rag.eval.qsets import read_question_set_file

    questions = [q for q in read_question_set_file(SET).questions if q.answerable]
    runs: dict[str, dict[str, dict[str, float]]] = {}
    notes = []
    if not args.skip_before:
        key, before = product_run(args.before, args.cache)
        runs[f"product before ({key})"] = before["per_question"]
        notes.append(f"before: {before['meta']}")
    key, after = product_run(args.after, args.cache)
    runs[f"product after ({key})"] = after["per_question"]
    notes.append(f"after: {after['meta']}")
    manuals = {name: read_manual(name, data) for name, data in files()}
    encoders = Encoders(args.cache)
    for label, cut, fusion in (
        ("plain DBSF (whole document)", whole_document_pieces, "dbsf"),
        ("LangChain recipe (PyPDF pages, RRF)", page_pieces, "rrf"),
    ):
        pieces = [p for m in manuals.values() for p in cut(m)]
        runs[label] = baseline_run(pieces, manuals, questions, encoders, fusion)
        notes.append(f"{label}: {len(pieces)} chunks")
    labels = list(runs)
    after_label = next(label for label in labels if label.startswith("product after"))
    pairs = [(label, after_label) for label in labels if label != after_label]
    if not args.skip_before:
        pairs += [(label, labels[0]) for label in labels[2:]]
    print("\n".join(notes))
    print("\n".join(table(runs, pairs, args.resamples)))
    print(f"load at the end {os.getloadavg()[0]:.1f}")
    (args.cache / "runs.json").write_text(json.dumps(runs, indent=1))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        product_worker(Path(sys.argv[2]), Path(sys.argv[3]))
        sys.exit(0)
    sys.exit(main())
