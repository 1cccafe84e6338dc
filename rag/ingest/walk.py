"""The folder walk: which files of the folders given are documents, and why each other file or folder is left out."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import AbstractSet, Iterable

from rag.ingest.loaders.names import SUPPORTED_SUFFIXES
from rag.ingest.reading import special_kind

# Folders that hold tool state, not documents; anything whose name starts with "." is hidden too.
_NOT_DOCUMENT_FOLDERS = {"__pycache__", "node_modules", "__MACOSX", "site-packages", "dist-packages"}


@dataclass(frozen=True)
class CollectedPaths:
    """What a folder walk found: the files to read, and every file or folder left out with the reason."""

    files: tuple[tuple[str, Path], ...]  # (source name relative to the folder given, path)
    skipped: tuple[tuple[str, str], ...]  # (path, reason)


def collect_paths(paths: Iterable[Path], own_folders: Iterable[Path] = ()) -> CollectedPaths:
    """Expand files and folders (recursively) into (source name, path); folders keep relative paths.

    In a folder, documents and `.zip` archives (expanded by the caller, within the archive limits)
    are collected; hidden files and folders (`.git`, `.env`, a file named `.md`), tool and package
    folders (`__pycache__`, `node_modules`, a Python virtual environment: its licences and READMEs
    are not the user's documents), `own_folders` (ragscope's own data dir, which `ragscope ingest .`
    in the folder holding `./data` would otherwise walk), symbolic links, what is not a regular file
    (a FIFO would block the walk's reader forever, a device never ends) and unsupported types are
    skipped, none descended into, and each is reported so nothing disappears silently. A file named
    explicitly is always collected (its reader, `rag.ingest.reading`, refuses one that is not a
    regular file, by name). A file reached twice (given twice, or also inside a folder
    given) is listed once, under the name it was first reached by: it is one document, not two.
    """
    files: dict[Path, tuple[str, Path]] = {}
    skipped: list[tuple[str, str]] = []
    own = {p.resolve() for p in own_folders}
    for path in paths:
        if not path.is_dir():
            files.setdefault(path.resolve(), (path.name, path))
            continue

        def unreadable(error: OSError) -> None:
            skipped.append((str(error.filename), f"cannot read this folder ({error.strerror})"))

        for folder, dirs, names in os.walk(path, onerror=unreadable):
            here = Path(folder)
            for d in sorted(dirs):
                reason = _left_out(d, here / d, own)
                if reason:
                    skipped.append((str(here / d) + "/", reason))
                    dirs.remove(d)
            dirs.sort()
            for name in sorted(names):
                file = here / name
                suffix = file.suffix.lower()
                reason = _left_out(name, file) or (
                    ""
                    if suffix in SUPPORTED_SUFFIXES or suffix == ".zip"
                    else f"unsupported file type {suffix or '(none)'}"
                )
                if reason:
                    skipped.append((str(file), reason))
                else:
                    files.setdefault(file.resolve(), (file.relative_to(path).as_posix(), file))
    return CollectedPaths(tuple(files.values()), tuple(skipped))


def _left_out(name: str, path: Path, own: AbstractSet[Path] = frozenset()) -> str:
    """Why a folder walk does not take this file or folder ("" when it does); folders are also judged by
    what they are (a virtual environment, ragscope's own data dir), not only by name."""
    if path.is_symlink():
        return "a symbolic link (not followed)"
    if name.startswith("."):
        return "hidden (its name starts with a dot)"
    try:
        mode = path.lstat().st_mode
    except OSError as e:
        return f"cannot read ({e.strerror})"
    if not stat.S_ISDIR(mode):
        kind = special_kind(mode)
        return f"{kind}, not a regular file (not read)" if kind else ""
    if name in _NOT_DOCUMENT_FOLDERS:
        return "tool or package folder, not documents"
    if (path / "pyvenv.cfg").is_file() or (path / "conda-meta").is_dir():
        return "a Python virtual environment, not documents"
    if path.resolve() in own:
        return "ragscope's own data folder (RAGSCOPE_DATA_DIR), not documents"
    return ""
