"""How often the injection scan flags, or marks unchecked, ordinary documentation: its false-positive rate.

Chunks every docs corpus with the default chunker, scans each chunk as ingest does (text, heading path,
file name) and prints, per corpus, flags and unchecked chunks per 1,000 chunks and the scan's time per
chunk. With `--before PATH` (a copy of an older `rag/ingest/scan.py`, e.g. `git show
HEAD~1:rag/ingest/scan.py > /tmp/scan_before.py`, whose `scan_text(text)` returns flag names) the same
chunks are scanned by it too, side by side, on the chunk text only (all it read). `--show` lists every
flagged or unchecked chunk with the reason, to read the false positives.

Usage:
    python bench/scan_rate.py [--before PATH] [--starlette-docs DIR] [--show]

Corpora: the FastAPI docs (../shared/data/fastapi_docs/docs/en/docs), the Starlette docs (a folder you give,
tests/data/README.md; skipped without one), the sample help centre, and the Chinese Debian Reference
(/usr/share/debian-reference/*.zh-cn.html, `apt-get install debian-reference-zh-cn`; skipped when absent).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Callable

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rag.catalog.sample import sample_files  # noqa: E402
from rag.ingest.chunker import chunk_document  # noqa: E402
from rag.ingest.loaders.document import load_document  # noqa: E402
from rag.ingest.scan import scan_text  # noqa: E402
from rag.ingest.walk import collect_paths  # noqa: E402
from rag.types import Chunk  # noqa: E402

FASTAPI_DOCS = REPO.parent / "shared" / "data" / "fastapi_docs" / "docs" / "en" / "docs"
DEBIAN_ZH = Path("/usr/share/debian-reference")


def corpora(starlette: Path | None) -> dict[str, Callable[[], list[tuple[str, bytes]]]]:
    """Each corpus present on this machine, as a loader of its (name, bytes) files."""
    folders = {"FastAPI docs": FASTAPI_DOCS, "Starlette docs": starlette}
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


def load_before(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("scan_before", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"--before {path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def per_1000(n: int, total: int) -> str:
    return f"{1000 * n / total:.2f} ({n})" if total else "-"


def measure(chunks: list[Chunk], before: ModuleType | None, show: bool) -> list[str]:
    """The table cells for one corpus: before (flags, ms/chunk) when given, then after (flags, unchecked, ms/chunk)."""
    cells = []
    if before is not None:
        start = time.perf_counter()
        old = sum(1 for c in chunks if before.scan_text(c.text))
        cells += [per_1000(old, len(chunks)), "0 (the old scan marks nothing)", f"{_ms(start, chunks):.2f}"]
    start = time.perf_counter()
    results = [scan_text(c.text, c.heading_path, c.source) for c in chunks]
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
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, help="an older scan.py to compare with (its scan_text(text))")
    default = os.environ.get("RAGSCOPE_STARLETTE_DOCS")
    parser.add_argument("--starlette-docs", type=Path, default=Path(default) if default else None)
    parser.add_argument("--show", action="store_true", help="list each flagged or unchecked chunk with the reason")
    args = parser.parse_args()
    before = load_before(args.before) if args.before else None
    head = ["corpus", "files", "chunks"]
    if before is not None:
        head += ["before: flags / 1k", "before: unchecked / 1k", "before: ms / chunk"]
    head += ["flags / 1k", "unchecked / 1k", "ms / chunk"]
    rows = []
    for name, load in corpora(args.starlette_docs).items():
        files = load()
        chunks = [c for n, data in files for c in chunk_document(load_document(n, data))]
        if args.show:
            print(name)
        rows.append([name, str(len(files)), str(len(chunks)), *measure(chunks, before, args.show)])
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
