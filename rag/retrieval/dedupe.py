"""Repeated passages stand once: the final-list step of `RetrievalConfig.dedupe`, beside collapsing.

Manuals include the same text in many pages (a shared option description, a licence footer, an
"Examples" boilerplate), and every copy scores alike, so the copies fill the top k with one passage.
Chunks whose text is the same once case, spacing and Unicode form are folded (rag.text.fold.match_key)
rank once, as the best-ranked copy; the other places are listed with it ("also in"). Nothing is stored
for it: the key is computed from the text of the candidates, so collections ingested before it work.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rag.text.fold import match_key
from rag.types import Chunk


@dataclass(frozen=True)
class Repeats:
    """`repeat_of`: chunk id -> the better-ranked chunk with the same text, which stands for it.
    `also_in`: that standing chunk's id -> where the others are ("source > heading"), best-ranked first."""

    repeat_of: dict[str, str] = field(default_factory=dict)
    also_in: dict[str, tuple[str, ...]] = field(default_factory=dict)


def find_repeats(ranked: Sequence[Chunk]) -> Repeats:
    """The repeats among `ranked` (best first): each chunk whose folded text a better-ranked one has."""
    first: dict[str, Chunk] = {}
    repeat_of: dict[str, str] = {}
    also_in: dict[str, list[str]] = {}
    for chunk in ranked:
        key = match_key(chunk.text)
        if not key:
            continue
        best = first.setdefault(key, chunk)
        if best.id != chunk.id:
            repeat_of[chunk.id] = best.id
            places = also_in.setdefault(best.id, [])
            if chunk.location not in places:
                places.append(chunk.location)
    return Repeats(repeat_of, {cid: tuple(places) for cid, places in also_in.items()})
