"""Reading a stored file back (JSON; SQLite's own check), refusing damage instead of guessing.

A truncated file, a key given twice (json's default keeps the last one, silently), text that is not
UTF-8: each is a `Damage` whose message says what is wrong; the file's owner adds the file's name and
the command that repairs it (docs/reliability.md, "Stored files").
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from rag.text.jsonobj import refuse_repeats


class Damage(ValueError):
    """What is wrong with a stored file, in words (its owner names the file and the repair)."""


def read_object(path: Path) -> dict[str, Any] | None:
    """The JSON object stored at `path`; None when there is no file.

    Raises:
        Damage: unreadable, not UTF-8, not JSON (e.g. cut short), a key given twice, or not an object.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as e:
        raise Damage(f"cannot be read ({e.strerror or e})") from None
    except UnicodeDecodeError as e:
        raise Damage(f"not UTF-8 text (bad byte at offset {e.start})") from None
    return parse_object(text)


def parse_object(text: str) -> dict[str, Any]:
    """`text` as one JSON object (see `read_object`)."""
    if not text.strip():
        raise Damage("empty")
    try:
        obj = json.loads(text, object_pairs_hook=refuse_repeats)
    except json.JSONDecodeError as e:
        # Input that ends inside a value or a string: what a write stopped part-way leaves.
        ended = e.pos >= len(text.rstrip()) or e.msg.startswith("Unterminated string")
        cut = "; the file looks cut short" if ended else ""
        raise Damage(f"not valid JSON ({e.msg}, line {e.lineno} column {e.colno}{cut})") from None
    except ValueError as e:  # refuse_repeats: a key given twice
        raise Damage(str(e)) from None
    if not isinstance(obj, dict):
        raise Damage(f"expected a JSON object, found {type(obj).__name__}")
    return obj


def expect(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], required: bool = True) -> None:
    """Refuse `obj[key]` of another type than `kind` (or missing, when `required`)."""
    if key not in obj:
        if required:
            raise Damage(f"the key {key!r} is missing")
        return
    if not isinstance(obj[key], kind):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise Damage(f"{key!r} should be {names}, found {type(obj[key]).__name__}")


def sqlite_problem(path: Path) -> str:
    """What SQLite's own check finds wrong with the database at `path` (opened read-only), or "" when sound."""
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=10)) as con:
            rows = con.execute("PRAGMA quick_check").fetchall()
    except sqlite3.Error as e:
        return f"not a readable SQLite database ({e})"
    return "; ".join(str(r[0]) for r in rows[:3] if r[0] != "ok")
