"""The retrieval mode is one shared setting: env, CLI options of every command, inspector links, labels, the form.

The form names what each mode does with the backend at hand; offline the agent is marked unavailable
and choosing it makes the form invalid with the reason.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from rag.settings.config import RetrievalConfig, Settings
from rag.errors import ConfigError
from rag.settings.labels import config_label
from rag.settings.links import inspector_params, parse_inspector_params


def test_mode_from_env_links_and_labels():
    settings = Settings.from_env({"RAGSCOPE_MODE": "multi_hop"}, secrets_path=None)
    assert settings.retrieval.mode == "multi_hop"
    params = inspector_params("why?", settings.retrieval)
    assert params["mode"] == "multi_hop"
    assert "mode" not in inspector_params("why?", RetrievalConfig())  # plain is the default: links stay short
    assert parse_inspector_params({k: [v] for k, v in params.items()}, RetrievalConfig()).config.mode == "multi_hop"
    # A link back to plain on a deployment whose default is a mode says so explicitly.
    assert inspector_params("why?", RetrievalConfig(), base=settings.retrieval)["mode"] == "plain"
    with pytest.raises(ConfigError, match="link parameter mode must be one of plain, hyde, multi_hop, corrective, agent; got 'psychic'"):
        parse_inspector_params({"mode": ["psychic"]}, RetrievalConfig())
    assert config_label(RetrievalConfig(mode="hyde")).endswith(" · HyDE mode")
    assert "mode" not in config_label(RetrievalConfig())


def test_every_retrieval_command_takes_mode():
    from click.testing import CliRunner

    from rag.cli import main

    for command in ("search", "ask", "eval"):
        out = CliRunner().invoke(main, [command, "--help"])
        assert "--mode [plain|hyde|multi_hop|corrective|agent]" in out.stdout, command


def _form_script(claude: bool) -> None:
    import streamlit as st

    from rag.settings.config import RetrievalConfig
    from ui import forms

    st.session_state["t_config"] = forms.retrieval_form("t", RetrievalConfig(), claude=claude)


def test_form_offline_names_what_each_mode_does_and_refuses_the_agent():
    at = AppTest.from_function(_form_script, args=(False,), default_timeout=30).run()
    picker = at.selectbox(key="t_mode")
    assert picker.options[1] == "HyDE (pseudo-document: extractive first pass)"
    assert picker.options[4] == "agent (unavailable: needs ANTHROPIC_API_KEY)"
    picker.set_value("multi_hop").run()
    assert at.session_state["t_config"] == RetrievalConfig(mode="multi_hop")
    assert any("Offline: multi-hop (2 hops: hop 2 adds salient terms" in c.value for c in at.caption)
    at.selectbox(key="t_mode").set_value("agent").run()
    assert at.session_state["t_config"] is None
    assert "Mode agent is unavailable: the agent mode needs Claude (set ANTHROPIC_API_KEY)" in at.error[0].value


def test_form_with_claude_offers_the_agent():
    at = AppTest.from_function(_form_script, args=(True,), default_timeout=30).run()
    at.selectbox(key="t_mode").set_value("agent").run()
    assert not at.error and at.session_state["t_config"] == RetrievalConfig(mode="agent")
    assert at.selectbox(key="t_mode").options[1] == "HyDE (Claude writes the hypothetical passage)"
