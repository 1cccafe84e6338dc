"""A small corpus whose best fusion is known by construction, for the tune sweep's tests.

Each question names a made-up word that occurs in one section only: a long recipe whose meaning is far
from the question, while short "What is <name>?" entries about gadgets are close to every question in
meaning and share no word with it. BM25 finds each gold section first (alone); dense, with 3 candidates,
ranks the gadget entries above it. So sparse-only retrieval is best, dense-only worst.
"""

from __future__ import annotations

import json

from rag.components import Components
from rag.ingest.pipeline import ingest_files

WORDS = ("zorblaxite", "quennifer", "plovastic", "drumwexel", "snarvitol", "keptolune")
DISHES = ("Sourdough", "Lentil soup", "Risotto", "Flatbread", "Custard", "Dumplings")
GADGETS = "# Gadgets\n\n" + "\n\n".join(
    f"## What is {name}?\n\n{name} is a handheld device that {does}."
    for name, does in (
        ("Vexora", "scans barcodes on boxes and sends them to the warehouse system"),
        ("Lumiq", "dims a desk lamp when the room gets bright"),
        ("Corvan", "prints postage labels straight from an order list"),
        ("Tessel", "measures the temperature of a room and reports it to your phone"),
    )
)
KITCHEN = "# Kitchen\n\n" + "\n\n".join(
    f"## {dish}\n\nWeigh the flour, water and salt, mix them in a large bowl and leave the dough to rest for an hour "
    f"in a warm place. Knead it on a floured board, shape it, let it rise again until doubled and bake it in a hot "
    f"oven until golden. Serve it warm with butter. The batch marker is {word}."
    for dish, word in zip(DISHES, WORDS, strict=True)
)
QSET = "".join(
    json.dumps({"id": f"k{i}", "question": f"What does the {word} device do?",
                "gold": [{"source": "kitchen.md", "heading": f"Kitchen > {dish}"}]}) + "\n"
    for i, (dish, word) in enumerate(zip(DISHES, WORDS, strict=True), 1)
)  # fmt: skip


def ingest(components: Components) -> Components:
    summary = ingest_files(components, [("gadgets.md", GADGETS.encode()), ("kitchen.md", KITCHEN.encode())])
    assert not summary.errors, summary.errors
    return components
