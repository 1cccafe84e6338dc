"""BEIR import: a folder with corpus.jsonl, queries.jsonl and qrels/<split>.tsv becomes its own collection
and a question set whose gold is graded, document-level qrels.

Each corpus entry is ingested through the normal pipeline as one Markdown document, `# title` then the
text, named `<_id>.md`, with a chunk size above the longest entry so that one entry is one chunk (the
title becomes the chunk's heading). Qrels name documents, so gold is "any chunk of that source" and
metrics count each document once, as BEIR does.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from rag.components import Components
from rag.errors import EvalSetError
from rag.eval.gold import SectionGold, SectionRef
from rag.eval.qsets import Question, QuestionSet
from rag.ingest.loaders.names import safe_source
from rag.ingest.pipeline import ingest_files
from rag.ingest.results import IngestSummary
from rag.settings.config import ChunkConfig


@dataclass(frozen=True)
class BeirDoc:
    id: str
    title: str
    text: str

    @property
    def source(self) -> str:
        """The document's name in the collection (what gold and qrels map to)."""
        return safe_source(f"{self.id}.md")

    def markdown(self) -> str:
        title = " ".join(self.title.split())
        return f"# {title}\n\n{self.text}\n" if title else f"{self.text}\n"


@dataclass(frozen=True)
class BeirData:
    name: str
    split: str
    corpus: tuple[BeirDoc, ...]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def collection_name(folder: Path) -> str:
    """The collection a BEIR folder is ingested into: `beir-<folder name>`."""
    return ("beir-" + (re.sub(r"[^A-Za-z0-9_-]+", "-", folder.resolve().name).strip("-") or "data"))[
        :64
    ]  # config.validate_collection_name


def load_beir(folder: Path, split: str) -> BeirData:
    """Read a BEIR folder.

    Args:
        folder: holds corpus.jsonl, queries.jsonl and qrels/<split>.tsv.
        split: the qrels split to evaluate (e.g. "train", "test").

    Returns:
        The corpus, the queries and the split's qrels ({query id: {doc id: grade}}).

    Raises:
        EvalSetError: a file is missing or a line is malformed; the message names file and line.
    """
    qrels_path = folder / "qrels" / f"{split}.tsv"
    for path in (folder / "corpus.jsonl", folder / "queries.jsonl", qrels_path):
        if not path.is_file():
            raise EvalSetError(
                f"{path} is missing: a BEIR folder holds corpus.jsonl, queries.jsonl and qrels/<split>.tsv"
            )
    corpus = tuple(
        BeirDoc(str(o["_id"]), str(o.get("title") or ""), str(o.get("text") or ""))
        for o in _jsonl(folder / "corpus.jsonl", "text")
    )
    queries = {str(o["_id"]): str(o["text"]) for o in _jsonl(folder / "queries.jsonl", "text")}
    return BeirData(folder.resolve().name, split, corpus, queries, _qrels(qrels_path))


def _jsonl(path: Path, field: str) -> Iterator[dict]:
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise EvalSetError(f"{path} line {n}: not valid JSON ({e.msg})") from None
            if not isinstance(obj, dict) or "_id" not in obj or field not in obj:
                raise EvalSetError(f'{path} line {n}: expected an object with "_id" and "{field}"')
            yield obj


def _qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8", newline="") as f:
        for n, row in enumerate(csv.reader(f, delimiter="\t"), 1):
            if not row or (n == 1 and row[0] == "query-id"):
                continue
            try:
                qid, doc, grade = row[0], row[1], int(row[2])
            except (IndexError, ValueError):
                raise EvalSetError(f"{path} line {n}: expected query-id<TAB>corpus-id<TAB>integer score") from None
            qrels.setdefault(qid, {})[doc] = grade
    return qrels


def beir_question_set(data: BeirData, limit: int | None = None) -> QuestionSet:
    """The split's judged queries (those with a relevant document) as a question set, in query file order."""
    by_id = {d.id: d for d in data.corpus}
    questions = []
    for qid, text in data.queries.items():
        judged = {doc: g for doc, g in data.qrels.get(qid, {}).items() if g > 0 and doc in by_id}
        if not judged:
            continue
        gold = SectionGold(tuple(SectionRef(by_id[doc].source, "", g) for doc, g in sorted(judged.items())))
        questions.append(Question(qid, text, gold))
        if limit is not None and len(questions) >= limit:
            break
    if not questions:
        raise EvalSetError(f"{data.name}: no query of split {data.split!r} has a relevant document in the corpus")
    return QuestionSet(f"beir-{data.name}-{data.split}", tuple(questions))


def ingest_beir(
    components: Components, data: BeirData, progress: Callable[[float, str], None] | None = None
) -> IngestSummary:
    """Ingest the corpus (documents already stored unchanged are skipped without re-embedding).

    Raises:
        EvalSetError: two corpus ids map to one document name.
    """
    docs = {}
    for d in data.corpus:
        if d.source in docs:
            raise EvalSetError(
                f"{data.name}: corpus ids {docs[d.source].id!r} and {d.id!r} both map to document {d.source!r}"
            )
        docs[d.source] = d
    longest = max((len(d.markdown()) for d in data.corpus), default=0)
    config = ChunkConfig("heading", max(longest + 1, ChunkConfig.size), 0)
    return ingest_files(
        components, ((d.source, d.markdown().encode("utf-8")) for d in data.corpus), config, progress=progress
    )
