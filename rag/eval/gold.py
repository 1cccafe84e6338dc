"""What a question's gold means in the collection as it is now: gold specs resolved to chunk ids.

A question set names its gold in one of three ways (see `parse_gold`): chunk ids, sections
(`source` + heading path; any chunk under that heading counts), or an answer text that must appear in
a chunk (its text, or its heading path followed by its text: a heading line is kept in the path).
Sections and text survive re-chunking; ids do not. Resolution turns each gold item into a
`GoldUnit` (a set of chunks, any of which satisfies it) so metrics count an item once however many
chunks it spans, the way BEIR counts a document once however it is split into passages.

A section's heading is matched the way people write it: the leaf title ("Refunds"), any trailing part
of the heading path ("Billing > Refunds") or the whole path, trimmed and case- and
whitespace-insensitive, and as the heading reads rendered: "The frobnicate API" names the Markdown title
"The [`frobnicate`](api.md) API" (link targets, code ticks, emphasis and entities are not what a reader
sees). Every section it names counts, subsections included. Gold that names
something the collection does not have (a chunk id, a document, a heading) is a mistake in the set,
not a retrieval failure: its unit carries a `problem`, and the question is left out of the metrics.
So is gold that only quarantined chunks hold: retrieval never returns them, and the problem says so.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rag.components import Components
from rag.ingest.originals import Originals
from rag.text.fold import reader_form
from rag.text.headings import heading_names, heading_parts
from rag.types import Chunk, ChunkFilter, stored_name

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class ChunkIdGold:
    ids: tuple[str, ...]


@dataclass(frozen=True)
class SectionRef:
    """A document section: `heading` is the " > "-joined heading path; empty means the whole document."""

    source: str
    heading: str = ""
    grade: int = 1


@dataclass(frozen=True)
class SectionGold:
    sections: tuple[SectionRef, ...]


@dataclass(frozen=True)
class TextGold:
    text: str


Gold = ChunkIdGold | SectionGold | TextGold


def parse_gold(value: Any) -> Gold:  # noqa: ANN401 - a parsed JSON value, of any shape until checked here
    """Read the `gold` field of a question-set line.

    Args:
        value: a list of chunk id strings, a list of {"source", "heading"?, "grade"?} objects, or a
            non-empty answer text.

    Returns:
        The matching gold spec.

    Raises:
        ValueError: the value has none of those shapes; the message says what was expected.
    """
    if isinstance(value, str):
        if not value.strip():
            raise ValueError("'gold' text is empty")
        return TextGold(value)
    if not isinstance(value, list) or not value:
        raise ValueError(
            '\'gold\' must be a non-empty list of chunk ids, a list of {"source", "heading"} objects, or an answer text'
        )
    if all(isinstance(v, str) and v.strip() for v in value):
        return ChunkIdGold(tuple(value))
    if all(isinstance(v, dict) for v in value):
        return SectionGold(tuple(_section(v) for v in value))
    raise ValueError('\'gold\' mixes kinds: use only chunk id strings or only {"source", "heading"} objects')


def _section(item: dict) -> SectionRef:
    unknown = set(item) - {"source", "heading", "grade"}
    if unknown:
        raise ValueError(f"gold object has unknown keys {sorted(unknown)}; allowed: source, heading, grade")
    source, heading, grade = item.get("source"), item.get("heading", ""), item.get("grade", 1)
    if not isinstance(source, str) or not source:
        raise ValueError('each gold object needs a non-empty "source" string')
    source = stored_name(source)  # a name typed in a set reads as ingest stored it ("café" typed decomposed)
    if not isinstance(heading, str):
        raise ValueError('"heading" must be a string (the heading path joined with " > ")')
    if isinstance(grade, bool) or not isinstance(grade, int) or grade < 1:
        raise ValueError('"grade" must be a whole number of at least 1')
    return SectionRef(source, heading, grade)


def gold_to_json(gold: Gold | None) -> str | list[str] | list[dict[str, str | int]] | None:
    """The question-set JSON form of a gold spec (inverse of `parse_gold`)."""
    if gold is None:
        return None
    if isinstance(gold, TextGold):
        return gold.text
    if isinstance(gold, ChunkIdGold):
        return list(gold.ids)
    return [
        {"source": s.source, "heading": s.heading} | ({"grade": s.grade} if s.grade != 1 else {}) for s in gold.sections
    ]


class CollectionIndex:
    """Every retrievable chunk of the collection, indexed for gold lookup. Build once per run.

    Example:
        index = CollectionIndex.from_components(components)
        resolution = index.resolve(TextGold("14 days"))
        resolution.chunk_ids
    """

    def __init__(
        self,
        chunks: Iterable[Chunk],
        models: Sequence[str] = (),
        originals: Originals | None = None,
        quarantined: Iterable[Chunk] = (),
    ) -> None:
        self.by_id: dict[str, Chunk] = {c.id: c for c in chunks}
        # Chunks retrieval never returns: gold only they hold is explained as quarantined, not as missing.
        self.quarantined: tuple[Chunk, ...] = tuple(quarantined)
        self.originals = originals
        self._files: dict[str, str] | None = None  # source -> folded text of its original, read on first need
        self.by_source: dict[str, list[Chunk]] = {}
        for c in sorted(self.by_id.values(), key=lambda c: (c.source, c.index)):
            self.by_source.setdefault(c.source, []).append(c)
        self._norm = {cid: reader_form(c.text) for cid, c in self.by_id.items()}
        self.fingerprint = hashlib.sha256("\n".join([*models, *sorted(self.by_id)]).encode()).hexdigest()[:16]

    @functools.cached_property
    def _norm_with_path(self) -> dict[str, str]:
        """Each chunk's heading path and text, folded. A heading line lives in the chunk's heading path, not
        in its text: a text gold quoting a heading (or running from a heading into the body) is found here,
        not called lost in parsing. Folded on first need: most text golds are found in the text alone."""
        return {cid: reader_form(_with_path(c)) for cid, c in self.by_id.items()}

    @classmethod
    def from_components(cls, components: Components) -> CollectionIndex:
        """Read the chunks retrieval can return: quarantined ones are never returned, so never gold, and are
        kept apart only to say so when gold names what only they hold."""
        s = components.settings
        records = components.store.records(ChunkFilter(include_quarantined=True))
        return cls(
            (r.chunk for r in records if not (r.quarantined or r.chunk.role)),  # role: out of ranking, never gold
            (s.collection, s.dense_model, s.sparse_model),
            Originals(s.originals_dir), quarantined=(r.chunk for r in records if r.quarantined),
        )  # fmt: skip

    def resolve(self, gold: Gold | None) -> Resolution:
        """Turn a gold spec into gold units; text that no chunk holds is checked for a boundary split."""
        if gold is None:
            return Resolution(())
        if isinstance(gold, ChunkIdGold):
            return Resolution(tuple(self._id_unit(i) for i in gold.ids))
        if isinstance(gold, SectionGold):
            return Resolution(tuple(self._section_unit(s) for s in gold.sections))
        return self._text(gold.text)

    def _id_unit(self, chunk_id: str) -> GoldUnit:
        if chunk_id in self.by_id:
            return GoldUnit(f"chunk:{chunk_id}", chunk_id, 1, (chunk_id,))
        problem = (
            f"chunk id {chunk_id} is not in the collection (chunk ids change when a document is re-chunked; "
            "name the section instead)"
        )
        return GoldUnit(f"chunk:{chunk_id}", chunk_id, 1, (), problem)

    def _section_unit(self, ref: SectionRef) -> GoldUnit:
        label = f"{ref.source} › {ref.heading}" if ref.heading else ref.source
        key = f"section:{ref.source}#{ref.heading}"
        chunks = self.by_source.get(ref.source)
        ids = tuple(c.id for c in chunks or () if heading_names(c.heading_path, ref.heading))
        if ids:
            return GoldUnit(key, label, ref.grade, ids)
        held = sum(c.source == ref.source and heading_names(c.heading_path, ref.heading) for c in self.quarantined)
        if held:
            return GoldUnit(key, label, ref.grade, (), _quarantined(held))
        if chunks is None:
            near = difflib.get_close_matches(ref.source, list(self.by_source), n=3, cutoff=0.8)
            hint = f"; did you mean {_quoted(near)}?" if near else ""
            return GoldUnit(key, label, ref.grade, (), f"document {ref.source!r} is not in the collection{hint}")
        headings = list(dict.fromkeys(c.heading for c in chunks if c.heading))
        near = nearest_headings(ref.heading, headings)
        hint = f"; nearest: {_quoted(near)}" if near else f"; it has: {_quoted(headings[:8])}"
        return GoldUnit(key, label, ref.grade, (), f"{ref.source} has no heading {ref.heading!r}{hint}")

    def _text(self, text: str) -> Resolution:
        wanted = reader_form(text)
        label = f"“{text[:60]}{'…' if len(text) > 60 else ''}”"
        ids = tuple(cid for cid, norm in self._norm.items() if wanted in norm)
        ids = ids or tuple(cid for cid, norm in self._norm_with_path.items() if wanted in norm)
        if ids:
            return Resolution((GoldUnit("text", label, 1, ids),))
        for chunks in self.by_source.values():
            for first, second in itertools.pairwise(chunks):
                if wanted in reader_form(_joined(first, second)):
                    return Resolution((GoldUnit("text", label, 1, ()),), split=(first.id, second.id))
        held = sum(wanted in reader_form(_with_path(c)) for c in self.quarantined)
        if held:
            return Resolution((GoldUnit("text", label, 1, (), _quarantined(held)),))
        nearest = self._nearest(wanted)
        files = self._file_texts()
        if files is None:  # some document has no kept original: absence from the files proves nothing
            return Resolution((GoldUnit("text", label, 1, ()),), nearest=nearest)
        lost_in = tuple(source for source, text in files.items() if wanted in text)
        if lost_in:
            return Resolution((GoldUnit("text", label, 1, ()),), nearest=nearest, lost_in=lost_in)
        hint = f"; the chunk sharing most of its words is {nearest}" if nearest else ""
        problem = (
            f"the answer text {label} is in no document of the collection, neither in a chunk nor in any "
            f"source file: write it as the documents do{hint}"
        )
        return Resolution((GoldUnit("text", label, 1, (), problem),), nearest=nearest)

    def _file_texts(self) -> dict[str, str] | None:
        """Each document's original as folded text, or None when the originals cannot settle the question."""
        if self._files is None and self.originals is not None:
            texts = self.originals.texts(self.by_source)
            self._files = None if texts is None else {s: reader_form(t) for s, t in texts.items()}
        return self._files

    def _nearest(self, wanted: str) -> str | None:
        """The chunk sharing most words with a text no chunk holds: where to start looking."""
        words = set(_WORD.findall(wanted))
        best = max(self._norm.items(), key=lambda kv: len(words & set(_WORD.findall(kv[1]))), default=None)
        return best[0] if best and words & set(_WORD.findall(best[1])) else None


