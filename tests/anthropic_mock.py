"""The one mocked Anthropic Messages endpoint the tests share: the real `anthropic` SDK over `httpx2.MockTransport`.

anthropic 2.x sends through `httpx2`, so the mock sits at the transport: request building, SSE
parsing, retries and error mapping are the SDK's own code. Responses have the recorded shape of the
Messages API (a message object, or its event stream when the request asks to stream).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

import anthropic
import httpx2

from rag.answer.anthropic_gen import AnthropicGenerator
from rag.settings.config import AnswerConfig

MODEL = "claude-sonnet-4-6"  # not a deprecated id: the SDK warns about those
Reply = str | httpx2.Response | Exception


def message_json(text: str, stop_reason: str | None = "end_turn", model: str = MODEL) -> dict:
    """A non-streamed Messages API response holding one text block (none when `text` is empty)."""
    return content_json([{"type": "text", "text": text}] if text else [], stop_reason, model)


def content_json(content: list[dict], stop_reason: str | None = "end_turn", model: str = MODEL, usage: tuple[int, int] = (812, 31)) -> dict:
    """A non-streamed Messages API response with these content blocks (text, tool_use)."""
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }


def tool_use(name: str, arguments: object, call_id: str = "toolu_01A09q90qw90lq917835lq9") -> dict:
    """A tool_use block as the API returns it (`arguments` is sent as given, to test malformed input too)."""
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def blocks(*content: dict, stop_reason: str = "tool_use", usage: tuple[int, int] = (812, 31)) -> httpx2.Response:
    """A non-streamed response of content blocks, e.g. `blocks(text_block("Let me search."), tool_use(...))`."""
    return httpx2.Response(200, json=content_json(list(content), stop_reason, usage=usage))


def text_block(text: str) -> dict:
    return {"type": "text", "text": text}


def sse(deltas: list[str], stop_reason: str = "end_turn", model: str = MODEL) -> bytes:
    """The event sequence the Messages API streams: start, block, deltas, stop reason, stop."""
    events = [
        ("message_start", {"type": "message_start", "message": message_json("", None, model) | {"usage": {"input_tokens": 812, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("ping", {"type": "ping"}),
        *[("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": d}}) for d in deltas],
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None}, "usage": {"output_tokens": 31}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


def api_error(status: int, kind: str = "api_error", message: str = "boom") -> httpx2.Response:
    """An error response as the API sends it (the SDK maps it to its own exception)."""
    return httpx2.Response(status, json={"type": "error", "error": {"type": kind, "message": message}})


def text_response(body: dict, text: str, stop_reason: str = "end_turn") -> httpx2.Response:
    """`text` as the API would return it for this request: an event stream if it asked to stream."""
    if body.get("stream"):
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=sse([text], stop_reason, body["model"]))
    return httpx2.Response(200, json=message_json(text, stop_reason, body["model"]))


class MockedMessages:
    """A mocked `/v1/messages` that records each request body and answers through `respond(body)`.

    `respond` returns reply text (sent in the shape the request asked for), a ready `httpx2.Response`,
    or raises (e.g. `httpx2.ReadTimeout`) to fail the connection.
    """

    def __init__(self, respond: Callable[[dict], str | httpx2.Response]) -> None:
        self.requests: list[dict] = []
        self.headers: list[httpx2.Headers] = []
        self._respond = respond

    @classmethod
    def replying(cls, replies: Iterable[Reply]) -> MockedMessages:
        """Answers each request with the next of `replies` (text, a response, or an exception to raise)."""
        queue = list(replies)

        def respond(body: dict) -> str | httpx2.Response:
            reply = queue.pop(0)
            if isinstance(reply, Exception):
                raise reply
            return reply

        return cls(respond)

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        assert request.url.path == "/v1/messages"
        body = json.loads(request.content)
        self.requests.append(body)
        self.headers.append(request.headers)
        reply = self._respond(body)
        return text_response(body, reply) if isinstance(reply, str) else reply

    def http(self) -> httpx2.Client:
        """The HTTP client to hand an SDK client built elsewhere (e.g. from Settings, with its own key)."""
        return httpx2.Client(transport=httpx2.MockTransport(self))

    def client(self) -> anthropic.Anthropic:
        return anthropic.Anthropic(api_key="sk-ant-test", max_retries=0, http_client=self.http())

    def generator(self, config: AnswerConfig | None = None) -> AnthropicGenerator:
        return AnthropicGenerator(config or AnswerConfig(anthropic_model=MODEL), client=self.client())
