"""The README says what the code does (issue 38, item 11): every question-set key, and model preparation as
bench/ measured it (no "5 s")."""

from __future__ import annotations

import re
from pathlib import Path

from rag.eval.qsets import _KEYS, parse_question_set

ROOT = Path(__file__).resolve().parent.parent


def _section(title: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(f"## {title}")
    return text[start : text.index("\n## ", start + 1)]


def test_the_question_set_format_names_every_key_the_parser_takes():
    keys = set(re.findall(r"`(\w+)`", _section("Eval: the question-set format").split("`gold` takes")[0]))
    assert _KEYS <= keys, _KEYS - keys
    line = '{"question": "How long do refunds take?", "gold": "5 to 10 business days", "answer": "Refunds take 5 to 10 business days."}'
    assert parse_question_set(line).questions[0].answer == "Refunds take 5 to 10 business days."


def test_model_preparation_is_described_as_bench_measured_it():
    first = _section("First five minutes")
    assert "5 s of CPU" not in first
    assert "int8-quantises" in first and "bench/README.md" in first and "194 MB" in first
    bench = (ROOT / "bench" / "README.md").read_text(encoding="utf-8")
    assert "a data dir's first use (1 file; exports twice, fuses, quantises)" in bench
