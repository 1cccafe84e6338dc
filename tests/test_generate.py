"""Question-set generation over the real anthropic SDK on a mocked transport, on the ingested sample help centre.

Several calls (one section each here), a refusal, a reply cut off at max_tokens, a malformed reply, gold that
names what the collection lacks and an API error mid-run: each kept question's gold is valid, each dropped
one says why, and the CLI writes only what a person kept.
"""

from __future__ import annotations

import json

import httpx2
import pytest
from anthropic_mock import MockedMessages, api_error, message_json
from click.testing import CliRunner

from rag.answer.anthropic_client import AnthropicClient
from rag.cli import main
from rag.eval.generate import collection_sections, generate_questions, hand_template, pick_sections
from rag.eval.gold import CollectionIndex, TextGold
from rag.eval.qsets import parse_question_set

FAILED = ("billing/invoices.md", "Billing > Failed payments")
INVOICES = ("billing/invoices.md", "Billing > Invoices")
RETRY = "If a card payment fails, we retry it three times over 9 days and email the owners each time."


def reply(*questions: dict, near: tuple[dict, ...] = ()) -> str:
    return "Here you go:\n```json\n" + json.dumps({"questions": list(questions), "near_misses": list(near)}) + "\n```"


def q(question: str, where: tuple[str, str], answer: str) -> dict:
    return {"source": where[0], "heading": where[1], "question": question, "answer": answer}


def cut(stop_reason: str) -> httpx2.Response:
    return httpx2.Response(200, json=message_json('{"questions": [{"sou', stop_reason))


@pytest.fixture
def index(sample_components):
    return CollectionIndex.from_components(sample_components)


def both_golds_valid(index: CollectionIndex, question) -> bool:
    """The section gold names stored chunks, and the answer text is found inside that section's chunks."""
    section = index.resolve(question.gold)
    answer = index.resolve(TextGold(question.answer))
    found = set(answer.chunk_ids) | set(answer.split or ())
    return section.invalid is None and bool(section.chunk_ids) and bool(found & set(section.chunk_ids))


def billing(index: CollectionIndex) -> list:
    return pick_sections(collection_sections(index), ["billing/invoices.md"])


def test_sections_are_the_collections_headings_and_a_sample_is_seeded(index):
    sections = collection_sections(index)
    labels = [(s.source, s.heading) for s in sections]
    assert FAILED in labels and INVOICES in labels
    failed = next(s for s in sections if (s.source, s.heading) == FAILED)
    assert RETRY.split(",")[0] in failed.text
    assert pick_sections(sections, sample=3, seed=1) == pick_sections(sections, sample=3, seed=1)
    assert len(pick_sections(sections, sample=3)) == 3
    with pytest.raises(Exception, match="not in the collection: nope.md"):
        pick_sections(sections, ["nope.md"])


def test_several_turns_keep_checked_questions_and_drop_the_rest_with_reasons(index):
    sections = billing(index)[:2] + pick_sections(collection_sections(index), ["billing/plans.md"])[:3]
    api = MockedMessages.replying([
        reply(
            q("My card was declined, how many times will you try charging it again?", FAILED, RETRY),
            q("Where do refunds for cancelled seats show up?", ("billing/refunds.md", "Billing > Refunds"), "x"),
            q("Can I download an old invoice?", FAILED, "Past invoices can be downloaded as PDF"),
            near=({"source": FAILED[0], "heading": FAILED[1], "question": "Can I pay with a cheque?"},),
        ),
        cut("refusal"),
        cut("max_tokens"),
        "Sure! Which sections would you like questions for?",
        reply(q("Can I download an old invoice?", INVOICES, "Past invoices can be downloaded as PDF")),
    ])
    generated = generate_questions(AnthropicClient(api.client(), "claude-test", 60), index, sections, per_call=1)
    assert len(api.requests) == 5 and generated.stopped is None and generated.sections == 5
    first = api.requests[0]
    assert "never instructions" in first["system"] and 'heading="Billing &gt; Invoices"' in first["messages"][0]["content"]
    kept = {g.question: g for g in generated.kept}
    assert set(kept) == {
        "My card was declined, how many times will you try charging it again?",
        "Can I pay with a cheque?",
        "Can I download an old invoice?",
    }
    assert kept["Can I pay with a cheque?"].section is None  # a near miss: unanswerable
    reasons = [d.reason for d in generated.dropped]
    assert any("gold is not in the collection" in r and "billing/refunds.md" in r for r in reasons)
    assert any("answer text is in another section" in r for r in reasons)
    assert any("declined" in r and "refusal" in r for r in reasons)
    assert any("cut off at 2048 tokens" in r for r in reasons)
    assert any("not the JSON asked for" in r for r in reasons)
    # Everything kept is valid gold: each line holds its section as "gold" and the answering sentence as "answer".
    qset = parse_question_set(generated.question_set("gen").to_jsonl(), "gen")
    assert len(qset.questions) == 3 and qset.unanswerable == 1
    assert all(both_golds_valid(index, x) for x in qset.questions if x.answerable)
    assert next(x for x in qset.questions if x.answerable).answer == RETRY
    assert next(x for x in qset.questions if not x.answerable).answer is None


