"""Uploaded .zip archives (a folder of documents) expanded safely into (name, bytes) pairs.

A zip is untrusted input: its headers may lie about sizes, a few kilobytes can inflate to gigabytes
(a zip bomb), and entry names may try to climb out of a folder. So sizes are counted while reading,
never taken from the headers, every limit is checked before more is read, and names go through the
same sanitiser as uploaded file names. Nothing is written to disk.
"""

from __future__ import annotations

import io
import posixpath
import stat
import zipfile
from dataclasses import dataclass
from typing import Iterator

from rag.errors import LoaderError
from rag.ingest.loaders.names import SUPPORTED_SUFFIXES, safe_source
from rag.text.sizes import mib

_READ_CHUNK = 64 * 1024
# Folders that archivers add and nobody means to upload.
_JUNK_PARTS = ("__MACOSX", ".DS_Store", ".git")


@dataclass(frozen=True)
class ArchiveLimits:
    """What one archive may expand to.

    Example:
        limits = ArchiveLimits(max_total_bytes=50 * 1024 * 1024)
        files, skipped = expand_zip("docs.zip", data, limits)
    """

    max_total_bytes: int = 200 * 1024 * 1024
    max_entries: int = 2000
    max_ratio: float = 100.0
    max_file_bytes: int = 50 * 1024 * 1024

    @classmethod
    def for_upload_mb(cls, max_upload_mb: int) -> ArchiveLimits:
        """Per-file cap equal to the upload limit; the whole archive may expand to four times it."""
        one = max_upload_mb * 1024 * 1024
        return cls(max_total_bytes=4 * one, max_file_bytes=one)


@dataclass(frozen=True)
class ExpandedArchive:
    """The documents found in an archive, and a message for every entry left out."""

    files: tuple[tuple[str, bytes], ...]
    skipped: tuple[str, ...]


def is_zip_name(name: str) -> bool:
    return name.lower().endswith(".zip")


def expand_zip(name: str, data: bytes, limits: ArchiveLimits | None = None) -> ExpandedArchive:
    """Read the supported documents out of a zip archive.

    Args:
        name: the archive's file name (for messages).
        data: the archive's bytes.
        limits: entry count, total and per-file uncompressed size, and compression ratio allowed.

    Returns:
        (path, bytes) for each supported document, paths sanitised and relative to the archive's
        single top folder when it has one; a message for every skipped entry (unsupported type,
        encrypted, link, nested archive, over the per-file cap). Folder entries are dropped silently.
        Entries whose names sanitise alike are all returned: ingest refuses them together, naming
        each (`rag.ingest.pipeline.name_clashes`), rather than keeping whichever came first.

    Raises:
        LoaderError: the data is not a zip archive, or it breaks a limit (too many entries, expands
            past the total size, or compresses suspiciously well), in which case nothing is returned.
    """
    limits = limits or ArchiveLimits()
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError) as e:
        raise LoaderError(f"{name}: not a readable zip archive ({e})") from None
    with archive:
        entries = [info for info in archive.infolist() if not info.is_dir()]
        if len(entries) > limits.max_entries:
            raise LoaderError(
                f"{name}: {len(entries):,} files is over the limit of {limits.max_entries:,} per archive; split it"
            )
        files: list[tuple[str, bytes]] = []
        skipped: list[str] = []
        total = 0
        for info in entries:
            path, reason = _entry_path(info)
            if reason:
                skipped.append(f"{name}: skipped {info.filename!r}: {reason}")
                continue
            body = _read_entry(archive, info, name, limits, limits.max_total_bytes - total)
            if body is None:
                skipped.append(f"{name}: skipped {path!r}: larger than {mib(limits.max_file_bytes)}")
                continue
            total += len(body)
            files.append((path, body))
    return ExpandedArchive(_strip_common_folder(files), tuple(skipped))


