"""Shared fixtures: every test gets its own data dir, no network, fresh Streamlit caches.

The real default models are used (they load offline from PyPI packages); they are loaded once per
process by the encoders' own cache, so only the first test pays for it.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import shutil
import socket
import types
from collections.abc import Callable
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from rag.components import build_components  # noqa: E402
from rag.settings.config import Settings  # noqa: E402
from rag.encoders.base import DenseEncoder  # noqa: E402
from rag.encoders.factory import dense_encoder  # noqa: E402
from rag.ingest.pipeline import ingest_files  # noqa: E402
from rag.encoders.export import ONNX_DIR  # noqa: E402
from rag.catalog.sample import sample_files  # noqa: E402
from rag.store.base import copy_tree_sparse  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"

# What makes a test slow: a page run through AppTest, a child process, a browser, a whole installed manual
# read (tests/installed_manuals.py; the whole module is marked), or a real collection built with the real models: the test, a fixture it takes or a helper of its
# module it calls ingests, builds components or invokes the CLI. `pytest -m "not slow"` is the fast loop
# (README, Contributing); tests/test_fast_loop.py keeps the rule honest.
_SLOW_MODULE = re.compile(r"\bAppTest\b|apptest_pages|\bsubprocess\b|sys\.executable|multiprocessing|/usr/share/doc/|installed_manuals")
_BUILDS = re.compile(r"\bingest_files\(|\bbuild_components\(|\.invoke\(")


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the xdist_group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark `slow` every test of a slow module, every browser test and every test that builds a collection.

    A browser test module is one xdist group: its tests share the module's server and run in file order (a
    later one reads what an earlier one stored), so they must run on one worker, one after another.
    """
    slow_modules: dict[Path, bool] = {}
    for item in items:
        path = Path(str(item.path))
        if path not in slow_modules:
            slow_modules[path] = "e2e" in path.parts or bool(_SLOW_MODULE.search(path.read_text(encoding="utf-8")))
        if slow_modules[path] or _builds_a_collection(item):
            item.add_marker(pytest.mark.slow)
        if "e2e" in path.parts and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(f"e2e-{path.stem}"))


def _builds_a_collection(item: pytest.Item) -> bool:
    functions = [getattr(item, "function", None)]
    for defs in item._fixtureinfo.name2fixturedefs.values():  # noqa: SLF001 - pytest has no public way to list them
        functions += [d.func for d in defs]
    return any(_builds(f) for f in functions if f is not None)


@functools.cache
def _builds(function: Callable) -> bool:
    """Whether `function` ingests, builds components or invokes the CLI, itself or through its module's helpers."""
    source = _source(function)
    return bool(_BUILDS.search(source)) or any(
        re.search(rf"\b{re.escape(name)}\(", source) for name in _building_helpers(inspect.getmodule(function))
    )


@functools.cache
def _building_helpers(module: types.ModuleType | None) -> frozenset[str]:
    """The module's own functions that build a collection, directly or by calling one another."""
    if module is None:
        return frozenset()
    own = {
        name: _source(f)
        for name, f in vars(module).items()
        if isinstance(f, types.FunctionType) and f.__module__ == module.__name__
    }
    building = {name for name, source in own.items() if _BUILDS.search(source)}
    while more := {
        name
        for name, source in own.items()
        if name not in building and any(re.search(rf"\b{re.escape(b)}\(", source) for b in building)
    }:
        building |= more
    return frozenset(building)


def _source(function: Callable) -> str:
    try:
        return inspect.getsource(function)
    except (OSError, TypeError):  # a builtin or a function made at run time
        return ""


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One models folder for the session: the dense model is exported to ONNX once, into its `onnx`
    folder, by the first test (or child process) that needs it; every data dir links to that folder."""
    models = tmp_path_factory.mktemp("models")
    (models / ONNX_DIR).mkdir()
    return models


@pytest.fixture(scope="session")
def default_dense(models_dir: Path) -> DenseEncoder:
    """The default dense encoder (model and runtime), as the app builds it."""
    settings = Settings()
    return dense_encoder(settings.dense_model, settings.dense_runtime, models_dir)


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest, models_dir: Path):
    """Own data dir (its ONNX exports shared, see `models_dir`), no API key or server from the caller's
    environment, no outside network."""
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data" / "models").mkdir(parents=True)
    (tmp_path / "data" / "models" / ONNX_DIR).symlink_to(models_dir / ONNX_DIR, target_is_directory=True)
    for name in ("QDRANT_URL", "QDRANT_API_KEY", "ANTHROPIC_API_KEY", "RAGSCOPE_PASSWORD", "RAGSCOPE_COLLECTION"):
        if not (name == "QDRANT_URL" and request.node.get_closest_marker("integration")):
            monkeypatch.delenv(name, raising=False)
    real_connect = socket.socket.connect

    def guarded(sock: socket.socket, address):  # noqa: ANN001
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and host not in ("127.0.0.1", "localhost", "::1") and not host.startswith("/"):
            raise RuntimeError(f"test tried to reach {host}: tests stay offline")
        return real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    yield
    try:
        import streamlit as st

        st.cache_resource.clear()
        st.cache_data.clear()
    except Exception:  # noqa: BLE001 - streamlit absent in a minimal install
        pass


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data")


@pytest.fixture
def components(settings: Settings):
    comps = build_components(settings)
    yield comps
    comps.close()


@pytest.fixture(scope="session")
def _sample_data(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Path:
    """A data dir with the sample help centre ingested through `ingest_files` (real models, real store),
    once per session: each test that wants it gets its own copy (`_copy_sample`), so no test sees
    another's writes, and 50-odd tests do not each embed the same 19 chunks again."""
    data = tmp_path_factory.mktemp("sample") / "data"
    (data / "models").mkdir(parents=True)
    (data / "models" / ONNX_DIR).symlink_to(models_dir / ONNX_DIR, target_is_directory=True)
    comps = build_components(Settings(data_dir=data))
    try:
        summary = ingest_files(comps, sample_files())
        assert not summary.errors, summary.errors
    finally:
        comps.close()
    return data


def _copy_sample(template: Path, data_dir: Path) -> None:
    """The ingested sample's store, originals and journal into this test's own data dir (its models link stays)."""
    for item in template.iterdir():
        if item.name != "models":  # the shard's preallocated files copied as holes, as versions copy them
            (copy_tree_sparse if item.is_dir() else shutil.copy2)(item, data_dir / item.name)


@pytest.fixture
def sample_components(settings: Settings, _sample_data: Path):
    """Components with the sample help centre ingested (real models, real store), in this test's data dir."""
    _copy_sample(_sample_data, settings.data_dir)
    comps = build_components(settings)
    yield comps
    comps.close()


@pytest.fixture
def sample_store(settings: Settings, _sample_data: Path) -> Settings:
    """The sample help centre ingested, the store closed so a page's process-wide engine can open it."""
    _copy_sample(_sample_data, settings.data_dir)
    return settings
