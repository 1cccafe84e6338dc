"""The shard lease hands over promptly to a process that waits while another runs a long job (rag/store/lease.py).

Two processes share one lease file. The holder runs a long job of back-to-back turns' worth of calls, as a
tune sweep's retrievals do; the other then makes a burst of calls, as `ragscope docs` does. Opening and
closing the shard is given the cost it has on a large collection (a sleep in `begin` and `end`: the cost
is what matters here, not what is opened). The burst beside the job must take a small multiple of its
time alone: a slice counted from before the open let the waiter make one call per turn once the open
outlasted the slice, each call then paying a whole hand-over on both sides.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from rag.components import build_components
from rag.ingest.pipeline import ingest_files

ROOT = Path(__file__).resolve().parent.parent
OPEN_S, CLOSE_S = 0.3, 0.1  # a large shard's open and close (bench/README.md, "CLI beside a sweep")
CALLS = 30

WORKER = r"""
import sys, time
from pathlib import Path
from rag.store.lease import ShardLease
lock, role, calls = Path(sys.argv[1]), sys.argv[2], int(sys.argv[5])
open_s, close_s = float(sys.argv[3]), float(sys.argv[4])
lease = ShardLease(lock, begin=lambda: time.sleep(open_s), end=lambda: time.sleep(close_s))
if role == "job":  # a long job: calls back to back until the stop file appears
    stop = lock.with_suffix(".stop")
    with lease:
        print("ready", flush=True)
    while not stop.exists():
        with lease:
            time.sleep(0.005)
else:  # a burst of calls, timed from the first wait for a turn to the last call's end
    started = time.monotonic()
    for _ in range(calls):
        with lease:
            time.sleep(0.002)
    print(time.monotonic() - started, flush=True)
lease.close()
"""


def _burst(lock: Path) -> float:
    args = [sys.executable, "-c", WORKER, str(lock), "burst", str(OPEN_S), str(CLOSE_S), str(CALLS)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return float(done.stdout)


def test_a_burst_of_calls_beside_a_long_job_takes_a_small_multiple_of_its_time_alone(tmp_path: Path):
    lock = tmp_path / "docs.lock"
    alone = _burst(lock)
    args = [sys.executable, "-c", WORKER, str(lock), "job", str(OPEN_S), str(CLOSE_S), "0"]
    job = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert job.stdout.readline().strip() == "ready", job.stderr.read()
        time.sleep(1)  # the job is in its stride
        beside = _burst(lock)
    finally:
        lock.with_suffix(".stop").touch()
        _, err = job.communicate(timeout=120)
    assert job.returncode == 0, err
    print(f"{CALLS} calls alone {alone:.2f} s, beside a long job {beside:.2f} s")
    # Alone: one open and the calls. Beside: at most the job's slice and close, then the same; a turn per
    # call instead costs a whole hand-over each (tens of times the time alone).
    assert beside < 6 * alone, (beside, alone)


# The same through the commands: `ragscope docs` in its own process beside a process running back-to-back
# retrievals, as the app does during a tune sweep; both open the real shard, made as slow to open and close as a
# large collection's (the sleeps), on a small collection built here.
SLOW_SHARD = r"""
import sys, time
from rag.store.edge import EdgeStore
OPEN_S, CLOSE_S = float(sys.argv.pop(1)), float(sys.argv.pop(1))
begin, end = EdgeStore._begin_turn, EdgeStore._end_turn
def slow_begin(self):
    time.sleep(OPEN_S)
    begin(self)
def slow_end(self):
    end(self)
    time.sleep(CLOSE_S)
EdgeStore._begin_turn, EdgeStore._end_turn = slow_begin, slow_end
"""
SWEEP = (
    SLOW_SHARD
    + r"""
from pathlib import Path
from rag.components import build_components
from rag.retrieval.retrieve import retrieve
from rag.settings.config import Settings
components = build_components(Settings.from_env())
stop = Path(sys.argv[1])
retrieve(components, "When does ferry 3 leave?")  # models loaded before the command starts
print("ready", flush=True)
while not stop.exists():
    retrieve(components, "When does ferry 3 leave?")
components.close()
"""
)
COMMAND = (
    SLOW_SHARD
    + r"""
from rag.cli import main
started = time.monotonic()
try:
    main(sys.argv[1:], prog_name="ragscope")
finally:
    print(f"took {time.monotonic() - started}", file=sys.stderr)
"""
)
DOCUMENTS = 30  # `ragscope docs` makes a store call a document


def _docs(env: dict[str, str]) -> float:
    """`ragscope docs --json` run in its own process: seconds from its start (imports done) to its end."""
    args = [sys.executable, "-c", COMMAND, str(OPEN_S), str(CLOSE_S), "docs", "--json"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)) == DOCUMENTS
    return float(done.stderr.rsplit("took ", 1)[1])


def test_ragscope_docs_beside_a_sweep_in_another_process_takes_a_small_multiple_of_its_time_alone(settings, tmp_path):
    components = build_components(settings)
    docs = [
        (f"ferry-{i}.md", f"# Ferry {i}\n\n## Times\n\nFerry {i} leaves at {i} o'clock.\n".encode())
        for i in range(DOCUMENTS)
    ]
    assert not ingest_files(components, docs).errors
    components.close()
    env = {**os.environ, "RAGSCOPE_DATA_DIR": str(settings.data_dir), "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    alone = _docs(env)
    stop = tmp_path / "stop"
    args = [sys.executable, "-c", SWEEP, str(OPEN_S), str(CLOSE_S), str(stop)]
    sweep = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    try:
        assert sweep.stdout.readline().strip() == "ready", sweep.stderr.read()
        time.sleep(1)  # the sweep is in its stride
        beside = _docs(env)
    finally:
        stop.touch()
        _, err = sweep.communicate(timeout=120)
    assert sweep.returncode == 0, err
    print(f"ragscope docs alone {alone:.2f} s, beside a sweep {beside:.2f} s")
    # A turn per call costs a whole hand-over on both sides per document (tens of times the time alone).
    assert beside < 6 * alone, (beside, alone)
