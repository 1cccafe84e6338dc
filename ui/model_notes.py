"""One-time model work (the dense model's ONNX export, its fusing and int8 quantising) said on the page while it runs.

rag.encoders logs a line when it starts such work ("exporting dense model to ONNX ... (once)"); the CLI
prints it on stderr. On the page the first ingest otherwise sat for 20 s and more on an empty
"Reading and chunking…" bar: this shows the line in a placeholder, for the session whose run does it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from streamlit.delta_generator import DeltaGenerator

from ui.safe import safe_text

_LOG = logging.getLogger("rag.encoders")


class _ToSlot(logging.Handler):
    """Shows the records logged on one thread (the script run's) in a page placeholder."""

    def __init__(self, slot: DeltaGenerator) -> None:
        super().__init__(logging.INFO)
        self.slot, self.thread = slot, threading.get_ident()

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread and "(once)" in record.getMessage():
            self.slot.info(
                safe_text(
                    "Preparing the models once for this data dir (later ingests and restarts skip this): {line}…",
                    line=record.getMessage(),
                )
            )


@contextmanager
def model_notes(slot: DeltaGenerator) -> Iterator[None]:
    """While the block runs, show in `slot` each one-time model step this run starts; empty it afterwards."""
    handler = _ToSlot(slot)
    if _LOG.getEffectiveLevel() > logging.INFO:
        _LOG.setLevel(logging.INFO)  # the lines are info; other handlers keep their own levels
    _LOG.addHandler(handler)
    try:
        yield
    finally:
        _LOG.removeHandler(handler)
        slot.empty()
