"""Answers with checked citations: retrieve, gate on relevance, generate (Claude or offline extractive), check.

Public API:
    answer_question(components, question, config=None, flt=None, generator=None) -> Answer
    stream_answer(...) -> text deltas, then the Answer
    Answer, Citation, NOT_IN_SOURCES, parse_citations(text), check_answer(text, sources)
    AnthropicGenerator, ExtractiveGenerator, default_generator(components)
"""

from rag.answer.answerer import answer_question, default_generator, stream_answer
from rag.answer.anthropic_gen import AnthropicGenerator
from rag.answer.checks import AnswerCheck, check_answer, gate
from rag.answer.citations import CitationMarker, answer_sentences, parse_citations
from rag.answer.extractive import ExtractiveGenerator
from rag.answer.generator import Generator
from rag.answer.prompt import NOT_IN_SOURCES, SYSTEM_PROMPT, build_user_message
from rag.answer.result import Answer, Citation, Generation, Source

__all__ = [
    "NOT_IN_SOURCES",
    "SYSTEM_PROMPT",
    "AnthropicGenerator",
    "Answer",
    "AnswerCheck",
    "Citation",
    "CitationMarker",
    "ExtractiveGenerator",
    "Generation",
    "Generator",
    "Source",
    "answer_question",
    "answer_sentences",
    "build_user_message",
    "check_answer",
    "default_generator",
    "gate",
    "parse_citations",
    "stream_answer",
]
