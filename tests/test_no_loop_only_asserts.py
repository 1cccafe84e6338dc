"""No test whose every check sits inside a loop: over an empty list it runs none and passes.

A test that checks each chunk (`for c in chunks: assert ...`, or `assert all(... for c in chunks)`) must
also check outside the loop, usually that there are chunks (`assert chunks`, `assert len(hits) == 3`).
A loop over something that cannot be empty (a literal tuple, `range(3)`, a name bound once to one) needs
no guard. Checks are `assert` statements, `pytest.raises` blocks and calls of `assert_*` helpers.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_WRAPPERS = ("enumerate", "sorted", "reversed", "list", "tuple", "set", "dict")


def _literals(scope: list[ast.stmt]) -> dict[str, ast.expr]:
    """Names a body binds exactly once, by a plain `name = <value>`, with the value bound."""
    bound: dict[str, list[ast.expr]] = {}
    for node in ast.walk(ast.Module(body=scope, type_ignores=[])):
        targets = node.targets if isinstance(node, ast.Assign) else []
        targets += [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For)) else []
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    bound.setdefault(name.id, []).append(node.value if isinstance(node, ast.Assign) else None)
    return {name: values[0] for name, values in bound.items() if len(values) == 1 and values[0] is not None}


def _never_empty(it: ast.expr, names: dict[str, ast.expr]) -> bool:
    """Whether iterating `it` certainly yields something: a literal with items, range(positive constant), or
    a name bound once to one (its .items() / .keys() / .values() too)."""
    if isinstance(it, (ast.Tuple, ast.List, ast.Set)):
        return bool(it.elts) and not all(isinstance(e, ast.Starred) for e in it.elts)
    if isinstance(it, ast.Dict):
        return bool(it.keys)
    if isinstance(it, ast.Name):
        value = names.get(it.id)
        return value is not None and _never_empty(value, {k: v for k, v in names.items() if k != it.id})
    if isinstance(it, ast.Call) and not it.keywords:
        func = it.func
        if isinstance(func, ast.Name) and func.id == "range" and all(isinstance(a, ast.Constant) for a in it.args):
            return len(range(*(a.value for a in it.args))) > 0
        if isinstance(func, ast.Name) and func.id in _WRAPPERS and len(it.args) == 1:
            return _never_empty(it.args[0], names)
        if isinstance(func, ast.Attribute) and func.attr in ("items", "keys", "values") and not it.args:
            return _never_empty(func.value, names)
    return False


def _is_check_call(node: ast.AST) -> bool:
    """A call of an `assert_*` helper (ours, numpy's)."""
    if not isinstance(node, ast.Call):
        return False
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    return name.startswith("assert")


def _is_raises(node: ast.With) -> bool:
    return any(
        isinstance(item.context_expr, ast.Call) and getattr(item.context_expr.func, "attr", "") == "raises"
        for item in node.items
    )


def _vacuous_all(test: ast.expr, names: dict[str, ast.expr]) -> bool:
    """`all(... for x in xs)`: true when xs is empty."""
    if not (isinstance(test, ast.Call) and getattr(test.func, "id", "") == "all" and len(test.args) == 1):
        return False
    comp = test.args[0]
    return isinstance(comp, (ast.GeneratorExp, ast.ListComp, ast.SetComp)) and not all(
        _never_empty(g.iter, names) for g in comp.generators
    )


def _checks(node: ast.AST, names: dict[str, ast.expr], in_loop: bool = False) -> list[bool]:
    """For each check under `node` (nested functions and classes left out): whether only a loop that may
    run zero times reaches it."""
    out = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _NESTED):
            continue
        if isinstance(child, (ast.For, ast.AsyncFor)):
            out += _checks(child.iter, names, in_loop)
            loop = in_loop or not _never_empty(child.iter, names)
            out += [c for stmt in child.body for c in _checks(ast.Module(body=[stmt], type_ignores=[]), names, loop)]
            out += [
                c for stmt in child.orelse for c in _checks(ast.Module(body=[stmt], type_ignores=[]), names, in_loop)
            ]
            continue
        if isinstance(child, ast.Assert):
            out.append(in_loop or _vacuous_all(child.test, names))
        elif (isinstance(child, ast.With) and _is_raises(child)) or _is_check_call(child):
            out.append(in_loop)
        out += _checks(child, names, in_loop)
    return out