def _entry_path(info: zipfile.ZipInfo) -> tuple[str, str | None]:
    """The entry's sanitised path, or why it is left out."""
    parts = info.filename.replace("\\", "/").split("/")
    suffix = posixpath.splitext(info.filename.lower())[1]
    if any(p in _JUNK_PARTS or p.startswith("._") for p in parts):
        return "", "archiver metadata"
    if stat.S_ISLNK(info.external_attr >> 16):
        return "", "a symbolic link"
    if info.flag_bits & 0x1:
        return "", "encrypted"
    if suffix == ".zip":
        return "", "archives inside archives are not expanded"
    if suffix not in SUPPORTED_SUFFIXES:
        return "", f"unsupported file type {suffix or '(none)'}"
    try:
        path = safe_source(info.filename)
    except LoaderError:
        return "", "its name is empty once path parts are removed"
    return path, None


def _strip_common_folder(files: list[tuple[str, bytes]]) -> tuple[tuple[str, bytes], ...]:
    """A zip of folder `docs/` gives the same names as `ragscope ingest docs/` (paths inside the folder)."""
    tops = {path.split("/", 1)[0] for path, _ in files}
    if len(tops) == 1 and all("/" in path for path, _ in files):
        return tuple((path.split("/", 1)[1], body) for path, body in files)
    return tuple(files)


def _read_entry(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, limits: ArchiveLimits, budget: int
) -> bytes | None:
    """The entry's bytes, counted as they inflate; None when it passes the per-file cap.

    Raises LoaderError (the whole archive is refused) when it would pass the archive's total or
    inflates more than `max_ratio` times its compressed size: both mark a zip bomb.
    """
    out = bytearray()
    for chunk in _inflate(archive, info, name, limits, budget):
        if chunk is None:
            return None
        out += chunk
    return bytes(out)


def check_zip_container(name: str, data: bytes, kind: str, limits: ArchiveLimits | None = None) -> None:
    """Refuse a zip-based document (DOCX) that would inflate past the archive limits, before any parser opens it.

    A parser reads every part into memory at once: a 0.24 MB DOCX whose XML repeats one byte took
    427 MB. Each part is inflated here chunk by chunk and thrown away, so this costs time, not memory.

    Raises:
        LoaderError: not a zip, too many parts, a part over the per-file size, the total over the
            archive size, or a part that compresses suspiciously well.
    """
    limits = limits or ArchiveLimits()
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError):
        raise LoaderError(f"{name}: not a valid {kind} file (a {kind} is a zip archive; this one is not)") from None
    with archive:
        entries = archive.infolist()
        if len(entries) > limits.max_entries:
            raise LoaderError(
                f"{name}: this {kind} has {len(entries):,} parts, over the limit of {limits.max_entries:,}; "
                "it is not a real document"
            )
        total = 0
        for info in entries:
            for chunk in _inflate(archive, info, name, limits, limits.max_total_bytes - total):
                if chunk is None:
                    raise LoaderError(
                        f"{name}: part {info.filename!r} is larger than {mib(limits.max_file_bytes)} uncompressed"
                    )
                total += len(chunk)


def _inflate(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, limits: ArchiveLimits, budget: int
) -> Iterator[bytes | None]:
    """The entry's bytes in pieces, checked as they inflate; a final None when it passes the per-file cap.

    Read from the entry's stream and counted, never sized by its headers (they may lie), and never
    more than one byte past the nearer of the caps: that byte is enough to know it passes.
    """
    cap = min(limits.max_file_bytes, budget)
    # Allow a little slack so tiny, highly compressible files (a blank-ish page) are not refused.
    ratio_cap = max(limits.max_ratio * max(info.compress_size, 1), 64 * 1024)
    stop = int(min(cap, ratio_cap)) + 1
    size = 0
    try:
        with archive.open(info) as stream:
            while chunk := stream.read(min(_READ_CHUNK, stop - size)):
                size += len(chunk)
                if size > ratio_cap:
                    raise LoaderError(
                        f"{name}: {info.filename!r} inflates more than {limits.max_ratio:.0f} times its compressed "
                        "size; the archive looks like a zip bomb and was not expanded"
                    )
                if size > cap:
                    if cap == budget and budget < limits.max_file_bytes:
                        raise LoaderError(
                            f"{name}: expands to more than {mib(limits.max_total_bytes)}; "
                            "split it into smaller archives"
                        )
                    yield None
                    return
                yield chunk
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, NotImplementedError, RuntimeError) as e:
        raise LoaderError(f"{name}: {info.filename!r} could not be read ({e})") from None
