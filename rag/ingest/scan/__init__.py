"""Ingest-time scan for chunks that read as instructions to a model (prompt injection), and for chunks it
cannot read.

Flagged chunks are shown on the Documents page and in `ragscope docs --flagged`; the owner may quarantine
them, which keeps them out of retrieval. Chunks marked *unchecked* hold text the patterns cannot read (a
script or language they do not cover, a cipher) and are shown there too, for a person to read. The scan
never changes text: it only labels, and quarantine stays a person's decision. A flag is a hint for a
person to review, not a verdict; the answer prompt treats every source as data whether flagged or not.

Everything about a chunk that reaches Claude is scanned: its text, its heading path and its file name
(the prompt names each source as "file > heading"). Each is matched in the forms a reader sees
(`readings`), "ignore them. The previous instructions." across a sentence end (`lexicon`), base64,
base32 and hex runs decoded (`encoded`), and ROT13 and other Caesar shifts read back (`unread`). Invisible
characters are read as a model reads them (`rag.text.invisible`): tag characters and variation selectors as
the text they spell, text after a right-to-left override back to front. What still passes is in
docs/security.md.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rag.ingest.scan.encoded import decoded_runs
from rag.ingest.scan.patterns import PATTERNS, RUN_TOGETHER, Matcher
from rag.ingest.scan.readings import as_written, reader_forms, run_together, shown
from rag.ingest.scan.unread import fits_a_language, survey
from rag.text.fold import strip_format
from rag.text.invisible import RIGHT_TO_LEFT, drop_invisible, spelled

_MAX_DEPTH = 2  # an encoded run inside an encoded run is decoded once more, no further
_NAME_SEPARATORS = re.compile(r"[/\\_.\-+]+")
_SHOWN_MATCH = 80  # characters of the matched text kept in the reason


@dataclass(frozen=True)
class ScanResult:
    """What the scan found in one chunk.

    `flags`: the names of the patterns matched (stored in the payload's `flags`, as before), in
    `PATTERNS` order. `flagged`: why, for a person: each flag, where it matched and the words matched.
    `unchecked`: why part of the chunk could not be checked, or None.
    """

    flags: tuple[str, ...] = ()
    flagged: str | None = None
    unchecked: str | None = None

    def payload(self) -> dict[str, Any]:
        """The chunk payload's fields: `flags` always (the store filters on it), the reasons only when set."""
        return {
            "flags": list(self.flags),
            **({"flag_reason": self.flagged} if self.flagged else {}),
            **({"unchecked": self.unchecked} if self.unchecked else {}),
        }


def scan_text(text: str, heading_path: Sequence[str] = (), source: str = "", hidden: Sequence[str] = ()) -> ScanResult:
    """Scan a chunk's `text`, its heading path and its source name, each as the model is shown it, and what
    invisible characters ingest removed from the text said (`hidden`: the runs, `rag.text.invisible`)."""
    found: dict[str, str] = {}
    unchecked: list[str] = []
    parts = (("file name", _NAME_SEPARATORS.sub(" ", source)), ("heading", " > ".join(heading_path)), ("text", text))
    for where, part in parts:
        if part.strip():
            _scan_part(part, where, 0, found, unchecked)
    _scan_hidden(hidden, "text", text, found, unchecked)
    flags = tuple(name for name in PATTERNS if name in found)
    return ScanResult(flags, "; ".join(found[n] for n in flags) or None, "; ".join(dict.fromkeys(unchecked)) or None)


def _scan_part(text: str, where: str, depth: int, found: dict[str, str], unchecked: list[str]) -> None:
    """Add to `found` (pattern name -> reason) and `unchecked` (reasons) what `text` holds."""
    text, hidden = drop_invisible(text)
    _scan_hidden([run for _, run in hidden], where, text, found, unchecked)
    forms = reader_forms(text)
    seen = survey(strip_format(html.unescape(text)))
    _match(forms, PATTERNS, where, found, text)
    for word in run_together(text):
        if not _match((word,), {"ignore-instructions": RUN_TOGETHER}, f"{where}, letters spaced out", found):
            if fits_a_language(word):
                unchecked.append(f"{where}: letters spaced out with no gap between words: “{shown(word, 60)}”")
    for shift, sentence in seen.shifted:
        cipher = "ROT13" if shift == 13 else f"a Caesar shift of {shift}"
        _match((sentence,), PATTERNS, f"{where}, read as {cipher}", found)
    if seen.unchecked:
        unchecked.append(f"{where}: {seen.unchecked}")
    if depth < _MAX_DEPTH:
        for encoding, decoded in decoded_runs(text):
            _scan_part(decoded, f"{where}, {encoding}-decoded", depth + 1, found, unchecked)


def _scan_hidden(runs: Sequence[str], where: str, text: str, found: dict[str, str], unchecked: list[str]) -> None:
    """Tag characters and variation selectors are read as the text they spell; a right-to-left override had
    `text` shown back to front, so it is read so; another long run of invisible characters may encode
    something the scan cannot read."""
    for run in runs:
        if RIGHT_TO_LEFT in run:
            _match(reader_forms(text[::-1]), PATTERNS, f"{where}, read back to front (a right-to-left override)", found)
        elif spelled_text := spelled(run).strip():
            kind = "tag characters" if "\U000e0000" <= run[0] <= "\U000e007f" else "variation selectors"
            _scan_part(spelled_text, f"{where}, in invisible {kind}", _MAX_DEPTH, found, unchecked)
        else:
            unchecked.append(f"{where}: a run of {len(run)} invisible characters, which may encode text")


def _match(
    forms: Sequence[str],
    patterns: dict[str, tuple[Matcher, ...]],
    where: str,
    found: dict[str, str],
    text: str | None = None,
) -> bool:
    """Add each pattern that matches one of `forms` and is not found yet; whether any matched. A match in the
    first form of `text`'s `reader_forms` is quoted as `text` writes it."""
    matched = False
    for name, matchers in patterns.items():
        if name in found:
            continue
        hits = ((k, m) for k, form in enumerate(forms) for matcher in matchers if (m := matcher.search(form)))
        hit = next(hits, None)
        if hit:
            k, match = hit
            quote = as_written(text, match.start(), match.end()) if text is not None and k == 0 else match.group(0)
            found[name] = f"{name} in the {where}: “{shown(quote, _SHOWN_MATCH)}”"
            matched = True
    return matched
