"""Crash-test worker for tests/test_crash_consistency.py (test code, not part of the product).

Loading the models takes seconds, so this process loads them once and then forks one child per
command: the child opens the real store with `build_components` (which runs journal recovery),
re-ingests a document with the real encoders and is SIGKILLed part-way. A kill comes either from
the child itself just before its N-th write step (journal write, store upsert / set_payload /
delete / flush, journal clear) or from this parent a given number of milliseconds after the
child's first write step, which can land inside a write.

Protocol (JSON lines): stdin `{"op": "ingest"|"open", "source", "text", "kill_at_step", "kill_after_ms", "collection"}`,
stdout one reply per command: `{"status": "done"|"killed"|"failed", "steps": [...], "write_ms", "error"}`
where `steps` names the write steps the child started (the last one is where it died) and
`write_ms` is the time from the first write step to the child's exit.

torch runs single-threaded here: an OpenMP pool created before `fork` hangs the child.
"""

from __future__ import annotations

import dataclasses
import json
import os
import select
import signal
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402

torch.set_num_threads(1)

from rag import components as components_module  # noqa: E402
from rag.store import journal  # noqa: E402
from rag.components import build_components  # noqa: E402
from rag.settings.config import Settings  # noqa: E402
from rag.encoders.factory import dense_encoder, sparse_encoder  # noqa: E402
from rag.ingest.pipeline import ingest_files  # noqa: E402

STORE_WRITES = ("upsert", "set_payload", "delete", "flush")


class _Steps:
    """Counts write steps in the child and reports each one before it runs."""

    def __init__(self, out_fd: int, kill_at: int | None) -> None:
        self.out_fd = out_fd
        self.kill_at = kill_at
        self.n = 0

    def before(self, name: str) -> None:
        self.n += 1
        os.write(self.out_fd, f"{name} {time.monotonic()}\n".encode())
        if self.kill_at is not None and self.n == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    def wrap(self, name: str, fn):  # noqa: ANN001, ANN202
        def hooked(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            self.before(name)
            return fn(*args, **kwargs)

        return hooked


def _child(settings: Settings, command: dict, out_fd: int) -> None:
    steps = _Steps(out_fd, command.get("kill_at_step"))
    real_open = components_module.open_store

    def hooked_open(s: Settings):  # noqa: ANN202
        store = real_open(s)
        for name in STORE_WRITES:
            setattr(store, name, steps.wrap(f"store.{name}", getattr(store, name)))
        return store

    components_module.open_store = hooked_open
    journal.Journal.write = steps.wrap("journal.write", journal.Journal.write)
    journal.Journal.clear = steps.wrap("journal.clear", journal.Journal.clear)
    components = build_components(dataclasses.replace(settings, collection=command.get("collection", settings.collection)))
    if command["op"] == "ingest":
        ingest_files(components, [(command["source"], command["text"].encode())])
    components.close()


def _run(settings: Settings, command: dict) -> dict:
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        code = 0
        try:
            _child(settings, command, write_fd)
        except BaseException as e:  # noqa: BLE001 - reported to the test, which fails on it
            os.write(write_fd, f"error {type(e).__name__}: {e}\n".replace("\n", " ").encode() + b"\n")
            code = 1
        os._exit(code)
    os.close(write_fd)
    delay = command.get("kill_after_ms")
    buf = b""
    if delay is not None:
        while b"\n" not in buf:  # wait for the first write step, then kill a little later
            ready, _, _ = select.select([read_fd], [], [], 60)
            chunk = os.read(read_fd, 4096) if ready else b""
            if not chunk:
                break
            buf += chunk
        time.sleep(delay / 1000)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _, status = os.waitpid(pid, 0)
    ended = time.monotonic()
    while chunk := os.read(read_fd, 65536):
        buf += chunk
    os.close(read_fd)
    lines = buf.decode().splitlines()
    steps = [line.split(" ") for line in lines if not line.startswith("error ")]
    errors = [line[6:] for line in lines if line.startswith("error ")]
    reply = {"steps": [name for name, _ in steps], "write_ms": (ended - float(steps[0][1])) * 1000 if steps else 0.0}
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
        return {"status": "killed", **reply}
    if errors or os.WEXITSTATUS(status) != 0:
        return {"status": "failed", **reply, "error": "; ".join(errors) or f"exit {status}"}
    return {"status": "done", **reply}


def main() -> None:
    settings = Settings(data_dir=Path(sys.argv[1]))
    # Warm both models in this parent so every forked child starts with them loaded.
    dense_encoder(settings.dense_model, settings.dense_runtime, settings.data_dir / "models").encode_documents(["warm up"])
    sparse_encoder(settings.sparse_model, settings.data_dir / "models").encode_documents(["warm up"])
    print(json.dumps({"status": "ready"}), flush=True)
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(_run(settings, json.loads(line))), flush=True)


if __name__ == "__main__":
    main()
