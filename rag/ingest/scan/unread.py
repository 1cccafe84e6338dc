"""What the patterns cannot read, found so that a person can check it: the scan's other half.

The patterns cover English, French, German, Spanish, Portuguese, Italian, Russian, Chinese and Japanese.
A chunk is marked *unchecked*, with the reason, when part of it is text they cannot read:
  - letters of a script they do not cover (Arabic, Hangul, Devanagari, Greek, Hebrew, Thai...);
  - Cyrillic with letters Russian does not use (Ukrainian, Belarusian, Serbian);
  - Latin-script prose in another language (Dutch, Polish, Turkish...), told by its common words;
  - Latin-script prose whose letters fit no language at any Caesar shift, which is what ciphers look like.
A sentence with no common word of a covered language is tried at every Caesar shift (ROT13 is one):
when a shift fits the letter frequencies of Latin-script languages clearly better than the text as
written, the shifted sentence is handed back to be matched like any other reading.

Only prose counts: a sentence of four or more words that are mostly plain words. Code, tables, lists of
names and headings ("Install Uvicorn Gunicorn") have too few plain words or are capitalised like names.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from rag.ingest.scan.readings import shown

# The most common words of each covered Latin-script language: one of them is in almost any sentence.
_COVERED = frozenset(
    """
    the a an and or of to in on at by for with from as is are was were be been it its this that these those you
    your we our they their he she his her not no do does did can could will would should may might must have
    has had if then than so but also which who what when where how there here all any each more most some such
    only just into out up about over after before use using see one new get set run make
    le la les un une des du de et ou est sont pas ne que qui dans pour par sur avec ce cette ces il elle vous tu
    nous on au aux en se son sa ses plus mais comme être avoir fait si tout tous
    der die das den dem des ein eine einen einem und oder ist sind nicht kein zu mit von für auf im an als wie
    auch sich es ich du sie wir ihr er bei nach aus wird werden kann können dass alle
    el los las y o es son no que del por para con su sus al lo como más pero este esta
    os as um uma é são não do da dos das em na ao seu sua mais mas
    il lo gli i è sono non che di della per con su si come più ma questo questa anche
    """.split()
)
# Common words of languages the patterns do not cover that are no word of a covered one.
_FOREIGN = {
    word: language
    for language, words in {
        "Dutch": "het een niet zijn wordt worden naar ook deze uw jij wij geen heeft kunt jullie",
        "Polish": "się jest że oraz albo być który która które dla przez tylko może wszystkie",
        "Turkish": "bir ve bu için ile değil olan daha çok gibi tüm önceki",
        "Indonesian": "yang dan untuk dengan ini itu tidak dari dalam adalah akan semua",
        "Swedish, Danish or Norwegian": "och att det är som inte för jag og ikke af tidigare tidligere",
        "Czech or Slovak": "že není jsou nebo jako všechny",
        "Romanian": "și pentru care sunt toate anterioare",
        "Hungarian": "és hogy egy minden korábbi",
        "Vietnamese": "và của không các những được",
        "Finnish": "että kaikki aiemmat",
        "Tagalog": "ang ng mga",
    }.items()
    for word in words.split()
}
# Letters the patterns read: Latin, Cyrillic, CJK ideographs, kana. Anything else that is a letter is not read.
_UNREAD_LETTERS = re.compile(
    r"[^\W\d_a-zA-Z\u00aa\u00b5\u00ba\u00c0-\u024f\u0250-\u02af\u1e00-\u1eff\u0400-\u052f\u3005-\u3007"
    r"\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]{2,}"
)
_NOT_RUSSIAN = re.compile(r"(?<!\w)[\u0400-\u04ff]*[іїєґўђјљњћџ][\u0400-\u04ff]*(?!\w)")
_SENTENCE = re.compile(r"[^.!?;\n]+")
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_MIN_UNREAD_LETTERS = 12  # about two words: a scattered Greek letter in a formula is not text
_MIN_NOT_RUSSIAN_WORDS = 3
# English letter frequencies (%): near enough for every Latin-script language to tell them from a cipher.
_LETTER_LOG = [
    math.log(p / 100)
    for p in (
        8.2,
        1.5,
        2.8,
        4.3,
        12.7,
        2.2,
        2.0,
        6.1,
        7.0,
        0.15,
        0.77,
        4.0,
        2.4,
        6.7,
        7.5,
        1.9,
        0.095,
        6.0,
        6.3,
        9.1,
        2.8,
        0.98,
        2.4,
        0.15,
        2.0,
        0.074,
    )
]
_MIN_SHIFT_LETTERS = 16  # below this, letter frequencies cannot tell one shift from another
_MIN_CIPHER_LETTERS = 40  # below this, a line of code or a short heading can fit badly by chance
# Mean log frequency per letter: prose and code in the docs corpora score -2.8 to -3.15 as written (the
# lowest: "Decompressing gzip-compressed request bodies"); Caesar shifts of English below -3.3 as written
# and about -2.9 shifted back; a substitution cipher of English, random letters and Polish below -3.25 at
# every shift (bench/scan_rate.py --show lists what is marked).
_SHIFT_GAIN = 0.3
_FITS_NO_LANGUAGE = -3.25


@dataclass(frozen=True)
class Survey:
    """What `survey` found: sentences that read as a Caesar shift, as (shift, sentence shifted back), and why
    part of the text is unchecked (or None)."""

    shifted: tuple[tuple[int, str], ...] = ()
    unchecked: str | None = None


def survey(text: str) -> Survey:
    """The Caesar-shifted sentences of `text` (as written, not lower-cased: capitals tell names from prose) and the
    first reason it holds text the patterns cannot read."""
    shifted: list[tuple[int, str]] = []
    reasons = [_unread_script(text), _non_russian(text)]
    covered = foreign = 0
    languages: Counter[str] = Counter()
    for sentence in _SENTENCE.findall(text):
        words = _prose_words(sentence)
        if not words:
            continue
        here = sum(w in _COVERED for w in words)
        strange = [_FOREIGN[w] for w in words if w in _FOREIGN]
        covered, foreign = covered + here, foreign + len(strange)
        languages.update(strange)
        if here:
            continue
        letters = [ord(ch) - 97 for w in words for ch in w if "a" <= ch <= "z"]
        if len(letters) < _MIN_SHIFT_LETTERS:
            continue
        fit = [sum(_LETTER_LOG[(n + k) % 26] for n in letters) / len(letters) for k in range(26)]
        best = max(range(26), key=fit.__getitem__)
        if fit[best] < _FITS_NO_LANGUAGE:
            if len(letters) >= _MIN_CIPHER_LETTERS and not strange:
                reasons.append(
                    "letters that fit no language the scan reads (a cipher, or a language it does not cover): "
                    f"“{shown(sentence, 60)}”"
                )
        elif best and fit[best] - fit[0] >= _SHIFT_GAIN:
            shifted.append((26 - best, _shift(sentence, best)))
    if foreign >= 2 and foreign >= covered:
        reasons.append(f"text that reads as {languages.most_common(1)[0][0]}, a language the scan does not cover")
    return Survey(tuple(shifted), next((r for r in reasons if r), None))


def fits_a_language(word: str) -> bool:
    """Whether the letters of `word` (lower case) are frequent in Latin-script languages as written, as
    words run together are, and a spelled-out alphabet or a key is not; letters outside a-z count as fitting."""
    letters = [ord(ch) - 97 for ch in word if "a" <= ch <= "z"]
    if len(letters) < len(word) / 2:
        return True
    return sum(_LETTER_LOG[n] for n in letters) / len(letters) >= _FITS_NO_LANGUAGE


def _unread_script(text: str) -> str | None:
    runs = _UNREAD_LETTERS.findall(text)
    if sum(map(len, runs)) < _MIN_UNREAD_LETTERS:
        return None
    script = Counter(unicodedata.name(run[0], "UNKNOWN").split()[0].title() for run in runs).most_common(1)[0][0]
    return f"{script} letters, a script the scan does not read"


def _non_russian(text: str) -> str | None:
    if len(_NOT_RUSSIAN.findall(text.lower())) < _MIN_NOT_RUSSIAN_WORDS:
        return None
    return "Cyrillic text that is not Russian (Ukrainian, Belarusian or Serbian letters)"


def _prose_words(sentence: str) -> list[str]:
    """The Latin-script words of `sentence` when it reads as prose: four or more tokens, at least 80% of
    them plain words, not mostly capitalised like names; [] otherwise."""
    tokens = sentence.split()
    if len(tokens) < 4:
        return []
    words = [m.group(0) for t in tokens if (m := _WORD.fullmatch(t.strip("\"'“”‘’()[],:*_`")))]
    if len(words) < 0.8 * len(tokens) or not all(w.isascii() or _latin(w) for w in words):
        return []
    if sum(w[0].isupper() and not w.isupper() for w in words) > len(words) / 2:
        return []
    return [w.lower() for w in words]


def _shift(text: str, k: int) -> str:
    """`text` with each ASCII letter moved `k` places on in the alphabet (lower-cased)."""
    return "".join(chr((ord(ch) - 97 + k) % 26 + 97) if "a" <= ch <= "z" else ch for ch in text.lower())


def _latin(word: str) -> bool:
    return all(ch <= "\u024f" or "\u1e00" <= ch <= "\u1eff" for ch in word)
