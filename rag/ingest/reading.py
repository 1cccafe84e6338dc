"""Files read from disk for ingest (the CLI's path): regular files only, and never more than a limit.

A path is not always a file: opening a named pipe (FIFO) for reading waits for a writer that may
never come, and a device such as /dev/zero never ends, so reading it whole ends in a MemoryError.
Both can sit in a folder or be named on the command line (or hide behind a `.md` symlink). So the
kind of file is checked before it is opened and again on the open descriptor (it may have been
swapped in between), the open itself cannot block, and a read stops one byte past the limit: that
byte says "too big" without reading the rest.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from rag.errors import LoaderError
from rag.text.sizes import mib

# Opening may not block (a FIFO without a writer) nor take a terminal as the controlling one.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)


# What each kind of file that is not a regular one is called in a refusal, by its `st_mode` test.
_SPECIAL_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def special_kind(mode: int) -> str:
    """What a file of this `st_mode` is when it is not a regular file ("" when it is one)."""
    if stat.S_ISREG(mode):
        return ""
    return next((name for is_kind, name in _SPECIAL_KINDS if is_kind(mode)), "not a regular file")


def read_regular(path: Path, name: str, limit: int, what: str = "RAGSCOPE_MAX_UPLOAD_MB") -> bytes:
    """The bytes of the regular file at `path` (symbolic links followed), at most `limit` of them.

    Args:
        path: the file.
        name: how messages name it.
        limit: the most bytes it may have.
        what: where the limit comes from, for the message.

    Raises:
        LoaderError: it is not a regular file (FIFO, device, socket), cannot be opened or read, or
            holds more than `limit` bytes; only `limit + 1` bytes are ever read.
    """
    try:
        kind = special_kind(os.stat(path).st_mode)
        if kind:
            raise LoaderError(f"{name}: not read: {kind}, not a regular file")
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as e:
        raise LoaderError(f"{name}: cannot read ({e.strerror})") from None
    with os.fdopen(fd, "rb") as file:
        try:
            kind = special_kind(os.fstat(fd).st_mode)
            if kind:
                raise LoaderError(f"{name}: not read: {kind}, not a regular file")
            data = file.read(limit + 1)
        except OSError as e:
            raise LoaderError(f"{name}: cannot read ({e.strerror})") from None
    if len(data) > limit:
        raise LoaderError(f"{name}: over the {mib(limit)} limit per file ({what}); not read further")
    return data
