"""The README says what the code does (issue 38, item 11): every question-set key, and model preparation as
bench/ measured it (no "5 s")."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from click.testing import CliRunner

from rag.cli import main
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


def test_a_set_written_from_the_readmes_keys_has_its_answers_checked_by_ragscope_eval(sample_store, tmp_path):
    """A set written with the keys the README lists, through `ragscope eval --answers`: the answer Eval checks
    (answer correctness) is there only when the README names the `answer` key."""
    listed = set(re.findall(r"`(\w+)`", _section("Eval: the question-set format").split("`gold` takes")[0]))
    values = {
        "id": "refund-time",
        "question": "How long does it take for an approved refund to reach my card?",
        "gold": [{"source": "billing/plans.md", "heading": "Billing > Refunds"}],
        "answerable": True,
        "answer": "Approved refunds reach your card within 5 to 10 business days.",
    }
    path = tmp_path / "from_readme.jsonl"
    path.write_text(json.dumps({k: v for k, v in values.items() if k in listed}) + "\n", encoding="utf-8")
    out = CliRunner().invoke(main, ["eval", str(path), "--answers", "--json"])
    assert out.exit_code == 0, out.output
    answers = json.loads(out.stdout)["answers"]
    assert answers.get("answer_correctness") is not None, answers


def test_the_prepared_model_takes_the_space_the_readme_says(tmp_path):
    """The first `ragscope ingest` of a data dir prepares the dense model under `<data dir>/models`; its size is
    the README's figure (this suite shares one preparation between data dirs: the folder links to it)."""
    claim = re.search(r"about\s+(\d+)\s+MB in every data dir", _section("First five minutes"))
    assert claim, "the README gives no size for the prepared model"
    (tmp_path / "guide.md").write_text("# Guide\n\nThe ferry leaves at nine.\n", encoding="utf-8")
    out = CliRunner().invoke(main, ["ingest", str(tmp_path / "guide.md")])
    assert out.exit_code == 0, out.output
    models = Path(os.environ["RAGSCOPE_DATA_DIR"]) / "models"
    sizes = [os.path.getsize(Path(d) / f) for d, _, files in os.walk(models, followlinks=True) for f in files]
    assert sizes
    mib = sum(sizes) / 2**20
    assert abs(mib - int(claim.group(1))) <= 0.1 * mib, (mib, claim.group(1))
