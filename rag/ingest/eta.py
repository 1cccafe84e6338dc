"""How long the rest of a long step will take, in words, from how fast its first part went.

The ingest's embedding is its long part (minutes for a large document on CPU); the page and the CLI
show its done / total with this estimate, so a long ingest reads as working, not stuck.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class Eta:
    """The time left of a count-up step, at its rate since the first report (whose work came before the clock)."""

    started: float = field(default_factory=time.monotonic)
    first: int | None = None  # the count at the first report

    def left(self, done: int, total: int, now: float | None = None) -> str:
        """ "about 3 min left"; "" at the first report, when done, or under 5 s in (no rate yet)."""
        spent = (time.monotonic() if now is None else now) - self.started
        if self.first is None:
            self.first = done
        gained = done - self.first
        if gained <= 0 or done >= total or spent < 5:
            return ""
        return f"about {duration((total - done) * spent / gained)} left"


def duration(seconds: float) -> str:
    """A rounded duration: "40 s", "80 s", "3 min", "1 h 10 min"."""
    if seconds < 90:
        return f"{max(5, round(seconds / 5) * 5)} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"
