"""Question sets: JSONL parsing with line-numbered errors, and their storage under the data dir.

One JSON object per line:

    {"question": "How long do refunds take?", "gold": "5 to 10 business days"}
    {"question": "...", "gold": [{"source": "billing/plans.md", "heading": "Billing > Refunds"}]}
    {"question": "...", "gold": ["<chunk id>", ...], "id": "refund-time"}
    {"question": "...", "gold": [{"source": ..., "heading": ...}], "answer": "Refunds take 5 to 10 business days."}
    {"question": "Does Tidepool sell hardware?", "answerable": false}

Sets live as validated JSONL files in `<data_dir>/eval_sets/<name>.jsonl`, so they outlive sessions
and the CLI can run them too; on a server, as one record per set in its metadata collection, which every
replica reads (rag/settings/shared_home.py). A bad set is refused whole and never replaces a stored one.

"answer" is answer-text gold: the words of the documents that answer the question (a sentence, as a
reader would quote it). Beside "gold" (which says where the answer is), it lets Eval check offline that
an answer answers: answer correctness and context recall (rag.eval.correctness).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Callable

from rag.errors import EvalSetError
from rag.eval.gold import Gold, gold_to_json, parse_gold
from rag.settings.atomic import locked, write_atomically
from rag.settings.shared_home import SharedHome, home_of, record_key
from rag.text.jsonobj import json_object

SAMPLE_SET = "sample"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")
_KEYS = {"question", "gold", "answerable", "id", "answer"}


@dataclass(frozen=True)
class Question:
    """One line of a set. `gold` is None only for unanswerable questions."""

    id: str
    question: str
    gold: Gold | None
    answerable: bool = True
    line: int = 0
    answer: str | None = None  # answer-text gold: the documents' words that answer it

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "question": self.question}
        if self.gold is not None:
            out["gold"] = gold_to_json(self.gold)
        if self.answer is not None:
            out["answer"] = self.answer
        if not self.answerable:
            out["answerable"] = False
        return out


@dataclass(frozen=True)
class QuestionSet:
    name: str
    questions: tuple[Question, ...]

    @property
    def unanswerable(self) -> int:
        return sum(1 for q in self.questions if not q.answerable)

    def to_jsonl(self) -> str:
        return "".join(json.dumps(q.as_json(), ensure_ascii=False) + "\n" for q in self.questions)


def parse_question_set(text: str, name: str = "set") -> QuestionSet:
    """Parse JSONL text into a question set.

    Args:
        text: the file's text; blank lines are skipped.
        name: the set's name, used in error messages.

    Returns:
        The questions in file order; a question without "id" gets "q<line number>".

    Raises:
        EvalSetError: a line is not a JSON object of the documented shape, an id repeats, or the set
            is empty. The message names the line.
    """
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            q = _question(raw, n)
        except ValueError as e:
            raise EvalSetError(f"{name} line {n}: {e}") from None
        if q.id in seen:
            raise EvalSetError(f"{name} line {n}: id {q.id!r} is already used on line {seen[q.id]}")
        seen[q.id] = n
        questions.append(q)
    if not questions:
        raise EvalSetError(f'{name}: no questions; write one JSON object per line with "question" and "gold"')
    return QuestionSet(name, tuple(questions))


def _question(raw: str, n: int) -> Question:
    obj = json_object(raw, '{"question": "...", "gold": ...}')
    unknown = set(obj) - _KEYS
    if unknown:
        raise ValueError(f"unknown keys {sorted(unknown)}; allowed: {', '.join(sorted(_KEYS))}")
    question = obj.get("question")
    if not isinstance(question, str) or not question.strip():
        raise ValueError('"question" must be a non-empty string')
    answerable = obj.get("answerable", True)
    if not isinstance(answerable, bool):
        raise ValueError('"answerable" must be true or false')
    qid = obj.get("id", f"q{n}")
    if isinstance(qid, bool) or not isinstance(qid, (str, int)) or str(qid) == "":
        raise ValueError('"id" must be a non-empty string or a number')
    if answerable:
        if "gold" not in obj:
            raise ValueError('"gold" is missing (or mark the question "answerable": false)')
        gold = parse_gold(obj["gold"])
    else:
        if obj.get("gold") not in (None, [], "") or "answer" in obj:
            raise ValueError('an unanswerable question ("answerable": false) cannot have gold or an answer')
        gold = None
    answer = obj.get("answer")
    if answer is not None and (not isinstance(answer, str) or not answer.strip()):
        raise ValueError('"answer" must be a non-empty string: the words of the documents that answer the question')
    return Question(str(qid), question.strip(), gold, answerable, n, answer.strip() if answer else None)


def decode_upload(data: bytes, name: str) -> str:
    """Uploaded bytes as text; a set must be UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise EvalSetError(f"{name}: not UTF-8 text (bad byte at offset {e.start}); save the file as UTF-8") from None


def set_name(filename: str) -> str:
    """A storage name from an uploaded file name: its stem, reduced to letters, digits, '.', '_' and '-'."""
    stem = Path(filename.replace("\\", "/")).name
    stem = stem[: -len(".jsonl")] if stem.lower().endswith(".jsonl") else Path(stem).stem
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-._")[:80]
    if not cleaned:
        raise EvalSetError(f"cannot name a question set after {filename!r}; rename the file (letters, digits, - and _)")
    return cleaned


