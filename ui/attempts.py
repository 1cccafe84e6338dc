"""Back-off for a password check: each failure makes the next attempt wait longer, per client and overall.

The app's password is one shared secret, so guessing it is the attack. Per-client counters (the
browser session, the client's address when known) slow one guesser down; the overall counter caps
the guesses a crowd of fresh sessions can make. After `free` failures a key is locked for
`base_s * 2**(n - free - 1)` seconds (capped at `max_s`); a key quiet for `forget_s` starts over.
The lock is a window, not a sleep, so no server thread is held while a guesser waits. Failures are
logged (never the password itself) so an operator can see an attack.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Callable, Sequence

log = logging.getLogger("ragscope.access")
GLOBAL = "*"  # the key every failure is also counted under


@dataclass
class _Failures:
    count: int = 0
    last: float = 0.0


class AttemptLimiter:
    """Thread-safe failure counters with exponential lockout.

    Example:
        limiter = AttemptLimiter()
        if limiter.wait_s(["session-1"]) == 0 and not password_ok:
            limiter.failed(["session-1"])   # returns how long the next try must wait

    Args:
        free: failures per client before the first lockout.
        global_free: failures across all clients before everyone is locked out.
        base_s: the first lockout; each further failure doubles it.
        max_s: the longest lockout.
        forget_s: a key with no failure for this long is reset.
        clock: seconds, monotonic (tests pass their own).
    """

    def __init__(
        self,
        free: int = 3,
        global_free: int = 20,
        base_s: float = 2.0,
        max_s: float = 300.0,
        forget_s: float = 900.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.free, self.global_free, self.base_s, self.max_s, self.forget_s = free, global_free, base_s, max_s, forget_s
        self._clock = clock
        self._lock = threading.Lock()
        self._failures: dict[str, _Failures] = {}

    def wait_s(self, keys: Sequence[str]) -> float:
        """Seconds before any of `keys` (or anyone, after too many failures overall) may try again; 0 when now."""
        with self._lock:
            now = self._clock()
            return max(self._remaining(k, now) for k in [GLOBAL, *keys])

    def failed(self, keys: Sequence[str]) -> float:
        """Count a failure for each key and overall; log it; return the wait before the next attempt."""
        with self._lock:
            now = self._clock()
            for key in [GLOBAL, *keys]:
                record = self._record(key, now)
                record.count += 1
                record.last = now
            wait = max(self._remaining(k, now) for k in [GLOBAL, *keys])
            counts = ", ".join(f"{k}: {self._failures[k].count}" for k in keys)
            log.warning(
                "failed password attempt (%s; %d overall); next attempt allowed in %.0f s",
                counts,
                self._failures[GLOBAL].count,
                wait,
            )
            return wait

    def succeeded(self, keys: Sequence[str]) -> None:
        """Clear the clients' counters (the overall one only forgets with time)."""
        with self._lock:
            for key in keys:
                self._failures.pop(key, None)

    def _record(self, key: str, now: float) -> _Failures:
        record = self._failures.get(key)
        if record is None or now - record.last > self.forget_s:
            record = self._failures[key] = _Failures()
        return record

    def _remaining(self, key: str, now: float) -> float:
        record = self._failures.get(key)
        if record is None or now - record.last > self.forget_s:
            return 0.0
        free = self.global_free if key == GLOBAL else self.free
        if record.count <= free:
            return 0.0
        lock = min(self.max_s, self.base_s * 2 ** (record.count - free - 1))
        return max(0.0, record.last + lock - now)
