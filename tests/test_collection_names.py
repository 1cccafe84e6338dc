"""A collection name is one safe folder name, checked once (`rag.settings.config.validate_collection_name`)
wherever a name comes in: the environment, `--collection`, opening a store or a journal.

A name like `../../x` once put the collection's files outside the data dir.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag.cli import main
from rag.settings.config import Settings, validate_collection_name
from rag.errors import ConfigError
from rag.store.journal import Journal
from rag.store.client import ClientStore
from rag.store.edge import EdgeStore

BAD = ["../../x", "..", ".", "../docs", "a/b", "/tmp/abs", "a\\b", "", ".hidden", "x" * 65, "a\x00b", "a b", "naïve", "docs\n"]
GOOD = ["docs", "team-a", "beir_scifact", "v1.2", "-", "A" * 64]


@pytest.mark.parametrize("name", BAD)
def test_unsafe_names_are_refused_everywhere_a_name_comes_in(name, tmp_path: Path, monkeypatch):
    data = tmp_path / "deep" / "er" / "data"
    if name.strip() != name:  # settings from the environment are read trimmed, like every other variable
        assert Settings.from_env({"RAGSCOPE_DATA_DIR": str(data), "RAGSCOPE_COLLECTION": name}).collection == name.strip()
    elif name:  # an empty variable means "not set": the default name
        with pytest.raises(ConfigError, match="collection name"):
            Settings.from_env({"RAGSCOPE_DATA_DIR": str(data), "RAGSCOPE_COLLECTION": name})
    with pytest.raises(ConfigError):
        dataclasses.replace(Settings(data_dir=data), collection=name)
    with pytest.raises(ConfigError):
        EdgeStore(data / "qdrant", name)
    with pytest.raises(ConfigError):
        ClientStore.connect(":memory:", "", name)
    with pytest.raises(ConfigError):
        Journal.open(data / "journal", name)
    if name:  # an empty --collection means "not given"
        monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(data))
        (tmp_path / "guide.md").write_text("# Guide\n\nThe ferry leaves at seven.\n")
        result = CliRunner().invoke(main, ["ingest", str(tmp_path / "guide.md"), "--collection", name])
        assert result.exit_code == 1 and "Error: collection name" in result.output, result.output
    written = sorted(p for p in tmp_path.rglob("*") if p.is_file() and p != tmp_path / "guide.md")
    assert all(data in p.parents for p in written), written


@pytest.mark.parametrize("name", GOOD)
def test_ordinary_names_pass(name):
    assert validate_collection_name(name) == name
    assert Settings(collection=name).collection == name
