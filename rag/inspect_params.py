"""The search inspector's URL query parameters, read into a question, a config, a filter and a chunk to track.

Other pages link to the inspector with these (see `rag.asklog.inspector_params` for the writer):

    q             the question
    fusion        rrf | dbsf | weighted_rrf | union | dense | sparse
    candidates    candidates per stage
    k             final top-k
    reranker      none | dense-cosine | score-fusion[:w] | sentence-maxsim[:a] | maxsim-fusion[:w] | cross-encoder:<name or path>
    dense_weight  dense share of weighted_rrf (0-1)
    rrf_k         RRF k
    min_score     final-stage score cut
    source, tag   filters; repeat for several (?source=a.md&source=b.md)
    track         a chunk id to follow through every stage

Unknown parameters are ignored (a link may carry others); a bad value is an error naming it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Mapping, Sequence

from rag.config import RetrievalConfig
from rag.errors import ConfigError
from rag.types import ChunkFilter

_NUMBERS = {"candidates": ("candidates", int), "k": ("final_k", int), "rrf_k": ("rrf_k", int), "dense_weight": ("dense_weight", float), "min_score": ("min_score", float)}


@dataclass(frozen=True)
class InspectorRequest:
    question: str
    config: RetrievalConfig
    flt: ChunkFilter
    track: str  # chunk id, or ""


def parse_inspector_params(params: Mapping[str, Sequence[str]], base: RetrievalConfig) -> InspectorRequest:
    """Read the query parameters (each key to all its values) on top of `base`.

    Raises:
        ConfigError: a value is not a number where one is needed, or the config it makes is invalid.
    """

    def last(name: str) -> str | None:
        values = [v for v in params.get(name, ()) if v.strip()]
        return values[-1].strip() if values else None

    changes: dict[str, object] = {}
    for name in ("fusion", "reranker"):
        if (value := last(name)) is not None:
            changes[name] = value
    for name, (field, kind) in _NUMBERS.items():
        if (value := last(name)) is not None:
            try:
                changes[field] = kind(value)
            except ValueError:
                raise ConfigError(f"link parameter {name}={value!r} is not a number") from None
    flt = ChunkFilter(sources=_all(params, "source"), tags=_all(params, "tag"))
    return InspectorRequest(last("q") or "", dataclasses.replace(base, **changes), flt, last("track") or "")


def _all(params: Mapping[str, Sequence[str]], name: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v.strip() for v in params.get(name, ()) if v.strip()))
