"""The docs cover what the code offers and name only what exists.

Every setting's variable is in README.md's configuration table, every retrieval option the CLI derives from
the settings is in its command-line section, and every `ragscope` command has a row there (both ways: a row
for something that is gone fails too). And every module, file, function or class attribute that a comment,
a docstring, docs/*.md, bench/README.md or README.md names by its path or dotted name exists: a reference to
a function that moved sends a reader to nothing. (tests/test_docs_match_registries.py does the same for the
registries.)
"""

from __future__ import annotations

import ast
import dataclasses
import io
import re
import tokenize
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import click
import pytest

from rag.cli import main
from rag.settings.config import RetrievalConfig, Settings
from rag.settings.spec import Knob, knobs

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _all_knobs(cls: type = Settings) -> list[Knob]:
    """Every described setting of `cls` and of its nested config parts (chunk, retrieval, answer)."""
    nested = [type(f.default) for f in dataclasses.fields(cls) if dataclasses.is_dataclass(f.default)]
    return [*knobs(cls), *(k for part in nested for k in _all_knobs(part))]


def _section(doc: str, heading: str) -> str:
    """The text under `## heading`, up to the next `## `."""
    return doc.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def _table_first_cells(doc: str, header: str) -> list[str]:
    """The first cells of the Markdown table whose header row starts with `| header |`."""
    lines = doc.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {header} |"))
    assert lines[start + 1].startswith("|---"), lines[start + 1]
    cells = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells.append(line.split(" | ", 1)[0].removeprefix("| "))
    return cells


def test_readme_configuration_table_lists_every_settings_variable_and_no_other() -> None:
    envs = [k.env for k in _all_knobs() if k.env]
    assert len(envs) > 40 and len(envs) == len(set(envs))
    listed = [name for cell in _table_first_cells(README, "variable") for name in re.findall(r"`([^`]+)`", cell)]
    assert len(listed) == len(set(listed))
    assert {"missing": set(envs) - set(listed), "not a setting": set(listed) - set(envs)} == {
        "missing": set(),
        "not a setting": set(),
    }


def _retrieval_flags(command: click.Command) -> set[str]:
    """The option names `command` has for RetrievalConfig settings, as its parser declares them (with --no- twins)."""
    fields = {k.name for k in knobs(RetrievalConfig) if k.cli}
    return {
        flag
        for p in command.params
        if isinstance(p, click.Option) and p.name in fields
        for flag in (*p.opts, *p.secondary_opts)
    }


def _options_paragraph() -> str:
    """README's paragraph on the shared retrieval options."""
    cli = _section(README, "Command line")
    return next(p for p in cli.split("\n\n") if "share the retrieval options" in p)


def test_readme_names_the_commands_taking_retrieval_options_and_every_such_option() -> None:
    paragraph = _options_paragraph()
    takers = {name for name, c in main.commands.items() if _retrieval_flags(c)}
    named = set(re.findall(r"`([a-z-]+)`", paragraph.split(" share the retrieval options", 1)[0]))
    assert takers and named == takers
    flags = set.union(*(_retrieval_flags(main.commands[name]) for name in takers))
    assert {"-k", "--collapse", "--no-collapse", "--mode"} <= flags
    assert set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", paragraph)) == flags


def test_every_ragscope_command_has_a_row_in_the_readme_command_table() -> None:
    rows = {re.match(r"`([\w-]+)", cell).group(1) for cell in _table_first_cells(README, "command")}
    assert len(main.commands) > 10
    assert rows == set(main.commands)


