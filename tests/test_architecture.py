"""The house rules as checks: stages import downward only, no import circles (deferred imports count),
the engine never imports Streamlit or the front end, pages stay thin.

The stage order is written once, here and in docs/architecture.md (a test below keeps the two equal).
`text` is the floor: pure functions on strings that every stage, settings included, may use.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RAG = ROOT / "rag"

# Loose modules at the top of rag/ sit in this order too: errors, types and lazy under everything,
# components (store + encoders, built from settings) right above the encoders.
LAYERS: tuple[str, ...] = (
    "errors", "types", "lazy", "text", "settings", "store", "encoders", "components",
    "ingest", "catalog", "retrieval", "answer", "modes", "ask", "inspect", "eval", "cli",
)  # fmt: skip
PAGE_LINES = 210  # "under ~200 lines" (DEVELOPERS.md): a page past this moves logic into ui/ or rag/


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every absolute `rag...` (or any) module this file imports, at any depth (a deferred import counts)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in RAG.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        graph[name] = {m for _, m in _imports(path) if m in modules and m != name}
    return graph


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "rag"


def test_every_package_and_loose_module_of_rag_has_a_layer() -> None:
    present = {_layer(_module_name(p)) for p in RAG.rglob("*.py")} - {"rag", "__main__"}
    assert present, "rag/ holds no modules"
    assert present <= set(LAYERS), f"not in LAYERS (add them in stage order): {sorted(present - set(LAYERS))}"


def test_stages_import_downward_only() -> None:
    upward = []
    for path in RAG.rglob("*.py"):
        source = _layer(_module_name(path))
        if source not in LAYERS:
            continue
        for line, target in _imports(path):
            if target.startswith("rag.") and (dest := _layer(target)) in LAYERS:
                if LAYERS.index(dest) > LAYERS.index(source):
                    upward.append(f"{path.relative_to(ROOT)}:{line} ({source}) imports {target} ({dest})")
    assert not upward, "imports that run back up the stage order:\n" + "\n".join(sorted(set(upward)))


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    part = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        part.append(top)
                        if top == node:
                            break
                    if len(part) > 1:
                        found.append(sorted(part))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_no_import_circles_between_modules_or_packages() -> None:
    graph = _graph()
    assert len(graph) > 50, "the module graph was not read"
    assert not _cycles(graph), f"module circles: {_cycles(graph)}"
    packages: dict[str, set[str]] = {}
    for module, targets in graph.items():
        packages.setdefault(_layer(module), set()).update(_layer(t) for t in targets if _layer(t) != _layer(module))
    assert not _cycles(packages), f"package circles: {_cycles(packages)}"


def test_the_cycle_finder_finds_a_circle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_engine_never_imports_streamlit_or_the_front_end() -> None:
    offending = [
        f"{path.relative_to(ROOT)}:{line} imports {target}"
        for path in RAG.rglob("*.py")
        for line, target in _imports(path)
        if target.split(".")[0] in ("streamlit", "ui", "pages")
    ]
    assert not offending, "\n".join(offending)


@pytest.mark.parametrize("page", sorted((ROOT / "pages").glob("*.py")), ids=lambda p: p.name)
def test_pages_stay_thin(page: Path) -> None:
    lines = len(page.read_text(encoding="utf-8").splitlines())
    assert lines <= PAGE_LINES, f"{page.name} has {lines} lines: move logic into ui/ or rag/"


def test_the_architecture_doc_states_the_same_stage_order() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    match = re.search(r"Stage order \(checked by tests/test_architecture\.py\): `([^`]+)`", doc)
    assert match, "docs/architecture.md must state the stage order"
    assert tuple(match.group(1).split(" < ")) == LAYERS
