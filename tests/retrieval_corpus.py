"""A small corpus whose retrieval order is known by construction, shared by the retrieval tests.

- "What does the zorblaxite device do?": the made-up word occurs in one chunk only (Kitchen > Sourdough), a long
  recipe whose meaning is far from the question, while three short "What is <name>?" entries are
  close to it in meaning and share no word with it. So BM25 finds Sourdough (alone) and dense,
  with 3 candidates, does not.
- "How can I get my money back?": Billing > Refunds answers it without sharing a single word with it
  (its sparse score is 0 by construction), while Payment methods and Backups share "get", "money",
  "back" but do not answer it.
"""

from __future__ import annotations

import pytest

from rag.components import Components, build_components
from rag.settings.config import Settings
from rag.ingest.pipeline import ingest_files
from rag.types import ChunkFilter, StoredChunk

GADGETS = """# Gadgets

## What is Vexora?

Vexora is a handheld scanner that reads barcodes on shipping boxes and sends them to the warehouse system.

## What is Lumiq?

Lumiq is a desk lamp that dims itself when the room gets bright and warms its colour in the evening.

## What is Corvan?

Corvan is a label printer for parcels that prints postage straight from an order list.
"""

KITCHEN = """# Kitchen

## Sourdough

Feed the starter with flour and water the night before, knead the dough for ten minutes, let it rise
in a warm place until doubled, shape the loaf, score the top and bake it in a hot oven for forty
minutes until the crust is dark. Store it wrapped in a cloth. The batch marker is zorblaxite.

## Soup

Simmer chopped onions and carrots in stock for half an hour, then blend until smooth.
"""

BILLING = """# Billing

## Refunds

Refunds are issued within 14 days of purchase to the original card.

## Payment methods

We accept cards and bank transfers. Get a receipt by email; money sent by transfer shows within two days.

## Backups

Back up your boards every week so nothing is lost.
"""

DOCS = {"gadgets.md": (GADGETS, "hardware"), "kitchen.md": (KITCHEN, "recipes"), "billing.md": (BILLING, "billing")}
KEYWORD_QUESTION = "What does the zorblaxite device do?"
PARAPHRASE_QUESTION = "How can I get my money back?"


def ingest_corpus(components: Components) -> Components:
    for name, (text, tag) in DOCS.items():
        summary = ingest_files(components, [(name, text.encode())], tags=[tag])
        assert not summary.errors, summary.errors
    return components


def chunk_at(components: Components, source: str, heading: str) -> StoredChunk:
    """The one stored chunk under `heading` of `source`."""
    found = [r for r in components.store.records(ChunkFilter(sources=(source,), include_quarantined=True)) if r.chunk.heading == heading]
    assert len(found) == 1, found
    return found[0]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory):
    """The corpus ingested once per test module with the real models, in its own data dir.

    Its sentence vectors come from the float model ("separate"): tests here compare stored scores with a
    fresh float encoding. The int8 default is tested in test_ingest.py and measured in bench/quality.py."""
    components = build_components(Settings(data_dir=tmp_path_factory.mktemp("corpus") / "data", sentence_pooling="separate"))
    yield ingest_corpus(components)
    components.close()
