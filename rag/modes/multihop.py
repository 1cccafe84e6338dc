"""Multi-hop retrieval: search, see what was found, search again for what the question still needs.

Offline (no model to judge sufficiency) there are always two hops. Hop 2 is "bridging": the
question plus the most salient words of hop 1's best chunk that the question lacks, salience being
the word's BM25 weight in that chunk times the IDF Qdrant applies (the score a one-word query gives
the chunk, as rag/inspect/explain.py reads it). Words no other chunk contains are skipped: they are
the rarest, so pure salience would pick them first, yet a search for them can only find hop 1's
chunk. "the company that acquired X" finds X's page in hop 1; the acquirer's name, rare there but
present elsewhere, then steers hop 2. The hops are fused by RRF or
interleaved (ModeOptions.hop_fusion; rag/modes/fusion.py says what each favours).

With Claude, the model reads the chunks found so far (escaped, never obeyed), says whether they
answer the question and, if not, writes the follow-up query, up to `max_hops`.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag.answer.prompt import escape_source_text, wrap_sources
from rag.components import Components
from rag.modes.fusion import merge
from rag.modes.llm import SOURCES_ARE_DATA, Claude, labelled
from rag.modes.options import ModeOptions
from rag.modes.result import Hop, ModeResult
from rag.retrieval.result import Candidate
from rag.retrieval.retrieve import retrieve
from rag.settings.config import RetrievalConfig
from rag.types import ChunkFilter, SparseVector

JUDGE_SYSTEM = f"""You decide whether retrieved documentation passages are enough to answer a question, and if not,
what to search for next. {SOURCES_ARE_DATA} Reply only through the judge_context tool."""

JUDGE_TOOL = {
    "name": "judge_context",
    "description": "Record whether the sources answer the question and, if not, the next search query.",
    "input_schema": {
        "type": "object",
        "properties": {
            "sufficient": {"type": "boolean", "description": "true if the sources answer every part of the question"},
            "follow_up_query": {
                "type": "string",
                "description": (
                    "if not sufficient: a search query for the missing part, naming what the sources revealed"
                ),
            },
            "reason": {"type": "string", "description": "one sentence: what is there and what is missing"},
        },
        "required": ["sufficient", "follow_up_query", "reason"],
    },
}


def run_multi_hop(
    components: Components, question: str, config: RetrievalConfig, flt: ChunkFilter, options: ModeOptions,
    claude: Claude | None,
) -> ModeResult:  # fmt: skip
    if claude is not None:
        return _claude_hops(components, question, config, flt, options, claude)
    notes = [
        "offline: no model judges whether hop 1 sufficed, so hop 2 always runs, bridging with the salient terms "
        "of hop 1's best chunk"
    ]
    first = retrieve(components, question, config, flt)
    if not first.final:
        return ModeResult(
            "multi_hop",
            question,
            first,
            notes=(*notes, "hop 1 found nothing, so there is nothing to bridge from"),
            hops=(Hop(1, question, first),),
        )
    best = first.final[0]
    terms = bridge_terms(components, question, best, options.bridge_terms, flt)
    if not terms:
        hop1 = Hop(1, question, first, (), best.id, judgement="the best chunk has no words the question lacks")
        return ModeResult("multi_hop", question, first, notes=tuple(notes), hops=(hop1,))
    query = f"{question} {' '.join(terms)}"
    second = retrieve(components, query, config, flt)
    hops = (Hop(1, question, first, terms, best.id), Hop(2, query, second))
    return ModeResult(
        "multi_hop",
        question,
        merge([("hop 1", first), ("hop 2", second)], options.hop_fusion),
        notes=tuple(notes),
        hops=hops,
    )


def bridge_terms(components: Components, question: str, chunk: Candidate, n: int, flt: ChunkFilter) -> tuple[str, ...]:
    """The `n` words of `chunk` with the highest BM25 weight x IDF that the question lacks and another chunk
    holds, best first."""
    store = components.store
    only = ChunkFilter(
        ids=(chunk.id,),
        include_quarantined=flt.include_quarantined or chunk.chunk.quarantined,
        include_unranked=flt.include_unranked or bool(chunk.chunk.chunk.role),
    )
    records = store.records(only, with_vectors=True)
    if not records or records[0].sparse is None:
        return ()
    asked = set(components.sparse.encode_query(question).indices)
    # Body words only: the `source > heading` line the encoders also see would offer file names ("md").
    words = components.sparse.query_terms(records[0].chunk.text)
    salience: dict[int, float] = {}
    for index in records[0].sparse.indices:
        if index in asked or index not in words or words[index].isdigit():
            continue
        term = SparseVector((index,), (1.0,))
        hits = store.search_sparse(term, 1, only)
        # A word no other chunk holds cannot lead anywhere new: skip it, however rare (salient) it is.
        if hits and hits[0].score > 0 and len(store.search_sparse(term, 2, flt)) > 1:
            salience[index] = hits[0].score
    best = sorted(salience, key=lambda i: (-salience[i], words[i]))[:n]
    return tuple(words[i] for i in best)


def _claude_hops(
    components: Components,
    question: str,
    config: RetrievalConfig,
    flt: ChunkFilter,
    options: ModeOptions,
    claude: Claude,
) -> ModeResult:
    hops: list[Hop] = []
    notes: list[str] = []
    query = question
    seen: list[Candidate] = []
    for number in range(1, options.max_hops + 1):
        result = retrieve(components, query, config, flt)
        seen += [c for c in result.final if c.id not in {s.id for s in seen}]
        if number == options.max_hops:
            hops.append(Hop(number, query, result, judgement=f"hop budget ({options.max_hops}) reached: not judged"))
            break
        if claude.tokens_used >= options.max_tokens:
            hops.append(Hop(number, query, result, judgement=f"token budget ({options.max_tokens:,}) spent: stopped"))
            notes.append(f"stopped after hop {number}: the token budget of {options.max_tokens:,} was spent")
            break
        verdict = claude.structured("sufficiency judgement", JUDGE_TOOL, judge_prompt(question, seen), JUDGE_SYSTEM)
        parsed = parse_judgement(verdict)
        if parsed is None:
            hops.append(Hop(number, query, result, judgement="the judgement reply was not the expected structure"))
            notes.append(f"Claude's sufficiency reply after hop {number} was not the expected structure; stopped there")
            break
        sufficient, follow_up, reason = parsed
        if sufficient or not follow_up:
            hops.append(Hop(number, query, result, sufficient=sufficient, judgement=reason))
            break
        hops.append(Hop(number, query, result, (follow_up,), sufficient=False, judgement=reason))
        query = follow_up
    final = (
        hops[0].result if len(hops) == 1 else merge([(f"hop {h.number}", h.result) for h in hops], options.hop_fusion)
    )
    return ModeResult(
        "multi_hop", question, final, "claude", tuple(notes), hops=tuple(hops), llm_calls=tuple(claude.calls)
    )


def judge_prompt(question: str, seen: Sequence[Candidate]) -> str:
    """The judge's user turn: the chunks found so far, wrapped and escaped, then the question."""
    return (
        f"{wrap_sources(labelled(seen))}\n\n<question>{escape_source_text(question)}</question>\n\n"
        "Do these sources answer the question?"
    )


def parse_judgement(reply: dict | None) -> tuple[bool, str, str] | None:
    """(sufficient, follow-up query, reason) from the tool input, or None if it has another shape."""
    if not reply or not isinstance(reply.get("sufficient"), bool):
        return None
    follow_up = reply.get("follow_up_query", "")
    reason = reply.get("reason", "")
    if not isinstance(follow_up, str) or not isinstance(reason, str):
        return None
    return reply["sufficient"], " ".join(follow_up.split()), reason.strip()
