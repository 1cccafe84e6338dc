"""The Claude path: the real `anthropic` SDK against a mocked HTTP transport with recorded-shape responses.

anthropic 2.x sends through `httpx2`, so the mock is an `httpx2.MockTransport` handed to the SDK's
own client; everything above the socket (request building, SSE parsing, retries, error mapping) is
the SDK's real code.
"""

from __future__ import annotations

import dataclasses

import anthropic
import httpx2
import pytest
from anthropic_mock import MODEL, MockedMessages, api_error, message_json, sse

from rag.answer.anthropic_gen import AnthropicGenerator
from rag.answer.prompt import NOT_IN_SOURCES, SYSTEM_PROMPT
from rag.answer.result import Answer
from rag.ask.answerer import answer_question, default_generator, stream_answer
from rag.answer.result import Source, source_label
from rag.ingest.chunker import chunk_document
from rag.settings.config import AnswerConfig
from rag.errors import GenerationError
from rag.ingest.loaders.document import load_document
from rag.retrieval.result import Candidate
from rag.catalog.sample import sample_files
from rag.types import StoredChunk

REFUND_Q = "How long does a refund take to reach my card?"
def reply(text: str, stop_reason: str = "end_turn") -> MockedMessages:
    """An API that answers non-streamed requests with a message and streamed ones with SSE events."""

    def respond(body: dict) -> httpx2.Response:
        if body.get("stream"):
            words = [w + " " for w in text.split(" ")]
            words[-1] = words[-1].rstrip()
            return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=sse(words, stop_reason))
        return httpx2.Response(200, json=message_json(text, stop_reason))

    return MockedMessages(respond)


def error(status: int, kind: str, message: str) -> MockedMessages:
    return MockedMessages(lambda body: api_error(status, kind, message))


@pytest.fixture(scope="module")
def sources() -> list[Source]:
    """The Refunds and Plans sections of the sample billing page, as the gate would hand them over."""
    name, data = next(f for f in sample_files() if f[0] == "billing/plans.md")
    chunks = {c.heading: c for c in chunk_document(load_document(name, data))}
    picked = [chunks["Billing > Refunds"], chunks["Billing > Plans and prices"]]
    return [Source(source_label(i), Candidate(StoredChunk(c)), 0.6) for i, c in enumerate(picked, 1)]


def test_request_carries_rules_in_system_and_wrapped_sources_in_the_user_turn(sources):
    api = reply("Approved refunds reach your card within 5 to 10 business days [S1].")
    generation = api.generator().generate(REFUND_Q, sources)
    assert generation.text == "Approved refunds reach your card within 5 to 10 business days [S1]."
    assert generation.model == MODEL and generation.stop_reason == "end_turn"
    (body,) = api.requests
    assert api.headers[0]["authorization"] == "Bearer sk-ant-test"  # how anthropic 2.x sends the key
    assert body["model"] == MODEL and body["max_tokens"] == 1024
    assert body["system"] == SYSTEM_PROMPT
    for rule in ("Use only the sources", "square brackets", NOT_IN_SOURCES, "never instructions"):
        assert rule in body["system"]
    assert "Approved refunds" not in body["system"]
    (turn,) = body["messages"]
    content = turn["content"]
    assert turn["role"] == "user"
    assert content.startswith("<sources>\n") and content.count("</sources>") == 1
    assert '<source id="S1" from="billing/plans.md &gt; Billing &gt; Refunds">' in content
    assert '<source id="S2" from="billing/plans.md &gt; Billing &gt; Plans and prices">' in content
    assert "reach your card within 5 to 10 business days" in content
    assert "| Team | $8 | $80 |" in content
    assert content.index("</sources>") < content.index(f"<question>{REFUND_Q}</question>")


def test_stream_is_assembled_from_the_sse_events(sources):
    text = "Approved refunds reach your card within 5 to 10 business days [S1]. Yearly plans can be refunded within 14 days [S1]."
    api = reply(text)
    items = list(api.generator().stream(REFUND_Q, sources))
    *deltas, final = items
    assert len(deltas) > 5 and all(isinstance(d, str) for d in deltas)
    assert "".join(deltas) == text == final.text
    assert api.requests[0]["stream"] is True


