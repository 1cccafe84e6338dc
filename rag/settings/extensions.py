"""The named extension points below settings, each registered once: chunk strategies and retrieval modes.

A row names the extension, says in one line what it does and where it is implemented. The setting's
choices (`RAGSCOPE_CHUNK_STRATEGY`, `RAGSCOPE_MODE`, and so the CLI's `--strategy`/`--mode`, links and
forms), the pickers' captions and the implementation's dispatch (checked at import there) derive from
these rows; tests/test_docs_match_registries.py holds README.md and docs/architecture.md to them. Formats
are registered in rag/ingest/loaders/formats.py, rerankers in rag/settings/rerankers.py, store backends in
rag/store/__init__.py (docs/architecture.md, "Extension points").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Extension:
    """One registered extension: its `name` (the setting's value), what it does, and the module doing it."""

    name: str
    description: str
    module: str


@dataclass(frozen=True)
class Mode(Extension):
    """A retrieval mode: `description` is what it does offline, `with_claude` what it does with a key."""

    with_claude: str = ""


STRATEGIES: tuple[Extension, ...] = (
    Extension("heading", "never crosses a heading; a long section cut on paragraphs, tables and code whole",
              "rag.ingest.chunker"),
    Extension("recursive", "langchain's recursive splitter inside each section, with overlap", "rag.ingest.chunker"),
    Extension("sentence", "whole sentences packed up to the size, inside each section", "rag.ingest.chunker"),
    Extension("fixed", "plain windows with overlap across headings, snapped to sentence ends or spaces",
              "rag.ingest.chunker"),
    Extension("semantic", "cut where the dense model sees the topic change", "rag.ingest.semantic"),
    Extension("code", "heading, with every code block (a Python function or class) kept whole",
              "rag.ingest.loaders.code"),
)  # fmt: skip

MODES_TABLE: tuple[Mode, ...] = (
    Mode("plain", "plain (one hybrid search, reranked)", "rag.retrieval.retrieve",
         "plain (one hybrid search, reranked)"),
    Mode("hyde", "HyDE (pseudo-document: extractive first pass)", "rag.modes.hyde",
         "HyDE (Claude writes the hypothetical passage)"),
    Mode("multi_hop", "multi-hop (2 hops: hop 2 adds salient terms of hop 1's best chunk)", "rag.modes.multihop",
         "multi-hop (Claude judges sufficiency and writes each follow-up query)"),
    Mode("corrective",
         "corrective (graded by the answer gate's relevance; retries with PRF, more candidates, union; else abstains)",
         "rag.modes.corrective",
         "corrective (Claude grades each chunk 0-3; retries with PRF, more candidates, union; else abstains)"),
    Mode("agent", "agent (unavailable: needs ANTHROPIC_API_KEY)", "rag.modes.agent",
         "agent (Claude calls search_docs as often as it needs, then answers with citations)"),
)  # fmt: skip


def names(rows: Iterable[Extension]) -> tuple[str, ...]:
    """The registered names, in registration order: a setting's choices."""
    return tuple(row.name for row in rows)


def check_dispatch(point: str, rows: Iterable[Extension], implemented: Mapping[str, object]) -> None:
    """Fail at import when an implementation's dispatch table and the registry disagree: a row without an
    implementation, or an implementation no setting can choose."""
    registered, found = set(names(rows)), set(implemented)
    if registered != found:
        raise RuntimeError(
            f"{point}: registered {sorted(registered - found)} not implemented, "
            f"implemented {sorted(found - registered)} not registered"
        )
