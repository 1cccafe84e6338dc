"""What a retrieval mode did, stage by stage, as data: the inspector, the CLI and Eval read the same values.

Every search a mode runs is a `RetrievalResult` from `rag.retrieval.retrieve.retrieve()`, kept whole, so each
hop / retry / tool call can be shown with its dense, sparse, fused and rerank lists like plain
retrieval, and a tracked chunk can be located in the search where it appeared or was lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rag.answer.result import Answer
from rag.retrieval.result import RetrievalResult


@dataclass(frozen=True)
class LlmCall:
    """One Messages API call a mode made: what for, how it ended, its tokens and latency."""

    purpose: str
    model: str
    stop_reason: str
    input_tokens: int
    output_tokens: int
    latency_ms: float

    def as_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class HydeStage:
    """The hypothetical passage, who wrote it, and the dense search run with it."""

    first_pass: RetrievalResult  # the question's own search
    passage: str
    pseudo_document: bool  # True offline: sentences quoted from the first pass, not a written answer
    written_by: str
    search: RetrievalResult | None  # None when no passage could be made (the question's own search stands)


@dataclass(frozen=True)
class Hop:
    """One hop of multi-hop retrieval: its query, its full retrieval, and what it hands to the next hop."""

    number: int
    query: str
    result: RetrievalResult
    carried: tuple[
        str, ...
    ] = ()  # offline: bridging terms taken from this hop's best chunk; Claude: the follow-up query
    from_chunk: str = ""  # the chunk id the carried terms came from
    sufficient: bool | None = None  # Claude's judgement of the context so far (None offline: not judged)
    judgement: str = ""  # Claude's stated reason, or why no next hop was run


@dataclass(frozen=True)
class Grade:
    """One final chunk's grade under the grader's basis; whether it is relevant is its attempt's call
    (`Attempt.is_relevant`), so a grade and the threshold it is read against cannot disagree."""

    chunk_id: str
    score: float


@dataclass(frozen=True)
class Attempt:
    """One corrective search: the action that produced it, its result and the grades of its final chunks."""

    action: str  # "first pass", "retry with PRF", "more candidates", "union fusion"
    result: RetrievalResult
    grades: tuple[Grade, ...]
    basis: str  # which score the grades are (dense cosine, a cross-encoder's score, Claude 0-3)
    threshold: float  # a grade at or above it is relevant
    note: str = ""  # e.g. why Claude's grades were not used

    @property
    def best(self) -> float | None:
        return max((g.score for g in self.grades), default=None)

    def is_relevant(self, grade: Grade) -> bool:
        return grade.score >= self.threshold


@dataclass(frozen=True)
class CorrectiveStage:
    attempts: tuple[Attempt, ...]
    action: str  # what was done in the end: "kept relevant chunks of <attempt>" or "abstained"


@dataclass(frozen=True)
class ToolCall:
    """One `search_docs` call the agent made (or tried to make), with the hits it got back."""

    call_id: str
    name: str
    arguments: Any  # as the model sent them
    query: str = ""
    result: RetrievalResult | None = None
    labels: tuple[str, ...] = ()  # the source labels (S1, S2, ...) its hits were shown under
    error: str = ""  # sent back to the model as an is_error tool_result


@dataclass(frozen=True)
class AgentStep:
    """One model turn of the tool loop: the text it wrote, the calls it made, its cost."""

    text: str
    calls: tuple[ToolCall, ...]
    llm: LlmCall


@dataclass(frozen=True)
class ModeResult:
    """A mode's final retrieval plus every extra stage it ran.

    Example:
        mr = run_mode(components, "Which plan includes SSO and how is it billed?", mode="multi_hop")
        for hop in mr.hops:
            print(hop.number, hop.query, [c.id for c in hop.result.final])
        print([c.id for c in mr.result.final])

    `result` is what answers and metrics use. `backend` is "offline" or "claude"; `notes` say what the
    mode could and could not honestly do with that backend.
    """

    mode: str
    question: str
    result: RetrievalResult
    backend: str = "offline"
    notes: tuple[str, ...] = ()
    hyde: HydeStage | None = None
    hops: tuple[Hop, ...] = ()
    corrective: CorrectiveStage | None = None
    agent: tuple[AgentStep, ...] = ()
    llm_calls: tuple[LlmCall, ...] = ()
    answer: Answer | None = None  # the agent's checked answer
    abstained: bool = False
    reason: str = ""  # why it abstained, or why a loop stopped early
    timings_ms: dict[str, float] = field(default_factory=dict, compare=False)

    def searches(self) -> list[tuple[str, RetrievalResult]]:
        """Every retrieval the mode ran, labelled ("hop 2", "retry: union fusion", "call 3"), in order."""
        out: list[tuple[str, RetrievalResult]] = []
        if self.hyde is not None:
            out.append(("question", self.hyde.first_pass))
            if self.hyde.search is not None:
                out.append(("hyde passage", self.hyde.search))
        out += [(f"hop {h.number}", h.result) for h in self.hops]
        if self.corrective is not None:
            out += [(a.action, a.result) for a in self.corrective.attempts]
        n = 0
        for step in self.agent:
            for call in step.calls:
                n += 1
                if call.result is not None:
                    out.append((f"call {n}", call.result))
        return out or [("question", self.result)]

    def where_found(self, chunk_id: str) -> list[str]:
        """The searches whose final top-k held `chunk_id` (for tracking a gold chunk through a mode)."""
        return [label for label, r in self.searches() if any(c.id == chunk_id for c in r.final)]

    def as_json(self) -> dict[str, Any]:
        """The CLI's --json shape: the final list, then every search as a stage with the mode's own data."""
        stages = []
        for label, r in self.searches():
            stage: dict[str, Any] = {
                "label": label,
                "query": r.question,
                "reranker": r.reranker,
                "expansion": list(r.expansion),
            }
            stage |= self.stage_info(label, r)
            stage["results"] = [c.as_row() for c in r.candidates]
            stages.append(stage)
        out: dict[str, Any] = {
            "mode": self.mode,
            "backend": self.backend,
            "notes": list(self.notes),
            "abstained": self.abstained,
            "reason": self.reason,
        }
        out |= {"llm_calls": [c.as_json() for c in self.llm_calls], "reranker": self.result.reranker}
        if self.answer is not None:
            out["answer"] = self.answer.as_json()
        if self.agent:
            out["turns"] = [
                {
                    "text": s.text,
                    "llm": s.llm.as_json(),
                    "calls": [
                        {
                            "id": c.call_id,
                            "name": c.name,
                            "arguments": c.arguments,
                            "labels": list(c.labels),
                            "error": c.error,
                        }
                        for c in s.calls
                    ],
                }
                for s in self.agent
            ]
        return out | {"results": [c.as_row() for c in self.result.candidates], "stages": stages}

    def summary_json(self) -> dict[str, Any]:
        """The mode's stages without every candidate's ranks (for `ragscope ask --json`): each search's final chunks."""
        stages = [
            {
                "label": label,
                "query": r.question,
                **self.stage_info(label, r),
                "final": [
                    {"id": c.id, "source": c.chunk.chunk.source, "heading": c.chunk.chunk.heading} for c in r.final
                ],
            }
            for label, r in self.searches()
        ]
        return {
            "mode": self.mode,
            "backend": self.backend,
            "notes": list(self.notes),
            "abstained": self.abstained,
            "reason": self.reason,
            "llm_calls": [c.as_json() for c in self.llm_calls],
            "stages": stages,
        }

    def stage_info(self, label: str, r: RetrievalResult) -> dict[str, Any]:
        """What a mode adds to one of its searches: the passage, the carried terms, the grades, the call."""
        if self.hyde is not None and label == "hyde passage":
            return {
                "passage": self.hyde.passage,
                "pseudo_document": self.hyde.pseudo_document,
                "written_by": self.hyde.written_by,
            }
        for hop in self.hops:
            if hop.result is r:
                return {
                    "hop": hop.number,
                    "carried": list(hop.carried),
                    "from_chunk": hop.from_chunk,
                    "sufficient": hop.sufficient,
                    "judgement": hop.judgement,
                }
        for attempt in self.corrective.attempts if self.corrective else ():
            if attempt.result is r:
                grades = [
                    {"chunk_id": g.chunk_id, "grade": g.score, "relevant": attempt.is_relevant(g)}
                    for g in attempt.grades
                ]
                return {
                    "action": attempt.action,
                    "basis": attempt.basis,
                    "threshold": attempt.threshold,
                    "grades": grades,
                    "note": attempt.note,
                }
        for step in self.agent:
            for call in step.calls:
                if call.result is r:
                    return {
                        "call_id": call.call_id,
                        "arguments": call.arguments,
                        "labels": list(call.labels),
                        "model_text": step.text,
                    }
        return {}

    @property
    def tokens(self) -> tuple[int, int]:
        """Input and output tokens over every call."""
        return sum(c.input_tokens for c in self.llm_calls), sum(c.output_tokens for c in self.llm_calls)
