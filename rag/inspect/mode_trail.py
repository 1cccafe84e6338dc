"""Where a tracked chunk appeared or was lost among the searches of a retrieval mode.

A mode's final list combines several searches (HyDE's two, each hop, each corrective attempt, each of
the agent's calls), so "which stage lost it" has a mode-level answer too: the hop whose final top-k
first held it, the grader that discarded it, the merge that left it out, the call whose hits showed it
to Claude. The per-stage tracking (rag/inspect/track.py) still follows the question's own search.
"""

from __future__ import annotations

from dataclasses import dataclass

from rag.modes.result import ModeResult

FINAL = "final"


@dataclass(frozen=True)
class Sighting:
    """The tracked chunk in one search of the mode (or, labelled "final", in the mode's final list)."""

    search: str  # "hop 2", "retry with PRF", "call 3", "hyde passage", "final"
    query: str
    final_rank: int | None  # its rank in this search's final top-k; None when it was not there
    note: str  # what happened to it there, in words


@dataclass(frozen=True)
class ModeTrail:
    mode: str
    sightings: tuple[Sighting, ...]
    summary: str  # one sentence: where it first appeared, and where it was lost (if it was)

    @property
    def found(self) -> bool:
        return self.sightings[-1].final_rank is not None


def mode_trail(mr: ModeResult, chunk_id: str) -> ModeTrail:
    """Follow `chunk_id` through every search `mr` ran, then into its final list."""
    sightings = []
    discarded = ""
    for label, r in mr.searches():
        c = r.get(chunk_id)
        info = mr.stage_info(label, r)
        if c is None:
            note = f"not among its {len(r.candidates)} candidates"
        elif c.final_rank is not None:
            note = f"final rank {c.final_rank}"
        else:
            note = (
                f"a candidate (rerank rank {c.rerank.rank if c.rerank.rank is not None else '–'}) "
                f"below its final k={r.config.final_k}"
            )
        grade = next((g for g in info.get("grades", ()) if g["chunk_id"] == chunk_id), None)
        if grade is not None:
            verb = "kept" if grade["relevant"] else "discarded"
            note += (
                f"; graded {grade['grade']:.3f} ({info['basis']}) against the threshold {info['threshold']:g}: {verb}"
            )
            if not grade["relevant"] and not discarded:
                discarded = (
                    f"the grader discarded it in the {label} (grade {grade['grade']:.3f} < {info['threshold']:g})"
                )
        if info.get("from_chunk") == chunk_id and info.get("carried"):
            note += f"; its words {', '.join(info['carried'])} were carried to the next hop"
        if c is not None and c.final_rank is not None and info.get("labels"):
            note += f"; shown to Claude as {info['labels'][c.final_rank - 1]}"
        sightings.append(Sighting(label, r.question, c.final_rank if c else None, note))
    final = mr.result.get(chunk_id)
    final_rank = final.final_rank if final else None
    in_final = f"at rank {final_rank}" if final_rank else "not there"
    sightings.append(
        Sighting(FINAL, mr.question, final_rank, f"the mode's final list ({mr.result.reranker}): {in_final}")
    )
    first = next((s for s in sightings[:-1] if s.final_rank is not None), None)
    if first is None:
        summary = f"no search of the {mr.mode} mode put it in its final top-k" + (f"; {discarded}" if discarded else "")
    elif final_rank is not None:
        summary = (
            f"first appeared in {first.search} (final rank {first.final_rank}); final rank {final_rank} "
            "in the mode's result"
        )
    else:
        lost = discarded or f"lost when the searches were combined ({mr.result.reranker})"
        summary = f"appeared in {first.search} (final rank {first.final_rank}), then {lost}"
    return ModeTrail(mr.mode, tuple(sightings), summary)
