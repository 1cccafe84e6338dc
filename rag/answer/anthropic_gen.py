"""Answers written by Claude through the Anthropic Messages API (the `anthropic` SDK), streamed.

Every way the call can end badly becomes a GenerationError whose message says what happened and what
to do, except a refusal, which is an abstention: the model chose not to answer, like NOT_IN_SOURCES.
The client and the API-error messages are the ones every Claude call shares (`rag.answer.anthropic_client`);
the stop reasons are read here, because what they mean is particular to an answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Sequence

from rag.answer.anthropic_client import AnthropicClient, sdk_client, text_of
from rag.answer.prompt import NOT_IN_SOURCES, SYSTEM_PROMPT, build_user_message
from rag.answer.result import Generation, Source
from rag.errors import GenerationError
from rag.retrieval.result import RetrievalResult
from rag.settings.config import AnswerConfig

if TYPE_CHECKING:
    import anthropic

_FINISHED = ("end_turn", "stop_sequence")
# The SDK is imported where a client is made (anthropic_client): importing it costs seconds.


class AnthropicGenerator:
    """Claude via the Messages API: rules in `system`, wrapped sources in the user turn.

    Example:
        gen = AnthropicGenerator(settings.answer, settings.anthropic_api_key.value)
        for item in gen.stream("How long do refunds take?", gate.sources):
            print(item if isinstance(item, str) else item.stop_reason)

    Args:
        config: model, max_tokens and timeout.
        api_key: the Anthropic key.
        client: an `anthropic.Anthropic` to use instead of building one (tests pass one whose HTTP
            transport is mocked; it is still the real SDK).
    """

    mode = "anthropic"

    def __init__(self, config: AnswerConfig, api_key: str = "", client: anthropic.Anthropic | None = None) -> None:
        if client is None and not api_key:
            raise GenerationError(
                "no Anthropic API key: set ANTHROPIC_API_KEY, or leave it unset to use the offline extractive answerer"
            )
        self.config = config
        self.model = config.anthropic_model
        self._api = AnthropicClient(client or sdk_client(api_key, config.timeout_s), self.model, config.timeout_s)

    def request(self, question: str, sources: Sequence[Source]) -> dict[str, Any]:
        """The Messages API parameters for one answer (also what tests inspect)."""
        return {
            "model": self.model,
            "max_tokens": self.config.max_tokens,
            "system": SYSTEM_PROMPT,
            "messages": [{"role": "user", "content": build_user_message(question, sources)}],
        }

    def generate(
        self, question: str, sources: Sequence[Source], retrieval: RetrievalResult | None = None
    ) -> Generation:
        """One non-streamed call: for batch use (Eval, the CLI's --json)."""
        return self._finish(self._api.create(**self.request(question, sources)))

    def stream(
        self, question: str, sources: Sequence[Source], retrieval: RetrievalResult | None = None
    ) -> Iterator[str | Generation]:
        """Text deltas as the model writes them, then the Generation."""
        with self._api.stream(**self.request(question, sources)) as stream:
            for text in stream.text_stream:
                yield text
            message = stream.get_final_message()
        yield self._finish(message)

    def _finish(self, message: Any) -> Generation:  # noqa: ANN401 - an SDK Message
        text = text_of(message)
        reason = message.stop_reason or "end_turn"
        model = message.model or self.model
        if reason == "refusal":
            return Generation(
                NOT_IN_SOURCES,
                model,
                reason,
                abstain_reason="Claude declined to answer this question (stop reason 'refusal')",
            )
        if reason == "max_tokens":
            raise GenerationError(
                f"the answer was cut off at {self.config.max_tokens} tokens (stop reason 'max_tokens'): raise "
                "RAGSCOPE_MAX_TOKENS or ask a narrower question"
            )
        if reason == "model_context_window_exceeded":
            raise GenerationError(
                "the sources and question do not fit in the model's context window: lower final k or the chunk size"
            )
        if reason not in _FINISHED:
            raise GenerationError(f"Claude stopped before finishing the answer (stop reason {reason!r})")
        if not text:
            raise GenerationError("Claude returned an empty answer; try again")
        return Generation(text, model, reason)
