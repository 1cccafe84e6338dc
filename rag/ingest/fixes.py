"""A person's fixes to stored chunks, as their payload records them: an edit of the text, a disable.

A fix is kept on the chunk's point, keyed by the chunk's id, which an edit does not change: the id is the hash
of the source passage (rag.types.Chunk.make_id), so "the passage is unchanged" is "a re-ingest's chunks hold
that id". A re-ingest leaves such a chunk's point as it is (rag.ingest.write rewrites only where it sits), so
the edited text, its vectors and its status stay; a passage that changed gets a new id, its old point is removed,
and the fix with it: `dropped_fixes` names those for the preview, which asks before they go.

A disable is the quarantine retrieval already honours (payload `status`, rag.types.QUARANTINED): one mechanism,
with who and when added, and why (the Documents page's "Quarantine" of a chunk the injection scan flagged says
so). A chunk quarantined before who and when were recorded reads as "quarantined", and is no fix a re-ingest asks
about, as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from rag.ingest.plan import ChunkDiff
from rag.types import EDITED_AT, StoredChunk

# Payload fields of an edit: who, when, and the passage's own text (kept once, from the first edit).
EDITED_BY, ORIGINAL_TEXT = "edited_by", "original_text"  # and when: rag.types.EDITED_AT
# Payload fields of a disable, beside `status`: who, when, and why ("" when no reason was given).
DISABLED_BY, DISABLED_AT, DISABLED_WHY = "disabled_by", "disabled_at", "disabled_why"
EDIT_FIELDS = (EDITED_BY, EDITED_AT, ORIGINAL_TEXT)
DISABLE_FIELDS = (DISABLED_BY, DISABLED_AT, DISABLED_WHY)
FLAGGED_WHY = "flagged by the injection scan"  # the reason the Documents page's Quarantine button gives


class FixAction(StrEnum):
    """What was done to a chunk: a fix it carries is an EDIT or a DISABLE; the history also records ENABLE and
    DROP (stored as the values: "edit", "disable", "enable", "drop")."""

    EDIT = "edit"
    DISABLE = "disable"
    ENABLE = "enable"
    DROP = "drop"


@dataclass(frozen=True)
class Fix:
    """One fix a stored chunk carries (FixAction.EDIT or FixAction.DISABLE), by whom and when."""

    chunk_id: str
    where: str  # the chunk's location ("source > heading") and number, for people
    kind: FixAction  # EDIT or DISABLE
    by: str
    at: str
    why: str = ""

    @property
    def words(self) -> str:
        """ "edited by ana at 2026-12-03T09:30:00+00:00" / "disabled by ana at ... (flagged by the injection scan)"."""
        verb = "edited" if self.kind == FixAction.EDIT else "disabled"
        return f"{verb} by {self.by} at {self.at}" + (f" ({self.why})" if self.why else "")

    def as_json(self) -> dict[str, str]:
        return {"chunk_id": self.chunk_id, "where": self.where, "kind": self.kind, "by": self.by, "at": self.at} | (
            {"why": self.why} if self.why else {}
        )


def fixes_of(record: StoredChunk) -> tuple[Fix, ...]:
    """The fixes `record` carries: its edit, then its disable (none for a chunk as ingested)."""
    payload, at = record.payload, where(record)
    out = []
    if payload.get(EDITED_AT):
        out.append(Fix(record.chunk.id, at, FixAction.EDIT, _text(payload, EDITED_BY), _text(payload, EDITED_AT)))
    if record.quarantined and payload.get(DISABLED_AT):
        by, when, why = (_text(payload, k) for k in DISABLE_FIELDS)
        out.append(Fix(record.chunk.id, at, FixAction.DISABLE, by, when, why))
    return tuple(out)


def dropped_fixes(diff: ChunkDiff) -> tuple[Fix, ...]:
    """The fixes a re-ingest would drop: those on the stored chunks whose passage changed (ids it removes)."""
    return all_fixes(sorted(diff.removed, key=lambda r: r.chunk.index))


def all_fixes(records: Iterable[StoredChunk]) -> tuple[Fix, ...]:
    return tuple(fix for record in records for fix in fixes_of(record))


def disabled_words(record: StoredChunk) -> str:
    """Why retrieval never returns `record` ("" when it may): "disabled by ana at ...", or "quarantined" for a
    chunk quarantined before who and when were recorded."""
    if not record.quarantined:
        return ""
    disable = [f for f in fixes_of(record) if f.kind == FixAction.DISABLE]
    return disable[0].words if disable else "quarantined"


def edited_words(record: StoredChunk) -> str:
    """ "edited by ana at ..." for an edited chunk, "" for one as ingested."""
    edit = [f for f in fixes_of(record) if f.kind == FixAction.EDIT]
    return edit[0].words if edit else ""


def refusal(source: str, fixes: Iterable[Fix], meanwhile: bool = False) -> str:
    """Why ingest leaves a changed document alone: the fixes it would drop, named, and how to drop them
    (`meanwhile`: they were made while the ingest ran, after its preview)."""
    named = "; ".join(f"{f.where} ({f.chunk_id}): {f.words}" for f in fixes)
    when = " while this ingest ran" if meanwhile else ""
    return (
        f"{source}: not ingested: these chunks were fixed{when} and their passages changed, so ingesting would drop "
        f"their fixes: {named}. Nothing was written; ingest again with --drop-fixes (on the Documents page: "
        "confirm) to drop them"
    )


def where(record: StoredChunk) -> str:
    """A chunk for people: "source > heading #3" (its location and number)."""
    return f"{record.chunk.location} #{record.chunk.index}"


def fixed_meanwhile(plan_diff: ChunkDiff, current: Iterable[StoredChunk]) -> tuple[Fix, ...]:
    """The fixes made, since the plan was diffed, on chunks it removes: its preview never listed them."""
    removed = {r.chunk.id: r for r in plan_diff.removed}
    known = {(f.chunk_id, f.kind, f.at) for f in dropped_fixes(plan_diff)}
    now = all_fixes(r for r in current if r.chunk.id in removed)
    return tuple(f for f in now if (f.chunk_id, f.kind, f.at) not in known)


def _text(payload: Mapping[str, Any], key: str) -> str:
    return str(payload.get(key) or "")
