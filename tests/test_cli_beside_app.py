"""The CLI beside the app on the embedded engine: a long-lived process holds the store the way the app does
(one engine for its whole life, shared by a session searching and one uploading) while `ragscope docs`,
`search` and `ingest` run against the same data dir. Every request on both sides succeeds, and afterwards
the collection holds every document, each with exactly its chunks (rag/store/lease.py: turns on the shard).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from rag.components import build_components
from rag.ingest.chunker import chunk_document
from rag.ingest.loaders.document import load_document
from rag.ingest.pipeline import ingest_files
from rag.settings.config import Settings
from rag.types import ChunkFilter

ROOT = Path(__file__).resolve().parent.parent
GUIDE = b"# Ferry guide\n\n## Timetable\n\nThe first ferry leaves at seven.\n\n## Tickets\n\nA ticket costs four euros.\n"
CLI_DOCS = {
    "harbour.md": b"# Harbour\n\n## Parking\n\nParking at the harbour costs two euros an hour.\n",
    "bikes.md": b"# Bikes\n\nBikes travel free on every ferry.\n",
}
QUESTION = "When does the first ferry leave?"

# The app's process: ui/setup.get_components caches one engine per collection for the process's life and
# every session shares it; here one thread searches and reads the sidebar's counts as a page run does, and
# one uploads a document now and then. It reports what failed, and what it wrote, when the stop file appears.
APP = r'''
import json, sys, threading, time
from pathlib import Path
from rag.components import build_components
from rag.ingest.pipeline import ingest_files
from rag.retrieval.retrieve import retrieve
from rag.settings.config import Settings

components = build_components(Settings.from_env())
stop = Path(sys.argv[1])
errors, written, searches = [], [], [0]
retrieve(components, sys.argv[2])  # models loaded before the CLI starts
print("ready", flush=True)

def searching():
    while not stop.exists():
        try:
            assert retrieve(components, sys.argv[2]).final, "no hits"
            components.store.sources(), components.store.count(), components.store.list_collections()
            searches[0] += 1
        except Exception as e:
            errors.append(f"search: {type(e).__name__}: {e}")
        time.sleep(0.05)

def uploading():
    k = 0
    while not stop.exists():
        name = f"app-{k}.md"
        try:
            summary = ingest_files(components, [(name, f"# Upload {k}\n\nUploaded in the app, number {k}.\n".encode())])
            errors.extend(f.error for f in summary.errors)
            if not summary.errors:
                written.append(name)
        except Exception as e:
            errors.append(f"upload: {type(e).__name__}: {e}")
        k += 1
        time.sleep(0.3)

threads = [threading.Thread(target=searching), threading.Thread(target=uploading)]
for t in threads:
    t.start()
for t in threads:
    t.join()
components.close()
print(json.dumps({"errors": errors, "written": written, "searches": searches[0]}), flush=True)
'''


def _chunk_ids(settings: Settings, name: str, data: bytes) -> frozenset[str]:
    return frozenset(c.id for c in chunk_document(load_document(name, data), settings.chunk))


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "rag", *args], capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)
    print(f"ragscope {args[0]}: {time.monotonic() - started:.1f} s, exit {done.returncode}")
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def test_docs_search_and_ingest_run_while_the_app_holds_the_store(settings: Settings, tmp_path: Path):
    first = build_components(settings)
    assert not ingest_files(first, [("guide.md", GUIDE)]).errors
    first.close()
    folder = tmp_path / "upload"
    folder.mkdir()
    for name, data in CLI_DOCS.items():
        (folder / name).write_bytes(data)
    stop = tmp_path / "stop"
    env = {**os.environ, "RAGSCOPE_DATA_DIR": str(settings.data_dir), "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    app = subprocess.Popen([sys.executable, "-c", APP, str(stop), QUESTION], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        assert app.stdout.readline().strip() == "ready", app.stderr.read()
        listed = json.loads(_cli(env, "docs", "--json").stdout)
        assert "guide.md" in {d["source"] for d in listed}
        hits = json.loads(_cli(env, "search", QUESTION, "--json").stdout)["results"]
        assert hits and hits[0]["source"] == "guide.md"
        assert "2 documents, 2 chunks written" in _cli(env, "ingest", str(folder)).stdout
        after = {d["source"] for d in json.loads(_cli(env, "docs", "--json").stdout)}
        assert {"guide.md", *CLI_DOCS} <= after
        time.sleep(1)  # the app goes on searching and uploading after the CLI's last write
    finally:
        stop.touch()
        out, err = app.communicate(timeout=300)
    assert app.returncode == 0, err
    report = json.loads(out.splitlines()[-1])
    assert report["errors"] == [], report["errors"]
    assert report["searches"] > 0 and report["written"], report

    expected = {"guide.md": GUIDE, **CLI_DOCS}
    expected |= {name: f"# Upload {name[4:-3]}\n\nUploaded in the app, number {name[4:-3]}.\n".encode() for name in report["written"]}
    reopened = build_components(settings)
    try:
        store = reopened.store
        assert set(store.sources()) == set(expected)
        for name, data in expected.items():
            stored = {r.chunk.id for r in store.records(ChunkFilter(sources=(name,), include_quarantined=True))}
            assert stored == _chunk_ids(settings, name, data), name
        assert store.count() == sum(len(_chunk_ids(settings, n, d)) for n, d in expected.items())
    finally:
        reopened.close()
