"""Look-alike letters read as the letter they imitate, from Unicode's security data (UTS #39 confusables).

The data comes from the `confusable-homoglyphs` package, which ships Unicode's confusables.txt as JSON (offline):
each pair "this character is drawn like that one" is listed both ways, so every character belongs to a group
of look-alikes around one prototype. A group is read as its plainest member: a single ASCII letter when it
has one (`а`, `օ`, `Ꭺ`, `ı` read as a, o, A, i), else the Latin letter a member is named after (`т` is drawn
like `ᴛ`, small capital T), else its prototype. Only letters and digits are read so: punctuation stays as
written, since sentences and the patterns' own syntax are made of it. Two things the data leaves to the reader:
  - It puts capital I with lower-case l (one glyph in many fonts). Patterns are lower-case, where a capital
    I is an "i", so the capital I-likes (`І`, `Ι`, `Ӏ`, Roman numeral one) read as I, the rest of the group as l.
  - Latin small capitals and letters with a stroke or bar (`ᴀ`, `ɴ`, `ʀ`, `ø`, `ł`) are their own prototypes
    in it; Unicode's names say which letter each is ("LATIN LETTER SMALL CAPITAL A"), and that is read.
Full-width and mathematical letters are left to NFKC/NFKD, which fold them already.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from confusable_homoglyphs.utils import load

_LATIN_NAME = re.compile(
    r"LATIN (?:(SMALL|CAPITAL) )?LETTER (?:(SMALL CAPITAL) )?(?:OPEN |SCRIPT |DOTLESS )?([A-Z])(?: WITH .*)?"
)
# The Latin blocks whose letters the names are read for (Latin-1 to Latin Extended-E, IPA, phonetic extensions).
_LATIN_BLOCKS = (
    (0x00C0, 0x024F),
    (0x0250, 0x02AF),
    (0x1D00, 0x1DBF),
    (0x1E00, 0x1EFF),
    (0x2C60, 0x2C7F),
    (0xA720, 0xA7FF),
    (0xAB30, 0xAB6F),
)
_I_LIKE = ("CAPITAL", "NUMERAL ONE", "DIGIT ONE")


@functools.cache
def lookalike_table() -> dict[int, str]:
    """`str.translate` table: each non-ASCII look-alike letter or digit to the letter it imitates (case kept).
    Punctuation is left as written: it is what sentences and patterns are made of, not words."""
    groups: dict[str, set[str]] = {}
    for char, entries in load("confusables.json").items():
        groups.setdefault(char, set()).update(e["c"] for e in entries)
    table: dict[int, str] = {}
    for char, group in groups.items():
        if len(char) != 1 or char.isascii() or unicodedata.category(char)[0] not in "LN":
            continue
        target = _reading({char} | group | {m for g in group for m in groups.get(g, ())}, groups)
        name = unicodedata.name(char, "")
        if target == "l" and "SMALL" not in name and any(word in name for word in _I_LIKE):
            target = "I"
        if target != char:
            table[ord(char)] = target
    for low, high in _LATIN_BLOCKS:
        for code in range(low, high + 1):
            if letter := _latin_letter(chr(code)):
                table[code] = letter
    # A Latin letter is read as the letter it is named after, whatever it looks like ("ʟ" is an l, not an I); a
    # target that is itself a look-alike is read through to the end.
    return {code: _through(target, table) for code, target in table.items()}


def _reading(members: set[str], groups: dict[str, set[str]]) -> str:
    """What a group of look-alikes is read as: its ASCII letter (lower case first: the capital-I group is "l"),
    else the letter a member is named after, a plain one before one "with" a mark ("ε" is drawn like "ɛ", open
    e, and "ꞓ", c with bar: an e), the prototype's (the member drawn like all the others) first; else the
    prototype."""
    letters = sorted(m for m in members if len(m) == 1 and m.isascii() and m.isalpha())
    if letters:
        return min(letters, key=lambda m: (not m.islower(), m))
    prototype = max(members, key=lambda m: (len(groups.get(m, ())), m.isascii(), -len(m), m))
    named = [(" WITH " in unicodedata.name(m), m != prototype, letter) for m in members if (letter := _latin_letter(m))]
    return min(named)[2] if named else prototype


@functools.cache
def ambiguous_l() -> tuple[dict[int, str], dict[int, str]]:
    """The look-alikes of a bare vertical stroke, which read as l in one word and as i in the next (Unicode puts
    capital I with l, and the small Cyrillic palochka with i): two `str.translate` tables, the small ones read
    as i turned to l (a capital I-like stays I: "Іgnora аӏӏ"), and those read as l turned to i."""
    table = lookalike_table()
    strokes = {code: target for code, target in table.items() if target in ("l", "I")}
    palochkas = (code for code in range(0x04C0, 0x0500) if "PALOCHKA" in unicodedata.name(chr(code), ""))
    strokes |= {code: table.get(code, "i") for code in palochkas}
    as_l = {code: "l" for code, target in strokes.items() if target != "l" and not chr(code).isupper()}
    as_i = {code: "i" for code, target in strokes.items() if target == "l"}
    return as_l, as_i


def _latin_letter(char: str) -> str:
    """The ASCII letter a Latin letter variant's Unicode name says it is ("ᴀ" -> "a", "Ø" -> "O"), or ""."""
    match = len(char) == 1 and _LATIN_NAME.fullmatch(unicodedata.name(char, ""))
    if not match:
        return ""
    case, small_capital, letter = match.groups()
    return letter.lower() if case == "SMALL" or small_capital else letter


def _through(text: str, table: dict[int, str], depth: int = 3) -> str:
    """`text` read through `table` until it no longer changes (a few steps at most)."""
    out = unicodedata.normalize("NFKD", text).translate(table)
    return out if depth == 0 or out == text else _through(out, table, depth - 1)
