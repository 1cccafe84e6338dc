"""Debian's bash and gnuplot manuals as the product reads them, read once per test process.

Loading and chunking the two PDFs (a few hundred pages each) is the longest setup in the suite; the tests
that check them share one reading (`read_manuals` is cached) and one xdist worker (they carry
`ON_MANUALS`, and the suite runs with `--dist loadgroup`), so the suite pays for it once. The PDFs come
from the bash-doc and gnuplot-doc packages and are not in the repository (tests/data/README.md).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from rag.ingest.chunker import chunk_document
from rag.ingest.loaders.document import load_document
from rag.types import Chunk, Document

MANUALS = {
    "bashref.pdf": Path("/usr/share/doc/bash/bashref.pdf"),
    "gnuplot.pdf": Path("/usr/share/doc/gnuplot/gnuplot.pdf"),
}
MISSING = [str(p) for p in MANUALS.values() if not p.is_file()]
ON_MANUALS = pytest.mark.xdist_group("installed_manuals")


@lru_cache(maxsize=1)
def read_manuals() -> dict[str, tuple[Document, list[Chunk]]]:
    """Each manual's Document and chunks, as ingest makes them; skips the test when one is not installed."""
    if MISSING:
        pytest.skip(f"not installed: {', '.join(MISSING)} (apt-get install bash-doc gnuplot-doc)")
    out = {}
    for name, path in MANUALS.items():
        doc = load_document(name, path.read_bytes())
        out[name] = (doc, chunk_document(doc))
    return out
