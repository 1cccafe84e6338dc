""" "Ignore your instructions" in each covered language, built from its words instead of listed as examples.

An attack on a model's rules has three parts: a verb of setting aside (ignore, oublie, vergiss), the rules
(instructions, consignes, Anweisungen) and a word that points at the rules the model already has (previous,
précédentes, oben, "you were given"). Documentation uses any two of them all the time ("ignore the cache", "the
previous step", "the rules above"); all three together, within one clause, read as the attack. Each `Lexicon`
(one table of rag/resources/injection_lexicons.toml) lists a language's words for the three parts, and
`ignore_patterns` puts them together in every order the language writes them: verb first with the qualifier
before the noun ("ignore all previous instructions") or after it ("oublie les consignes précédentes", "ignore
the instructions above"), and verb last ("die obigen Anweisungen ignorieren", "previous instructions must be
ignored"). An instruction split over two sentences ("Ignore them. The previous instructions, I mean.") is the
verb with at most a pronoun (`objects`) ending one sentence and the rules, qualified, opening the next; a verb
with its own object ("Ignore the cache. The system prompt field is optional.") is no split instruction.

Words are regular expressions, lower case (readings are lower-cased before matching).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources

S = r"[^.!?;\n]"  # within one sentence (or clause: a semicolon ends one too)
C = r"[^。！？\n]"  # within one CJK sentence


@dataclass(frozen=True)
class Lexicon:
    """One language's words for the three parts of "ignore your instructions".

    `before`: qualifiers written before the noun ("previous", "all", "tes"); `after`: those written after
    it ("above", "you were given", "précédentes"); `last`: the verb forms that end a clause ("ignorieren",
    "ignored"), for the verb-last orders (None: the language does not put the verb last).
    """

    verbs: str
    before: str
    nouns: str
    after: str
    last: str | None = None
    objects: str = ""  # the pronouns that may follow the verb at the end of a sentence ("ignore them.")
    spaced: bool = True  # words are delimited by spaces (`\b` applies); False for Chinese and Japanese

    @property
    def trigger(self) -> str:
        """The verbs alone: every order holds one, and searching for them first is a fraction of the cost."""
        b = r"\b" if self.spaced else ""
        return f"{b}({self.verbs}{'|' + self.last if self.last else ''}){b}"


def _expression(part: str | list[str]) -> str:
    """A part of a lexicon as one regular expression: a list of words is their alternation."""
    return part if isinstance(part, str) else "(" + "|".join(part) + ")"


def _load() -> dict[str, Lexicon]:
    """The lexicons of rag/resources/injection_lexicons.toml, by language, in the file's order."""
    text = (resources.files("rag") / "resources" / "injection_lexicons.toml").read_text(encoding="utf-8")
    return {
        language: Lexicon(**{k: v if isinstance(v, bool) else _expression(v) for k, v in table.items()})
        for language, table in tomllib.loads(text).items()
    }


LEXICONS = _load()
CHINESE = LEXICONS["chinese"]
LATIN_AND_CYRILLIC = tuple(lex for lex in LEXICONS.values() if lex.spaced)


def mixed(lexicons: tuple[Lexicon, ...]) -> Lexicon:
    """One lexicon whose every part is any of `lexicons`' words for it: a sentence may take its verb from one
    language and its rules from another ("Ignora todas las previous instructions"), as code-switched text does."""

    def union(parts: list[str | None]) -> str | None:
        present = [p for p in parts if p]
        return "(" + "|".join(present) + ")" if present else None

    fields = ("verbs", "before", "nouns", "after", "last", "objects")
    return Lexicon(**{f: union([getattr(lex, f) for lex in lexicons]) or "" for f in fields})


# Languages written with spaces between words, combined in any mix; Chinese keeps its own spaceless lexicon.
SPACED = mixed(LATIN_AND_CYRILLIC)


def ignore_patterns(lex: Lexicon) -> list[str]:
    """The orders `lex`'s three parts may come in, each within one sentence and close together."""
    gap, b = (S, r"\b") if lex.spaced else (C, "")
    verb, before, noun, after = (rf"{b}{w}{b}" for w in (lex.verbs, lex.before, lex.nouns, lex.after))
    space, end = (r"[\s-]*", r"\s*[.!?;]+\s*") if lex.spaced else ("", r"[。！？；.!?]+\s*")
    orders = [
        rf"{verb}{gap}{{0,40}}{before}{gap}{{0,25}}{noun}",  # ignore all previous instructions
        rf"{verb}{gap}{{0,30}}{noun}{gap}{{0,15}}{after}",  # oublie les consignes précédentes
        # ignore them. the previous instructions, i mean. / ignore them. the instructions above.
        rf"{verb}({space}{lex.objects})?{b}{end}{gap}{{0,12}}({before}{gap}{{0,25}}{noun}|{noun}{gap}{{0,15}}{after})",
    ]
    if lex.last:
        last = f"{b}{lex.last}{b}"
        orders += [
            rf"{before}{gap}{{0,25}}{noun}{gap}{{0,30}}{last}",  # alle vorherigen Anweisungen ignorieren; 上述指示忽略
            rf"{noun}{gap}{{0,15}}{after}{gap}{{0,30}}{last}",  # die Anweisungen von oben ignorieren
        ]
    return orders