# References the docs make on purpose to something that is not in this repository, each with why; each must
# still be in the docs and still not exist, so this list cannot outlive its reason.
NOT_OURS = {
    "docs/en/docs": "the FastAPI repository's docs folder (under ../shared/data/fastapi_docs)",
    "rag/ingest/loaders/odt.py": "docs/architecture.md's worked example of adding a format",
    "rag.ingest.loaders.odt:parse_odt": "the same worked example's registry row",
}
# A repository path: a top folder of ours, then path characters, not inside a longer path (../shared/data/docs/).
PATH = re.compile(r"(?<![\w./-])((?:rag|bench|tests|ui|pages|docs)/[\w./-]*[\w/])")
# A dotted name in the package: a module, then maybe a function, class or class attribute in it, and maybe a
# `:name` as FORMATS writes its parsers.
DOTTED = re.compile(r"(?<![\w./-])(rag(?:\.\w+)+(?::\w+)?)")
# A class of ours and an attribute of it (Settings.from_env), not part of a longer dotted name.
CLASS_ATTR = re.compile(r"(?<![\w.])([A-Z]\w*)\.([A-Za-z_]\w*)\b")
# A Python file and a name in it (rag/inspect/suggest.py K_FACTOR, ui/setup.py `get_components`): the name in
# backticks or with an inner underscore, so a command's argument (bench/peer_ingest.py FOLDER) is not taken for one.
PATH_NAME = re.compile(r"(?<![\w./-])((?:rag|bench|ui|pages|tests)/[\w/]+)\.py`?,? (`\w+`|[A-Za-z]\w*_\w+)")
FILE_SUFFIXES = {".py", ".md", ".toml", ".json", ".jsonl", ".txt", ".png", ".csv", ".yml", ".yaml", ".html", ".css"}


