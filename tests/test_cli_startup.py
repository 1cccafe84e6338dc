"""The CLI starts quickly: importing it loads no heavy library, and `docs` loads no model.

Checked in a fresh interpreter (this test process has long imported everything).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rag.components import build_components
from rag.ingest.pipeline import ingest_files

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("fastembed", "onnxruntime", "torch", "sentence_transformers", "qdrant_client", "qdrant_edge", "anthropic", "streamlit")


def _python(code: str) -> subprocess.CompletedProcess:
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)


def test_importing_the_cli_loads_no_heavy_library():
    done = _python(f"import json, sys, rag.cli; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


@pytest.fixture
def guide(settings):
    """One document stored, the store closed so the child process can open it."""
    components = build_components(settings)
    assert not ingest_files(components, [("guide.md", b"# Guide\n\nThe ferry leaves at seven.\n")]).errors
    components.close()


def _cli(*args: str) -> dict:
    """Run one command through CliRunner in a fresh interpreter: its exit code, output, and the heavy modules it imported."""
    code = (
        "import json, sys\n"
        "from click.testing import CliRunner\n"
        "from rag.cli import main\n"
        f"result = CliRunner().invoke(main, {list(args)!r})\n"
        "print(json.dumps({'code': result.exit_code, 'stdout': result.stdout, 'stderr': result.stderr,"
        f" 'loaded': [m for m in {HEAVY!r} if m in sys.modules]}}))"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["code"] == 0, out
    return out


def test_docs_on_an_existing_collection_loads_no_model(guide):
    out = _cli("docs", "--json")
    assert [d["source"] for d in json.loads(out["stdout"])] == ["guide.md"]
    assert out["loaded"] == ["qdrant_edge"]  # the embedded store only: no model, no client library
    assert "loading" not in out["stderr"]


def test_an_unchanged_reingest_loads_no_model(guide, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "guide.md").write_bytes(b"# Guide\n\nThe ferry leaves at seven.\n")  # the stored document, unchanged
    out = _cli("ingest", str(folder))
    assert out["stdout"].strip() == "1 documents, 0 chunks written, 1 unchanged, 0 errors"
    assert out["loaded"] == ["qdrant_edge"]
    assert "loading" not in out["stderr"]


def test_a_command_that_needs_the_models_says_so_on_stderr(guide):
    lines = _cli("search", "ferry", "--json")["stderr"].splitlines()
    assert "loading dense model all-MiniLM-L6-v2…" in lines and "loading sparse model Qdrant/bm25…" in lines
    assert not any("Loading weights" in line for line in lines)  # the model loader's own bar is silenced


def test_progress_without_a_terminal_prints_a_line_at_most_every_few_seconds(capsys, monkeypatch):
    from rag.cli.main import LineProgress, progress_bar

    monkeypatch.setattr("sys.stderr.isatty", lambda: False, raising=False)
    assert isinstance(progress_bar(3, "eval", unit="question"), LineProgress)
    with LineProgress(3, "eval", "question", every_s=3600) as bar:
        bar.update(1)
        bar.set_postfix_str("embedding 10/20")
        bar.update(2)
    assert capsys.readouterr().err.splitlines() == ["eval: 3/3 questions after 0 s (embedding 10/20)"]  # only the closing line within the hour
    with LineProgress(2, "ingest", "file", every_s=0) as bar:
        bar.update(1)
        bar.update(1)
    assert [line.split(" after")[0] for line in capsys.readouterr().err.splitlines()] == ["ingest: 1/2 files", "ingest: 2/2 files", "ingest: 2/2 files"]