def test_answer_through_the_pipeline_maps_citations_to_chunks(sample_components):
    api = reply("Approved refunds reach your card within 5 to 10 business days [S1]. Plans are billed per member [S9].")
    *deltas, answer = list(stream_answer(sample_components, REFUND_Q, generator=api.generator()))
    assert isinstance(answer, Answer) and answer.mode == "anthropic" and answer.model == MODEL
    assert "".join(deltas) == answer.text
    assert not answer.abstained
    (cite,) = answer.citations
    assert (cite.source, cite.heading, cite.label, cite.id) == ("billing/plans.md", "Billing > Refunds", "S1", answer.sources[0])
    chunk = answer.retrieval.get(cite.id).chunk.chunk
    assert (cite.start, cite.end) == (chunk.start, chunk.end)  # a model's citation covers the chunk it names
    assert answer.invented == ("S9",)
    # Exactly the chunks that passed the gate were sent, in rank order.
    content = api.requests[0]["messages"][0]["content"]
    for i, chunk_id in enumerate(answer.sources, 1):
        assert f'<source id="S{i}"' in content and answer.retrieval.get(chunk_id).chunk.chunk.text[:40].replace(">", "&gt;") in content
    assert f'<source id="S{len(answer.sources) + 1}"' not in content


def test_model_saying_not_in_sources_is_an_abstention(sample_components):
    answer = answer_question(sample_components, REFUND_Q, generator=reply(NOT_IN_SOURCES).generator())
    assert answer.abstained and answer.text == NOT_IN_SOURCES and answer.citations == ()
    assert "replied NOT_IN_SOURCES" in answer.reason


def test_refusal_mid_stream_becomes_an_abstention_without_the_partial_text(sources, sample_components):
    api = reply("I can't help with", stop_reason="refusal")
    final = list(api.generator().stream(REFUND_Q, sources))[-1]
    assert final.abstain_reason and "refusal" in final.abstain_reason
    answer = answer_question(sample_components, REFUND_Q, generator=reply("I can't help with", "refusal").generator())
    assert answer.abstained and answer.text == NOT_IN_SOURCES and "declined" in answer.reason


def test_max_tokens_is_an_error_that_names_the_setting(sources):
    with pytest.raises(GenerationError, match="RAGSCOPE_MAX_TOKENS"):
        reply("Approved refunds reach your card within", stop_reason="max_tokens").generator().generate(REFUND_Q, sources)
    with pytest.raises(GenerationError, match="cut off at 1024 tokens"):
        list(reply("Approved refunds reach", stop_reason="max_tokens").generator().stream(REFUND_Q, sources))


@pytest.mark.parametrize(
    ("api", "message"),
    [
        (error(529, "overloaded_error", "Overloaded"), "overloaded.*HTTP 529, overloaded_error: Overloaded"),
        (error(500, "api_error", "Internal server error"), "failed; try again.*HTTP 500"),
        (error(401, "authentication_error", "invalid x-api-key"), "check ANTHROPIC_API_KEY.*invalid x-api-key"),
        (error(404, "not_found_error", "model: claude-nope"), "model .claude-sonnet-4-6. was not found"),
        (error(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"), "rate limited"),
    ],
)
def test_error_statuses_become_clear_messages(sources, api, message):
    with pytest.raises(GenerationError, match=message):
        api.generator().generate(REFUND_Q, sources)
    with pytest.raises(GenerationError, match=message):
        list(api.generator().stream(REFUND_Q, sources))


def test_error_event_inside_the_stream_is_reported(sources):
    started = b"\n\n".join(sse(["Approved "]).split(b"\n\n")[:4]) + b"\n\n"  # start, block, ping, one delta
    body = started + b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n'
    api = MockedMessages(lambda _: httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body))
    with pytest.raises(GenerationError, match="overloaded"):
        list(api.generator().stream(REFUND_Q, sources))


def test_timeouts_and_connection_failures_become_clear_messages(sources):
    def timeout(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ReadTimeout("timed out", request=request)

    def refused(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    config = AnswerConfig(anthropic_model=MODEL, timeout_s=7.5)
    for handler, message in ((timeout, "within 7.5 s; try again or raise RAGSCOPE_LLM_TIMEOUT"), (refused, "could not reach the Anthropic API")):
        client = anthropic.Anthropic(api_key="k", max_retries=0, http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
        with pytest.raises(GenerationError, match=message):
            AnthropicGenerator(config, client=client).generate(REFUND_Q, sources)


def test_key_selects_claude_and_a_missing_key_is_explained(components):
    keyed = dataclasses.replace(components.settings, anthropic_api_key=dataclasses.replace(components.settings.anthropic_api_key, value="sk-ant-x"))
    generator = default_generator(dataclasses.replace(components, settings=keyed))
    assert isinstance(generator, AnthropicGenerator) and generator.model == keyed.answer.anthropic_model
    with pytest.raises(GenerationError, match="ANTHROPIC_API_KEY"):
        AnthropicGenerator(AnswerConfig())
