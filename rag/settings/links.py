"""The search inspector's URL query parameters: the writer other pages link with, and the reader the inspector uses.

Parameters:

    q                 the question
    <setting>         every RetrievalConfig field with a `link` name in its description
                      (rag/settings/config.py): fusion, candidates, k, reranker, dense_weight, rrf_k,
                      min_score, prf, prf_docs, prf_terms, prf_weight, dense_prf, dense_prf_docs,
                      dense_prf_weight, mode; toggles are 1 | 0
    source, tag       filters; repeat for several (?source=a.md&source=b.md); read as stored (Unicode NFC)
    track             a chunk id to follow through every stage
    track_source, track_heading
                      a section to follow instead (all its chunks, standing as its best): Eval's links for
                      section gold carry these, so the inspector tracks what Eval counted
    collection        the collection the question ran on (`collection_param`); ui/setup opens it for the
                      session, so a link replays on the collection it came from
    ask               the ask log's id of the answer being replayed (`AskRecord.inspector_params`): the
                      inspector says which settings it was answered with and where today's differ

Unknown parameters are ignored (a link may carry others); a bad value is an error naming it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

from rag.errors import ConfigError
from rag.settings.config import RetrievalConfig
from rag.settings.rerankers import offered_reranker
from rag.settings.spec import Knob, knobs
from rag.types import ChunkFilter, stored_name


def _linked(config: RetrievalConfig) -> tuple[Knob, ...]:
    """The settings a link can carry: each described field with a link name."""
    return tuple(k for k in knobs(type(config)) if k.link)


COLLECTION = "collection"
ASK = "ask"


def collection_param(collection: str) -> dict[str, str]:
    """The link parameter naming the collection a question ran on; merge it into `inspector_params`' output."""
    return {COLLECTION: collection}


def inspector_url(params: Mapping[str, str]) -> str:
    """The inspector link with these parameters, relative to the app's root (`inspector?q=...`): what Eval's
    tables open and the CLI prints."""
    return f"inspector?{urlencode(dict(params))}"


@dataclass(frozen=True)
class InspectorRequest:
    question: str
    config: RetrievalConfig
    flt: ChunkFilter
    track: str  # chunk id, or ""
    track_source: str = ""  # a section to track (with track_heading), or ""
    track_heading: str = ""
    ask: int | None = None  # the logged ask this link replays (rag/ask/log.py), or None


def inspector_params(question: str, config: RetrievalConfig, base: RetrievalConfig | None = None) -> dict[str, str]:
    """The inspector's query parameters for a question and the settings that ran it.

    q and the pinned settings (fusion, candidates, k, reranker) always; every other setting only
    where it differs from the config class's defaults or from `base`, so links stay short and
    `parse_inspector_params(params, base)` gives `config` back, for both. Pass the deployment's configured
    settings as `base`: the inspector reads links on top of them (e.g. `prf=0` when RAGSCOPE_PRF turned PRF
    on but this run had it off).
    A min_score of None cannot be written: on a base with a cut, the cut applies.
    """
    bases = (type(config)(), base or type(config)())
    params = {"q": question}
    for knob in _linked(config):
        value = getattr(config, knob.name)
        if value is not None and (knob.pinned or any(value != getattr(b, knob.name) for b in bases)):
            params[knob.link] = (
                ("1" if value else "0") if isinstance(value, bool) else str(value)
            )  # str(float): repr precision
    return params


def parse_inspector_params(params: Mapping[str, Sequence[str]], base: RetrievalConfig) -> InspectorRequest:
    """Read the query parameters (each key to all its values) on top of `base`, the deployment's configured settings.

    A reranker must be a built-in or exactly `base.reranker` (see `offered_reranker`).

    Raises:
        ConfigError: naming the parameter, its value and what the setting accepts.
    """

    def last(name: str) -> str | None:
        values = [v for v in params.get(name, ()) if v.strip()]
        return values[-1].strip() if values else None

    changes = {}
    for knob in _linked(base):
        if (value := last(knob.link)) is not None:
            changes[knob.name] = knob.parse(value, f"link parameter {knob.link}")
    if "reranker" in changes:  # a link may only pick among the configured models, never load a path it names
        try:
            offered_reranker(changes["reranker"], base.reranker)
        except ConfigError as e:
            raise ConfigError(f"link parameter reranker: {e}") from None
    config = dataclasses.replace(base, **changes)
    flt = ChunkFilter(sources=_all(params, "source"), tags=_all(params, "tag"))
    section = (stored_name(last("track_source") or ""), last("track_heading") or "")
    return InspectorRequest(last("q") or "", config, flt, last("track") or "", *section, ask=_ask_id(last(ASK)))


def _ask_id(raw: str | None) -> int | None:
    if raw is None:
        return None
    if not raw.isascii() or not raw.isdigit():
        raise ConfigError(f"link parameter {ASK}: {raw!r} is not an ask log id (a whole number)")
    return int(raw)


def _all(params: Mapping[str, Sequence[str]], name: str) -> tuple[str, ...]:
    """Each distinct name once, as stored: a link naming "café.md" composed and decomposed names one document."""
    return tuple(dict.fromkeys(stored_name(v.strip()) for v in params.get(name, ()) if v.strip()))