def _python_texts(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of each comment and docstring of a Python file."""
    source = path.read_text(encoding="utf-8")
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None:
                for offset, line in enumerate(doc.splitlines()):
                    yield node.body[0].lineno + offset, line


def _texts() -> Iterator[tuple[str, int, str]]:
    """(file, line, text) of everything whose references are checked."""
    code = [*ROOT.glob("rag/**/*.py"), *ROOT.glob("ui/*.py"), *ROOT.glob("pages/*.py"), ROOT / "app.py"]
    code += [*ROOT.glob("bench/*.py"), *ROOT.glob("tests/**/*.py")]
    for path in sorted(code):
        for line, text in _python_texts(path):
            yield path.relative_to(ROOT).as_posix(), line, text
    for path in [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted(ROOT.glob("docs/*.md"))]:
        for line, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            yield path.relative_to(ROOT).as_posix(), line, text


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _defined(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """The names a module or class body binds: defs, classes, assignments, imports (also under if / try)."""
    out: dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, ast.Assign):
            targets = [e for t in node.targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
            out |= {t.id: node for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0]: node for a in node.names}
        elif isinstance(node, (ast.If, ast.Try)):
            out |= _defined(node.body + getattr(node, "orelse", []))
    return out


def _module_file(parts: list[str]) -> Path | None:
    base = ROOT.joinpath(*parts)
    return next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)


def _resolves(dotted: str) -> bool:
    """Whether `a.b.c` is a module of the repository followed by names bound in it (a class's attributes too)."""
    parts = dotted.replace(":", ".").split(".")
    for i in range(len(parts), 0, -1):
        if (module := _module_file(parts[:i])) is not None:
            break
    else:
        return False
    body, rest = _tree(module).body, parts[i:]
    for j, name in enumerate(rest):
        node = _defined(body).get(name)
        if node is None:
            return False
        if isinstance(node, ast.ClassDef):
            body = node.body
        elif isinstance(node, ast.ImportFrom) and node.module and j < len(rest) - 1:
            return _resolves(".".join([node.module, *rest[j:]]))
        elif j < len(rest) - 1:
            return True  # an attribute of a value: not followed
    return True


def _path_resolves(ref: str) -> bool:
    """A file or folder, a module written without `.py` (rag/settings/atomic), or a module and an attribute
    (ui/setup.get_components)."""
    if (ROOT / ref).exists() or (ROOT / f"{ref}.py").is_file():
        return True
    stem, dot, attr = ref.rpartition(".")
    return bool(dot) and f".{attr}" not in FILE_SUFFIXES and _resolves(f"{stem.replace('/', '.')}.{attr}")


@cache
def _classes() -> dict[str, list[ast.ClassDef]]:
    out: dict[str, list[ast.ClassDef]] = {}
    for path in ROOT.glob("rag/**/*.py"):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ClassDef):
                out.setdefault(node.name, []).append(node)
    return out


def _class_attributes(cls: ast.ClassDef) -> set[str]:
    """Names a class body binds, `self.x` assignments in its methods, and what its bases of ours give it."""
    names = set(_defined(cls.body))
    names |= {
        n.attr
        for n in ast.walk(cls)
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and getattr(n.value, "id", "") == "self"
    }
    for base in cls.bases:
        base_name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")
        names |= {a for other in _classes().get(base_name, []) if other is not cls for a in _class_attributes(other)}
    return names


def _path_name_resolves(ref: str) -> bool:
    path, name = ref.split(" ")
    return _resolves(f"{path.removesuffix('.py').replace('/', '.')}.{name.strip('`')}")


def _class_attribute_resolves(ref: str) -> bool:
    cls, attr = ref.split(".")
    return any(attr in _class_attributes(c) for c in _classes()[cls])


def _broken_references(texts: Iterator[tuple[str, int, str]]) -> tuple[int, list[str]]:
    """How many references were checked, and "file:line: reference" for each that names nothing."""
    checked, broken = 0, []
    for where, line, text in texts:
        refs = [(m.group(1), _path_resolves) for m in PATH.finditer(text)]
        refs += [(m.group(1), _resolves) for m in DOTTED.finditer(text)]
        refs += [(f"{m[1]}.py {m[2]}", _path_name_resolves) for m in PATH_NAME.finditer(text)]
        refs += [(m.group(0), _class_attribute_resolves) for m in CLASS_ATTR.finditer(text) if m.group(1) in _classes()]
        for ref, resolves in refs:
            checked += 1
            if ref not in NOT_OURS and not resolves(ref):
                broken.append(f"{where}:{line}: {ref}")
    return checked, broken


def test_every_module_function_and_file_the_comments_and_docs_name_exists() -> None:
    checked, broken = _broken_references(_texts())
    assert checked > 500
    assert broken == []


def test_the_references_not_ours_are_still_made_and_still_not_ours() -> None:
    made = {ref for _, _, text in _texts() for ref in NOT_OURS if ref in text}
    assert made == set(NOT_OURS)
    assert not any(_path_resolves(ref) or _resolves(ref) for ref in NOT_OURS)


@pytest.mark.parametrize(
    ("text", "checked", "broken"),
    [
        ("see rag/retrieval/retrieve.py", 1, []),
        ("see rag/retrieval/retreive.py", 1, ["rag/retrieval/retreive.py"]),
        ("(rag.modes.run.run_mode)", 1, []),
        ("(rag.modes.run_mode)", 1, ["rag.modes.run_mode"]),
        ("`rag.settings.config.Settings.from_env`", 1, []),
        ("`rag.settings.config.Settings.from_file`", 1, ["rag.settings.config.Settings.from_file"]),
        ("ui/setup.get_components caches", 1, []),
        ("ui/setup.get_engine caches", 1, ["ui/setup.get_engine"]),
        ("(rag/inspect/suggest.py K_FACTOR)", 2, []),
        ("(rag/inspect/suggest.py K_FACTORS)", 2, ["rag/inspect/suggest.py K_FACTORS"]),
        ("`rag/eval/tune.py` `plan_configs`", 2, []),
        ("(Knob.applies)", 1, []),
        ("(Spec.applies)", 1, ["Spec.applies"]),
        ("run bench/peer_ingest.py FOLDER", 1, []),
        ("a ../shared/data/x/rag/nothing.py path, a Path.home, config.mode, ragscope.toml", 0, []),
    ],
)
def test_a_reference_to_something_that_moved_is_caught_and_one_that_exists_is_not(
    text: str, checked: int, broken: list[str]
) -> None:
    assert _broken_references(iter([("example.md", 1, text)])) == (checked, [f"example.md:1: {b}" for b in broken])
