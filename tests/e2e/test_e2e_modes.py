"""Each retrieval mode end to end in a real browser, on the sample docs, offline (no Anthropic key).

The inspector runs multi_hop from a link, then corrective, HyDE and the agent picked in its sidebar
form (one page load); Ask answers in multi_hop mode, and its Eval tab runs the sample question set in
corrective mode (one more). Screenshots go to test-artifacts/modes-*.png for a person to look at.
What the stages must show is checked against the page itself (hop 2's query is hop 1's question plus
the words hop 1 says it carried; every grade of an abstaining corrective search is under its threshold).
"""

from __future__ import annotations

import re

import pytest
from harness import AppPage, downloading_context, start_sample_server


MULTI_HOP_QUESTION = "What happens if my card payment fails?"
OFF_TOPIC = "What is the capital of Peru?"  # nothing in the Tidepool help centre answers it


@pytest.fixture(scope="module")
def sample_server(tmp_path_factory: pytest.TempPathFactory, browser):  # noqa: ANN001, ANN201
    """One server for the file, with the sample docs loaded through the Documents page as a user does."""
    server = start_sample_server(browser, tmp_path_factory.mktemp("modes") / "data", "modes")
    yield server
    server.stop()


@pytest.fixture
def app(sample_server, browser):  # noqa: ANN001, ANN201
    context = downloading_context(browser)
    try:
        yield AppPage(context.new_page(), sample_server)
    finally:
        context.close()


def pick_mode(app: AppPage, scope, mode: str) -> None:  # noqa: ANN001 - a playwright Locator
    """Choose `mode` in the retrieval form inside `scope` (its options say "multi-hop (what it does)", "HyDE (...)")."""
    option = app.page.get_by_role("option", name=re.compile(rf"^{mode.replace('_', '-')} \(", re.IGNORECASE))
    app.choose(scope.get_by_role("combobox", name="Mode"), option)


def expander(scope, label: str):  # noqa: ANN001, ANN201 - playwright Locators
    """The (innermost) expander whose header starts with `label`."""
    return scope.get_by_test_id("stExpander").filter(has=scope.page.locator("summary", has_text=label)).last


def open_expander(scope, label: str):  # noqa: ANN001, ANN201
    """Open a closed stage expander (a click on its header; no rerun) and return it."""
    box = expander(scope, label)
    if not box.locator("details").first.evaluate("d => d.open"):
        box.locator("summary").first.click()
    return box


def text_of(locator) -> str:  # noqa: ANN001
    return " ".join(locator.inner_text().split())


def assert_clean(app: AppPage) -> None:
    assert app.problems() == [], app.problems()
    assert app.dialogs == []


def test_inspector_shows_each_modes_stages(app: AppPage):
    # multi_hop from a link: both hops, the words carried from hop 1's best chunk, and hop 2's query made of them.
    app.open(f"inspector?collection=sample&mode=multi_hop&q={MULTI_HOP_QUESTION.replace(' ', '+')}")
    main = app.page.get_by_test_id("stMain")
    stages = expander(main, "Mode stages: each search the multi_hop mode ran")
    stages.wait_for()
    app.settle()
    assert_clean(app)
    assert "Mode: multi-hop (2 hops: hop 2 adds salient terms of hop 1's best chunk)" in text_of(stages)
    assert "offline: no model judges whether hop 1 sufficed" in text_of(stages)
    hop1 = open_expander(stages, f"hop 1: {MULTI_HOP_QUESTION}")
    carried = re.search(r"Carried to the next hop from chunk [0-9a-f]{8}: ([^\n]+)", hop1.inner_text())
    assert carried, hop1.inner_text()
    words = carried.group(1).strip().split(", ")
    assert len(words) >= 2
    hop2 = open_expander(stages, f"hop 2: {MULTI_HOP_QUESTION} {' '.join(words)}")
    assert "Carried to the next hop" not in hop2.inner_text()  # the last hop carries nothing
    assert hop1.get_by_test_id("stDataFrame").count() == 1 and hop2.get_by_test_id("stDataFrame").count() == 1
    app.screenshot("modes-inspector-multihop")

    # corrective on a question the docs do not answer: every action is tried, each graded, then it abstains.
    sidebar = app.page.get_by_test_id("stSidebar")
    pick_mode(app, sidebar, "corrective")
    question = main.get_by_label("Question", exact=True)
    question.fill(OFF_TOPIC)
    question.press("Enter")
    stages = expander(main, "Mode stages: each search the corrective mode ran")
    stages.wait_for()
    app.settle()
    assert_clean(app)
    shown = text_of(stages)
    assert "Mode: corrective (graded by the answer gate's relevance" in shown
    abstained = re.search(
        r"Abstained: no chunk reached the (.+?) threshold of ([0-9.]+) after (\d) searches \(([^)]*)\)", shown
    )
    assert abstained, shown
    basis, threshold, actions = abstained.group(1), float(abstained.group(2)), abstained.group(4).split(", ")
    assert int(abstained.group(3)) == len(actions) >= 2 and actions[0] == "first pass"
    assert "Corrective action: abstained" in shown
    for action in actions:
        box = open_expander(stages, f"{action}: {OFF_TOPIC}")
        assert f"Action: {action} · grades by {basis}; relevant at or above {threshold:g}" in text_of(box)
    grades = app.dataframe_rows(expander(stages, f"first pass: {OFF_TOPIC}").get_by_test_id("stDataFrame").first)
    assert grades and {"chunk id", "source > heading", "grade", "relevant"} <= set(grades[0])
    assert all(float(g["grade"]) < threshold and g["relevant"].lower() == "false" for g in grades), grades
    app.screenshot("modes-inspector-corrective")

    # HyDE: the pseudo-document, quoted from the first pass, and the dense search it made.
    pick_mode(app, sidebar, "hyde")
    question.fill(MULTI_HOP_QUESTION)
    question.press("Enter")
    stages = expander(main, "Mode stages: each search the hyde mode ran")
    stages.wait_for()
    app.settle()
    assert_clean(app)
    assert "Mode: HyDE (pseudo-document: extractive first pass)" in text_of(stages)
    passage_box = open_expander(stages, "hyde passage: ")
    assert (
        "Pseudo-document (not written), by the offline extractive answerer (quoted from the first pass); searched dense only:"
        in text_of(passage_box)
    )
    # The run line above the stages claims no rerank the passage search did not have.
    assert re.search(
        r"HyDE mode \(reranker ran: rrf over 2 searches \(question, hyde passage; question reranked by \S+, hyde passage not reranked\)\)",
        text_of(main),
    )
    passage = passage_box.get_by_test_id("stText").first.inner_text().strip()
    assert len(passage.split()) >= 5
    # The passage is what the dense search ran on: it is that search's query, in the expander's header.
    assert f"hyde passage: {passage}" in " ".join(passage_box.locator("summary").first.inner_text().split())
    app.screenshot("modes-inspector-hyde")

    # The agent, offline: refused in the form with the reason, and nothing runs.
    pick_mode(app, sidebar, "agent")
    refusal = sidebar.get_by_test_id("stAlertContentError")
    refusal.wait_for()
    assert "Mode agent is unavailable: the agent mode needs Claude (set ANTHROPIC_API_KEY)" in text_of(refusal)
    # Said where the mode was picked, in view, not a screen further down below the whole form.
    assert refusal.evaluate("e => e.getBoundingClientRect().top < window.innerHeight"), refusal.bounding_box()
    assert main.get_by_text("Mode stages:").count() == 0
    assert app.page.get_by_test_id("stException").count() == 0
    app.screenshot("modes-inspector-agent-offline")


