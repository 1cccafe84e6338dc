"""A shard copied for a version (and the suite's sample data) keeps its holes: the copy reads the same bytes and
takes about the disk the source takes, not the size qdrant-edge preallocates (rag/store/base.py)."""

from __future__ import annotations

import os
from pathlib import Path

from rag.store.base import copy_tree_sparse

MB = 1 << 20


def _allocated(path: Path) -> int:
    return os.stat(path).st_blocks * 512


def test_a_copy_reads_the_same_bytes_and_leaves_the_holes_unwritten(tmp_path: Path) -> None:
    source = tmp_path / "shard"
    (source / "segments").mkdir(parents=True)
    holes = source / "segments" / "chunk_0.mmap"
    with open(holes, "wb") as f:  # 32 MB as qdrant-edge lays out a vector chunk: data at the start, then a hole
        f.write(b"vector" * 1000)
        f.seek(20 * MB)
        f.write(b"tail")
        f.truncate(32 * MB)
    zeros = source / "wal"
    zeros.write_bytes(b"\0" * (2 * MB) + b"entry")  # zeros written, not a hole: still equal bytes in the copy
    dense = source / "config.json"
    dense.write_text('{"vectors": {}}')
    assert _allocated(holes) < 1 * MB  # the file system keeps holes (ext4, tmpfs)

    target = tmp_path / "copy"
    copy_tree_sparse(source, target)

    for original in (holes, zeros, dense):
        copied = target / original.relative_to(source)
        assert copied.read_bytes() == original.read_bytes()
        assert copied.stat().st_size == original.stat().st_size
    assert _allocated(target / "segments" / "chunk_0.mmap") < 1 * MB
    assert _allocated(target / "wal") < 1 * MB  # the run of written zeros became a hole too
