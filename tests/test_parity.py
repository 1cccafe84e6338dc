"""Issue 40, item 3: a page's settings against what Ask and Eval run, said setting by setting; a replay link names
its ask."""

from __future__ import annotations

import pytest

from rag.errors import ConfigError
from rag.settings.collection_settings import COLLECTION, GIVEN, InForce
from rag.settings.config import RetrievalConfig
from rag.settings.links import parse_inspector_params
from rag.settings.parity import SAME, parity


def test_each_changed_setting_is_one_difference_with_both_values():
    p = parity(RetrievalConfig(fusion="rrf", final_k=2), RetrievalConfig())
    assert [(d.name, d.value, d.reference) for d in p.differences] == [("fusion", "rrf", "dbsf"), ("final_k", 2, 5)]
    assert p.words() == "differs from Ask and Eval in: fusion rrf (Ask: dbsf); final k 2 (Ask: 5)"
    assert parity(RetrievalConfig(), RetrievalConfig()).words() == SAME


def test_a_setting_that_does_nothing_under_both_is_no_difference():
    """RRF k under dbsf and PRF's numbers with PRF off change no ranking; under rrf the same k does."""
    assert parity(RetrievalConfig(rrf_k=30, prf_terms=3), RetrievalConfig()).same
    under_rrf = parity(RetrievalConfig(fusion="rrf", rrf_k=30), RetrievalConfig(fusion="rrf"))
    assert under_rrf.listed() == "rrf k 30 (Ask: 60)"
    assert parity(RetrievalConfig(min_score=0.3, prf=True), RetrievalConfig()).listed() == (
        "prf on (Ask: off); min score 0.3 (Ask: none)"
    )


def test_the_settings_a_question_ran_with_say_which_were_given():
    force = InForce(
        "docs", RetrievalConfig(fusion="rrf", min_score=0.2), {"fusion": COLLECTION, "min_score": COLLECTION}
    )
    ran = force.as_run(RetrievalConfig(fusion="rrf", final_k=2))  # min score None: dropped by the form
    assert ran.origins["fusion"] == COLLECTION and ran.origins["final_k"] == GIVEN and ran.origins["min_score"] == GIVEN
    assert ran.config.min_score is None


def test_a_replay_link_names_its_ask_and_a_bad_id_is_refused():
    assert parse_inspector_params({"q": ["x"], "ask": ["12"]}, RetrievalConfig()).ask == 12
    assert parse_inspector_params({"q": ["x"]}, RetrievalConfig()).ask is None
    with pytest.raises(ConfigError, match="link parameter ask: '1x'"):
        parse_inspector_params({"ask": ["1x"]}, RetrievalConfig())
