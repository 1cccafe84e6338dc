"""The fast loop leaves out what is slow and keeps the rest: tests/conftest.py's rule, run by pytest itself on
a small test module beside a copy of that conftest (a child pytest, so this module is slow by the same rule)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).with_name("conftest.py")

EXAMPLES = '''
import pytest
from rag.components import build_components
from rag.ingest.pipeline import ingest_files


def _fill(settings):
    return ingest_files(build_components(settings), [])


def _via_fill(settings):
    return _fill(settings)


@pytest.fixture
def filled(settings):
    return _via_fill(settings)


def test_pure():
    assert 1 + 1 == 2


def test_reads_settings_only(settings):
    assert settings.data_dir


def test_ingests_itself(settings):
    ingest_files(build_components(settings), [])


def test_through_a_helper_of_a_helper(settings):
    _via_fill(settings)


def test_through_a_fixture(filled):
    assert filled is not None


def test_invokes_the_cli(runner):
    runner.invoke(None, [])
'''


def _fast(tmp_path: Path) -> set[str]:
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    (tmp_path / "test_examples.py").write_text(EXAMPLES, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "not slow", "-p", "no:xdist", "-p",
         "no:cacheprovider", "--rootdir", str(tmp_path), "test_examples.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert "deselected" in done.stdout, done.stdout + done.stderr
    return {line.split("::", 1)[1] for line in done.stdout.splitlines() if line.startswith("test_examples.py::")}


def test_the_fast_loop_leaves_out_every_test_that_builds_a_collection_and_keeps_the_others(tmp_path: Path) -> None:
    assert _fast(tmp_path) == {"test_pure", "test_reads_settings_only"}
