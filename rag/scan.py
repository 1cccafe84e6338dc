"""Ingest-time scan for chunks that read as instructions to a model (prompt injection).

Flagged chunks are shown on the Documents page; the owner may quarantine them, which keeps them out
of retrieval. The scan never changes text: it only labels.

Help-centre text is full of second-person instructions ("you are now signed in", "send the data to
the server", "the proxy will act as a gateway"), so each pattern needs what makes a sentence an
attack on a model: instructions aimed at its own rules, a new identity for an AI, a request for
its prompt, or private data sent to an address or URL. A flag is a hint for a person to review,
not a verdict; the answer prompt treats every source as data whether flagged or not.
"""

from __future__ import annotations

import re

_S = r"[^.!?\n]"  # within one sentence
_PATTERNS: dict[str, re.Pattern[str]] = {
    "ignore-instructions": re.compile(
        rf"\b(ignore|disregard|forget|override|bypass)\b{_S}{{0,40}}\b(previous|prior|above|earlier|preceding|all|any|system|your)\b"
        rf"{_S}{{0,20}}\b(instructions?|prompts?|rules|directions|guidelines|directives)\b"
        rf"|\b(ignore|disregard|forget)\s+(everything|anything|all)\s+(above|before|previously|(that )?you (were|have been) told)"
        r"|(忽略|无视|忘记)[^。！？\n]{0,10}(之前|以上|上面|前面|先前|所有)[^。！？\n]{0,10}(指令|指示|提示|规则)",
        re.I,
    ),
    "role-change": re.compile(
        rf"\byou are now\b{_S}{{0,30}}\b(an? (ai|assistant|model|chatbot|bot)|dan|jailbr\w*|unrestricted|unfiltered|uncensored|in developer mode|no longer)\b"
        rf"|\byou are no longer\b{_S}{{0,30}}\b(bound|restricted|limited|required|an? (ai|assistant|model))\b"
        rf"|\bfrom now on,? you\b{_S}{{0,25}}\b(answer|respond|reply|say|act|pretend|speak|only|must not|never)\b"
        r"|(^|[.!?:]\s+|\byou (will|must|should|shall|now|are to) )(act|pretend|behave) (as|like|to be) (an?|the|my)\b"
        r"|\bnew (system )?(instructions?|rules|prompt)\s*:",
        re.I | re.M,
    ),
    "reveal-prompt": re.compile(
        rf"\b(reveal|print|show|repeat|output|leak|disclose|display|share|tell me|give me|what (is|are|were))\b{_S}{{0,30}}"
        r"\b((your|the) (system|initial|original|hidden|secret|full) (prompt|instructions|message|rules)|system prompt"
        r"|your (prompt|instructions|rules)|hidden instructions)"
        rf"|\brepeat\b{_S}{{0,20}}\b(everything|all|the text|the words)\b{_S}{{0,20}}\b(above|before|verbatim)\b"
        r"|(显示|输出|告诉我|泄露|重复)[^。！？\n]{0,10}(系统提示|提示词|系统指令)",
        re.I,
    ),
    "exfiltrate": re.compile(
        r"(?<!never )(?<!not )(?<!n't )"
        rf"\b(send|e-?mail|post|upload|forward|transmit|submit|leak|exfiltrate|append|include)\b{_S}{{0,60}}"
        r"\b(conversations?|chat|history|messages|credentials|passwords?|api[ -]?keys?|secrets?|tokens?|system prompt"
        r"|(user|customer|personal|private|all|the|their|your) (data|information|details|files))\b"
        rf"{_S}{{0,60}}([\w.+-]+@[\w-]+\.\w|https?://)",
        re.I,
    ),
    "fake-role-tag": re.compile(
        # Closing any tag of our prompt's wrapper, or opening one; a lone `<source>` is HTML's media tag.
        r"</\s*(system|assistant|instructions?|sources?)\s*>|<\s*(system|assistant|instructions?|sources)\s*>|^\s*(system|assistant)\s*:"
        r"|<\|(im_start|im_end|system|user|assistant|endoftext)\|>|\[/?INST\]|<</?SYS>>",
        re.I | re.M,
    ),
}


def scan_text(text: str) -> tuple[str, ...]:
    """Names of the injection patterns found in `text` (empty when it reads as plain content)."""
    return tuple(name for name, pattern in _PATTERNS.items() if pattern.search(text))
