"""The errors pages and the CLI show to people.

Pages catch `RagError` and show `str(e)`; the CLI turns it into a non-zero exit. Anything else that
escapes is a bug, not a message.
"""


class RagError(Exception):
    """Base class: its message is written for the person using the app."""


class ConfigError(RagError):
    """A setting is missing or has a value we cannot use."""


class StoreError(RagError):
    """The vector store refused an operation or cannot be opened."""


class StoreLockedError(StoreError):
    """Another process holds the embedded store's data directory."""


class InPlaceRefused(StoreError):
    """The engine cannot add a dense vector to a live collection (a Qdrant server from before named vectors
    could be added): the way left is a copy into a new collection (rag/catalog/vector_copy.py)."""


class ModelMismatchError(StoreError):
    """The collection was built with other models than the ones configured now."""


class EncoderError(RagError):
    """A model could not be loaded or could not encode its input."""


class LoaderError(RagError):
    """A file could not be turned into text (empty, binary, encrypted, unsupported...)."""


class QuestionError(RagError):
    """A question cannot be asked as typed (empty, too long)."""


class GenerationError(RagError):
    """The answer generator failed (API error, timeout, refusal)."""


class EvalSetError(RagError):
    """A question set is malformed; the message names the line."""
