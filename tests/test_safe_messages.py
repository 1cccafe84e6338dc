"""No value a person, a link, an upload or an engine error supplies becomes Markdown in a message (issue 28).

Every message is rendered here by a CommonMark renderer (markdown-it-py): what it makes of the text is
what Streamlit's Markdown would make of it, so an <img> or <a> in its output is an image the browser
would fetch or a link the app would seem to offer. tests/e2e/test_no_markdown_from_links.py checks the
same in a real browser, requests included.
"""

from __future__ import annotations

import html
import re

import pytest
from apptest_pages import APP, open_page
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from rag.text.markdown import WORD_JOINER

IMAGE = "![px](http://evil.example/c.png)"
PHISH = "[Session expired: sign in again](http://evil.example/phish)"
RAW = '<img src="http://evil.example/h.png"> <a href="http://evil.example/a">here</a>'
ODD = r"\*not bold\* _x_ `tick` #1 + - . ! | ~ {b} $x$ :red[loud] <http://evil.example/auto>"
BARE = "sign in at http://evil.example/in or www.evil.example, or mail admin@evil.example"
VALUES = (IMAGE, PHISH, RAW, ODD, BARE)
KINDS = ("error", "warning", "info", "success", "caption", "markdown", "toast")
_MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])
_TAG = re.compile(r"<[^>]+>")
# What GitHub-flavoured Markdown (remark-gfm, in Streamlit) links in text once escapes are read, which
# CommonMark alone leaves as text: a URL or "www." after a start, space or punctuation; "@" before a host.
_AUTOLINK = re.compile(r"(?:^|(?<=[\s!-/:-@\[-`{-~]))(?:https?://|www\.)|@[-\w]", re.IGNORECASE)


def rendered(markdown: str) -> str:
    return _MD.render(markdown)


def shown(markdown: str) -> str:
    """The text a reader sees: the rendered HTML without its tags, entities decoded, and without the invisible
    word joiners that keep a bare URL or address from becoming a link (see ui.render.md_escape)."""
    return html.unescape(_TAG.sub("", rendered(markdown))).replace(WORD_JOINER, "").strip()


def assert_inert(markdown: str) -> None:
    out = rendered(markdown)
    assert not re.search(r"<(img|a|script)\b", out), (markdown, out)
    assert not _AUTOLINK.search(html.unescape(_TAG.sub("", out))), (markdown, out)


def _say_everything(values: tuple[str, ...], kinds: tuple[str, ...]) -> None:
    from ui.safe import say

    for kind in kinds:
        for value in values:
            say(kind, "**Note**: {value} ends here", value=value)


def test_say_keeps_the_template_markup_and_shows_every_value_as_typed():
    at = AppTest.from_function(_say_everything, args=(VALUES, KINDS)).run()
    assert not at.exception
    messages = {kind: [m.value for m in getattr(at, kind)] for kind in KINDS}
    for kind, values in messages.items():
        assert len(values) == len(VALUES), kind
        for value, typed in zip(values, VALUES, strict=True):
            assert_inert(value)
            assert rendered(value).startswith("<p><strong>Note</strong>: "), (kind, rendered(value))
            assert shown(value) == f"Note: {typed} ends here", kind


def _errors(at: AppTest) -> list[str]:
    assert not at.exception, [x.value for x in at.exception]
    return [e.value for e in at.error]


@pytest.mark.parametrize(
    ("page", "param", "value", "says"),
    [
        ("pages/inspector.py", "k", IMAGE, "link parameter k"),
        ("pages/inspector.py", "reranker", PHISH, "link parameter reranker"),
        ("pages/inspector.py", "fusion", RAW, "link parameter fusion"),
        ("app.py", "collection", PHISH, "Collection not opened"),
        ("app.py", "collection", IMAGE, "Collection not opened"),
    ],
)
def test_a_link_value_shows_in_the_error_as_typed(page: str, param: str, value: str, says: str):
    """The collection is applied by every page's setup, in the link's first run (app.py and its default page)."""
    if page == "app.py":
        at = AppTest.from_file(APP, default_timeout=60)
        at.query_params[param] = value
        at.run()
    else:
        at = open_page(page, **{param: value})
    errors = _errors(at)
    named = [e for e in errors if says in shown(e)]
    assert named, [shown(e) for e in errors]
    for e in errors:
        assert_inert(e)
    assert value in shown(named[0])  # the person sees what the link said, not a picture or a link


def test_an_uploaded_set_with_an_unknown_key_is_named_as_typed():
    at = open_page("pages/ask.py", timeout=120)
    line = '{"question": "How long?", "gold": "5 days", "%s": 1}\n' % IMAGE.replace('"', '\\"')
    at.file_uploader(key="eval_upload").upload("keys.jsonl", line.encode(), "application/jsonl")
    errors = _errors(at.run())
    assert len(errors) == 1 and "unknown" in shown(errors[0]), [shown(e) for e in errors]
    assert_inert(errors[0])
    assert IMAGE in shown(errors[0])


def test_a_stored_set_that_no_longer_parses_is_named_as_typed(settings):
    sets = settings.data_dir / "eval_sets"
    sets.mkdir(parents=True)
    (sets / "old.jsonl").write_text('{"question": "q", "gold": "x", "%s": 1}\n' % PHISH, encoding="utf-8")
    errors = _errors(open_page("pages/ask.py", timeout=120, tab="Eval"))
    assert errors and all("<a" not in rendered(e) for e in errors)
    assert any(PHISH in shown(e) for e in errors), [shown(e) for e in errors]
