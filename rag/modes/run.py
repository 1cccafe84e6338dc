"""`run_mode`: one entry point for every mode, so the inspector, Ask, Eval and the CLI run a mode the same way.

Every search a mode makes goes through `rag.retrieval.retrieve.retrieve()`, so each of its stages can be shown
and tracked like plain retrieval. With an Anthropic key (or a client passed in) the modes use Claude;
without one, each does what can honestly be done offline and says so in `ModeResult.notes`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from rag.components import Components
from rag.errors import ConfigError
from rag.modes.agent import SearchAgent
from rag.modes.corrective import run_corrective
from rag.modes.hyde import run_hyde
from rag.modes.llm import Claude
from rag.modes.multihop import run_multi_hop
from rag.modes.options import AGENT_OFFLINE, ModeOptions
from rag.modes.result import ModeResult
from rag.retrieval.question import check_question
from rag.retrieval.retrieve import retrieve
from rag.settings.config import MODES, RetrievalConfig, Settings
from rag.settings.extensions import MODES_TABLE, check_dispatch
from rag.types import ChunkFilter

if TYPE_CHECKING:
    import anthropic


class ModeUnavailable(ConfigError):
    """The mode cannot run with these settings (the agent without an Anthropic key)."""


def mode_unavailable(settings: Settings, mode: str, client: anthropic.Anthropic | None = None) -> str:
    """Why `mode` cannot run with these settings, or "" when it can (for pickers that grey a mode out)."""
    if mode not in MODES:
        return f"mode must be one of {', '.join(MODES)}; got {mode!r}"
    if mode == "agent" and client is None and not settings.anthropic_api_key:
        return AGENT_OFFLINE
    return ""


# mode -> its runner, over one signature; the names and descriptions are registered in
# rag/settings/extensions.py, and a mode registered there without a runner here fails at import.
_RUNNERS: dict[str, Callable[..., ModeResult]] = {
    "plain": lambda c, q, config, flt, _options, _claude: ModeResult("plain", q, retrieve(c, q, config, flt)),
    "hyde": lambda c, q, config, flt, _options, claude: run_hyde(c, q, config, flt, claude),
    "multi_hop": run_multi_hop,
    "corrective": run_corrective,
    "agent": lambda c, q, config, flt, options, claude: SearchAgent(c, config, flt, options, claude).run(q),
}
check_dispatch("modes", MODES_TABLE, _RUNNERS)


def run_mode(
    components: Components, question: str, mode: str | None = None, config: RetrievalConfig | None = None,
    flt: ChunkFilter | None = None, options: ModeOptions | None = None, client: anthropic.Anthropic | None = None,
) -> ModeResult:  # fmt: skip
    """Retrieve for `question` in one of the MODES.

    Args:
        components: store and encoders (their settings supply the key, answer model and budgets).
        question: the question as typed.
        mode: plain, hyde, multi_hop, corrective or agent; None means `config.mode`.
        config: retrieval settings for every search the mode makes; None means the configured ones.
        flt: source/tag restrictions for every search (the agent may narrow them, never widen).
        options: budgets and thresholds; None means the defaults.
        client: an `anthropic.Anthropic` to use (tests pass a mocked one); None builds one from
            ANTHROPIC_API_KEY when it is set, else the modes run offline.

    Returns:
        The ModeResult: `result` is the final retrieval, the mode's stages beside it.

    Raises:
        ModeUnavailable: an unknown mode, or the agent without Claude.
        QuestionError: the question is empty or too long (rag/retrieval/question.py).
        GenerationError: a Claude call the mode cannot do without failed (the agent keeps what it
            found instead; HyDE, multi-hop and corrective raise).
        RagError: retrieval failed.
    """
    config = config or components.settings.retrieval
    mode = mode or config.mode
    reason = mode_unavailable(components.settings, mode, client)
    if reason:
        raise ModeUnavailable(reason)
    # The mode travels in the config, so whatever records the result (ask log, eval run, links) names it.
    config = dataclasses.replace(config, mode=mode)
    flt = flt or ChunkFilter()
    options = options or ModeOptions()
    question = check_question(question)
    claude = None if mode == "plain" else Claude.from_settings(components.settings, client)
    mr = _RUNNERS[mode](components, question, config, flt, options, claude)
    # A corrective retry changes the settings of its own search (PRF, candidates, fusion); the final
    # result carries the settings asked for, so replaying it re-runs the mode, and each attempt keeps its own.
    return dataclasses.replace(mr, result=dataclasses.replace(mr.result, config=config))
