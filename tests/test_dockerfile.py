"""The Dockerfile copies every module the app imports at start.

No Docker engine runs here, so the image is never built in CI: a module moved to a folder the
Dockerfile does not copy would break the image silently. This follows the imports statically from
app.py and every page it registers, and checks each project file reached against the COPY lines.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent


def _copied_sources() -> list[PurePosixPath]:
    """The project paths the Dockerfile's COPY lines bring into the image (sources only, not the target)."""
    out = []
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        parts = line.split()
        if parts and parts[0] == "COPY" and not any(p.startswith("--from") for p in parts):
            out.extend(PurePosixPath(p.rstrip("/")) for p in parts[1:-1])
    return out


def _is_copied(path: Path, copied: list[PurePosixPath]) -> bool:
    rel = PurePosixPath(path.relative_to(ROOT).as_posix())
    return any(rel == src or src in rel.parents or (("*" in str(src)) and rel.match(str(src))) for src in copied)


def _module_file(name: str) -> Path | None:
    """The project file behind a dotted module name, or None for third-party and standard modules."""
    base = ROOT.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(path: Path) -> set[str]:
    """Every module name the file imports, at any depth (lazy imports inside functions count: they run too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _registered_pages() -> list[Path]:
    """The page files app.py hands to st.navigation."""
    text = (ROOT / "app.py").read_text()
    return [ROOT / p for p in re.findall(r"st\.Page\(\s*\"([^\"]+\.py)\"", text)]


def _reached_files() -> set[Path]:
    todo = [ROOT / "app.py", *_registered_pages()]
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for name in _imports(path):
            parts = name.split(".")
            for i in range(1, len(parts) + 1):  # a package's __init__ runs before its submodule
                found = _module_file(".".join(parts[:i]))
                if found is not None:
                    todo.append(found)
    return seen


def test_app_pages_are_registered_and_exist():
    pages = _registered_pages()
    assert len(pages) >= 3
    assert all(p.is_file() for p in pages), [p for p in pages if not p.is_file()]


def test_every_module_the_app_imports_is_copied_into_the_image():
    copied = _copied_sources()
    reached = _reached_files()
    # The walk must reach the shared UI helpers and the engine, or it proves nothing.
    assert any(p.parts[-2] == "ui" for p in reached) and any("rag" in p.parts for p in reached)
    missing = sorted(str(p.relative_to(ROOT)) for p in reached if not _is_copied(p, copied))
    assert not missing, f"Dockerfile does not COPY: {missing}"


def test_the_check_notices_a_module_outside_the_copied_paths():
    """The guard itself can fail: a file outside every COPY line is reported."""
    copied = _copied_sources()
    assert not _is_copied(ROOT / "bench" / "ingest.py", copied)
    assert _is_copied(ROOT / "ui" / "setup.py", copied)


def test_streamlit_config_is_copied():
    assert _is_copied(ROOT / ".streamlit" / "config.toml", _copied_sources())
