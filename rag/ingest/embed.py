"""The vectors a plan's new chunks need: dense and sparse, and sentence vectors when the collection stores them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from rag.components import Components, dense_spec, space_spec
from rag.encoders.base import DenseEncoder
from rag.encoders.factory import DenseSpec
from rag.encoders.pool import encode_batches
from rag.ingest.plan import Plan
from rag.ingest.scan import scan_text
from rag.ingest.sentences import sentence_spans, sentence_texts
from rag.settings.config import INT8_RUNTIME
from rag.store.base import PointData, chunk_payload
from rag.types import Chunk, SparseVector

EncodeProgress = Callable[[str, int, int], None]  # (what: "chunks" | "sentences", done, total)
# New chunks are embedded in groups spanning documents: one encoder call sorts a group by length and
# fills every batch, as the model's own benchmark does. Per-document calls (a few dozen chunks each on
# documentation) leave batches part-empty and padded.
ENCODE_GROUP = 256
# Texts per encoder call inside a group: small enough to report progress every few seconds. Also for
# sentence vectors: larger batches are slower on CPU even when short texts pad little (bench/README.md, ingest).
ENCODE_BATCH = 64


def embed_plans(
    components: Components, plans: Sequence[Plan], progress: EncodeProgress | None = None
) -> list[list[PointData]]:
    """Dense + sparse vectors and payloads for every plan's new chunks, encoded together, plus each
    chunk's sentence vectors when the collection stores them, made as its record says (late pooling
    from the chunks' own forward pass, or a second pass over the sentences), and its vector in every
    other dense vector the collection holds (rag/catalog/vectors.py).

    `progress(what, done, total)` follows each encoder batch ("chunks", then "sentences" for a
    collection whose sentences are encoded separately, then "vector NAME" for each other dense vector).
    """
    added = [(p, c) for p in plans for c in p.added]
    vectors = encode_chunks(components, [c for _, c in added], progress)
    points: dict[int, list[PointData]] = {id(p): [] for p in plans}
    for i, (plan, chunk) in enumerate(added):
        # Scanned as Claude is shown it: the file name and heading path come with the text; and what invisible
        # characters removed from it at load said.
        scan = scan_text(chunk.text, chunk.heading_path, chunk.source, plan.doc.hidden_in(chunk.start, chunk.end))
        payload = {**chunk_payload(chunk, plan.doc_meta), **scan.payload(), "status": "active"}
        points[id(plan)].append(vectors.point(i, chunk.id, payload))
    return [points[id(p)] for p in plans]


@dataclass(frozen=True)
class ChunkVectors:
    """Every vector some chunks are stored with, a row (or an entry) per chunk in each."""

    dense: np.ndarray
    sparse: list[SparseVector]
    sentences: list[Any]  # None each when the collection stores none
    others: dict[str, np.ndarray]  # the other dense vectors' rows, by vector name

    def point(self, i: int, chunk_id: str, payload: dict[str, Any]) -> PointData:
        """The `i`-th chunk's point."""
        others = {name: rows[i] for name, rows in self.others.items()}
        return PointData(chunk_id, self.dense[i], self.sparse[i], payload, self.sentences[i], others)


def encode_chunks(
    components: Components, chunks: Sequence[Chunk], progress: EncodeProgress | None = None
) -> ChunkVectors:
    """Each chunk's dense vector (a row), sparse vector, sentence vectors (None each when the collection
    stores none) and vector in each of the collection's other dense vectors, from its `embed_text`: what
    ingest writes for new chunks, and what an edit of a chunk's text writes for it (rag.catalog.fixes), so
    an edited chunk is searched as if ingested with that text.

    Sentence vectors are made by the model of the dense vector the record names (`sentence_space`),
    which is the default one unless another was made the default since."""
    texts = [c.embed_text for c in chunks]
    models = components.store.collection_models()
    sentences: list[Any] = [None] * len(chunks)
    others: dict[str, np.ndarray] = {}
    workers = components.settings.encode_workers  # late pooling stays in this process (encode_late)
    spec = getattr(components.dense, "spec", None)  # None: a wrapped encoder (tests count calls), run here
    own = models is None or models.sentence_space == models.dense_vector  # sentences made by the default model
    if models is not None and models.sentence_vectors and models.sentence_pooling == "late":
        if own:
            dense, sentences = encode_late(components.dense, chunks, _stage(progress, "chunks"))
        else:
            encoder = space_spec(components.settings, models.space(models.sentence_space)).build()
            others[models.sentence_space], sentences = encode_late(encoder, chunks, _stage(progress, "sentences"))
            dense = encode_texts(components.dense, texts, _stage(progress, "chunks"), spec, workers)
    else:
        dense = encode_texts(components.dense, texts, _stage(progress, "chunks"), spec, workers)
        if models is not None and models.sentence_vectors:
            encoder, sentence_spec = components.dense, spec
            if not own:
                sentence_spec = space_spec(components.settings, models.space(models.sentence_space))
                encoder = sentence_spec.build()
            if models.sentence_pooling == "separate-int8":
                model = models.space(models.sentence_space).model
                sentence_spec = dense_spec(components.settings, INT8_RUNTIME, model)
                encoder = sentence_spec.build()
            sentences = encode_sentences(encoder, chunks, _stage(progress, "sentences"), sentence_spec, workers)
    for space in models.other_dense if models is not None else ():
        if space.name not in others:
            other = space_spec(components.settings, space)
            stage = _stage(progress, f"vector {space.name}")
            others[space.name] = encode_texts(other.build(), texts, stage, other, workers)
    sparse = components.sparse.encode_documents(texts) if texts else []
    return ChunkVectors(dense, sparse, sentences, others)


