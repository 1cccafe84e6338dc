"""Answers written by Claude through the Anthropic Messages API (the `anthropic` SDK), streamed.

Every way the call can end badly becomes a GenerationError whose message says what happened and what
to do, except a refusal, which is an abstention: the model chose not to answer, like NOT_IN_SOURCES.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Sequence

from rag.answer.prompt import NOT_IN_SOURCES, SYSTEM_PROMPT, build_user_message
from rag.answer.result import Generation, Source
from rag.settings.config import AnswerConfig
from rag.errors import GenerationError
from rag.retrieval.retrieve import RetrievalResult

if TYPE_CHECKING:
    import anthropic

_FINISHED = ("end_turn", "stop_sequence")
# The SDK is imported where it is used: importing it costs seconds, and most commands never call Claude.


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
            raise GenerationError("no Anthropic API key: set ANTHROPIC_API_KEY, or leave it unset to use the offline extractive answerer")
        import anthropic

        self.config = config
        self.model = config.anthropic_model
        self._client = client or anthropic.Anthropic(api_key=api_key, timeout=config.timeout_s)

    def request(self, question: str, sources: Sequence[Source]) -> dict[str, Any]:
        """The Messages API parameters for one answer (also what tests inspect)."""
        return {
            "model": self.model,
            "max_tokens": self.config.max_tokens,
            "system": SYSTEM_PROMPT,
            "messages": [{"role": "user", "content": build_user_message(question, sources)}],
        }

    def generate(self, question: str, sources: Sequence[Source], retrieval: RetrievalResult | None = None) -> Generation:
        """One non-streamed call: for batch use (Eval, the CLI's --json)."""
        import anthropic

        try:
            message = self._client.messages.create(**self.request(question, sources))
        except anthropic.AnthropicError as e:
            raise self._error(e) from None
        return self._finish(message)

    def stream(self, question: str, sources: Sequence[Source], retrieval: RetrievalResult | None = None) -> Iterator[str | Generation]:
        """Text deltas as the model writes them, then the Generation."""
        import anthropic

        try:
            with self._client.messages.stream(**self.request(question, sources)) as stream:
                for text in stream.text_stream:
                    yield text
                message = stream.get_final_message()
        except anthropic.AnthropicError as e:
            raise self._error(e) from None
        yield self._finish(message)

    def _finish(self, message: Any) -> Generation:  # noqa: ANN401 - an SDK Message
        text = "".join(block.text for block in message.content if block.type == "text").strip()
        reason = message.stop_reason or "end_turn"
        model = message.model or self.model
        if reason == "refusal":
            return Generation(NOT_IN_SOURCES, model, reason, abstain_reason="Claude declined to answer this question (stop reason 'refusal')")
        if reason == "max_tokens":
            raise GenerationError(
                f"the answer was cut off at {self.config.max_tokens} tokens (stop reason 'max_tokens'): raise "
                "RAGSCOPE_MAX_TOKENS or ask a narrower question"
            )
        if reason == "model_context_window_exceeded":
            raise GenerationError("the sources and question do not fit in the model's context window: lower final k or the chunk size")
        if reason not in _FINISHED:
            raise GenerationError(f"Claude stopped before finishing the answer (stop reason {reason!r})")
        if not text:
            raise GenerationError("Claude returned an empty answer; try again")
        return Generation(text, model, reason)

    def _error(self, e: anthropic.AnthropicError) -> GenerationError:
        return api_error(e, self.config.timeout_s, self.model)


def api_error(e: anthropic.AnthropicError, timeout_s: float, model: str) -> GenerationError:
    """An SDK exception as a message for the person asking (answers and retrieval modes share it)."""
    import anthropic  # here, not at module level: `import rag.cli` must stay light

    if isinstance(e, anthropic.APITimeoutError):
        return GenerationError(f"no answer from the Anthropic API within {timeout_s:g} s; try again or raise RAGSCOPE_LLM_TIMEOUT")
    if isinstance(e, anthropic.APIConnectionError):
        return GenerationError(f"could not reach the Anthropic API ({e}); check the network, or unset ANTHROPIC_API_KEY to answer offline")
    if isinstance(e, anthropic.APIStatusError):
        detail = e.api_message or e.message
        status = f"HTTP {e.status_code}" + (f", {e.type}" if e.type else "")
        if e.type == "overloaded_error" or e.status_code == 529:
            hint = "Anthropic is overloaded; try again in a minute"
        elif e.status_code == 401:
            hint = "the API key was rejected; check ANTHROPIC_API_KEY"
        elif e.status_code == 403:
            hint = "the API key may not use this model; check RAGSCOPE_ANTHROPIC_MODEL and the key's permissions"
        elif e.status_code == 404:
            hint = f"model {model!r} was not found; check RAGSCOPE_ANTHROPIC_MODEL"
        elif e.status_code == 429:
            hint = "rate limited; wait a little and try again"
        elif e.status_code >= 500:
            hint = "the Anthropic API failed; try again"
        else:
            hint = "the Anthropic API refused the request"
        return GenerationError(f"{hint} ({status}: {detail})")
    return GenerationError(f"the Anthropic SDK failed: {e}")
