"""Plain text and Markdown files: decoded (BOMs, UTF-8, UTF-16, legacy Windows text), binary refused."""

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


def parse_markdown(data: bytes, source: str) -> tuple[str, tuple[int, ...], str]:
    text = decode_text(data, source)
    match = re.search(r"^#\s+(.+)$", text, re.M)
    return text, (), match.group(1).strip() if match else ""


def parse_text(data: bytes, source: str) -> tuple[str, tuple[int, ...], str]:
    return decode_text(data, source), (), ""
