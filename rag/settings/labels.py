"""How a config is named in headers, legends, stored runs and the CLI: one line derived from each setting's `tag`."""

from __future__ import annotations

import dataclasses
from typing import Any

from rag.settings.spec import knobs


def config_label(config: Any) -> str:  # noqa: ANN401 - any described config dataclass (RetrievalConfig)
    """A one-line description of a config for headers and legends, from each setting's `tag`.

    Settings that do not apply (RRF k under dbsf, PRF numbers with PRF off) are left out; a setting
    that refines another (a fusion's k, PRF's numbers) follows it: "rrf k=60 · PRF 3 docs, 10 terms, w=0.5".
    """
    values = dataclasses.asdict(config)
    parts: dict[str, list[str]] = {}  # field name -> its words, then those of the settings refining it
    for knob in knobs(type(config)):
        value = values[knob.name]
        if not knob.tag or value is None or value is False or value == knob.off or knob.applies(values):
            continue
        text = knob.tag if value is True else knob.tag.format(knob.shown(value))
        owner = "fusion" if knob.fusions else knob.needs
        if owner in parts:
            parts[owner].append(text)
        else:
            parts[knob.name] = [text]
    return " · ".join(head + (" " + ", ".join(rest) if rest else "") for head, *rest in parts.values())