def encode_sentences(
    dense: DenseEncoder,
    chunks: Sequence[Chunk],
    progress: Callable[[int, int], None] | None = None,
    spec: DenseSpec | None = None,
    workers: int = 1,
) -> list[np.ndarray]:
    """Each chunk's `sentence_texts` vectors (one array per chunk), every distinct text encoded once
    (by `workers` processes building `spec`, as `encode_texts`).

    Chunks of one section share their heading line, so it is encoded once for all of them. Public so
    that bench/quality.py times exactly the work ingest adds for sentence vectors.
    """
    per_chunk = [sentence_texts(c) for c in chunks]
    unique = list(dict.fromkeys(t for texts in per_chunk for t in texts))
    vectors = encode_texts(dense, unique, progress, spec, workers)
    row = {text: i for i, text in enumerate(unique)}
    return [vectors[[row[t] for t in texts]] for texts in per_chunk]


def encode_late(
    dense: DenseEncoder, chunks: Sequence[Chunk], progress: Callable[[int, int], None] | None = None
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Each chunk's vector and its `sentence_texts` vectors, from one forward pass over the chunk
    ("late chunking": each sentence's span of token states is pooled, `DenseEncoder.encode_spans`).

    No sentence is encoded twice; only the sentences past the model's window (the end of a chunk
    longer than its 256 tokens) have no token states, and those are encoded on their own, each
    distinct text once. Public so that bench/quality.py measures exactly what ingest stores.
    """
    texts = [c.embed_text for c in chunks]
    spans = [sentence_spans(c) for c in chunks]
    vectors = np.zeros((len(chunks), dense.dim if chunks else 0), dtype=np.float32)
    sentences: list[np.ndarray] = [np.zeros((0, 0), dtype=np.float32)] * len(chunks)
    beyond: list[tuple[int, int]] = []
    batches = _length_batches(texts)
    for n, batch in enumerate(batches):
        out = dense.encode_spans([texts[i] for i in batch], [spans[i] for i in batch], batch_size=ENCODE_BATCH)
        vectors[batch] = out.texts
        for k, i in enumerate(batch):
            sentences[i] = out.spans[k]
        beyond += [(batch[k], j) for k, j in out.beyond]
        if progress:
            progress(min((n + 1) * ENCODE_BATCH, len(texts)), len(texts))
    if beyond:
        alone = [texts[i][slice(*spans[i][j])] for i, j in beyond]
        unique = list(dict.fromkeys(alone))
        encoded = encode_texts(dense, unique, None)
        row = {text: k for k, text in enumerate(unique)}
        for (i, j), text in zip(beyond, alone, strict=True):
            sentences[i][j] = encoded[row[text]]
    return vectors, sentences


def _length_batches(texts: Sequence[str]) -> list[list[int]]:
    """Indices of `texts` in batches of similar length (longest first, as sentence-transformers sorts
    inside one call, so little padding)."""
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    return [order[at : at + ENCODE_BATCH] for at in range(0, len(order), ENCODE_BATCH)]


def encode_texts(
    dense: DenseEncoder,
    texts: Sequence[str],
    progress: Callable[[int, int], None] | None,
    spec: DenseSpec | None = None,
    workers: int = 1,
) -> np.ndarray:
    """`texts` encoded in `_length_batches`, in input order; `progress(done, total)` after each batch.

    With `spec` and more than one of `workers` (Settings.encode_workers), the batches go to a pool of
    processes each building the encoder `spec` names (rag/encoders/pool.py): the same batches, so the
    same vectors. Public so that bench/encode_workers.py times exactly what ingest runs.
    """
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)  # without loading the model for its dimension
    out = np.zeros((len(texts), dense.dim), dtype=np.float32)
    batches = _length_batches(texts)
    encoded = encode_batches(dense, [[texts[i] for i in b] for b in batches], ENCODE_BATCH, spec, workers)
    for n, (batch, vectors) in enumerate(zip(batches, encoded, strict=True)):
        out[batch] = vectors
        if progress:
            progress(min((n + 1) * ENCODE_BATCH, len(texts)), len(texts))
    return out


def _stage(progress: EncodeProgress | None, what: str) -> Callable[[int, int], None] | None:
    return (lambda done, total: progress(what, done, total)) if progress else None
