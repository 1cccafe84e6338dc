"""BM25 through fastembed, from a folder we ship (it only needs a stopword list); Qdrant's IDF modifier
supplies the IDF. CJK runs are cut into terms first (rag.text.cjk), by the tokenizer the collection records."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Sequence

from rag.encoders.base import DEFAULT_SPARSE, QueryToken, log
from rag.errors import EncoderError
from rag.lazy import LazyModel
from rag.text.cjk import analyzer
from rag.types import SparseVector


class FastembedBm25Encoder(LazyModel):
    """BM25 term-frequency vectors (fastembed `Qdrant/bm25`); Qdrant's IDF modifier supplies the IDF.

    Example:
        enc = FastembedBm25Encoder(cache_dir=Path("data/models"))
        vec = enc.encode_query("refund policy")
    """

    def __init__(
        self,
        name: str = DEFAULT_SPARSE,
        cache_dir: Path | None = None,
        avg_len: float = 256.0,
        tokenizer: str = "whitespace",
    ) -> None:
        super().__init__()
        self.name = name
        self.avg_len = avg_len
        self.tokenizer = tokenizer
        self._analyze = analyzer(tokenizer)
        self._cache_dir = cache_dir

    def _build(self):  # noqa: ANN202
        log.info("loading sparse model %s", self.name)
        import onnxruntime
        from fastembed import SparseTextEmbedding

        onnxruntime.disable_telemetry_events()  # fastembed runs its models on onnxruntime, which would report usage

        kwargs = {"cache_dir": str(self._cache_dir) if self._cache_dir else None}
        if self.name == DEFAULT_SPARSE:
            kwargs["specific_model_path"] = str(resources.files("rag") / "resources" / "bm25")
            kwargs["avg_len"] = self.avg_len
        try:
            return SparseTextEmbedding(self.name, **kwargs)
        except Exception as e:  # noqa: BLE001 - fastembed raises many types for a missing or bad model
            raise EncoderError(f"could not load sparse model {self.name!r} ({type(e).__name__}: {e})") from None

    def encode_documents(self, texts: Sequence[str]) -> list[SparseVector]:
        return [_to_sparse(e) for e in self._load().embed([self._analyze(t) for t in texts], batch_size=256)]

    def encode_query(self, text: str) -> SparseVector:
        return _to_sparse(next(iter(self._load().query_embed(self._analyze(text)))))

    def doc_lengths(self, texts: Sequence[str]) -> list[int]:
        """BM25's document length |d| for each text: its tokens after stopword removal and stemming.

        fastembed normalises term weights by |d| / avg_len with avg_len = 256 unless told otherwise;
        the mean of these lengths over a collection is its true avg_len (see `collection_avg_len`).
        """
        from fastembed.common.utils import remove_non_alphanumeric

        inner = self._load().model
        return [len(inner._stem(inner.tokenizer.tokenize(remove_non_alphanumeric(self._analyze(t))))) for t in texts]

    def query_terms(self, text: str) -> dict[int, str]:
        """Index -> the query word it came from, so the inspector can explain a sparse score."""
        return {t.index: t.word for t in self.query_tokens(text) if t.index is not None}

    def query_tokens(self, text: str) -> tuple[QueryToken, ...]:
        """Every token of `text` as the BM25 query sees it, in order: its stem and index, or why it fell out.

        The steps are fastembed's own (`query_embed`: non-alphanumerics to spaces, its tokenizer, its stop
        words, punctuation and length limit, its stemmer) after the CJK cut, so the kept tokens are exactly
        the terms `encode_query` searches; () for a model without those steps (a custom one).
        """
        inner = getattr(self._load(), "model", None)
        if inner is None or not hasattr(inner, "_stem"):
            return ()
        from fastembed.common.utils import remove_non_alphanumeric

        out = []
        for word in inner.tokenizer.tokenize(remove_non_alphanumeric(self._analyze(text))):
            stemmed = inner._stem([word])
            if stemmed:
                out.append(QueryToken(word, stemmed[0], inner.compute_token_id(stemmed[0])))
            else:
                out.append(QueryToken(word, "", None, _why_dropped(inner, word)))
        return tuple(out)


def _why_dropped(inner, word: str) -> str:  # noqa: ANN001 - fastembed's Bm25 model
    """Which of fastembed's `_stem` rules removed `word`."""
    if word in inner.punctuation:
        return "punctuation"
    if word.lower() in inner.stopwords:
        return "stop word"
    if len(word) > inner.token_max_length:
        return "too long"
    return "no stem"


def _to_sparse(embedding) -> SparseVector:  # noqa: ANN001
    return SparseVector(tuple(int(i) for i in embedding.indices), tuple(float(v) for v in embedding.values))


def collection_avg_len(encoder: FastembedBm25Encoder, texts: Sequence[str]) -> float:
    """The mean BM25 document length of `texts` (a collection's embed texts), for `FastembedBm25Encoder(avg_len=...)`.

    Raises:
        EncoderError: there are no texts to average.
    """
    if not texts:
        raise EncoderError("cannot compute the BM25 average length of an empty collection: ingest documents first")
    lengths = encoder.doc_lengths(texts)
    return sum(lengths) / len(lengths)