def sets_dir(data_dir: Path) -> Path:
    return data_dir / "eval_sets"


def _path(data_dir: Path, name: str) -> Path:
    _check_name(name)
    return sets_dir(data_dir) / f"{name}.jsonl"


def _check_name(name: str) -> None:
    if not _NAME.match(name):
        raise EvalSetError(f"{name!r} is not a valid set name (letters, digits, '.', '_', '-'; at most 80)")


def _change(where: Path | SharedHome, name: str, change: Callable[[str | None], str]) -> QuestionSet:
    """Replace set `name`'s text by `change(old text)` once it parses, as one step: under the file's lock in
    the data dir, or one swap of its record on a server (two adds at once both land, either way)."""
    _check_name(name)
    home = home_of(where)
    if home.records is not None:

        def record(old: dict[str, Any] | None) -> dict[str, Any]:
            text = _ended(change(str(old["text"]) if old else None))
            parse_question_set(text, name)
            return {"kind": "qset", "source": name, "text": text}

        return parse_question_set(home.records.swap(record_key("qset", name), record)["text"], name)
    path = _path(home.data_dir, name)
    with locked(path):
        text = _ended(change(path.read_text(encoding="utf-8") if path.is_file() else None))
        qset = parse_question_set(text, name)
        write_atomically(path, text)
        return qset


def _ended(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def _text(where: Path | SharedHome, name: str) -> str | None:
    """Set `name`'s stored text, or None when there is no such set."""
    _check_name(name)
    home = home_of(where)
    if home.records is not None:
        record = home.records.get(record_key("qset", name))
        return str(record["text"]) if record else None
    path = _path(home.data_dir, name)
    return path.read_text(encoding="utf-8") if path.is_file() else None


def save_question_set(where: Path | SharedHome, name: str, text: str) -> QuestionSet:
    """Validate, then store (replacing a set of the same name only once the new one parsed)."""
    parse_question_set(text, name)  # refused before anything is written
    return _change(where, name, lambda _old: text)


def load_question_set(where: Path | SharedHome, name: str) -> QuestionSet:
    text = _text(where, name)
    if text is None:
        raise EvalSetError(f"no question set named {name!r}; upload one or load the sample set")
    return parse_question_set(text, name)


def read_question_set_file(path: Path) -> QuestionSet:
    """A set from any JSONL file (the CLI's argument); named after the file."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise EvalSetError(f"{path}: cannot read ({e.strerror})") from None
    return parse_question_set(decode_upload(data, path.name), set_name(path.name))


def list_question_sets(where: Path | SharedHome) -> list[str]:
    home = home_of(where)
    if home.records is not None:
        return sorted(str(r["source"]) for r in home.records.find(kind="qset"))
    folder = sets_dir(home.data_dir)
    return sorted(p.stem for p in folder.glob("*.jsonl")) if folder.is_dir() else []


def delete_question_set(where: Path | SharedHome, name: str) -> None:
    home = home_of(where)
    if home.records is not None:
        _check_name(name)
        home.records.delete(record_key("qset", name))
        return
    _path(home.data_dir, name).unlink(missing_ok=True)


class DuplicateQuestion(EvalSetError):
    """The set already holds the question (its id in `existing`): added again only when the person confirms."""

    def __init__(self, name: str, existing: str) -> None:
        super().__init__(f"set {name!r} already has this question (as {existing})")
        self.existing = existing


def _asked(questions: tuple[Question, ...], question: str) -> str | None:
    """The id of the question among `questions` that reads as `question`, whatever its case and spacing."""
    key = " ".join(question.casefold().split())
    return next((q.id for q in questions if " ".join(q.question.casefold().split()) == key), None)


def question_in_set(where: Path | SharedHome, name: str, question: str) -> str | None:
    """The id of the question in set `name` that reads as `question`, or None (also when there is no such set)."""
    try:
        qset = load_question_set(where, name)
    except EvalSetError:
        return None
    return _asked(qset.questions, question)


def append_question(
    where: Path | SharedHome, name: str, question: str, gold: Gold | None, answerable: bool = True, again: bool = False
) -> QuestionSet:
    """Add one question to a stored set (created if absent): the Ask page's "add to question set".

    The whole set is re-validated before it is written, so a malformed entry is refused; a question the set
    already asks raises DuplicateQuestion unless `again` (a second copy weighs it twice in every mean).
    """

    def added(existing: str | None) -> str:  # read, add, write as one step: two adds at once both land
        existing = existing or ""
        questions = parse_question_set(existing, name).questions if existing.strip() else ()
        if not again and (same := _asked(questions, question)):
            raise DuplicateQuestion(name, same)
        taken = {q.id for q in questions}
        n = len(taken) + 1
        while f"q{n}" in taken:
            n += 1
        line = Question(f"q{n}", question, gold, answerable).as_json()
        return (
            existing + ("" if not existing or existing.endswith("\n") else "\n") + json.dumps(line, ensure_ascii=False)
        )

    return _change(where, name, added)


def sample_question_set_text() -> str:
    """The shipped questions over the sample help centre (rag/resources/sample_qa.jsonl)."""
    return (resources.files("rag") / "resources" / "sample_qa.jsonl").read_text(encoding="utf-8")


def install_sample_set(where: Path | SharedHome) -> QuestionSet:
    """Store the sample set as "sample" (overwriting an older copy)."""
    return save_question_set(where, SAMPLE_SET, sample_question_set_text())