def nearest_headings(heading: str, headings: Sequence[str], n: int = 3) -> list[str]:
    """The headings (full paths) most like `heading`, compared as whole paths and by their last titles."""
    want = " > ".join(heading_parts(heading))
    score = {
        h: max(
            difflib.SequenceMatcher(None, want, " > ".join(heading_parts(h)[-k:])).ratio()
            for k in range(1, len(heading_parts(h)) + 1)
        )
        for h in headings
    }
    return [h for h in sorted(headings, key=lambda h: -score[h]) if score[h] >= 0.5][:n]


def _with_path(chunk: Chunk) -> str:
    """A chunk's heading path then its text: where a text gold that quotes a heading line is found."""
    return " ".join((*chunk.heading_path, chunk.text))


def _quarantined(n: int) -> str:
    return (
        f"only {n} disabled (quarantined) chunk{'s' if n > 1 else ''} hold{'s' if n == 1 else ''} it "
        "(disabled or quarantined on the Documents page, or by `ragscope chunk disable`), and retrieval never "
        "returns such chunks: enable them (`ragscope chunk enable ID`), or name other gold"
    )


def _quoted(items: Sequence[str]) -> str:
    return ", ".join(repr(i) for i in items)


def _joined(first: Chunk, second: Chunk) -> str:
    """Two neighbouring chunks as one text; overlapping chunks are not doubled."""
    if second.start < first.end:
        return first.text + second.text[first.end - second.start :]
    return first.text + " " + second.text


