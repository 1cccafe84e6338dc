"""Python source (.py) through the standard library's `ast`: one section per function and class, each
written with the imports it uses so that it reads (and retrieves) on its own.

A chunk is always an exact span of the document's text (citations open `text[start:end]`), so a unit can
only start with its imports if the text holds them there: the document is the module laid out unit by unit,

    # package.module            <- the module, its docstring as prose, its other top-level code
    ## function                 <- a fence: the imports it uses, then the function as written
    ## SmallClass               <- the imports it uses, then the whole class
    ## LargeClass               <- a class over LARGE_CLASS_CHARS: its imports, the class without its methods
    ### method                  <- the imports it uses, the `class` line, then the method as written

so the heading path of a method is `module > Class > method`, and every strategy's chunks keep those
units apart (a heading is never crossed); the `code` strategy also keeps each unit whole
(rag.ingest.chunker). A unit carries only the top-level imports whose names its code mentions, at most
MAX_UNIT_IMPORTS of them: copying every import into every unit made a module of 800 imports and 800
functions 640,000 import lines long (the module section still holds them all, as written). Every step
is linear in the file: a file of one-line functions is laid out as fast per line as any other.

The file is decoded as Python reads it (PEP 263): a BOM or a `# -*- coding: latin-1 -*-` line names the
encoding; without one, the text loader's detection (rag.ingest.loaders.text). A file that does not parse
as Python 3 (Python 2, a template) is still a document: one listing under the module heading.
"""

from __future__ import annotations

import ast
import copy
import io
import posixpath
import tokenize
from collections.abc import Iterable

from rag.ingest.loaders.fences import fenced
from rag.ingest.loaders.text import decode_text

# About what a 512-token encoder window reads of code: a class longer than this is cut into its methods,
# one retrieval unit each; a shorter one is more useful whole.
LARGE_CLASS_CHARS = 2000
# Import statements written before one unit: enough for any function's real needs, and a bound on what a
# unit can repeat of the module whatever the module imports.
MAX_UNIT_IMPORTS = 20
_UNITS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def parse_python(data: bytes, source: str) -> tuple[str, tuple[int, ...], str]:
    code = decode_python(data, source).replace("\r\n", "\n").replace("\r", "\n")
    module = module_name(source)
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return f"# {module}\n\n{fenced(code, 'python')}", (), module
    lines = code.split("\n")
    imports = _Imports(lines, [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))])
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


def decode_python(data: bytes, source: str) -> str:
    """The file's text in the encoding its BOM or PEP 263 coding line names (`tokenize.detect_encoding`, as
    the interpreter reads it); a file that names none, or an unknown one, is decoded as any text file."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:  # a coding line naming no codec, or a BOM that contradicts it
        encoding = "utf-8"
    return decode_text(data, source, declared=None if encoding == "utf-8" else encoding)


def module_name(source: str) -> str:
    """`pkg/sub/mod.py` -> `pkg.sub.mod` (a package's `__init__.py` is the package)."""
    parts = posixpath.splitext(source)[0].split("/")
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


class _Imports:
    """The module's top-level import statements, found by the names they bind.

    `for_code(nodes)` writes the statements that bind a name the nodes use, in source order, each cut
    to the names used (`from typing import Any` out of `from typing import Any, Callable`); a statement
    used whole is copied as written. Star imports bind names nobody can list, so they go with every unit.
    """

    def __init__(self, lines: list[str], statements: list[ast.Import | ast.ImportFrom]) -> None:
        self._lines = lines
        self._statements = statements
        self._by_name: dict[str, list[tuple[int, int]]] = {}  # bound name -> (statement, alias) positions
        self._stars: list[int] = []  # in source order
        for s, statement in enumerate(statements):
            for a, alias in enumerate(statement.names):
                if alias.name == "*":
                    self._stars.append(s)
                else:
                    bound = alias.asname or alias.name.split(".", 1)[0]
                    self._by_name.setdefault(bound, []).append((s, a))

    def for_code(self, nodes: Iterable[ast.AST]) -> str:
        used: dict[int, set[int]] = {s: set() for s in self._stars[:MAX_UNIT_IMPORTS]}
        for name in _names(nodes):
            for s, a in self._by_name.get(name, ()):
                used.setdefault(s, set()).add(a)
        written = []
        for s in sorted(used)[:MAX_UNIT_IMPORTS]:
            statement = self._statements[s]
            if len(used[s]) == len(statement.names) or any(alias.name == "*" for alias in statement.names):
                written.append(_lines(self._lines, statement, comments=False))
            else:
                part = copy.copy(statement)
                part.names = [alias for a, alias in enumerate(statement.names) if a in used[s]]
                written.append(ast.unparse(part))
        return "\n".join(written)


def _names(nodes: Iterable[ast.AST]) -> set[str]:
    """Every name the code reads or writes (`os` of `os.path.join` too), string annotations included."""
    names: set[str] = set()
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                names.add(sub.id)
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str) and sub.value.isidentifier():
                names.add(sub.value)  # a forward reference ("Path") or a name in a string annotation
    return names


_Unit = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _unit_blocks(lines: list[str], unit: _Unit, imports: _Imports) -> list[str]:
    name = unit.name
    whole = _lines(lines, unit)
    methods = [n for n in unit.body if isinstance(n, _FUNCTIONS)] if isinstance(unit, ast.ClassDef) else []
    if len(whole) <= LARGE_CLASS_CHARS or not methods or not isinstance(unit, ast.ClassDef):
        return [f"## {name}", fenced(_with(imports.for_code([unit]), whole), "python")]
    start, end = _span(lines, unit)
    header = _without(lines, start, end, [_span(lines, m) for m in methods])
    signature = lines[unit.lineno - 1]
    line_parts = [*unit.decorator_list, *unit.bases, *unit.keywords]
    rest = [n for n in unit.body if not isinstance(n, _FUNCTIONS)]
    blocks = [f"## {name}", fenced(_with(imports.for_code(line_parts + rest), header), "python")]
    for method in methods:
        code = signature + "\n" + _lines(lines, method)
        blocks += [f"### {method.name}", fenced(_with(imports.for_code([*line_parts, method]), code), "python")]
    return blocks


def _span(lines: list[str], node: ast.stmt, comments: bool = True) -> tuple[int, int]:
    """1-based first and last line of `node`: its decorators and (with `comments`) the comment lines right
    above it included."""
    start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    while comments and start > 1 and lines[start - 2].lstrip().startswith("#"):
        start -= 1
    return start, node.end_lineno or node.lineno


def _lines(lines: list[str], node: ast.stmt, comments: bool = True) -> str:
    start, end = _span(lines, node, comments)
    return "\n".join(lines[start - 1 : end])


def _without(lines: list[str], start: int, end: int, holes: list[tuple[int, int]]) -> str:
    """Lines start..end (1-based) except those inside `holes`, runs of blank lines made one.

    The holes are marked once (they never overlap: units, or one class's methods), so this is linear in the
    lines and the holes, not their product."""
    dropped = bytearray(end - start + 1)
    for a, b in holes:
        lo, hi = max(a, start) - start, min(b, end) - start
        if lo <= hi:
            dropped[lo : hi + 1] = b"\x01" * (hi - lo + 1)
    out: list[str] = []
    for i in range(start, end + 1):
        line = lines[i - 1]
        if not dropped[i - start] and (line.strip() or (out and out[-1].strip())):
            out.append(line)
    return "\n".join(out).strip("\n")


def _with(imports: str, code: str) -> str:
    return f"{imports}\n\n{code}" if imports else code
