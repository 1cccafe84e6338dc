"""HyDE: search with a passage that would answer the question, fused with the question's own search.

With Claude, the model writes the passage (it may be wrong in its facts; only its wording is used,
to land near real passages in embedding space). Offline there is no writer, so the passage is the
extractive answer of a first pass: sentences quoted from the question's own top chunks. That is a
pseudo-document, labelled so: it can pull in chunks worded like the best sentences found, but it
cannot name anything the first pass did not already see.
"""

from __future__ import annotations

import dataclasses

from rag.answer.anthropic_client import refuse_if_cut, text_of
from rag.answer.checks import gate
from rag.answer.citations import neutralise_markers, parse_citations
from rag.answer.extractive import ExtractiveGenerator, choose
from rag.answer.prompt import escape_source_text
from rag.answer.terms import key_terms
from rag.components import Components
from rag.errors import GenerationError
from rag.modes.fusion import merge
from rag.modes.llm import Claude
from rag.modes.result import HydeStage, ModeResult
from rag.retrieval.result import RetrievalResult
from rag.retrieval.retrieve import retrieve
from rag.settings.config import RetrievalConfig
from rag.types import ChunkFilter

HYDE_SYSTEM = """You help a search engine over a documentation collection. Given a question, write the passage
of documentation that would answer it: 2 to 4 plain sentences in the documentation's own style, with the
terms such a page would use. Write only the passage: no preamble, no caveats, no citations."""


def run_hyde(
    components: Components, question: str, config: RetrievalConfig, flt: ChunkFilter, claude: Claude | None
) -> ModeResult:
    """The question's search, the passage's dense search, and their RRF fusion."""
    first = retrieve(components, question, config, flt)
    notes: list[str] = []
    if claude is not None:
        passage, notes = _claude_passage(claude, question)
        written_by, pseudo = f"Claude ({claude.model})", False
    else:
        passage = extractive_passage(components, question, first)
        written_by, pseudo = "the offline extractive answerer (quoted from the first pass)", True
        notes.append(
            "offline: the passage is a pseudo-document, the extractive answer of the question's own search; "
            "it can only find chunks worded like sentences the first pass already retrieved"
        )
    backend = "claude" if claude is not None else "offline"
    if not passage:
        notes.append("no hypothetical passage could be made, so the question's own search is the result")
        stage = HydeStage(first, "", pseudo, written_by, None)
        return ModeResult("hyde", question, first, backend, tuple(notes), hyde=stage, llm_calls=_calls(claude))
    # The passage's own list is dense only: HyDE's point is the embedding of an answer-shaped text.
    search = retrieve(components, passage, dataclasses.replace(config, fusion="dense", reranker="none"), flt)
    merged = merge([("question", first), ("hyde passage", search)], "rrf")
    stage = HydeStage(first, passage, pseudo, written_by, search)
    return ModeResult("hyde", question, merged, backend, tuple(notes), hyde=stage, llm_calls=_calls(claude))


def extractive_passage(components: Components, question: str, first: RetrievalResult) -> str:
    """The sentences the extractive answerer would quote for `question` from `first`; "" when none is relevant enough.

    The answerer's "the sources never mention X" abstention is left out on purpose: a question that
    needs a second hop names what the first pass lacks, and the pseudo-document only has to look
    like an answer to find chunks worded like it.
    """
    settings = components.settings
    checked = gate(components, first, settings.answer)
    if checked.abstain:
        return ""
    generator = ExtractiveGenerator(components.dense, settings.answer.min_sentence_score)
    chosen = choose(
        generator.score(question, checked.sources, first), generator.min_sentence_score, set(key_terms(question))
    )
    return " ".join(neutralise_markers(s.unit.text) for s in chosen)


def strip_markers(text: str) -> str:
    """`text` without its citation markers ("... days [S1]." -> "... days.")."""
    out, cursor = [], 0
    for marker in parse_citations(text):
        out.append(text[cursor : marker.start])
        cursor = marker.end
    out.append(text[cursor:])
    return " ".join("".join(out).split()).replace(" .", ".")


def _claude_passage(claude: Claude, question: str) -> tuple[str, list[str]]:
    message = claude.call(
        "hyde passage",
        system=HYDE_SYSTEM,
        messages=[{"role": "user", "content": f"<question>{escape_source_text(question)}</question>"}],
    )
    try:
        refuse_if_cut(message, "HyDE passage", claude.config.max_tokens)
    except GenerationError as e:
        return "", [str(e)]
    return text_of(message), []


def _calls(claude: Claude | None) -> tuple:
    return tuple(claude.calls) if claude is not None else ()
