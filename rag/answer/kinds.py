"""What kind of answer a question asks for, and how well a quotable unit is one.

The offline answerer's relevance score (cosine plus term overlap) rewards the sentence that repeats the
question's words most: often the one that names the topic ("There are advantages and disadvantages to
using WAL") or restates the user's problem, not the one that answers. The kind of question says what an
answer looks like, in any document:

- list ("what are the disadvantages", "which options"): a list, carried by the sentence that introduces it;
- how ("how do I", "what's the way to"): a command or code, or a sentence that says what to use or do;
- value ("what is the default", "how many", "how long"): a number or a literal (with "default", more);
- reason ("why", "what's going on"): "because", "so that", "otherwise", a consequence;
- definition ("what is X"): "X is a ...".

`fit` is in [0, 1]; the answerer adds a share of it to the relevance of each unit (rag/answer/extractive.py,
docs/answers.md). The cues are English and Chinese words and the shape of the text (code, numbers, lists),
never a document's own vocabulary, so they carry to documents nobody here has read.
"""

from __future__ import annotations

import re

from rag.answer.terms import content_terms
from rag.answer.units import Unit
from rag.text.sentences import states_something

OTHER = "other"

_I = re.IGNORECASE
# Each kind's cue in a question, tried in this order (`question_kind`).
_REASON_CUE = re.compile(r"\bwhy\b|\bwhat('s| is) going on\b|\bwhat am i doing wrong\b|\bhow come\b|为什么|为何", _I)
_VALUE_CUE = re.compile(
    r"\bdefaults?\b|\bhow (many|much|long|big|large|often|old)\b|\bwhat (port|value|size|limit|version|number|"
    r"timeout|encoding|format|range)\b|\b(maximum|minimum|max|min)\b|默认|缺省|多少|多大|多长|多久",
    _I,
)
_LIST_CUE = re.compile(
    r"\b(advantages|disadvantages|drawbacks|downsides|benefits|limitations|pros|cons|steps|options|"
    r"differences|features|kinds|types|ways|requirements|caveats|restrictions|prerequisites)\b|"
    r"\blist (the|all)\b|有哪些|哪些",
    _I,
)
_HOW_CUE = re.compile(
    r"\bhow (do|can|should|would|could|does|did|to|is|are|will)\b|\bhow\?|\bwhat('s| is) the (proper|right|best|"
    r"correct|recommended|easiest|simplest) way\b|\bwhat (command|option|flag|function|method|setting|class)\b|"
    r"\bwhich (command|option|flag|function|method|setting|class)\b|如何|怎么|怎样|用什么",
    _I,
)
_DEFINITION_CUE = re.compile(
    r"^\s*(what (is|are) (an? |the )?\S+( \S+)?\s*\??\s*$|what does \S+ mean)|什么是|是什么", _I
)
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("reason", _REASON_CUE),
    ("value", _VALUE_CUE),
    ("list", _LIST_CUE),
    ("how", _HOW_CUE),
    ("definition", _DEFINITION_CUE),
)

_CODE = re.compile(r"`[^`]+`")
_NUMBER = re.compile(r"\d")
_SOLUTION = re.compile(
    r"\b(you (can|could|need to|have to|should|must|may)|use|pass|set|add|call|run|declare|import|create|"
    r"define|configure|install|enable|disable|specify|wrap|mount|override|raise|"
    r"instead)\b|\bby \w+ing\b|\bto do (that|this|so)\b|可以|使用|运行|执行|设置|安装",
    _I,
)
_DEFAULT = re.compile(r"\bdefaults?\b|\bby default\b|默认|缺省", _I)
_REASON = re.compile(
    r"\b(because|since|so that|in order to|otherwise|that's why|this is why|the reason|due to|as a result|"
    r"which means|this means|so)\b|因为|由于|所以|因此|否则",
    _I,
)
_IF = re.compile(r"\b(if|when|unless)\b|如果", _I)
# A sentence that says what a named thing does: how a manual answers "how do I ...?" ("The every keyword allows
# a periodic sampling ...", "The -C option prevents ...", "The character @ is used to trigger substitution ...").
_DOES = re.compile(
    r"\b(command|keyword|option|style|builtin|variable|function|modifier|mode|setting|flag|parameter|directive|"
    r"argument)s?\b.{0,40}?\b(allows|tells|sets|enables|disables|causes|controls|defines|selects|specifies|makes|"
    r"lets|changes|redirects|places|prints|executes|returns|turns|writes|forces|prevents|suppresses)\b|"
    r"\b(is|are|can be|may be) used (to|for)\b|\ballows? (you|one|the user) to\b|\blets you\b",
    _I,
)
_DEFINES = re.compile(r"\b(is|are|means|refers to|is called|stands for)\b (an?|the|one|used)\b|是一", _I)
_ENUMERATES = re.compile(r"[,;，、；].*[,;，、；]|\b(include|includes|such as)\b", _I)


