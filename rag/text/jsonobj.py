"""One JSON object from text someone else wrote (a question-set line, a model's tool arguments): strict, so a
value given twice is an error rather than the last one silently winning."""

from __future__ import annotations

import json
from typing import Any


def json_object(raw: str, example: str) -> dict[str, Any]:
    """`raw` parsed as one JSON object.

    Args:
        raw: the JSON text.
        example: how a valid object looks, for the messages ('{"question": "...", "gold": ...}').

    Raises:
        ValueError: not JSON, not an object, or a key given twice (each message says which and where).
    """
    try:
        obj = json.loads(raw, object_pairs_hook=refuse_repeats)
    except json.JSONDecodeError as e:
        raise ValueError(f"not valid JSON ({e.msg} at column {e.colno}); write an object like {example}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object like {example}")
    return obj


def refuse_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`object_pairs_hook` for json.loads: a key given twice is a ValueError, not the last one winning."""
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError(f"the key {key!r} is given twice; keep one")
        obj[key] = value
    return obj
