"""The one Anthropic Messages client: the SDK client built from settings, and every failed call as a GenerationError.

Answers (`rag.answer.anthropic_gen`), the retrieval modes (`rag.modes.llm`) and the faithfulness judge
(`rag.eval.judge`) all call Claude through `AnthropicClient`, so a rejected key, an overload or a timeout
reads the same, with the same remedy, whichever of them hit it. How a reply's stop reason is read stays
with its caller where the meaning differs: an answer's refusal is an abstention (see anthropic_gen), a
mode step's is an error (`refuse_if_cut`).

The SDK is imported where a client is made or called: importing it costs seconds, and most commands never
call Claude (`ragscope --help` must stay fast).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rag.errors import GenerationError
from rag.settings.config import Settings

if TYPE_CHECKING:
    import anthropic
    import httpx2
    from anthropic.lib.streaming import MessageStream


def sdk_client(api_key: str, timeout_s: float, http_client: httpx2.Client | None = None) -> anthropic.Anthropic:
    """An `anthropic.Anthropic` for this key and per-request timeout (tests hand an `http_client` whose
    transport is mocked; the SDK above it is the real one)."""
    import anthropic

    return anthropic.Anthropic(api_key=api_key, timeout=timeout_s, http_client=http_client)


class AnthropicClient:
    """An SDK client, the model it asks for, and the timeout its error messages name.

    Example:
        api = AnthropicClient.from_settings(settings)  # None without ANTHROPIC_API_KEY
        message = api.create(max_tokens=5, messages=[{"role": "user", "content": "Say YES"}])
        print(text_of(message))

    Args:
        client: the `anthropic.Anthropic` to call.
        model: the model every call asks for unless its parameters name another.
        timeout_s: the per-request timeout the client was built with (for the timeout message).
    """

    def __init__(self, client: anthropic.Anthropic, model: str, timeout_s: float) -> None:
        self.client = client
        self.model = model
        self.timeout_s = timeout_s

    @classmethod
    def from_settings(
        cls, settings: Settings, client: anthropic.Anthropic | None = None, http_client: httpx2.Client | None = None
    ) -> AnthropicClient | None:
        """The configured key, answer model and timeout, or None when there is no key and no client (offline).

        Args:
            settings: supply the key, `answer.anthropic_model` and `answer.timeout_s`.
            client: an SDK client to use instead of building one.
            http_client: the HTTP client for the SDK client built here.
        """
        if client is None:
            if not settings.anthropic_api_key:
                return None
            client = sdk_client(settings.anthropic_api_key.value, settings.answer.timeout_s, http_client)
        return cls(client, settings.answer.anthropic_model, settings.answer.timeout_s)

    def create(self, **params: Any) -> Any:  # noqa: ANN401 - an SDK Message
        """One non-streamed Messages call with these parameters (`model` defaults to this client's).

        Raises:
            GenerationError: the API failed, timed out or could not be reached (`api_error` says which).
        """
        import anthropic

        try:
            return self.client.messages.create(**{"model": self.model, **params})
        except anthropic.AnthropicError as e:
            raise api_error(e, self.timeout_s, self.model) from None

    @contextmanager
    def stream(self, **params: Any) -> Iterator[MessageStream]:  # noqa: ANN401 - Messages API parameters, passed through
        """A streamed Messages call: SDK errors while opening or reading the stream become GenerationErrors.

        Raises:
            GenerationError: as for `create`.
        """
        import anthropic

        try:
            with self.client.messages.stream(**{"model": self.model, **params}) as stream:
                yield stream
        except anthropic.AnthropicError as e:
            raise api_error(e, self.timeout_s, self.model) from None


def text_of(message: Any) -> str:  # noqa: ANN401 - an SDK Message
    """The reply's text blocks joined, stripped (tool_use blocks are left out)."""
    return "".join(block.text for block in message.content if block.type == "text").strip()


def refuse_if_cut(message: Any, purpose: str, max_tokens: int) -> None:  # noqa: ANN401
    """Raise when a step's reply ended in a way its text cannot be used (refusal, cut off)."""
    if message.stop_reason == "refusal":
        raise GenerationError(f"Claude declined the {purpose} step (stop reason 'refusal')")
    if message.stop_reason == "max_tokens":
        raise GenerationError(f"the {purpose} reply was cut off at {max_tokens} tokens; raise RAGSCOPE_MAX_TOKENS")


def api_error(e: anthropic.AnthropicError, timeout_s: float, model: str) -> GenerationError:
    """An SDK exception as a message for the person asking (answers, retrieval modes and the judge share it)."""
    import anthropic  # here, not at module level: `import rag.cli` must stay light

    if isinstance(e, anthropic.APITimeoutError):
        return GenerationError(
            f"no answer from the Anthropic API within {timeout_s:g} s; try again or raise RAGSCOPE_LLM_TIMEOUT"
        )
    if isinstance(e, anthropic.APIConnectionError):
        return GenerationError(
            f"could not reach the Anthropic API ({e}); check the network, or unset ANTHROPIC_API_KEY to answer offline"
        )
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