# A pointer to another place ("See set polar (p. 212).", "see also ..."): it names where the answer is, not the answer.
_POINTER = re.compile(r"^[(\[]?(see|see also|cf\.|refer to)\b", _I)


def states(unit: Unit) -> bool:
    """Whether `unit` can answer at all: not a fragment ("Syntax:", "For example,") or a cross-reference, unless it
    carries the list or code that follows it. Neither inherits its neighbours' topic (rag/answer/extractive.py)."""
    return bool(unit.carries) or (states_something(unit.text) and not _POINTER.match(unit.text))


# How a reference manual opens a section: the thing the section is named after, as the subject, then what it does
# or is ("The set view command sets the viewing angle for splots." under "View", "The every keyword allows ...",
# "The bind allows ...", "set contour enables ...", "X is a ..."): the subject among the first words, the verb
# within a few words after it.
_SUBJECT_WORDS = 6
_VERB_WORDS = 4
_WHAT_IT_DOES = re.compile(
    r"\b(allows?|tells|sets|enables|disables|causes|controls|defines|selects|specifies|makes|lets|changes|redirects|"
    r"places|prints|executes|returns|turns|writes|forces|prevents|suppresses|reads|produces|fits|saves|draws|"
    r"generates|creates|determines|displays|removes|deletes|runs|starts|stops|adds|expands|replaces|"
    r"(is|are|can be|may be) used|is an?)\b",
    _I,
)


def names_its_section(unit: Unit) -> bool:
    """Whether `unit` says what the thing its section is named after does, with that thing as its subject: a word of
    the section's own title among its first words, a verb saying what it does or is right after it ("The every
    keyword allows a periodic sampling ..." under "Every"; not "Rotates the view angles ..." under "Projection").
    A manual states there what a command is for, the answer to "how do I <what it does>?" even when a sentence of
    the section's detail, or of a neighbouring section, shares more of the question's words (docs/answers.md)."""
    title = content_terms(unit.heading.split(" > ")[-1]) if unit.heading else set()
    if not title or unit.carries or not states(unit):
        return False
    words = unit.text.split()
    subject = next((i for i, w in enumerate(words[:_SUBJECT_WORDS]) if content_terms(w) & title), None)
    return subject is not None and bool(_WHAT_IT_DOES.search(" ".join(words[subject + 1 : subject + 1 + _VERB_WORDS])))


def question_kind(question: str) -> str:
    """The first kind whose cue the question holds (reason before value before list before how), else "other"."""
    return next((kind for kind, cue in _KINDS if cue.search(question)), OTHER)


def fit(kind: str, unit: Unit) -> float:
    """How much `unit` looks like an answer of `kind` (0 to 1), by its shape and its cue words."""
    text = unit.text
    if not states(unit):
        return 0.0
    if kind == "list":
        return 1.0 if unit.carries == "list" else 0.5 if _ENUMERATES.search(text) else 0.0
    if kind == "how":
        code = 1.0 if unit.carries == "code" else 0.6 if _CODE.search(text) else 0.0
        does = 0.5 if _SOLUTION.search(text) or _DOES.search(text) else 0.0
        return min(1.0, code + does)
    if kind == "value":
        if not (_NUMBER.search(text) or _CODE.search(text)):
            return 0.0  # "has a default" names the topic; the answer is the value
        return 1.0 if _DEFAULT.search(text) else 0.6
    if kind == "reason":
        return 1.0 if _REASON.search(text) else 0.4 if _IF.search(text) else 0.0
    if kind == "definition":
        return 1.0 if _DEFINES.search(text) or _DOES.search(text) else 0.0
    return 0.0
