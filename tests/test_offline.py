"""Offline means offline: a first-time user's whole flow, and the app's start, reach no non-local host.

Each check runs tests/offline_worker.py in a fresh interpreter whose sockets are guarded before any
import and which reports every attempt, including those a library would swallow (telemetry).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKER = str(ROOT / "tests" / "offline_worker.py")


def _attempts(*args: str) -> list[str]:
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, WORKER, *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_ingest_search_and_ask_through_rag_and_the_cli_reach_no_network(tmp_path: Path):
    (tmp_path / "ferry.md").write_text("# Ferry\n\n## Tickets\n\nA single ferry ticket costs four euros.\n")
    assert _attempts("engine", str(tmp_path)) == []


def test_the_app_start_looks_up_no_ip_address():
    assert _attempts("streamlit") == []
