"""Retrieval options shared by `ragscope search`, `ask` and `eval`, and the cluster options of `ingest` (the
command that creates a collection), derived from RetrievalConfig's and ClusterConfig's field descriptions.

Each option parses and range-checks its value with the setting's own `Spec`, so a bad value exits
non-zero with the same message (what was given, what is allowed) as the env variable or a link.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

from rag.errors import ConfigError
from rag.settings.config import ClusterConfig, RetrievalConfig
from rag.settings.spec import Knob, knobs


class _SettingType(click.ParamType):
    """A click type that reads a value the way the setting's Spec does (strict, bounded)."""

    def __init__(self, knob: Knob) -> None:
        self.knob = knob
        self.name = knob.name

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:  # noqa: ANN401
        try:
            return self.knob.parse(value, "the value")
        except ConfigError as e:
            self.fail(str(e), param, ctx)


def _option(knob: Knob) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """One click option for a setting; None default = "not given, keep the configured value"."""
    flags = knob.cli.split()
    help_text = knob.help + (f" ({knob.allowed})." if knob.kind in (int, float) else ".")
    if knob.kind is bool:
        long = flags[0][2:]
        return click.option(f"--{long}/--no-{long}", knob.name, default=None, help=help_text)
    metavar = "[" + "|".join(knob.choices) + "]" if knob.choices else knob.kind.__name__.upper()
    return click.option(*flags, knob.name, type=_SettingType(knob), default=None, metavar=metavar, help=help_text)


def setting_options(cls: type) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator adding one option per setting of `cls` that has a CLI name (keyword arguments named
    like the fields)."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        for knob in reversed(knobs(cls)):
            if knob.cli:
                command = _option(knob)(command)
        return command

    return decorate


retrieval_options = setting_options(RetrievalConfig)
# Only the settings fixed when a collection is made have a CLI name; the search-time ones are env only.
cluster_options = setting_options(ClusterConfig)

C = TypeVar("C")


def with_options(config: C, options: Mapping[str, Any]) -> C:
    """`config` (a RetrievalConfig or ClusterConfig) with the given (not-None) options applied.

    Raises:
        ConfigError: a value the config refuses (its message says which and why).
    """
    return dataclasses.replace(config, **{k: v for k, v in options.items() if v is not None})
