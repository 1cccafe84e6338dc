"""The one configuration object, read once from the environment and `.streamlit/secrets.toml`.

Environment variables win over secrets.toml so that a deployment can override a checked-in file.
Everything is frozen: the app shares one `Settings` between sessions and threads, and a per-call
change is a `dataclasses.replace`, never an edit in place.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from rag.errors import ConfigError
from rag.settings.extensions import MODES_TABLE, STRATEGIES, names
from rag.settings.rerankers import parse_reranker
from rag.settings.spec import check_fields, from_env, setting
from rag.text.cjk import SPARSE_TOKENIZERS

FUSION_METHODS = ("rrf", "dbsf", "weighted_rrf", "union", "dense", "sparse")
# Registered once, with what each does (rag/settings/extensions.py).
CHUNK_STRATEGIES = names(STRATEGIES)
# What the answerer is handed for each final hit: the chunk itself, or the whole section around it.
ANSWER_CONTEXTS = ("chunk", "section")
SENTENCE_POOLINGS = ("separate-int8", "separate", "late")
# How the dense model runs: PyTorch through sentence-transformers, or ONNX Runtime on an export of the
# same weights (rag/encoders/dense_onnx.py). Both give the same vectors (bench/README.md, dense runtime), so
# they share a collection; the int8-quantised export gives other vectors.
INT8_RUNTIME = "onnx-int8"  # the int8-quantised ONNX export: its own vector space (CollectionModels.runtime_for)
DENSE_RUNTIMES = ("torch", "onnx", INT8_RUNTIME)
DEVICES = ("auto", "cuda", "cpu")  # where ONNX Runtime runs the dense model (Settings.device)
# A collection name becomes a file and folder name under the data dir (edge store, journal): no path
# separators, no leading dot (so never `.` / `..`), and short enough for any file system.
_COLLECTION_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}")


def validate_collection_name(name: str) -> str:
    """`name` when it is a usable collection name; the one check every way a name comes in goes through.

    Raises:
        ConfigError: anything but 1-64 ASCII letters, digits, `-`, `_` and `.` (not first).
    """
    if not isinstance(name, str) or not _COLLECTION_NAME.fullmatch(name):
        raise ConfigError(
            f"collection name {name!r} is not allowed: use 1-64 letters, digits, '-', '_' or '.' "
            "(not first), e.g. 'docs' or 'team-a'"
        )
    return name


# A dense vector of a collection is searched by name (rag/catalog/vectors.py names an added one): short and
# file-safe, since it shows in links and command lines.
DENSE_VECTOR_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")


def parse_dense_vector(name: str) -> str:
    """`name` when it can name one of a collection's dense vectors ("" is the collection's default).

    Raises:
        ConfigError: not 1-40 lower-case letters, digits, '-' or '_'.
    """
    if name and not DENSE_VECTOR_NAME.fullmatch(name):
        raise ConfigError(f"{name!r} cannot name a dense vector: use 1-40 lower-case letters, digits, '-' or '_'")
    return name


# Retrieval modes (rag/modes, registered in rag/settings/extensions.py): every one but plain adds steps around
# retrieve(); off (plain) by default.
MODES = names(MODES_TABLE)


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

    strategy: str = setting("heading", choices=CHUNK_STRATEGIES)
    size: int = setting(800)
    overlap: int = setting(100)
    # Measured on both documentation sets in bench/quality.py --sections: x3 within noise, x0 lower (README).
    heading_weight: int = setting(1)
    # Off until measured (the lead runs bench/quality.py on and off): it changes heading paths, so ids and vectors.
    definition_sections: bool = setting(False)

    def __post_init__(self) -> None:
        check_fields(self)
        if not self.overlap < self.size:
            raise ConfigError(f"chunk overlap must be between 0 and size-1; got {self.overlap} with size {self.size}")


# Fusions whose lists are combined by RRF, so its k matters.
RRF_FUSIONS = ("rrf", "weighted_rrf", "union")


@dataclass(frozen=True)
class RetrievalConfig:
    """Every knob of `retrieve()`; the inspector, Ask and Eval all pass one of these.

    Each field and its table in settings.toml are its only description: the env variable, CLI option, link
    parameter, form widget and label are derived from them (rag/settings/spec.py). Field order is the order
    of `config_label`.
    """

    # Defaults chosen by bench/quality.py on SciFact train and the docs question sets (docs/retrieval-quality.md,
    # "why the defaults"): DBSF over 50 candidates, then maxsim-fusion:0.6 rescoring (0.6 x the mean of chunk
    # cosine and best-sentence cosine, 0.4 x BM25, each min-max normalised), ahead of score-fusion and plain RRF
    # with a paired interval above zero. It reads the sentence vectors stored at ingest
    # (Settings.sentence_vectors), so it adds no query-time encoding; without them it encodes per question.
    fusion: str = setting("dbsf", choices=FUSION_METHODS)
    # Which of the collection's dense vectors the dense stage searches (rag/catalog/vectors.py: a second model
    # added in place); its questions are encoded by that vector's model.
    dense_vector: str = setting("", grammar=parse_dense_vector)
    rrf_k: int = setting(60, fusions=RRF_FUSIONS)
    dense_weight: float = setting(0.5, fusions=("weighted_rrf",))
    # Pseudo-relevance feedback (rag/retrieval/prf.py): expand the BM25 query with terms of its top prf_docs hits.
    prf: bool = setting(False)
    prf_docs: int = setting(3)
    prf_terms: int = setting(10)
    prf_weight: float = setting(0.5)
    # Dense feedback (rag/retrieval/prf.py rocchio): move the question vector toward its top dense_prf_docs fused hits.
    dense_prf: bool = setting(False)
    dense_prf_docs: int = setting(3)
    dense_prf_weight: float = setting(0.5)
    candidates: int = setting(50)
    reranker: str = setting("maxsim-fusion:0.6", grammar=parse_reranker)
    final_k: int = setting(5)
    min_score: float | None = setting(None)

    # Section-level results (bench/quality.py --sections; docs/retrieval-quality.md). Collapse is on: it
    # raised MRR@10 on both docs sets and lowered no set; SciFact is one chunk per abstract, so its ranking
    # is unchanged.
    collapse: bool = setting(True)
    # Off until measured on the docs sets (the lead): on only if it lowers none (rag/retrieval/dedupe.py).
    dedupe: bool = setting(False)
    context: str = setting("chunk", choices=ANSWER_CONTEXTS)
    # With one hit per section, the chunk that ranked a section is often not the one that answers: the section's
    # other chunks that match the question best are handed over beside it (rag/answer/section_reads.py). 3: it
    # raised context recall on the docs sets and moved no offline answer's correctness (docs/answers.md).
    section_reads: int = setting(3)

    # How the question is searched (rag.modes.run.run_mode): plain is one retrieve(); the others add steps
    # around it (each step is itself a retrieve(), shown as a stage). The inspector, Ask, Eval and every
    # CLI command run it. Off (plain) by default: no offline mode has won on bench/modes.py yet.
    mode: str = setting("plain", choices=MODES)

    def __post_init__(self) -> None:
        check_fields(self)

    @classmethod
    def from_record(cls, raw: Mapping[str, Any]) -> RetrievalConfig:
        """A config stored with an eval run or an ask, as this version reads it.

        Keys this version no longer knows are dropped. A field the record predates takes the value the
        record ran with (`_BEFORE_FIELD`), not today's default: a default that changed later (collapse
        became on) would otherwise make an old run claim a setting it never ran with.
        """
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**(_BEFORE_FIELD | {k: v for k, v in raw.items() if k in known}))


# How records stored before a field existed ran: the field's behaviour then, where it differs from today's default.
_BEFORE_FIELD: dict[str, Any] = {"collapse": False, "section_reads": 1}


@dataclass(frozen=True)
class AnswerConfig:
    """How answers are generated and when the system abstains instead."""

    anthropic_model: str = setting("claude-sonnet-5-5")
    max_tokens: int = setting(1024)
    timeout_s: float = setting(60.0)
    min_sources: int = setting(1)
    min_rerank_score: float = setting(0.25)
    # The offline extractive answerer abstains when its best sentence's relevance, averaged with the best chunk's
    # cosine, is under this: measured to separate answerable questions (rag/answer/extractive.py, bench/README.md).
    min_sentence_score: float = setting(0.40)

    def __post_init__(self) -> None:
        check_fields(self)


# How a new collection's vectors are compressed (Qdrant quantization): none, int8 per dimension, or one bit.
QUANTIZATIONS = ("none", "scalar", "binary")
# Read consistency's named levels; a whole number N (replicas that must answer) is accepted too.
READ_LEVELS = ("all", "majority", "quorum")


def parse_read_consistency(value: str) -> str:
    """`value` when it is a read consistency Qdrant accepts: a whole number of at least 1 or a named level.

    Raises:
        ConfigError: anything else, naming the accepted forms.
    """
    if value in READ_LEVELS or (value.isdigit() and int(value) >= 1):
        return value
    raise ConfigError(
        f"read consistency must be a whole number of at least 1 or one of {', '.join(READ_LEVELS)}; got {value!r}"
    )


@dataclass(frozen=True)
class ClusterConfig:
    """How a NEW collection is laid out on a Qdrant server or cluster, and how searches read it.

    The `create` group is fixed when a collection is made (an existing one keeps what it was made with; the
    collections view shows it); the `search` group travels with every query. Which ones a backend cannot
    apply it says (rag/store/layout.py): the embedded engine is one shard in this process, so shards,
    replicas and both consistencies do not apply there, and qdrant-client's local mode applies none.
    The long write-up: docs/cluster.md.
    """

    shards: int | None = setting(None)
    replicas: int | None = setting(None)
    write_consistency: int | None = setting(None)
    on_disk_vectors: bool = setting(False)
    on_disk_payload: bool = setting(True)
    quantization: str = setting("none", choices=QUANTIZATIONS)
    rescore: bool = setting(True)
    oversampling: float = setting(1.0)
    read_consistency: str = setting("1", grammar=parse_read_consistency)

    def __post_init__(self) -> None:
        check_fields(self)
        if self.write_consistency is not None and self.write_consistency > (self.replicas or 1):
            raise ConfigError(
                f"write consistency ({self.write_consistency}) must be at most the replicas ({self.replicas or 1}): "
                "a write would wait for replicas that do not exist"
            )


@dataclass(frozen=True)
class Settings:
    """Process-wide settings. Build with `Settings.from_env()`; pass explicitly, never import a global."""

    data_dir: Path = setting(Path("data"))
    collection: str = setting("docs")
    qdrant_url: str = setting("")
    qdrant_api_key: Secret = setting(Secret())
    dense_model: str = setting("all-MiniLM-L6-v2")
    sparse_model: str = setting("Qdrant/bm25")
    # How BM25 cuts CJK text into terms (rag.text.cjk); recorded with a new collection, whose chunks and
    # questions are then always cut the same way. Why the default: docs/retrieval-quality.md, "Chinese".
    sparse_tokenizer: str = setting("bigram", choices=SPARSE_TOKENIZERS)
    chunk: ChunkConfig = ChunkConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    answer: AnswerConfig = AnswerConfig()
    cluster: ClusterConfig = ClusterConfig()
    anthropic_api_key: Secret = setting(Secret())
    password: Secret = setting(Secret())
    max_upload_mb: int = setting(50)
    # 5,000 chunks (megabytes of prose) is minutes of embedding on a CPU, and a file that splits into
    # more is almost always a dump, not a document someone will read.
    max_chunks_per_doc: int = setting(5000)
    # How long a document replacement's lease (rag/store/doc_lease.py) lasts without renewal: a writer that
    # died lets the next one in after this; a live one renews before each write, so it must exceed one
    # write's duration plus the clocks' difference between machines (docs/reliability.md).
    lease_ttl_s: float = setting(60.0)
    # Whether a NEW collection stores each chunk's sentence vectors (Qdrant multivector) so that the
    # sentence-maxsim / maxsim-fusion rerankers read them instead of encoding sentences per question.
    # An existing collection keeps what it was created with.
    sentence_vectors: bool = setting(True)
    # How a NEW collection makes those vectors: "separate" encodes each distinct sentence on its own (a
    # second encoding pass) with the encoder of the chunks; "separate-int8" does it on the model's
    # int8-quantised ONNX export whatever encodes the chunks (rag.encoders.export.ensure_int8: faster, and
    # no measurable loss under float chunk vectors); "late" pools each sentence's token states from its
    # chunk's own forward pass (rag.ingest.embed.encode_late: no second pass, but a measurable loss).
    # The figures: docs/retrieval-quality.md and bench/README.md. Recorded with the collection, which keeps it.
    sentence_pooling: str = setting("separate-int8", choices=SENTENCE_POOLINGS)
    # What runs the dense model. "onnx" exports the model's own weights to ONNX once (under
    # data_dir/models/onnx) and runs them on ONNX Runtime: the vectors equal PyTorch's, in less CPU time
    # (bench/dense_runtime.py). "onnx-int8" runs that export quantised to int8 for chunks, sentences and
    # queries: less CPU time and memory again (bench/ingest_process.py), but an int8 vector depends on what
    # shares its forward pass (a sentence encoded in a batch and alone differ), which moves small
    # collections' answers, so it is not the default (bench/README.md).
    # Recorded with a new collection, whose record then picks the runtime for it: torch and onnx share
    # the float space, int8 is its own (CollectionModels.runtime_for).
    dense_runtime: str = setting("onnx", choices=DENSE_RUNTIMES)
    # Ingest's dense encoding in worker processes, each with its share of the cores (rag/encoders/pool.py);
    # measured against one process in bench/encode_workers.py (bench/README.md, "encode workers").
    encode_workers: int = setting(1)
    # Where ONNX Runtime runs the dense model (rag/encoders/dense_onnx.py providers_for): a GPU needs
    # onnxruntime-gpu and a CUDA driver; without them it runs on CPU and says so.
    device: str = setting("auto", choices=DEVICES)

    def __post_init__(self) -> None:
        check_fields(self)
        validate_collection_name(self.collection)

    @property
    def backend(self) -> str:
        """'server' when QDRANT_URL is set, else the embedded engine."""
        return "server" if self.qdrant_url else "edge"

    @property
    def journal_dir(self) -> Path:
        """The collection's own crash journal: entries are per source name, which collections share."""
        return self.data_dir / "journal" / self.collection

    @property
    def originals_dir(self) -> Path:
        """Copies of the collection's original files (rag.ingest.originals), for telling parse loss from wording."""
        return self.data_dir / "originals" / self.collection

    @property
    def answer_mode(self) -> str:
        return "anthropic" if self.anthropic_api_key else "extractive"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, secrets_path: Path | None = None) -> "Settings":
        """Read each setting's variable (RAGSCOPE_* / QDRANT_* / ANTHROPIC_*), falling back to secrets.toml keys
        of the same name.

        Raises:
            ConfigError: a value that is not of its setting's kind or outside its range, naming the
                variable, the value and what it accepts (parsing is strict: "maybe" is not a flag).
        """
        env = dict(os.environ if env is None else env)
        secrets = _read_secrets(secrets_path or Path(".streamlit/secrets.toml"))

        def get(name: str) -> Any:  # noqa: ANN401 - text, or a TOML value
            if env.get(name, "") != "":
                return env[name]
            return secrets.get(name, secrets.get(name.lower()))

        return from_env(cls, get)

    def with_retrieval(self, **changes: Any) -> "Settings":  # noqa: ANN401 - any RetrievalConfig field's value
        """A copy with some retrieval settings changed (the inspector's per-question overrides)."""
        return dataclasses.replace(self, retrieval=dataclasses.replace(self.retrieval, **changes))


def _read_secrets(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path} is not valid TOML: {e}") from None
