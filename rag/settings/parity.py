"""Whether a page's retrieval settings are what Ask and Eval run for the collection, and where they differ.

"The test page finds it, the chat does not" (issue 40, item 3): the inspector, Ask and Eval share one code
path, so a difference in what they find is a difference in settings. The reference is the collection's
settings in force (`Components.with_stored_settings`: stored over configured over default); every setting a
form, a link or an applied fix changed is one `SettingDiff`, said in one line the sidebar and the page show
("differs from Ask and Eval in: fusion rrf (Ask: dbsf)").

A setting that does nothing under both configs (RRF k under dbsf, the PRF numbers with PRF off) is no
difference: it changes no ranking.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from rag.settings.config import RetrievalConfig
from rag.settings.spec import knobs

SAME = "runs what Ask and Eval run for this collection"


@dataclass(frozen=True)
class SettingDiff:
    """One retrieval setting whose value differs from the reference's."""

    name: str  # the RetrievalConfig field
    label: str  # its words ("Fusion")
    value: Any
    reference: Any

    def words(self, reference_name: str = "Ask") -> str:
        """ "fusion rrf (Ask: dbsf)"."""
        value, reference = shown_value(self.name, self.value), shown_value(self.name, self.reference)
        return f"{self.name.replace('_', ' ')} {value} ({reference_name}: {reference})"

    def as_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Parity:
    """A config against the reference it is measured by (what Ask and Eval run), setting by setting."""

    config: RetrievalConfig
    reference: RetrievalConfig
    differences: tuple[SettingDiff, ...]

    @property
    def same(self) -> bool:
        return not self.differences

    def words(self, reference_name: str = "Ask") -> str:
        """`SAME`, or "differs from Ask and Eval in: fusion rrf (Ask: dbsf)"."""
        return SAME if self.same else f"differs from Ask and Eval in: {self.listed(reference_name)}"

    def listed(self, reference_name: str = "Ask") -> str:
        """The differences alone: "fusion rrf (Ask: dbsf); k 2 (Ask: 5)"."""
        return "; ".join(d.words(reference_name) for d in self.differences)

    def as_json(self) -> dict[str, Any]:
        return {"same": self.same, "differences": [d.as_json() for d in self.differences], "in_words": self.words()}


def parity(config: RetrievalConfig, reference: RetrievalConfig) -> Parity:
    """`config` measured against `reference` (the collection's settings in force), in field order."""
    values, ref = dataclasses.asdict(config), dataclasses.asdict(reference)
    differences = tuple(
        SettingDiff(k.name, k.label, values[k.name], ref[k.name])
        for k in knobs(RetrievalConfig)
        if values[k.name] != ref[k.name] and not (k.applies(values) and k.applies(ref))
    )
    return Parity(config, reference, differences)


def shown_value(name: str, value: Any) -> str:  # noqa: ANN401 - any retrieval setting's value
    """A retrieval setting's value in words: on / off, none, floats without trailing zeros, names as they are."""
    knob = next(k for k in knobs(RetrievalConfig) if k.name == name)
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value) if knob.kind is str else knob.shown(value)