def test_ask_answers_in_a_mode_and_eval_runs_one(app: AppPage):
    app.open("ask?collection=sample")
    app.page.get_by_role("heading", name="Ask · Eval", exact=True).wait_for()
    ask_panel = app.page.get_by_role("tabpanel").filter(has=app.page.get_by_label("Question", exact=True))
    open_expander(ask_panel, "Retrieval settings")
    pick_mode(app, ask_panel, "multi_hop")
    app.page.get_by_label("Question", exact=True).fill(MULTI_HOP_QUESTION)
    app.page.get_by_role("button", name="Ask", exact=True).click()
    app.page.get_by_text("Answered by").wait_for()
    app.settle()
    assert_clean(app)
    answer = text_of(app.page.get_by_test_id("stHtml").first)
    assert re.search(r"S\d", answer) and "retry" in answer, answer  # cited, and from the failed-payments section
    assert "after multi_hop retrieval" in text_of(ask_panel)
    assert app.page.locator("details").filter(has_text="billing/invoices.md").count() >= 1  # the cited source's panel
    stages = open_expander(ask_panel, "How the multi_hop mode searched (the sources below are its final list)")
    assert "Mode: multi-hop" in text_of(stages)
    hop1 = open_expander(stages, f"hop 1: {MULTI_HOP_QUESTION}")
    assert "Carried to the next hop from chunk" in text_of(hop1)
    expander(stages, f"hop 2: {MULTI_HOP_QUESTION} ").wait_for()
    app.screenshot("modes-ask-multihop")

    # The Eval tab: the sample set run in corrective mode is stored, named and described with its mode.
    app.page.get_by_role("tab", name="Eval").click()
    app.settle()
    app.page.get_by_role("button", name="Load sample question set").click()
    app.settle()
    eval_panel = app.page.get_by_role("tabpanel").filter(has=app.page.get_by_role("button", name="Run eval"))
    open_expander(eval_panel, "Retrieval settings")
    pick_mode(app, eval_panel, "corrective")
    app.page.get_by_role("button", name="Run eval").click()
    app.page.get_by_text("stored: nDCG@10").wait_for(timeout=240_000)
    app.settle()
    assert_clean(app)
    shown = text_of(eval_panel)
    assert re.search(r"Run “[^”]*corrective mode[^”]*” stored: nDCG@10 \d\.\d{3}", shown), shown
    settings = re.search(r"Settings: ([^\n]*?) · collection sample · run id", shown)
    assert settings and "corrective mode" in settings.group(1), shown
    picked = eval_panel.get_by_role("combobox", name="Run", exact=True).input_value()
    assert "corrective mode" in picked, picked  # the new run is the one selected, named by its mode
    assert re.search(r"Last run: “[^”]*corrective mode[^”]*” on collection sample, today", shown), (
        shown
    )  # not a stale "never run"
    app.screenshot("modes-eval-corrective")
