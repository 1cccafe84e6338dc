"""Every benchmark parses its own command line: a bench that crashes before measuring is found here,
not an hour into a run (a merge once declared --fastapi-docs twice in bench/quality.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.mark.parametrize("script", sorted(p.name for p in BENCH.glob("*.py")))
def test_bench_prints_its_usage(script: str) -> None:
    done = subprocess.run([sys.executable, str(BENCH / script), "--help"], capture_output=True, text=True, timeout=120, cwd=BENCH)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout
