"""The one configuration object, read once from the environment and `.streamlit/secrets.toml`.

Environment variables win over secrets.toml so that a deployment can override a checked-in file.
Everything is frozen: the app shares one `Settings` between sessions and threads, and a per-call
change is a `dataclasses.replace`, never an edit in place.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from rag.errors import ConfigError

FUSION_METHODS = ("rrf", "dbsf", "weighted_rrf", "union", "dense", "sparse")
CHUNK_STRATEGIES = ("heading", "recursive", "sentence", "fixed")
# Retrieval modes (rag/modes): every one but plain adds steps around retrieve(); off (plain) by default.
MODES = ("plain", "hyde", "multi_hop", "corrective", "agent")


@dataclass(frozen=True)
class Secret:
    """A secret value whose repr never shows it (Haystack's `Secret` idea)."""

    value: str = field(repr=False, default="")

    def __repr__(self) -> str:
        return "Secret(<redacted>)" if self.value else "Secret(<unset>)"

    def __bool__(self) -> bool:
        return bool(self.value)


@dataclass(frozen=True)
class ChunkConfig:
    """How documents are cut into chunks."""

    strategy: str = "heading"
    size: int = 800
    overlap: int = 100

    def __post_init__(self) -> None:
        if self.strategy not in CHUNK_STRATEGIES:
            raise ConfigError(f"chunk strategy must be one of {', '.join(CHUNK_STRATEGIES)}; got {self.strategy!r}")
        if self.size < 50:
            raise ConfigError(f"chunk size must be at least 50 characters; got {self.size}")
        if not 0 <= self.overlap < self.size:
            raise ConfigError(f"chunk overlap must be between 0 and size-1; got {self.overlap}")


@dataclass(frozen=True)
class RetrievalConfig:
    """Every knob of `retrieve()`; the inspector, Ask and Eval all pass one of these."""

    # Defaults measured by bench/quality.py on SciFact train (809 queries): DBSF over 50 candidates, then
    # maxsim-fusion:0.6 rescoring (0.6 x the mean of chunk cosine and best-sentence cosine, 0.4 x BM25,
    # each min-max normalised), nDCG@10 0.754 vs 0.744 for the previous default score-fusion (paired
    # bootstrap 95% interval of the gain +0.002..+0.018) and 0.714 for plain RRF; hit@5 on the sample and
    # FastAPI question sets did not drop. It reads the sentence vectors stored at ingest
    # (Settings.sentence_vectors), so it adds no query-time encoding; without them it encodes per question.
    candidates: int = 50
    final_k: int = 5
    fusion: str = "dbsf"
    rrf_k: int = 60
    dense_weight: float = 0.5
    reranker: str = "maxsim-fusion:0.6"
    min_score: float | None = None
    # Pseudo-relevance feedback (rag/prf.py): expand the BM25 query with terms of its top prf_docs hits.
    prf: bool = False
    prf_docs: int = 3
    prf_terms: int = 10
    prf_weight: float = 0.5
    # Dense feedback (rag/prf.py rocchio): move the question vector toward its top dense_prf_docs fused hits.
    dense_prf: bool = False
    dense_prf_docs: int = 3
    dense_prf_weight: float = 0.5
    # How the question is searched (rag/modes.run_mode); retrieve() itself always runs one plain search.
    mode: str = "plain"

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(f"mode must be one of {', '.join(MODES)}; got {self.mode!r}")
        if self.prf_docs < 1 or self.prf_terms < 1:
            raise ConfigError(f"PRF needs at least 1 feedback document and 1 term; got {self.prf_docs} and {self.prf_terms}")
        if not 0.0 < self.prf_weight <= 1.0:
            raise ConfigError(f"PRF weight must be above 0 and at most 1; got {self.prf_weight}")
        if self.dense_prf_docs < 1:
            raise ConfigError(f"dense PRF needs at least 1 feedback document; got {self.dense_prf_docs}")
        if not 0.0 < self.dense_prf_weight <= 1.0:
            raise ConfigError(f"dense PRF weight must be above 0 and at most 1; got {self.dense_prf_weight}")
        if self.fusion not in FUSION_METHODS:
            raise ConfigError(f"fusion must be one of {', '.join(FUSION_METHODS)}; got {self.fusion!r}")
        if self.candidates < 1:
            raise ConfigError(f"candidates must be greater than 0; got {self.candidates}")
        if self.final_k < 1:
            raise ConfigError(f"final k must be greater than 0; got {self.final_k}")
        if self.rrf_k < 1:
            raise ConfigError(f"RRF k must be greater than 0; got {self.rrf_k}")
        if not 0.0 <= self.dense_weight <= 1.0:
            raise ConfigError(f"dense weight must be between 0 and 1; got {self.dense_weight}")


@dataclass(frozen=True)
class AnswerConfig:
    """How answers are generated and when the system abstains instead."""

    anthropic_model: str = "claude-sonnet-5-5"
    max_tokens: int = 1024
    timeout_s: float = 60.0
    min_sources: int = 1
    min_rerank_score: float = 0.25
    # The offline extractive answerer abstains when no source sentence scores this high (see rag/answer/extractive.py).
    min_sentence_score: float = 0.45


@dataclass(frozen=True)
class Settings:
    """Process-wide settings. Build with `Settings.from_env()`; pass explicitly, never import a global."""

    data_dir: Path = Path("data")
    collection: str = "docs"
    qdrant_url: str = ""
    qdrant_api_key: Secret = Secret()
    dense_model: str = "all-MiniLM-L6-v2"
    sparse_model: str = "Qdrant/bm25"
    chunk: ChunkConfig = ChunkConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    answer: AnswerConfig = AnswerConfig()
    anthropic_api_key: Secret = Secret()
    password: Secret = Secret()
    max_upload_mb: int = 50
    # Embedding runs at ~40 chunks/s on two CPU cores: 5,000 chunks (~4 MB of prose) is minutes of work,
    # and a file that splits into more is almost always a dump, not a document someone will read.
    max_chunks_per_doc: int = 5000
    # Whether a NEW collection stores each chunk's sentence vectors (Qdrant multivector) so that the
    # sentence-maxsim / maxsim-fusion rerankers read them instead of encoding sentences per question.
    # An existing collection keeps what it was created with.
    sentence_vectors: bool = True

    @property
    def backend(self) -> str:
        """'server' when QDRANT_URL is set, else the embedded engine."""
        return "server" if self.qdrant_url else "edge"

    @property
    def answer_mode(self) -> str:
        return "anthropic" if self.anthropic_api_key else "extractive"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, secrets_path: Path | None = None) -> "Settings":
        """Read RAGSCOPE_* / QDRANT_* / ANTHROPIC_* variables, falling back to secrets.toml keys of the same name."""
        env = dict(os.environ if env is None else env)
        secrets = _read_secrets(secrets_path or Path(".streamlit/secrets.toml"))

        def get(name: str, default: str = "") -> str:
            if name in env and env[name] != "":
                return env[name]
            value = secrets.get(name, secrets.get(name.lower(), default))
            return str(value)

        def num(name: str, default: float, kind: type = int) -> Any:
            raw = get(name, "")
            if raw == "":
                return default
            try:
                return kind(raw)
            except ValueError:
                raise ConfigError(f"{name} must be a number; got {raw!r}") from None

        def flag(name: str, default: bool) -> bool:
            raw = get(name, "")
            value = raw.strip().lower()
            if value == "":
                return default
            if value in ("1", "true"):
                return True
            if value in ("0", "false"):
                return False
            raise ConfigError(f"{name} must be 1, 0, true or false; got {raw!r}")

        min_score = get("RAGSCOPE_MIN_SCORE", "")
        return cls(
            data_dir=Path(get("RAGSCOPE_DATA_DIR", "data")),
            collection=get("RAGSCOPE_COLLECTION", "docs"),
            qdrant_url=get("QDRANT_URL", ""),
            qdrant_api_key=Secret(get("QDRANT_API_KEY", "")),
            dense_model=get("RAGSCOPE_DENSE_MODEL", cls.dense_model),
            sparse_model=get("RAGSCOPE_SPARSE_MODEL", cls.sparse_model),
            chunk=ChunkConfig(
                strategy=get("RAGSCOPE_CHUNK_STRATEGY", ChunkConfig.strategy),
                size=num("RAGSCOPE_CHUNK_SIZE", ChunkConfig.size),
                overlap=num("RAGSCOPE_CHUNK_OVERLAP", ChunkConfig.overlap),
            ),
            retrieval=RetrievalConfig(
                candidates=num("RAGSCOPE_CANDIDATES", RetrievalConfig.candidates),
                final_k=num("RAGSCOPE_FINAL_K", RetrievalConfig.final_k),
                fusion=get("RAGSCOPE_FUSION", RetrievalConfig.fusion),
                rrf_k=num("RAGSCOPE_RRF_K", RetrievalConfig.rrf_k),
                dense_weight=num("RAGSCOPE_DENSE_WEIGHT", RetrievalConfig.dense_weight, float),
                reranker=get("RAGSCOPE_RERANKER", RetrievalConfig.reranker),
                min_score=float(min_score) if min_score else None,
                prf=get("RAGSCOPE_PRF", "1" if RetrievalConfig.prf else "0").lower() in ("1", "true", "yes", "on"),
                prf_docs=num("RAGSCOPE_PRF_DOCS", RetrievalConfig.prf_docs),
                prf_terms=num("RAGSCOPE_PRF_TERMS", RetrievalConfig.prf_terms),
                prf_weight=num("RAGSCOPE_PRF_WEIGHT", RetrievalConfig.prf_weight, float),
                dense_prf=get("RAGSCOPE_DENSE_PRF", "1" if RetrievalConfig.dense_prf else "0").lower() in ("1", "true", "yes", "on"),
                dense_prf_docs=num("RAGSCOPE_DENSE_PRF_DOCS", RetrievalConfig.dense_prf_docs),
                dense_prf_weight=num("RAGSCOPE_DENSE_PRF_WEIGHT", RetrievalConfig.dense_prf_weight, float),
                mode=get("RAGSCOPE_MODE", RetrievalConfig.mode),
            ),
            answer=AnswerConfig(
                anthropic_model=get("RAGSCOPE_ANTHROPIC_MODEL", AnswerConfig.anthropic_model),
                max_tokens=num("RAGSCOPE_MAX_TOKENS", AnswerConfig.max_tokens),
                timeout_s=num("RAGSCOPE_LLM_TIMEOUT", AnswerConfig.timeout_s, float),
                min_sources=num("RAGSCOPE_MIN_SOURCES", AnswerConfig.min_sources),
                min_rerank_score=num("RAGSCOPE_MIN_RERANK_SCORE", AnswerConfig.min_rerank_score, float),
                min_sentence_score=num("RAGSCOPE_MIN_SENTENCE_SCORE", AnswerConfig.min_sentence_score, float),
            ),
            anthropic_api_key=Secret(get("ANTHROPIC_API_KEY", "")),
            password=Secret(get("RAGSCOPE_PASSWORD", "")),
            max_upload_mb=num("RAGSCOPE_MAX_UPLOAD_MB", 50),
            max_chunks_per_doc=num("RAGSCOPE_MAX_CHUNKS", cls.max_chunks_per_doc),
            sentence_vectors=flag("RAGSCOPE_SENTENCE_VECTORS", cls.sentence_vectors),
        )

    def with_retrieval(self, **changes: Any) -> "Settings":
        """A copy with some retrieval settings changed (the inspector's per-question overrides)."""
        return dataclasses.replace(self, retrieval=dataclasses.replace(self.retrieval, **changes))


def _read_secrets(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path} is not valid TOML: {e}") from None
