"""A collection made to move between two versions: v2 and v3 of one help page, six notes under neutral headings.

Each note is one section ("Note 1" ... "Note 6": the headings say nothing, so only the text can rank a note),
and the collection's stored settings keep the final k at 1, so a question is a hit only when its own note
ranks first. v3 rewrites notes 1-4 from unrelated text into their answers (4 questions fixed), turns note 5's
answer into unrelated text (1 broke) and keeps note 6 (a hit in both).
"""

from __future__ import annotations

import json

from rag.catalog.versions import take_version
from rag.components import Components
from rag.ingest.pipeline import ingest_files
from rag.settings.collection_settings import save_collection_settings

SOURCE = "help.md"
V2 = [
    "The office cat is called Biscuit and naps by the window.",
    "The cafeteria serves tomato soup every Tuesday.",
    "Our logo is a blue heron drawn by a local artist.",
    "The team photo was taken in the spring by the lake.",
    "The API allows one hundred requests per minute for each token.",
    "Turn on two-factor authentication in the account settings under Security.",
]
V3 = [
    "Refunds reach your card within five business days after approval.",
    "Reset your password from the sign-in page with the Forgot password link.",
    "Orders ship within two days and a tracking number arrives by email.",
    "Invoices are emailed on the first day of each month as PDF files.",
    "The lobby plants are watered every Friday morning.",
    V2[5],
]
QUESTIONS = [
    ("refund", "How long until a refund reaches my card?"),
    ("password", "How do I reset my password?"),
    ("shipping", "When will my order ship?"),
    ("invoices", "When are invoices sent?"),
    ("api", "How many API requests per minute are allowed?"),
    ("two-factor", "How do I turn on two-factor authentication?"),
]
FIXED = {"refund", "password", "shipping", "invoices"}
BROKE = {"api"}
QSET = "\n".join(
    json.dumps({"id": qid, "question": q, "gold": [{"source": SOURCE, "heading": f"Note {i}"}]})
    for i, (qid, q) in enumerate(QUESTIONS, 1)
)


def page(notes: list[str]) -> bytes:
    return ("# Help\n\n" + "".join(f"## Note {i}\n\n{text}\n\n" for i, text in enumerate(notes, 1))).encode()


def ingest_version(components: Components, notes: list[str], name: str) -> None:
    """help.md written with `notes` and kept as version `name`."""
    summary = ingest_files(components, [(SOURCE, page(notes))])
    assert not summary.errors, summary.errors
    take_version(components, name)


def two_versions(components: Components) -> None:
    """v2, then v3 of the help page in the components' collection, with a final k of 1 stored for it."""
    save_collection_settings(components.settings.data_dir, components.settings.collection, {"final_k": 1})
    ingest_version(components, V2, "v2")
    ingest_version(components, V3, "v3")
