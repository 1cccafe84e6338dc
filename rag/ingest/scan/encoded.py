"""Runs of encoded text a model can decode on its own: base64, base32 and hex that decode to readable text.

Each run that decodes to UTF-8 text is scanned like the text around it. A run that decodes to bytes
(a hash, a key, a certificate) carries no instruction a model could read, so it is left alone.
"""

from __future__ import annotations

import base64
import binascii
import re

_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_BASE32_RUN = re.compile(r"(?<![A-Za-z0-9])[A-Z2-7]{16,}={0,6}(?![A-Za-z0-9])")
# Hex bytes written together ("49676e6f7265") or apart ("49 67 6e", "49:67:6e", "\x49\x67").
_HEX_RUN = re.compile(
    r"(?<![0-9A-Za-z])(?:[0-9a-fA-F]{2}){12,}(?![0-9A-Za-z])"
    r"|(?:(?:\\x|%)[0-9a-fA-F]{2}){12,}"
    r"|(?<![0-9A-Za-z])[0-9a-fA-F]{2}(?:[ :,][0-9a-fA-F]{2}){11,}(?![0-9A-Za-z])"
)
_HEX_NOISE = re.compile(r"\\x|%|[\s:,]")


def decoded_runs(text: str) -> list[tuple[str, str]]:
    """(encoding, decoded text) for each run of `text` that decodes to readable UTF-8."""
    out = []
    for run in _BASE64_RUN.findall(text):
        body = run.rstrip("=")
        out.append(("base64", _text(_b64(body + "=" * (-len(body) % 4)))))
    for run in _BASE32_RUN.findall(text):
        body = run.rstrip("=")
        out.append(("base32", _text(_b32(body + "=" * (-len(body) % 8)))))
    for run in _HEX_RUN.findall(text):
        digits = _HEX_NOISE.sub("", run)
        out.append(("hex", _text(bytes.fromhex(digits[: len(digits) // 2 * 2]))))
    return [(kind, decoded) for kind, decoded in out if decoded]


def _b64(padded: str) -> bytes:
    try:
        return base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return b""


def _b32(padded: str) -> bytes:
    try:
        return base64.b32decode(padded)
    except (binascii.Error, ValueError):
        return b""


def _text(raw: bytes) -> str:
    """`raw` as text when it is UTF-8 and at least 95% printable; "" otherwise."""
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        return ""
    printable = sum(ch.isprintable() or ch in "\n\t" for ch in decoded)
    return decoded if decoded and printable >= 0.95 * len(decoded) else ""
