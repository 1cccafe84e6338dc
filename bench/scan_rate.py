"""How often the injection scan flags, or marks unchecked, ordinary documentation: its false-positive rate.

Chunks every docs corpus with the default chunker, scans each chunk as ingest does (text, heading path,
file name, what invisible characters were removed) and prints, per corpus, flags and unchecked chunks per
1,000 chunks and the scan's time per chunk. With `--before REPO` (a worktree of an older commit, e.g.
`git worktree add /tmp/before-scan b934889`) the same chunks are scanned by that commit's scan too, in a
child process, side by side. `--docs NAME=DIR` adds a folder (repeatable). `--show` lists every flagged or
unchecked chunk with the reason, to read the false positives.

Usage:
    python bench/scan_rate.py [--before REPO] [--starlette-docs DIR] [--docs NAME=DIR]... [--show]

Corpora: the FastAPI docs (../shared/data/fastapi_docs/docs/en/docs), the Starlette docs (a folder you give,
tests/data/README.md; skipped without one), the sample help centre, and the Chinese Debian Reference
(/usr/share/debian-reference/*.zh-cn.html, `apt-get install debian-reference-zh-cn`; skipped when absent).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, os.environ.get("SCAN_RATE_REPO", str(REPO)))

from rag.catalog.sample import sample_files  # noqa: E402
from rag.ingest.chunker import chunk_document  # noqa: E402
from rag.ingest.loaders.document import load_document  # noqa: E402
from rag.ingest.scan import scan_text  # noqa: E402
from rag.ingest.walk import collect_paths  # noqa: E402
from rag.types import Chunk  # noqa: E402

FASTAPI_DOCS = REPO.parent / "shared" / "data" / "fastapi_docs" / "docs" / "en" / "docs"
DEBIAN_ZH = Path("/usr/share/debian-reference")


def corpora(starlette: Path | None, extra: dict[str, Path]) -> dict[str, Callable[[], list[tuple[str, bytes]]]]:
    """Each corpus present on this machine, as a loader of its (name, bytes) files."""
    folders = {"FastAPI docs": FASTAPI_DOCS, "Starlette docs": starlette, **extra}
    out: dict[str, Callable[[], list[tuple[str, bytes]]]] = {
        name: (lambda d=folder: [(n, p.read_bytes()) for n, p in collect_paths([d]).files])
        for name, folder in folders.items()
        if folder is not None and folder.is_dir()
    }
    out["sample help centre"] = sample_files
    debian = sorted(DEBIAN_ZH.glob("*.zh-cn.html"))
    if debian:
        out["Debian Reference zh-cn"] = lambda: [(p.name, p.read_bytes()) for p in debian]
    return out


def scan_before(repo: Path, chunks: list[Chunk]) -> tuple[list[tuple[bool, bool]], float]:
    """(flagged, unchecked) of each chunk by the scan of the commit checked out at `repo`, in a child process,
    and its ms per chunk (timed in the child, so its start is not counted)."""
    rows = [[c.text, list(c.heading_path), c.source] for c in chunks]
    env = {**os.environ, "SCAN_RATE_REPO": str(repo.resolve())}
    child = subprocess.run(
        [sys.executable, __file__, "--scan-stdin"], input=json.dumps(rows), env=env, capture_output=True, text=True,
        check=True,
    )
    out = json.loads(child.stdout)
    return [tuple(r) for r in out["results"]], out["ms"]


def _scan_stdin() -> None:
    """The child's side: scan the (text, heading path, source) rows read from stdin with this interpreter's rag."""
    rows = json.loads(sys.stdin.read())
    start = time.perf_counter()
    out = []
    for text, heading, source in rows:
        result = scan_text(text, tuple(heading), source)
        out.append((bool(result.flags), bool(getattr(result, "unchecked", None))))
    print(json.dumps({"results": out, "ms": 1000 * (time.perf_counter() - start) / max(1, len(rows))}))


def per_1000(n: int, total: int) -> str:
    return f"{1000 * n / total:.2f} ({n})" if total else "-"


def measure(chunks: list[Chunk], hidden: list[tuple[str, ...]], before: Path | None, show: bool) -> list[str]:
    """The table cells for one corpus: before (flags, unchecked, ms/chunk) when given, then after (the same)."""
    cells = []
    if before is not None:
        old, ms = scan_before(before, chunks)
        cells += [per_1000(sum(f for f, _ in old), len(chunks)), per_1000(sum(u for _, u in old), len(chunks))]
        cells.append(f"{ms:.2f}")
    start = time.perf_counter()
    results = [scan_text(c.text, c.heading_path, c.source, h) for c, h in zip(chunks, hidden, strict=True)]
    elapsed = _ms(start, chunks)
    flagged = [(c, r) for c, r in zip(chunks, results, strict=True) if r.flags]
    unchecked = [(c, r) for c, r in zip(chunks, results, strict=True) if r.unchecked]
    if show:
        for c, r in flagged + unchecked:
            print(f"  {c.location} #{c.index}: {r.flagged or r.unchecked}")
    return cells + [per_1000(len(flagged), len(chunks)), per_1000(len(unchecked), len(chunks)), f"{elapsed:.2f}"]


def _ms(start: float, chunks: list[Chunk]) -> float:
    return 1000 * (time.perf_counter() - start) / max(1, len(chunks))


def main() -> None:
    if "--scan-stdin" in sys.argv:
        return _scan_stdin()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, help="a worktree of an older commit, its scan side by side")
    default = os.environ.get("RAGSCOPE_STARLETTE_DOCS")
    parser.add_argument("--starlette-docs", type=Path, default=Path(default) if default else None)
    parser.add_argument("--docs", action="append", default=[], help="NAME=DIR: another folder of docs")
    parser.add_argument("--show", action="store_true", help="list each flagged or unchecked chunk with the reason")
    args = parser.parse_args()
    extra = {name: Path(folder) for name, _, folder in (d.partition("=") for d in args.docs)}
    head = ["corpus", "files", "chunks"]
    if args.before is not None:
        head += ["before: flags / 1k", "before: unchecked / 1k", "before: ms / chunk"]
    head += ["flags / 1k", "unchecked / 1k", "ms / chunk"]
    rows = []
    for name, load in corpora(args.starlette_docs, extra).items():
        files = load()
        docs = [load_document(n, data) for n, data in files]
        pairs = [(c, d.hidden_in(c.start, c.end)) for d in docs for c in chunk_document(d)]
        if args.show:
            print(name)
        chunks, hidden = [c for c, _ in pairs], [h for _, h in pairs]
        rows.append([name, str(len(files)), str(len(chunks)), *measure(chunks, hidden, args.before, args.show)])
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
