"""The docs cannot drift from the registries: every registered format, chunk strategy, reranker, mode and
store backend is named in README.md and docs/architecture.md, the docs' lists name none that is not
registered, and docs/architecture.md's module map lists every module in rag/ (datasette checks its docs
this way)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rag.ingest.loaders.formats import FORMATS
from rag.settings.extensions import MODES_TABLE, STRATEGIES, names
from rag.settings.rerankers import RERANKER_TABLE
from rag.store import BACKENDS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
ARCH = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")

REGISTRIES = {
    "format": tuple(f.kind for f in FORMATS),
    "strategy": names(STRATEGIES),
    "reranker": names(RERANKER_TABLE),
    "mode": names(MODES_TABLE),
    "backend": names(BACKENDS),
}


def _table_names(doc: str, header: str) -> list[str]:
    """The backticked first cells of the Markdown table whose header row starts with `| header |`."""
    lines = doc.splitlines()
    start = next(
        i for i, line in enumerate(lines) if line.startswith(f"| {header} |") and lines[i + 1].startswith("|---")
    )
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(re.match(r"\|\s*`([^`]+)`", line).group(1))
    return rows


@pytest.mark.parametrize("point", list(REGISTRIES))
def test_architecture_tables_list_each_registry_exactly(point: str) -> None:
    """Both ways: a registered name missing from its table fails, and so does a row naming nothing registered."""
    assert _table_names(ARCH, point) == list(REGISTRIES[point])


def _config_row(setting: str) -> set[str]:
    """The names the README's configuration table gives for `setting` (its last cell's backticked words)."""
    row = next(line for line in README.splitlines() if line.startswith(f"| `{setting}` |"))
    accepted = row.rsplit("|", 2)[1]
    return {re.split(r"[\[:<]", word)[0] for word in re.findall(r"`([^`]+)`", accepted)}


@pytest.mark.parametrize(
    ("setting", "point", "open_ended"),
    [
        ("RAGSCOPE_CHUNK_STRATEGY", "strategy", set()),
        ("RAGSCOPE_RERANKER", "reranker", {"cross-encoder"}),
        ("RAGSCOPE_MODE", "mode", set()),
    ],
)
def test_readme_configuration_names_each_registered_choice_and_no_other(
    setting: str, point: str, open_ended: set[str]
) -> None:
    assert _config_row(setting) == set(REGISTRIES[point]) | open_ended


def test_readme_and_architecture_name_every_format_by_its_label() -> None:
    labels = [f.label for f in FORMATS]
    assert labels
    assert [label for label in labels if not re.search(rf"\b{re.escape(label)}\b", README)] == []
    assert [label for label in labels if f"| {label} |" not in ARCH] == []


def _module_map() -> dict[str, str]:
    """docs/architecture.md's map: each `rag/<package>/` line's text, by package folder."""
    block = ARCH.split("```\nrag/__init__.py", 1)[1].split("```", 1)[0]
    lines = {"rag/": block.splitlines()[0]}
    for line in block.splitlines()[1:]:
        if match := re.match(r"(rag/\S+/)\s+(.*)", line):
            lines[match.group(1)] = match.group(2)
    return lines


def test_architecture_module_map_lists_every_module_in_rag() -> None:
    lines = _module_map()
    modules = sorted(p for p in (ROOT / "rag").rglob("*.py") if "resources" not in p.parts)
    assert len(modules) > 100
    missing = []
    for path in modules:
        folder = path.parent.relative_to(ROOT).as_posix() + "/"
        text = lines.get(folder)
        if text is None:
            missing.append(f"{folder} (no line)")
        elif path.stem != "__init__" and not re.search(rf"\b{re.escape(path.stem)}\b", text):
            missing.append(path.relative_to(ROOT).as_posix())
    assert sorted(set(missing)) == []
