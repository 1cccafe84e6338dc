"""One question in, one checked Answer out: retrieve (in the config's mode), gate, generate, check.

`answer_question` is what Eval and the CLI call; `stream_answer` is the same path for the page, which
shows the text while it is written. Neither logs: the Ask page and `ragscope ask` record their asks
in the ask log, Eval keeps its own runs.

Retrieval is `rag.modes.run.run_mode` with `config.mode`: plain is one `retrieve()`; HyDE, multi-hop and
corrective hand their final list to the same gate and generator; corrective's abstention (no chunk
graded relevant) is the gate's; the agent writes its own answer, checked by the same `build_answer`.
"""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING, Iterator

from rag.answer.anthropic_gen import AnthropicGenerator
from rag.answer.build import build_answer
from rag.answer.checks import Gate, gate
from rag.answer.extractive import ExtractiveGenerator
from rag.answer.generator import Generator, relay
from rag.answer.prompt import NOT_IN_SOURCES
from rag.answer.result import Answer, Generation
from rag.components import Components
from rag.modes.result import ModeResult
from rag.modes.run import run_mode
from rag.retrieval.question import check_question
from rag.retrieval.result import RetrievalResult
from rag.settings.config import RetrievalConfig
from rag.types import ChunkFilter

if TYPE_CHECKING:  # the SDK is imported where a client is made: importing it costs seconds
    import anthropic


def default_generator(components: Components) -> Generator:
    """Claude when an Anthropic key is configured, else the offline extractive answerer."""
    settings = components.settings
    if settings.anthropic_api_key:
        return AnthropicGenerator(settings.answer, settings.anthropic_api_key.value)
    return ExtractiveGenerator(components.dense, settings.answer.min_sentence_score)


def answer_question(
    components: Components, question: str, config: RetrievalConfig | None = None, flt: ChunkFilter | None = None,
    generator: Generator | None = None, client: anthropic.Anthropic | None = None,
) -> Answer:  # fmt: skip
    """Answer `question` from the collection, with citations checked against what was sent.

    Args:
        components: store and encoders.
        question: the question as typed.
        config: retrieval settings, the mode included; None means the configured defaults.
        flt: source/tag restrictions for retrieval.
        generator: who writes the text; None means `default_generator(components)` (the agent
            mode writes its own).
        client: the Anthropic client for the mode's Claude steps; None means one from
            ANTHROPIC_API_KEY when set, else the mode runs offline (tests pass a mocked one).

    Returns:
        The Answer; `abstained` with a `reason` when too few chunks were relevant enough or the
        generator found no answer in them.

    Raises:
        QuestionError: the question is empty or too long.
        GenerationError: the generator failed (API error, timeout, answer cut off).
        RagError: retrieval failed (store, models, settings).
    """
    *_, answer = _answer(components, question, config, flt, generator, client, stream=False)
    return answer


def stream_answer(
    components: Components, question: str, config: RetrievalConfig | None = None, flt: ChunkFilter | None = None,
    generator: Generator | None = None, client: anthropic.Anthropic | None = None,
) -> Iterator[str | Answer]:  # fmt: skip
    """Like `answer_question`, but yields the text deltas as they are written, then the Answer.

    Example:
        for item in stream_answer(components, "How long do refunds take?"):
            if isinstance(item, Answer):
                answer = item
            else:
                print(item, end="")
    """
    return _answer(components, question, config, flt, generator, client, stream=True)


def _answer(
    components: Components, question: str, config: RetrievalConfig | None, flt: ChunkFilter | None,
    generator: Generator | None, client: anthropic.Anthropic | None, stream: bool,
) -> Iterator[str | Answer]:  # fmt: skip
    """The one answering path: retrieve in the configured mode, gate, generate (streamed or whole), check.

    Yields the text deltas when `stream` (the agent's checked text comes whole: its loop does not
    stream), then the Answer.
    """
    t0 = time.perf_counter()
    question = check_question(question)
    generator = generator or default_generator(components)
    mr = run_mode(components, question, config=config, flt=flt, client=client)
    if mr.answer is not None:  # the agent gated (only what it was shown) and wrote and checked its own answer
        if stream:
            yield mr.answer.text
        yield dataclasses.replace(mr.answer, mode_result=mr)
        return
    result = mr.result
    checked = gate(components, result, components.settings.answer)
    if mr.abstained:  # corrective retrieval graded nothing relevant: say why, send nothing
        checked = Gate((), checked.relevance, checked.basis, f"{mr.mode} retrieval abstained: {mr.reason}")
    if checked.abstain:
        yield _with(mr, _abstain_early(question, result, checked, generator, t0))
        return
    if stream:
        generation = yield from relay(generator.stream(question, checked.sources, result))
    else:
        generation = generator.generate(question, checked.sources, result)
    yield _with(mr, build_answer(question, result, checked, generator, generation, t0))


def _with(mr: ModeResult, answer: Answer) -> Answer:
    """The answer with the mode's stages attached (not for plain: there are none beside `retrieval`)."""
    return answer if mr.mode == "plain" else dataclasses.replace(answer, mode_result=mr)


def _abstain_early(question: str, result: RetrievalResult, checked: Gate, generator: Generator, t0: float) -> Answer:
    """The gate's abstention: no generator was called."""
    generation = Generation(NOT_IN_SOURCES, generator.model, abstain_reason=checked.reason)
    return build_answer(question, result, checked, generator, generation, t0)