def _tests(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    functions = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    functions += [
        m
        for n in tree.body
        if isinstance(n, ast.ClassDef)
        for m in n.body
        if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    return [f for f in functions if f.name.startswith("test")]


def loop_only_tests(source: str) -> list[str]:
    """The tests in `source` that check something, but only inside loops that may run zero times."""
    tree = ast.parse(source)
    module_names = _literals([n for n in tree.body if not isinstance(n, _NESTED)])
    offenders = []
    for test in _tests(tree):
        params = {a.arg for a in (*test.args.posonlyargs, *test.args.args, *test.args.kwonlyargs)}
        names = {k: v for k, v in module_names.items() if k not in params} | _literals(test.body)
        checks = _checks(test, names)
        if checks and all(checks):
            offenders.append(test.name)
    return offenders


def test_no_test_in_the_suite_checks_only_inside_loops() -> None:
    files = sorted(ROOT.glob("tests/**/*.py"))
    assert len(files) > 100
    found = [
        f"{path.relative_to(ROOT).as_posix()}::{name}"
        for path in files
        for name in loop_only_tests(path.read_text(encoding="utf-8"))
    ]
    assert found == []


_CASES = {
    "a check only in a loop": ("def test_a(xs):\n    for x in xs:\n        assert x > 0\n", ["test_a"]),
    "a loop in a loop": ("def test_a(xs):\n    for x in xs:\n        for y in x:\n            assert y\n", ["test_a"]),
    "all() over a comprehension": ("def test_a(xs):\n    assert all(x > 0 for x in xs)\n", ["test_a"]),
    "an assert_ helper in a loop": ("def test_a(xs):\n    for x in xs:\n        assert_inert(x)\n", ["test_a"]),
    "a method of a test class": (
        "class TestA:\n    def test_a(self, xs):\n        for x in xs:\n            assert x\n",
        ["test_a"],
    ),
    "guarded": ("def test_a(xs):\n    assert xs\n    for x in xs:\n        assert x > 0\n", []),
    "guarded after": ("def test_a(xs):\n    for x in xs:\n        assert x > 0\n    assert len(xs) == 3\n", []),
    "all() guarded": ("def test_a(xs):\n    assert len(xs) == 2 and all(x > 0 for x in xs)\n", []),
    "over a literal": ("def test_a():\n    for x in (1, 2):\n        assert x > 0\n", []),
    "over range": ("def test_a():\n    for i in range(3):\n        assert f(i)\n", []),
    "over a module constant": (
        "CASES = {'a': 1}\ndef test_a():\n    for k, v in CASES.items():\n        assert f(k) == v\n",
        [],
    ),
    "over a rebound name": (
        "CASES = (1,)\nCASES = ()\ndef test_a():\n    for x in CASES:\n        assert x\n",
        ["test_a"],
    ),
    "over an empty literal": ("def test_a():\n    for x in ():\n        assert x\n", ["test_a"]),
    "a raises block outside": (
        "def test_a(xs):\n    with pytest.raises(E):\n        f()\n    for x in xs:\n        assert x\n",
        [],
    ),
    "no check at all": ("def test_a():\n    f()\n", []),
    "a helper that is not a test": ("def _check(xs):\n    for x in xs:\n        assert x\n", []),
}


@pytest.mark.parametrize("case", list(_CASES))
def test_the_detector_flags_a_new_loop_only_test_and_no_guarded_one(case: str) -> None:
    source, flagged = _CASES[case]
    assert loop_only_tests(source) == flagged
