"""The search inspector's URL query parameters: the writer other pages link with, and the reader the inspector uses.

Parameters (one table, `_PARAMS`, serves both directions):

    q                 the question
    fusion            rrf | dbsf | weighted_rrf | union | dense | sparse
    candidates        candidates per stage
    k                 final top-k
    reranker          none | dense-cosine | score-fusion[:w] | sentence-maxsim[:a] | maxsim-fusion[:w] | cross-encoder:<name or path>
    dense_weight      dense share of weighted_rrf (0-1)
    rrf_k             RRF k
    min_score         final-stage score cut
    prf               1 | 0: expand the BM25 query with terms of its top hits (pseudo-relevance feedback)
    prf_docs          PRF feedback documents
    prf_terms         PRF terms added
    prf_weight        query weight of the best added term (0-1]
    dense_prf         1 | 0: move the question vector toward its top fused hits (Rocchio), then re-run dense
    dense_prf_docs    dense PRF feedback documents
    dense_prf_weight  dense PRF weight (0-1]
    source, tag       filters; repeat for several (?source=a.md&source=b.md)
    track             a chunk id to follow through every stage
    collection        the collection the question ran on (`collection_param`); ui/setup opens it for the
                      session, so a link replays on the collection it came from

Unknown parameters are ignored (a link may carry others); a bad value is an error naming it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from rag.config import RetrievalConfig
from rag.errors import ConfigError
from rag.types import ChunkFilter

_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _flag(value: str) -> bool:
    if value.lower() in _TRUE + _FALSE:
        return value.lower() in _TRUE
    raise ValueError(value)


# link name -> (RetrievalConfig field, reader of the link's text)
_PARAMS: dict[str, tuple[str, Callable[[str], object]]] = {
    "fusion": ("fusion", str),
    "candidates": ("candidates", int),
    "k": ("final_k", int),
    "reranker": ("reranker", str),
    "dense_weight": ("dense_weight", float),
    "rrf_k": ("rrf_k", int),
    "min_score": ("min_score", float),
    "prf": ("prf", _flag),
    "prf_docs": ("prf_docs", int),
    "prf_terms": ("prf_terms", int),
    "prf_weight": ("prf_weight", float),
    "dense_prf": ("dense_prf", _flag),
    "dense_prf_docs": ("dense_prf_docs", int),
    "dense_prf_weight": ("dense_prf_weight", float),
}
# Always written, so a link names the core of its config even where it equals the defaults.
_ALWAYS = ("fusion", "candidates", "k", "reranker")


COLLECTION = "collection"


def collection_param(collection: str) -> dict[str, str]:
    """The link parameter naming the collection a question ran on; merge it into `inspector_params`' output."""
    return {COLLECTION: collection}


@dataclass(frozen=True)
class InspectorRequest:
    question: str
    config: RetrievalConfig
    flt: ChunkFilter
    track: str  # chunk id, or ""


def inspector_params(question: str, config: RetrievalConfig, base: RetrievalConfig | None = None) -> dict[str, str]:
    """The inspector's query parameters for a question and the settings that ran it.

    q, fusion, candidates, k and reranker always; every other setting (dense_weight, rrf_k,
    min_score, the PRF and dense-PRF knobs) only where it differs from `RetrievalConfig()`'s
    defaults or from `base`, so links stay short and `parse_inspector_params(params, base)` gives
    `config` back, for both. Pass the deployment's configured settings as `base`: the inspector
    reads links on top of them (e.g. `prf=0` when RAGSCOPE_PRF turned PRF on but this run had it off).
    A min_score of None cannot be written: on a base with a cut, the cut applies.
    """
    bases = (RetrievalConfig(), base or RetrievalConfig())
    params = {"q": question}
    for name, (field, _) in _PARAMS.items():
        value = getattr(config, field)
        if value is not None and (name in _ALWAYS or any(value != getattr(b, field) for b in bases)):
            params[name] = ("1" if value else "0") if isinstance(value, bool) else str(value)  # str(float): repr precision
    return params


def parse_inspector_params(params: Mapping[str, Sequence[str]], base: RetrievalConfig) -> InspectorRequest:
    """Read the query parameters (each key to all its values) on top of `base`.

    Raises:
        ConfigError: naming the parameter, when a value is not a number (or 1/0 for a toggle) where
            one is needed, or is out of the range the config accepts.
    """

    def last(name: str) -> str | None:
        values = [v for v in params.get(name, ()) if v.strip()]
        return values[-1].strip() if values else None

    config = base
    for name, (field, read) in _PARAMS.items():
        if (value := last(name)) is None:
            continue
        try:
            config = dataclasses.replace(config, **{field: read(value)})
        except ValueError:
            kind = "1 or 0" if read is _flag else "a number"
            raise ConfigError(f"link parameter {name}={value!r} is not {kind}") from None
        except ConfigError as e:
            raise ConfigError(f"link parameter {name}={value!r}: {e}") from None
    flt = ChunkFilter(sources=_all(params, "source"), tags=_all(params, "tag"))
    return InspectorRequest(last("q") or "", config, flt, last("track") or "")


def _all(params: Mapping[str, Sequence[str]], name: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v.strip() for v in params.get(name, ()) if v.strip()))