@dataclass(frozen=True)
class GoldUnit:
    """One gold item: any of `chunk_ids` satisfies it (empty when nothing in the collection does).

    `problem` says why the item names nothing in the collection (unknown chunk id, document or heading).
    """

    key: str
    label: str
    grade: int
    chunk_ids: tuple[str, ...]
    problem: str | None = None


@dataclass(frozen=True)
class Resolution:
    """A question's gold in chunk ids, plus what explains gold that no chunk holds."""

    units: tuple[GoldUnit, ...]
    split: tuple[str, str] | None = None  # answer text found only across these two neighbouring chunks
    nearest: str | None = None  # chunk most like an answer text found nowhere
    lost_in: tuple[str, ...] = ()  # sources whose original file holds an answer text no chunk holds (parse loss)

    @property
    def chunk_ids(self) -> frozenset[str]:
        return frozenset(i for u in self.units for i in u.chunk_ids)

    @property
    def missing(self) -> tuple[GoldUnit, ...]:
        return tuple(u for u in self.units if not u.chunk_ids)

    @property
    def invalid(self) -> str | None:
        """Why this gold cannot be scored (it names something the collection lacks), or None."""
        problems = [u.problem for u in self.units if u.problem]
        return "; ".join(problems) if problems else None

    def qrels(self) -> dict[str, int]:
        """{unit key: grade} for the metric functions."""
        return {u.key: u.grade for u in self.units}

    def collapse(self, ranked: Sequence[str | Sequence[str]]) -> dict[str, float]:
        """A stage's chunk ranking as a run over gold units: a unit ranks where its first chunk ranks.

        An entry is a chunk id, or a group of ids that share one rank (a section's chunk with the chunks
        it carries: `RetrievalResult.ranked_groups`), so a carried chunk counts at its section's rank.
        Chunks outside the gold keep their own place, so a miss still costs rank positions.
        """
        owners: dict[str, list[str]] = {}
        for u in self.units:
            for cid in u.chunk_ids:
                owners.setdefault(cid, []).append(u.key)
        run: dict[str, float] = {}
        position = 0
        for entry in ranked:
            group = (entry,) if isinstance(entry, str) else tuple(entry)
            gold = list(dict.fromkeys(k for cid in group for k in owners.get(cid, ()) if k not in run))
            other = [cid for cid in group if cid not in owners]
            if gold or other:
                position += 1
                run.update({k: 1.0 / position for k in gold or other[:1]})
        return run

    def track(self) -> str | None:
        """The chunk the inspector should follow for this question."""
        first = next((u.chunk_ids[0] for u in self.units if u.chunk_ids), None)
        return first or (self.split[0] if self.split else self.nearest)
