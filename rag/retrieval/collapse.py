"""One hit per section, without hiding the chunk that answers: which chunks a section's best chunk stands for,
and which of them it carries into the final list.

A section is a document's heading path. In documentation several chunks of one long section often outrank
every other section, and an answer needs the other sections more than a second look at one: so each
section ranks once, as its best chunk, and the others are folded behind it (`collapsed_into`).

But the chunk that answers is often the second of its section, ranked right behind the first and above
every other section. Folding it away hides the answer the ranking found. So a section's best chunk
*carries* some of its siblings: they are shown under it, read by the answerer and counted at its rank
(metrics, tracking and verdicts alike). A sibling is carried when

- it outranks the next section (it ranks before the next section's best chunk in the last stage), or
- it ranks within the first CARRY_DEPTH x final_k chunks of the last stage, where the list without
  collapsing, at the small change of final k tracking allows, would show it;

at most CARRY_DEPTH x final_k - 1 per section, so one section never shows more chunks than that list.
The second clause is what keeps the list level with `--no-collapse` on answer-text gold: with the first
alone, answer-text hit@10 fell below it (bench/README.md, "A final list that never hides the answer").
A sibling ranked below another section and deeper than that stays folded ("collapsed").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from rag.types import Chunk

# How deep in the last stage a section's siblings are carried, in final k's: 2, the final k that tracking
# calls a small change (rag/inspect/suggest.py K_FACTOR); chosen on the docs sets (bench/README.md).
CARRY_DEPTH = 2


def carry_depth(final_k: int) -> int:
    """How many chunks of the last stage a section's siblings are carried from, whatever outranks them."""
    return CARRY_DEPTH * final_k


def carry_limit(final_k: int) -> int:
    """The most siblings one section carries: one fewer than the list they could have filled (bench/collapse.py
    tries CARRY_DEPTH 0, where that list is the final k)."""
    return max(carry_depth(final_k), final_k) - 1


def fold_sections(ranked: Sequence[Chunk]) -> dict[str, str]:
    """{chunk id: the id of its section's best chunk} for every chunk of `ranked` (best first) but those best ones."""
    best: dict[tuple[str, tuple[str, ...]], str] = {}
    folded: dict[str, str] = {}
    for chunk in ranked:
        first = best.setdefault((chunk.source, chunk.heading_path), chunk.id)
        if first != chunk.id:
            folded[chunk.id] = first
    return folded


def carried_siblings(
    ranked: Sequence[Chunk], folded: Mapping[str, str], final_k: int, shown: Callable[[str], bool]
) -> frozenset[str]:
    """The folded chunks of `ranked` that their section carries (see the module docstring).

    Args:
        ranked: the chunks, best first, as `fold_sections` saw them (the last stage's full order).
        folded: what `fold_sections` returned.
        shown: whether a chunk id may be shown at all (not a repeat of another text, not below the
            minimum score); a section's best chunk that is not shown does not end the run before it.
    """
    depth, limit = carry_depth(final_k), carry_limit(final_k)
    carried: set[str] = set()
    count: dict[str, int] = {}
    running: str | None = None  # the best chunk of the section no shown section has outranked yet
    for rank, chunk in enumerate(ranked, 1):
        first = folded.get(chunk.id)
        if first is None:
            running = chunk.id if shown(chunk.id) else running
        elif (first == running or rank <= depth) and shown(chunk.id) and count.get(first, 0) < limit:
            carried.add(chunk.id)
            count[first] = count.get(first, 0) + 1
    return frozenset(carried)
