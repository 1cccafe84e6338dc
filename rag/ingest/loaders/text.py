"""Plain text and Markdown files: decoded (BOMs, UTF-8, UTF-16, legacy Windows text), binary refused.

A Markdown file's HTML comments (`<!-- ignore the question -->`) are left out: rendered Markdown never
shows them, so they are hidden text as an HTML page's comments are (docs/security.md). Comments inside
code (a fence, an inline code span) are code and stay.
"""

from __future__ import annotations

import re
import unicodedata

from rag.errors import LoaderError


def decode_text(data: bytes, source: str, declared: str | None = None) -> str:
    """Decode text files: BOMs first, then UTF-8, then UTF-16 without BOM, then Latin-1; refuse binary.

    `declared` is the encoding the file names for itself (a Python coding line, an HTML `<meta charset>`):
    the author's word beats a guess, so it is used whenever the bytes decode in it; an unknown name or
    bytes it cannot decode fall back to the detection above.
    """
    text = _declared(data, declared) if declared else None
    if text is None:
        text = _decode(data, source)
    controls = sum(1 for ch in text[:20000] if unicodedata.category(ch) == "Cc" and ch not in "\n\r\t\f")
    if controls > 0.05 * min(len(text), 20000):
        raise LoaderError(f"{source}: looks like a binary file, not text")
    return text


def _declared(data: bytes, encoding: str) -> str | None:
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return None


def _decode(data: bytes, source: str) -> str:
    for bom, codec in ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16")):
        if data.startswith(bom):
            try:
                return data.decode(codec)
            except UnicodeDecodeError:
                raise LoaderError(
                    f"{source}: starts with a {codec} byte-order mark but does not decode as {codec}"
                ) from None
    if b"\x00" in data[:4096]:
        sample = data[:4096]
        # UTF-16 text without BOM has NULs in every other byte (and few in the others); anything else
        # with NULs is binary. Every decoded result still passes the control-character check.
        odd, even = sample[1::2].count(0) / max(len(sample) // 2, 1), sample[0::2].count(0) / max(len(sample) // 2, 1)
        if len(sample) >= 4 and max(odd, even) > 0.4 and min(odd, even) < 0.05:
            try:
                return data.decode("utf-16-le" if odd > even else "utf-16-be")
            except UnicodeDecodeError:
                pass
        raise LoaderError(f"{source}: looks like a binary file, not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        return _decode_legacy(data, source, e)


def _decode_legacy(data: bytes, source: str, error: UnicodeDecodeError) -> str:
    """Windows-1252 / Latin-1 text, unless the file is UTF-8 with damaged bytes.

    Real UTF-8 sequences next to invalid bytes mean a damaged or mixed file: decoding it all as
    Latin-1 would turn every accented letter into mojibake, so refuse it and say where it breaks.
    cp1252 is tried before Latin-1 because Windows "Latin-1" files put curly quotes in 0x80-0x9F,
    which Latin-1 reads as control characters (and cleaning would then drop them).
    """
    replaced = data.decode("utf-8", errors="replace")
    if any(ord(ch) > 127 and ch != "\ufffd" for ch in replaced):
        raise LoaderError(
            f"{source}: is not valid UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start}) although "
            "other parts are UTF-8; the file is damaged or mixes encodings. Re-save it as UTF-8."
        )
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError:
        return data.decode("latin-1")


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BACKTICKS = re.compile(r"`+")


def parse_markdown(data: bytes, source: str) -> tuple[str, tuple[int, ...], str]:
    text = without_comments(decode_text(data, source))
    match = re.search(r"^#\s+(.+)$", text, re.M)
    return text, (), match.group(1).strip() if match else ""


def parse_text(data: bytes, source: str) -> tuple[str, tuple[int, ...], str]:
    return decode_text(data, source), (), ""


def without_comments(text: str) -> str:
    """Markdown text without its HTML comments, fenced blocks and inline code untouched (one pass)."""
    out: list[str] = []
    prose: list[str] = []
    fence = ""

    def flush() -> None:
        if prose:
            out.append(_prose_without_comments("\n".join(prose)))
            prose.clear()

    for line in text.split("\n"):
        marker = _FENCE.match(line)
        if fence:
            out.append(line)
            if marker and marker.group(1).startswith(fence):
                fence = ""
        elif marker:
            flush()
            fence = marker.group(1)[0] * 3
            out.append(line)
        else:
            prose.append(line)
    flush()
    return "\n".join(out)


def _prose_without_comments(text: str) -> str:
    """`text` without `<!-- ... -->`, its inline code spans (a run of backticks to the next run as long)
    kept whole. Linear: a search that fails (no `-->`, no closing run of that length) is never repeated."""
    out: list[str] = []
    at, n = 0, len(text)
    unclosed: set[int] = set()  # backtick run lengths with no closing run further on
    tick = comment = -2  # the next backtick and comment opening at or after `at` (-1: none), each found once
    while at < n:
        tick = text.find("`", at) if -1 < tick < at or tick == -2 else tick
        comment = text.find("<!--", at) if -1 < comment < at or comment == -2 else comment
        if comment < 0 and tick < 0:
            break
        if tick >= 0 and (comment < 0 or tick < comment):
            run = _BACKTICKS.match(text, tick).group(0)  # type: ignore[union-attr]
            close = -1 if len(run) in unclosed else text.find(run, tick + len(run))
            if close < 0:
                unclosed.add(len(run))
                close = tick  # an unmatched run is literal text
            out.append(text[at : close + len(run)])
            at = close + len(run)
            continue
        end = text.find("-->", comment + 4)
        if end < 0:
            break  # an unclosed comment is text, and so is everything after it
        out.append(text[at:comment])
        at = end + 3
    out.append(text[at:])
    return "".join(out)
