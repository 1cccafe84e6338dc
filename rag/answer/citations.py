"""Citation markers in answer text, and the sentences they belong to.

A marker is a bracketed id list: `[S1]`, `[S1, S3]`, `[S1][S3]`, or a chunk's UUID when a model copies
that instead. Bare numbers (`[2]`) are read as `S2`. `arr[0]` (a word right before the bracket) and
Markdown links (`[text](url)`) are not markers.

Document text can contain the same brackets (a paper's `[2]`, a page that says `[S2]` to pass itself
off as another source). `neutralise_markers` rewrites them as `(S2)` before a source is quoted or sent
to a model, so a marker in an answer is always the answerer's own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag.text.fold import fold
from rag.text.sentences import split_sentences, states_something

_ID = r"(?:[Ss]\d+|\d+|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"
_MARKER = re.compile(rf"(?<!\w)\[\s*({_ID}(?:\s*[,;]\s*{_ID})*)\s*\](?!\()")
_ID_LIST = re.compile(rf"\s*{_ID}(?:\s*[,;]\s*{_ID})*\s*")
# Any bracket pair a reader (or a model) could take for a citation's: ASCII, full-width, CJK lenticular
# and tortoise-shell, white square. What is inside is checked after `fold`, so `[Ｓ２]` and `[S\u200b2]` count.
_BRACKETED = re.compile(r"[\[［【〔〚⟦]([^\[\]［］【】〔〕〚〛⟦⟧\n]{1,300})[\]］】〕〛⟧]")
_SPLIT_IDS = re.compile(r"\s*[,;]\s*")


@dataclass(frozen=True)
class CitationMarker:
    """One bracketed marker: the ids it lists (normalised, `S2` not `2`), and where it sits in the text."""

    ids: tuple[str, ...]
    start: int
    end: int


@dataclass(frozen=True)
class AnswerSentence:
    """A sentence of an answer (markers removed) and the ids cited for it."""

    text: str
    ids: tuple[str, ...]
    start: int
    end: int

    @property
    def needs_citation(self) -> bool:
        return states_something(self.text)


def parse_citations(text: str) -> list[CitationMarker]:
    """Every citation marker in `text`, in order.

    Args:
        text: an answer as the generator wrote it.

    Returns:
        Markers with their ids normalised: `s1` and `1` become `S1`; UUIDs are lower-cased.
    """
    return [
        CitationMarker(tuple(_normalise(i) for i in _SPLIT_IDS.split(m.group(1).strip())), m.start(), m.end())
        for m in _MARKER.finditer(text)
    ]


def neutralise_markers(text: str) -> str:
    """`text` with every citation-like bracket rewritten as `(S2)`: source text must never read as a citation.

    Looser than `parse_citations` on purpose: `x[S2]`, `［Ｓ２］` and `[S\u200b2]` are not markers to the
    parser, but a model copying them may well write `[S2]`.
    """
    return _BRACKETED.sub(lambda m: f"({_marker_ids(m.group(1))})" if _marker_ids(m.group(1)) else m.group(0), text)


def marker_like(text: str) -> list[CitationMarker]:
    """Every citation-like bracket in document text (as `neutralise_markers` finds them), with its ids."""
    found = ((m, _marker_ids(m.group(1))) for m in _BRACKETED.finditer(text))
    return [
        CitationMarker(tuple(_normalise(i) for i in _SPLIT_IDS.split(ids)), m.start(), m.end())
        for m, ids in found
        if ids
    ]


def inert_markers(text: str, markers: list[CitationMarker]) -> str:
    """`text` with the given markers (from `parse_citations(text)`) rewritten as `(S2)`, no longer citations."""
    for m in sorted(markers, key=lambda m: -m.start):
        text = f"{text[: m.start]}({', '.join(m.ids)}){text[m.end :]}"
    return text


def strip_markers(text: str) -> str:
    """`text` without citation markers (for reading a sentence on its own)."""
    return re.sub(r"\s+([.,;:!?。！？])", r"\1", _MARKER.sub("", text)).strip()


def answer_sentences(text: str) -> list[AnswerSentence]:
    """Split an answer into sentences and give each the ids cited for it.

    A marker that opens a sentence ("... five days. [S1] Monthly plans ...") belongs to the sentence
    before it, as does a "sentence" made only of markers. Fenced code blocks are skipped: a command an
    answer quotes belongs to the sentence that introduces it.
    """
    markers = parse_citations(text)
    sentences: list[AnswerSentence] = []
    pos = 0
    in_code = False
    for line in text.split("\n"):
        fence = line.lstrip().startswith(("```", "~~~"))
        if fence or in_code:  # a code block is quoted material of the sentence before it, not a claim
            in_code = in_code != fence
            pos += len(line) + 1
            continue
        for a, b in split_sentences(line):
            start, end = pos + a, pos + b
            inside = [m for m in markers if start <= m.start < end]
            leading = []
            cursor = start
            for m in inside:
                if text[cursor : m.start].strip():
                    break
                leading.append(m)
                cursor = m.end
            if leading and sentences:
                prev = sentences[-1]
                sentences[-1] = AnswerSentence(prev.text, _ids(prev.ids, leading), prev.start, prev.end)
                inside = inside[len(leading) :]
            body = strip_markers(text[start:end])
            if body:
                sentences.append(AnswerSentence(body, _ids((), inside), start, end))
        pos += len(line) + 1
    return sentences


def _ids(existing: tuple[str, ...], markers: list[CitationMarker]) -> tuple[str, ...]:
    out = list(existing)
    for m in markers:
        out += [i for i in m.ids if i not in out]
    return tuple(out)


def _marker_ids(inner: str) -> str:
    """The id list inside a bracket, folded (`Ｓ２` is `S2`), or "" when it is not one."""
    folded = fold(inner)
    return ", ".join(_SPLIT_IDS.split(folded.strip())) if _ID_LIST.fullmatch(folded) else ""


def _normalise(raw: str) -> str:
    if raw.isdigit():
        return f"S{int(raw)}"
    if raw[0] in "Ss" and raw[1:].isdigit():
        return f"S{int(raw[1:])}"
    return raw.lower()
