"""Two processes replacing one document in a loop, one SIGKILLed in the middle each round (issue 39, item 2).

Done when: every round leaves exactly one complete version stored (all chunks of one version, none of
another). Two writer processes re-ingest the same document over and over, each a new version with
the real pipeline (`ingest_files`) and the real encoders; every chunk of a version carries the
version's tag. Each round this parent waits until a writer has started writing a version (its
"apply" journal entry), kills it with SIGKILL a few milliseconds later, and then checks the store the
way a writer would: it takes the document's lease (rag/store/doc_lease.py: it takes the dead writer's
lease over at once, the holder's pid being gone), settles what the dead one left, and reads the
document's chunks. The
killed writer is replaced by a new one, and the next round starts.

Backends (`--backend`):
- `local`: qdrant-client's local mode shared call by call (QDRANT_URL=local:..., rag/store/local_turns.py):
  as on a server, nothing but the document lease keeps the two writers' calls from interleaving.
- `edge`: the embedded engine, whose writers take turns on the whole data dir; a replacement is one
  turn, which is its document lease there (doc_lease.TurnLeases).
`--no-lease` turns the document lease off on `local` (a lease that is always granted): the check must
then find mixed versions, which shows it can fail.

    nice -n 10 python bench/writers_race.py --rounds 200 --backend local
Prints one JSON object: rounds, kills inside a write, replacements, versions found complete, failures.

Models load once, in this parent; writers are forked from it (as tests/crash_worker.py).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import select
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.components import Components, build_components  # noqa: E402
from rag.encoders.factory import dense_encoder, sparse_encoder  # noqa: E402
from rag.ingest.pipeline import ingest_files  # noqa: E402
from rag.settings.config import Settings  # noqa: E402
from rag.store import doc_lease  # noqa: E402
from rag.types import ChunkFilter  # noqa: E402

SOURCE = "guide/race.md"
SECTIONS = 4
_TAG = re.compile(r"version (\w+-\d+)")


def version_text(tag: str) -> str:
    """A document whose every section (one chunk each) names the version."""
    sections = "".join(
        f"## Part {i}\n\nThis is part {i} of version {tag}. The ferry leaves at {6 + i}:10 on weekdays.\n\n"
        for i in range(SECTIONS)
    )
    return f"# Race\n\n{sections}"


@dataclass
class Writer:
    """A forked writer process and what it reported (one line per journal write and per finished version)."""

    name: str
    pid: int
    fd: int
    buf: bytes = b""
    lines: list[str] = field(default_factory=list)

    def read(self, timeout: float) -> None:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if ready and (chunk := os.read(self.fd, 65536)):
            self.buf += chunk
            *done, self.buf = self.buf.split(b"\n")
            self.lines += [d.decode() for d in done]


def read_any(writers: list[Writer], timeout: float) -> None:
    """Wait on every writer's pipe at once, so the victim's "apply" is seen the moment it is written."""
    ready, _, _ = select.select([w.fd for w in writers], [], [], timeout)
    for w in writers:
        if w.fd in ready:
            w.read(0)


def _no_lease(leases: doc_lease.Leases, collection: str, source: str) -> Iterator[doc_lease.Held]:
    """The control: every writer is granted the document at once."""
    yield doc_lease.Held(leases, doc_lease.Lease(collection, source, "", 0, 0.0))


def _writer(settings: Settings, name: str, out_fd: int, lease: bool) -> None:
    """Replace the document again and again, reporting each journal write and each finished version."""
    if not lease:
        doc_lease.Leases.holding = contextlib.contextmanager(_no_lease)  # type: ignore[method-assign]
        doc_lease.Held.renew = lambda self: None  # type: ignore[method-assign]
    components = build_components(settings)
    journal_write = components.journal.write

    def reported(entry):  # noqa: ANN001, ANN202 - the journal's own write
        os.write(out_fd, f"{entry.phase}\n".encode())
        return journal_write(entry)

    components.journal.write = reported  # type: ignore[method-assign]
    n = 0
    while True:
        n += 1
        summary = ingest_files(components, [(SOURCE, version_text(f"{name}-{n}").encode())])
        status = summary.files[0].status
        os.write(out_fd, f"{'done' if status != 'error' else 'error ' + summary.files[0].error}\n".encode())


def spawn(settings: Settings, name: str, lease: bool) -> Writer:
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try:
            _writer(settings, name, write_fd, lease)
        except BaseException as e:  # noqa: BLE001 - reported to the parent, which counts it as a failure
            os.write(write_fd, f"error {type(e).__name__}: {e}\n".replace("\n", " ").encode() + b"\n")
        os._exit(1)
    os.close(write_fd)
    return Writer(name, pid, read_fd)


def stored_versions(components: Components) -> tuple[dict[str, int], int]:
    """What the document holds, checked as a writer would see it: under its lease, leftovers settled.
    Returns each version tag with its number of chunks, and how many journal entries were settled."""
    store = components.store
    with components.leases.holding(store.collection, SOURCE), store.lock:
        repaired = components.journal.settle_leftover(store, SOURCE)
        records = store.records(ChunkFilter(sources=(SOURCE,), include_quarantined=True))
    tags: dict[str, int] = {}
    for r in records:
        found = _TAG.search(r.chunk.text)
        key = found.group(1) if found else "untagged"
        tags[key] = tags.get(key, 0) + 1
    return tags, len(repaired)


def run(rounds: int, backend: str, data_dir: Path, ttl_s: float, lease: bool, seed: int) -> dict:
    rng = random.Random(seed)
    url = f"local:{data_dir / 'server'}" if backend == "local" else ""
    settings = Settings(data_dir=data_dir, qdrant_url=url, sentence_vectors=False, lease_ttl_s=ttl_s)
    dense_encoder(settings.dense_model, settings.dense_runtime, settings.data_dir / "models").encode_documents(["warm"])
    sparse_encoder(settings.sparse_model, settings.data_dir / "models").encode_documents(["warm"])
    writers = [spawn(settings, "a0", lease), spawn(settings, "b0", lease)]
    result: dict = {"backend": backend, "lease": lease, "ttl_s": ttl_s, "seed": seed, "rounds": rounds}
    kills_mid_write = replacements = complete = repaired = 0
    failures: list[dict] = []
    errors: list[str] = []
    started, load_at_start = time.monotonic(), os.getloadavg()[0]
    try:
        for r in range(rounds):
            victim_i = rng.randrange(2)
            victim = writers[victim_i]
            deadline = time.monotonic() + 120
            seen = len(victim.lines)
            while "apply" not in victim.lines[seen:]:  # a version being written: kill it in there
                if time.monotonic() > deadline:
                    raise RuntimeError(f"writer {victim.name} wrote nothing for 120 s: {victim.lines[-3:]}")
                read_any(writers, 0.05)
            # A replacement's writes take milliseconds on the embedded engine: a longer pause would mostly
            # land after the version was done, and test nothing.
            time.sleep(rng.uniform(0, 0.004))
            os.kill(victim.pid, signal.SIGKILL)
            os.waitpid(victim.pid, 0)
            victim.read(0)
            last = next((x for x in reversed(victim.lines) if x in ("apply", "commit", "done")), "")
            kills_mid_write += last in ("apply", "commit")
            for w in writers:
                w.read(0)
                replacements += w.lines.count("done")
                errors += [x for x in w.lines if x.startswith("error")]
                w.lines = [x for x in w.lines[-3:] if x != "done"]
            os.close(victim.fd)
            components = build_components(settings)
            try:
                tags, settled = stored_versions(components)
            finally:
                components.close()
            repaired += settled
            one = len(tags) == 1 and next(iter(tags.values())) == SECTIONS and "untagged" not in tags
            complete += one
            if not one:
                failures.append({"round": r, "versions": tags})
            writers[victim_i] = spawn(settings, f"{victim.name[0]}{r + 1}", lease)
    finally:
        for w in writers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(w.pid, signal.SIGKILL)
                os.waitpid(w.pid, 0)
    result.update(
        kills=rounds,
        kills_mid_write=kills_mid_write,
        replacements=replacements,
        complete=complete,
        entries_settled_by_checker=repaired,
        failures=failures[:10],
        failed_rounds=len(failures),
        writer_errors=sorted(set(errors))[:5],
        seconds=round(time.monotonic() - started, 1),
        load_1min=[round(load_at_start, 1), round(os.getloadavg()[0], 1)],  # at the start and at the end
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--backend", choices=("local", "edge"), default="local")
    parser.add_argument("--ttl", type=float, default=Settings().lease_ttl_s, help="the document lease's ttl (s)")
    parser.add_argument("--no-lease", action="store_true", help="the control: writers take no document lease")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--data", type=Path, help="data dir (default: a new temporary one)")
    args = parser.parse_args()
    data = args.data or Path(tempfile.mkdtemp(prefix="writers-race-"))
    print(json.dumps(run(args.rounds, args.backend, data, args.ttl, not args.no_lease, args.seed)), flush=True)


if __name__ == "__main__":
    main()
