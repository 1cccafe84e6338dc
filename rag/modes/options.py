"""The knobs of the retrieval modes and their budgets, and what each mode does with or without Claude.

The mode itself is a retrieval setting (`RetrievalConfig.mode`); its budgets and thresholds stay
here with their defaults, so `run_mode()` works without any. `describe_mode` is what every picker
and stage header says about a mode, so the offline modes never claim more than they do.
"""

from __future__ import annotations

from dataclasses import dataclass

from rag.errors import ConfigError
from rag.modes.fusion import HOP_FUSIONS
from rag.settings.config import MODES
from rag.settings.extensions import MODES_TABLE

__all__ = ["AGENT_OFFLINE", "MODES", "ModeOptions", "describe_mode"]

AGENT_OFFLINE = (
    "the agent mode needs Claude (set ANTHROPIC_API_KEY): offline, nothing can read the results and decide what "
    "to search next; use multi_hop or corrective for what can be done without a model"
)


def describe_mode(mode: str, claude: bool) -> str:
    """What `mode` does with (`claude`) or without a model, honestly (its row in rag/settings/extensions.py):
    "HyDE (pseudo-document: extractive first pass)"."""
    row = next((m for m in MODES_TABLE if m.name == mode), None)
    if row is None:
        return mode
    return row.with_claude if claude else row.description


@dataclass(frozen=True)
class ModeOptions:
    """Budgets and thresholds for hyde, multi_hop, corrective and agent.

    grade_threshold: a final chunk whose reranker-side grade (the answer gate's relevance: dense
        cosine, or a cross-encoder's own score) is below it is "not relevant"; None means the answer
        gate's `min_rerank_score`, so corrective retrieval and the gate agree on what is relevant.
    claude_grade_threshold: the same on Claude's 0-3 scale (2 = "answers part of the question").
    hop_fusion: how multi-hop's hops and the agent's searches make one final list, "rrf" or
        "interleave" (rag/modes/fusion.py says what each favours). HyDE always uses RRF.
    """

    max_hops: int = 3
    bridge_terms: int = 5
    hop_fusion: str = "rrf"
    grade_threshold: float | None = None
    claude_grade_threshold: int = 2
    wider_candidates: int = 4  # the "more candidates" retry multiplies `candidates` by this
    max_tool_calls: int = 6
    max_tokens: int = 20_000  # over all of a mode's Claude calls, input + output

    def __post_init__(self) -> None:
        if self.max_hops < 1 or self.max_tool_calls < 1:
            raise ConfigError(
                f"max hops and max tool calls must be at least 1; got {self.max_hops} and {self.max_tool_calls}"
            )
        if self.hop_fusion not in HOP_FUSIONS:
            raise ConfigError(f"hop fusion must be one of {', '.join(HOP_FUSIONS)}; got {self.hop_fusion!r}")
        if self.bridge_terms < 1:
            raise ConfigError(f"bridging needs at least 1 term; got {self.bridge_terms}")
        if self.wider_candidates < 2:
            raise ConfigError(f"the wider retry must at least double the candidates; got x{self.wider_candidates}")
        if not 0 <= self.claude_grade_threshold <= 3:
            raise ConfigError(f"Claude grades are 0-3; got a threshold of {self.claude_grade_threshold}")
        if self.max_tokens < 1000:
            raise ConfigError(f"a token budget under 1,000 cannot fit one call; got {self.max_tokens}")
