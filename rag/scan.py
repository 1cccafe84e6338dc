"""Ingest-time scan for chunks that read as instructions to a model (prompt injection).

Flagged chunks are shown on the Documents page; the owner may quarantine them, which keeps them out
of retrieval. The scan never changes text: it only labels.
"""

from __future__ import annotations

import re

_PATTERNS: dict[str, re.Pattern[str]] = {
    "ignore-instructions": re.compile(r"\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(previous|prior|above|earlier|all|system|your)\b[^.\n]{0,20}\b(instructions?|prompts?|rules?|directions?)", re.I),
    "role-change": re.compile(r"\byou are now\b|\bact as (an?|the)\b|\bfrom now on,? you\b|\bnew (system )?instructions?:", re.I),
    "reveal-prompt": re.compile(r"\b(reveal|print|show|repeat|output|leak)\b[^.\n]{0,30}\b(system prompt|your (prompt|instructions)|hidden instructions)", re.I),
    "exfiltrate": re.compile(r"\b(send|e-?mail|post|upload|forward)\b[^.\n]{0,40}\b(data|credentials|password|api key|secrets?|conversation|this chat)\b[^.\n]{0,40}(\bto\b|@|https?://)", re.I),
    "fake-role-tag": re.compile(r"</?\s*(system|assistant|instructions?|sources?)\s*>|^\s*(system|assistant)\s*:", re.I | re.M),
}


def scan_text(text: str) -> tuple[str, ...]:
    """Names of the injection patterns found in `text` (empty when it reads as plain content)."""
    return tuple(name for name, pattern in _PATTERNS.items() if pattern.search(text))
