"""Retrieval options shared by `ragscope search` and `ragscope eval`, so both can set every technique the same way."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import click

from rag.config import RetrievalConfig

# Every option defaults to None: "not given, keep the configured value".
_OPTIONS = (
    click.option("--dense-weight", type=float, default=None, help="Dense share for weighted_rrf (0-1)."),
    click.option("--rrf-k", type=int, default=None, help="RRF k (rrf, weighted_rrf, union)."),
    click.option("--prf/--no-prf", default=None, help="Pseudo-relevance feedback: expand the BM25 query with terms of its top hits."),
    click.option("--prf-docs", type=int, default=None, help="PRF: feedback documents."),
    click.option("--prf-terms", type=int, default=None, help="PRF: terms added to the BM25 query."),
    click.option("--prf-weight", type=float, default=None, help="PRF: query weight of the best added term (0-1]."),
    click.option("--dense-prf/--no-dense-prf", default=None, help="Dense feedback (Rocchio): move the question vector toward its top fused hits, re-run dense."),
    click.option("--dense-prf-docs", type=int, default=None, help="Dense PRF: feedback documents."),
    click.option("--dense-prf-weight", type=float, default=None, help="Dense PRF: weight of the feedback centroid (0-1]."),
)


def retrieval_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a command with the fusion-weight and query-expansion options (keyword arguments named like the config fields)."""
    for option in reversed(_OPTIONS):
        command = option(command)
    return command


def with_options(config: RetrievalConfig, options: Mapping[str, Any]) -> RetrievalConfig:
    """`config` with the given (not-None) options applied.

    Raises:
        ConfigError: a value RetrievalConfig refuses (its message says which and why).
    """
    return dataclasses.replace(config, **{k: v for k, v in options.items() if v is not None})
