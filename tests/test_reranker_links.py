"""Links choose only among the configured models, and the app starts the model libraries offline."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from apptest_pages import open_page

from rag.settings.config import RetrievalConfig
from rag.errors import ConfigError
from rag.settings.links import parse_inspector_params

ROOT = Path(__file__).resolve().parent.parent
CONFIGURED = RetrievalConfig(reranker="cross-encoder:/models/reviewed-ce")


@pytest.mark.parametrize("reranker", ["none", "dense-cosine", "score-fusion:0.3", "sentence-maxsim:0.7", "maxsim-fusion", CONFIGURED.reranker])
def test_links_may_pick_the_built_ins_and_the_configured_reranker(reranker):
    assert parse_inspector_params({"reranker": [reranker]}, CONFIGURED).config.reranker == reranker


def test_links_naming_any_other_model_are_refused_without_filesystem_facts(tmp_path):
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    messages = {}
    for name in (f"cross-encoder:{model_dir}", "cross-encoder:/no/such/folder", "cross-encoder:/etc", "cross-encoder:org/any-hub-model"):
        with pytest.raises(ConfigError) as e:
            parse_inspector_params({"reranker": [name]}, CONFIGURED)
        messages[name] = str(e.value).replace(repr(name), "NAME")
    assert len(set(messages.values())) == 1  # the same words whether the folder exists or not
    message = next(iter(messages.values()))
    assert message.startswith("link parameter reranker: reranker NAME is not offered here; choose one of cross-encoder:/models/reviewed-ce, none")
    assert "exist" not in message and "directory" not in message
    with pytest.raises(ConfigError, match="sentence-maxsim weight must be between 0 and 1"):
        parse_inspector_params({"reranker": ["sentence-maxsim:nan"]}, CONFIGURED)


def test_the_inspector_refuses_a_link_reranker_and_the_form_a_typed_one(sample_store):
    at = open_page("pages/inspector.py", q="refunds", reranker="cross-encoder:/etc", k="3")
    assert not at.exception
    assert any("The link's settings were not applied: link parameter reranker: reranker 'cross-encoder:/etc' is not offered here" in e.value.replace("\\", "") for e in at.error)
    assert at.selectbox(key="inspector_reranker").value == RetrievalConfig().reranker  # nothing of the refused link was applied
    at.selectbox(key="inspector_reranker").set_value("other…").run()
    at.text_input(key="inspector_reranker_custom").input(f"cross-encoder:{ROOT}").run()
    assert any("is not offered here" in e.value for e in at.error)
    assert not any(d.key == "inspector_table" for d in at.dataframe)  # nothing was retrieved with it
    at.text_input(key="inspector_reranker_custom").input("sentence-maxsim:0.7").run()
    assert not at.error and at.dataframe(key="inspector_table").value is not None


def test_the_app_starts_the_model_libraries_offline():
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    code = "import ui.setup, huggingface_hub.constants as c, os; print(c.HF_HUB_OFFLINE, os.environ['TRANSFORMERS_OFFLINE'])"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env | {"PYTHONPATH": str(ROOT)}, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "1"]
