"""The sample help centre shipped with ragscope (a fictional product, Tidepool), for first-run demos and tests."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

SAMPLE_TAG = "sample"


def sample_docs_dir() -> Path:
    return Path(str(resources.files("rag") / "resources" / "sample_docs"))


def sample_files() -> list[tuple[str, bytes]]:
    """(relative name, bytes) for every sample document, in a stable order."""
    root = sample_docs_dir()
    return [(p.relative_to(root).as_posix(), p.read_bytes()) for p in sorted(root.rglob("*.md"))]
