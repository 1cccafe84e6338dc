"""Python source (.py) through the standard library's `ast`: one section per function and class, each
written with the file's import lines so that it reads (and retrieves) on its own.

A chunk is always an exact span of the document's text (citations open `text[start:end]`), so a unit can
only start with the imports if the text holds them there: the document is the module laid out unit by unit,

    # package.module            <- the module, its docstring as prose, its other top-level code
    ## function                 <- a fence: the imports, then the function as written
    ## SmallClass               <- the imports, then the whole class
    ## LargeClass               <- a class over LARGE_CLASS_CHARS: the imports, the class without its methods
    ### method                  <- the imports, the `class` line, then the method as written

so the heading path of a method is `module > Class > method`, and every strategy's chunks keep those
units apart (a heading is never crossed); the `code` strategy also keeps each unit whole
(rag.ingest.chunker). A file that does not parse as Python 3 (Python 2, a template) is still a document:
one listing under the module heading.
"""

from __future__ import annotations

import ast
import posixpath

from rag.ingest.loaders.fences import fenced
from rag.ingest.loaders.text import decode_text

# About what a 512-token encoder window reads of code: a class longer than this is cut into its methods,
# one retrieval unit each; a shorter one is more useful whole.
LARGE_CLASS_CHARS = 2000
_UNITS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def parse_python(data: bytes, source: str) -> tuple[str, tuple[int, ...], str]:
    code = decode_text(data, source).replace("\r\n", "\n").replace("\r", "\n")
    module = module_name(source)
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return f"# {module}\n\n{fenced(code, 'python')}", (), module
    lines = code.split("\n")
    imports = "\n".join(_lines(lines, node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom)))
    blocks = [f"# {module}"]
    docstring = ast.get_docstring(tree)
    skip = [(tree.body[0].lineno, tree.body[0].end_lineno or 0)] if docstring else []
    blocks += [" ".join(p.split()) for p in (docstring or "").split("\n\n") if p.strip()]
    units = [node for node in tree.body if isinstance(node, _UNITS)]
    rest = _without(lines, 1, len(lines), skip + [_span(lines, u) for u in units])
    if rest.strip():
        blocks.append(fenced(rest, "python"))
    for unit in units:
        blocks += _unit_blocks(lines, unit, imports)
    return "\n\n".join(blocks), (), module


def module_name(source: str) -> str:
    """`pkg/sub/mod.py` -> `pkg.sub.mod` (a package's `__init__.py` is the package)."""
    parts = posixpath.splitext(source)[0].split("/")
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def _unit_blocks(lines: list[str], unit: ast.stmt, imports: str) -> list[str]:
    name = unit.name  # type: ignore[attr-defined]
    whole = _lines(lines, unit)
    methods = [n for n in unit.body if isinstance(n, _FUNCTIONS)] if isinstance(unit, ast.ClassDef) else []
    if len(whole) <= LARGE_CLASS_CHARS or not methods:
        return [f"## {name}", fenced(_with(imports, whole), "python")]
    start, end = _span(lines, unit)
    header = _without(lines, start, end, [_span(lines, m) for m in methods])
    signature = lines[unit.lineno - 1]
    blocks = [f"## {name}", fenced(_with(imports, header), "python")]
    for method in methods:
        blocks += [f"### {method.name}", fenced(_with(imports, signature + "\n" + _lines(lines, method)), "python")]
    return blocks


def _span(lines: list[str], node: ast.stmt) -> tuple[int, int]:
    """1-based first and last line of `node`: its decorators and the comment lines right above it included."""
    start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    while start > 1 and lines[start - 2].lstrip().startswith("#"):
        start -= 1
    return start, node.end_lineno or node.lineno


def _lines(lines: list[str], node: ast.stmt) -> str:
    start, end = _span(lines, node)
    return "\n".join(lines[start - 1 : end])


def _without(lines: list[str], start: int, end: int, holes: list[tuple[int, int]]) -> str:
    """Lines start..end (1-based) except those inside `holes`, runs of blank lines made one."""
    kept = [lines[i - 1] for i in range(start, end + 1) if not any(a <= i <= b for a, b in holes)]
    out: list[str] = []
    for line in kept:
        if line.strip() or (out and out[-1].strip()):
            out.append(line)
    return "\n".join(out).strip("\n")


def _with(imports: str, code: str) -> str:
    return f"{imports}\n\n{code}" if imports else code
