"""The reranker name grammar: `none`, `dense-cosine`, `score-fusion[:w]`, `sentence-maxsim[:a]`,
`maxsim-fusion[:w]` or `cross-encoder:<model name or path>`.

Parsed here once, below everything that names a reranker: settings check it when they load (a typo in
RAGSCOPE_RERANKER fails at start-up, like a bad fusion), the form and links offer from it, and
`rag.retrieval.rerank` builds the stage from the parsed name. What each one does: rag/retrieval/rerank.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from rag.errors import ConfigError
from rag.settings.extensions import Extension


@dataclass(frozen=True)
class RerankerRow(Extension):
    """A built-in reranker: `weight` names what its `:<weight>` parameter weighs ("" for none); `sentences`:
    it scores sentences (reads the sentence vectors stored at ingest, or encodes them per question)."""

    weight: str = ""
    sentences: bool = False


# Every built-in reranker, registered once (cross-encoder:<model> is the one open-ended name): the picker's
# lines, error messages and `rag.retrieval.rerank.get_reranker`'s dispatch (checked at import there) derive
# from it, and tests/test_docs_match_registries.py holds the docs to it.
_RERANK = "rag.retrieval.rerank"
RERANKER_TABLE: tuple[RerankerRow, ...] = (
    RerankerRow("none", "keep the fused order", _RERANK),
    RerankerRow("dense-cosine", "cosine with the stored dense vectors", _RERANK),
    RerankerRow("score-fusion", "min-max mix of exact dense and BM25 scores (score-fusion:<dense weight>)", _RERANK,
                "dense weight"),
    RerankerRow("sentence-maxsim",
                "best sentence vs question, blended with chunk cosine (sentence-maxsim:<sentence weight>)", _RERANK,
                "sentence weight"),
    RerankerRow("maxsim-fusion", "score-fusion with sentence-maxsim as its dense side (maxsim-fusion:<dense weight>)",
                _RERANK, "dense weight", sentences=True),
)  # fmt: skip
# Name -> one line for the inspector's reranker picker and error messages.
RERANKERS = {row.name: row.description for row in RERANKER_TABLE}
CROSS_ENCODER_PREFIX = "cross-encoder:"
_WEIGHTED = tuple(row.name for row in RERANKER_TABLE if row.weight)
DEFAULT_WEIGHT = 0.5
ACCEPTED = (
    f"one of {', '.join(RERANKERS)} ({', '.join(_WEIGHTED)} take :<weight between 0 and 1>) "
    f"or {CROSS_ENCODER_PREFIX}<model name or path>"
)


@dataclass(frozen=True)
class RerankerName:
    """A parsed reranker setting: its `base` name, the weight after ':' (weighted ones), or the cross-encoder
    `model`."""

    base: str
    weight: float | None = None
    model: str = ""

    @property
    def is_cross_encoder(self) -> bool:
        return bool(self.model)


def parse_reranker(name: str) -> RerankerName:
    """The parsed form of a reranker setting; nothing is loaded or looked up.

    Raises:
        ConfigError: an unknown name, a parameter it does not take, or a weight outside 0..1 (naming the
            accepted forms).
    """
    if name.startswith(CROSS_ENCODER_PREFIX):
        model = name[len(CROSS_ENCODER_PREFIX) :].strip()
        if not model:
            raise ConfigError("cross-encoder needs a model: cross-encoder:<model name or local folder>")
        return RerankerName("cross-encoder", model=model)
    base, colon, param = name.partition(":")
    if base in RERANKERS and base not in _WEIGHTED and not colon:
        return RerankerName(base)
    if base in _WEIGHTED:
        return RerankerName(base, _weight(name, param) if colon else DEFAULT_WEIGHT)
    raise ConfigError(f"unknown reranker {name!r}; use {ACCEPTED}")


def is_cross_encoder(name: str) -> bool:
    """Whether a (valid) reranker setting names a trained cross-encoder model."""
    return name.startswith(CROSS_ENCODER_PREFIX)


def reads_sentence_vectors(name: str) -> bool:
    """Whether the reranker scores sentences (it reads the sentence vectors stored at ingest, or encodes them
    per question)."""
    return name.partition(":")[0] in {row.name for row in RERANKER_TABLE if row.sentences}


def describe_reranker(name: str) -> str:
    """The picker's one line for a reranker setting ("" for a cross-encoder or an unknown name)."""
    return RERANKERS.get(name.partition(":")[0], "")


def offered_reranker(name: str, configured: str) -> str:
    """`name` when a link or the form may pick it: a built-in (its parameter checked) or exactly the
    configured reranker.

    A link can come from anyone: it must not make the server load an arbitrary folder or hub name as a
    cross-encoder, and the refusal must not tell whether a path exists, so nothing is looked up here.

    Raises:
        ConfigError: any other name (the message lists what is offered).
    """
    name = name.strip()
    if name == configured:
        return name
    if not is_cross_encoder(name) and name.partition(":")[0] in RERANKERS:
        parse_reranker(name)  # a built-in: checks its parameter
        return name
    offered = ", ".join(dict.fromkeys([configured, *RERANKERS]))
    raise ConfigError(
        f"reranker {name!r} is not offered here; choose one of {offered} ({', '.join(_WEIGHTED)} take "
        ":<weight>); another model has to be configured as RAGSCOPE_RERANKER"
    )


def _weight(name: str, param: str) -> float:
    try:
        weight = float(param)
    except ValueError:
        raise ConfigError(f"reranker {name!r}: the part after ':' must be a number between 0 and 1") from None
    if not 0.0 <= weight <= 1.0:  # NaN fails too
        raise ConfigError(f"{name.partition(':')[0]} weight must be between 0 and 1; got {param}")
    return weight