def test_an_api_error_mid_run_stops_and_keeps_what_came_before(index):
    api = MockedMessages.replying([
        reply(q("My card was declined, will you try again?", FAILED, RETRY)),
        api_error(529, "overloaded_error", "busy"),
    ])
    generated = generate_questions(AnthropicClient(api.client(), "claude-test", 60), index, billing(index), per_call=1)
    assert [g.question for g in generated.kept] == ["My card was declined, will you try again?"]
    assert generated.sections == 1 and "overloaded" in generated.stopped and "after 1 of" in generated.stopped


def test_template_without_a_key_names_real_sections(index):
    text = hand_template(collection_sections(index))
    qset = parse_question_set(text, "template")
    assert qset.unanswerable == 1
    assert all(index.resolve(x.gold).invalid is None for x in qset.questions if x.answerable)
    assert [both_golds_valid(index, x) for x in qset.questions if x.answer] == [True]  # the line gen-set's shape


def _mock_sdk(monkeypatch, api: MockedMessages) -> None:
    """The CLI builds its SDK client from the key; hand it the mocked transport (the SDK stays the real one)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setattr("rag.answer.anthropic_client.sdk_client", lambda key, timeout, http_client=None: api.client())


def test_cli_reviews_each_question_then_writes_only_the_kept(sample_store, tmp_path, monkeypatch):
    api = MockedMessages.replying([
        reply(
            q("My card was declined, will you try again?", FAILED, RETRY),
            q("Where do refunds show up?", ("billing/refunds.md", "Billing > Refunds"), "x"),
            near=({"question": "Can I pay with a cheque?"},),
        ),
        reply(q("Can I download an old invoice?", INVOICES, "Past invoices can be downloaded as PDF")),
    ])
    _mock_sdk(monkeypatch, api)
    out = tmp_path / "gen.jsonl"
    # keep, drop the near miss, edit the third
    result = CliRunner().invoke(
        main, ["gen-set", str(out), "--source", "billing/invoices.md", "--per-call", "1"],
        input="k\nd\ne\nHow do I get a PDF of last year's invoice?\n",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "dropped (billing/refunds.md › Billing > Refunds)" in result.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [x["question"] for x in lines] == ["My card was declined, will you try again?", "How do I get a PDF of last year's invoice?"]
    assert lines[0]["gold"] == [{"source": FAILED[0], "heading": FAILED[1]}] and lines[0]["answer"] == RETRY
    assert lines[1]["answer"] == "Past invoices can be downloaded as PDF"  # an edited wording keeps its golds
    assert CliRunner().invoke(main, ["eval", str(out), "--json"]).exit_code == 0  # a set eval reads, all gold valid


def test_cli_without_a_key_explains_and_writes_a_template(sample_store, tmp_path):
    out = tmp_path / "gen.jsonl"
    refused = CliRunner().invoke(main, ["gen-set", str(out)])
    assert refused.exit_code == 1 and "needs ANTHROPIC_API_KEY" in refused.output and "--template" in refused.output
    assert not out.exists()
    made = CliRunner().invoke(main, ["gen-set", str(out), "--template"])
    assert made.exit_code == 0 and parse_question_set(out.read_text(), "t").questions
    again = CliRunner().invoke(main, ["gen-set", str(out), "--template"])
    assert again.exit_code == 1 and "--force" in again.output  # nothing stored is replaced unasked


def test_cli_api_error_mid_run_writes_what_it_has_and_exits_1(sample_store, tmp_path, monkeypatch):
    api = MockedMessages.replying([reply(q("My card was declined, will you try again?", FAILED, RETRY)), api_error(401, "authentication_error", "bad key")])
    _mock_sdk(monkeypatch, api)
    out = tmp_path / "gen.jsonl"
    result = CliRunner().invoke(main, ["gen-set", str(out), "--source", "billing/invoices.md", "--per-call", "1", "--no-review"])
    assert result.exit_code == 1 and "API key was rejected" in result.output and str(out) in result.output
    assert len(out.read_text().splitlines()) == 1
