"""Turns on one embedded shard, taken by the processes that share a data dir: the CLI beside the app.

qdrant-edge must never have one shard directory open twice (the holder's next flush fails). So a
process opens the shard only for its turn: a turn takes an exclusive fcntl lock on
`<collection>.lock`, waiting up to `wait_s` for it, opens the shard, and ends by flushing, closing and
unlocking it. The lease is also the store's reentrant lock (`Store.lock`): every store method is one
turn, or part of the turn a caller holds (a document replacement, a journal replay), so an operation
of several calls is never interleaved with another process's.

Two costs are kept down:
- Opening a shard costs tens of milliseconds on a small collection and up to a second on a large one
  under load (bench/store_open.py), so a turn lingers `linger_s` after its last call: a command's or a
  page run's burst of calls opens the shard once. When another process waits, the turn ends at its
  first idle moment once it has had its slice: `slice_s`, or `HANDOVER_SHARE` times what the last hand
  over cost (opening plus closing the shard), whichever is longer, counted from the moment the shard
  was open. Handing over at every call made a `ragscope docs` beside a busy app open the shard once per
  call on both sides; so did a fixed slice counted from before the open, once the open alone outlasted
  it (a large collection beside a tune sweep: one call per turn; bench/README.md, "CLI beside a sweep").
- Waiting is fair: a taker first takes `<collection>.queue` and holds it while it waits for the lock,
  so a busy process cannot take the lock again between a waiter's polls (it queues behind it).
"""

from __future__ import annotations

import fcntl
import logging
import threading
import time
from pathlib import Path
from typing import IO, Callable

from rag.errors import RagError, StoreLockedError

log = logging.getLogger(__name__)

# The longest wait for another process's turn: longer than a large document's replacement, shorter
# than a person's patience; an optimize of a large collection can exceed it (run it with the app stopped).
WAIT_S = 30.0
# How long a turn stays open after its last call, for the next call of the same burst.
LINGER_S = 0.5
# The least a turn lasts when another process waits, once the shard is open.
SLICE_S = 0.2
# A waited-for turn also lasts this many times what opening and closing the shard cost, so handing over
# costs at most about a third of the time both sides spend, whatever the collection's size.
HANDOVER_SHARE = 2.0
# The longest sleep between two tries of a lock, and between two checks for a waiter while lingering.
POLL_S = 0.01


class ShardLease:
    """A reentrant lock whose outermost hold is this process's turn on the shard.

    `begin` runs when a turn starts (open the shard, repair what a dead process left) and `end` when
    it ends (flush and close it); both run holding the lock, `end` also from the lingering thread.

    Example:
        lease = ShardLease(root / "docs.lock", begin=open_shard, end=close_shard)
        with lease:  # waits for the other processes' turns, at most lease.wait_s
            ...
        lease.close()
    """

    def __init__(
        self,
        lock_path: Path,
        begin: Callable[[], None],
        end: Callable[[], None],
        wait_s: float = WAIT_S,
        linger_s: float = LINGER_S,
        slice_s: float = SLICE_S,
    ) -> None:
        self.lock_path = lock_path
        self.wait_s, self.linger_s, self.slice_s = wait_s, linger_s, slice_s
        self._begin, self._end = begin, end
        self._mutex = threading.RLock()
        self._idle = threading.Condition(self._mutex)
        self._depth = 0  # holds by the thread inside (only one thread is, holding _mutex)
        self._held = False  # whether this process has its turn (the file lock)
        self._idle_since = 0.0
        self._open_at = 0.0  # when this turn's shard was open (`begin` done)
        self._begin_s = self._end_s = 0.0  # what this turn's begin and the last turn's end cost
        self._closed = False
        self._lingerer: threading.Thread | None = None
        self._lock_file: IO[str] = open(lock_path, "a+")  # noqa: SIM115 - kept for the lease's life
        try:
            self._queue_file: IO[str] = open(lock_path.with_suffix(".queue"), "a+")  # noqa: SIM115
        except OSError:
            self._lock_file.close()
            raise

    @property
    def held(self) -> bool:
        """Whether this process has its turn now (a call is running, or the turn lingers)."""
        return self._held

    def acquire(self) -> bool:
        """Take the lock; the outermost hold without a turn waits for one and starts it.

        Raises:
            StoreLockedError: another process kept its turn longer than `wait_s`.
            StoreError: `begin` failed (the turn is ended again).
        """
        self._mutex.acquire()
        self._depth += 1
        if not self._held:
            try:
                self._take()
            except BaseException:
                self._depth -= 1
                self._mutex.release()
                raise
        return True

    def release(self) -> None:
        """Let go; the outermost release ends the turn when another process waits for it and it has lasted
        `slice_s` (at once with no `linger_s`), else leaves it to linger."""
        try:
            self._depth -= 1
            if self._depth == 0 and self._held:
                self._idle_since = time.monotonic()
                if self._left() <= 0:
                    self._finish()
                else:
                    self._start_lingerer()
                    self._idle.notify()
        finally:
            self._mutex.release()

    def __enter__(self) -> ShardLease:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def close(self) -> None:
        """End the turn (flushing the shard) and give up the lock files; the lease cannot be taken again."""
        with self._mutex:
            if self._closed:
                return
            self._closed = True
            try:
                if self._held:
                    self._finish()
            finally:
                self._idle.notify_all()
                self._lock_file.close()
                self._queue_file.close()

    def _take(self) -> None:
        if self._closed:
            raise RagError(f"the store on {self.lock_path.parent} was closed")
        deadline = time.monotonic() + self.wait_s
        self._wait_for(self._queue_file, deadline)
        try:
            self._wait_for(self._lock_file, deadline)
        finally:
            fcntl.flock(self._queue_file.fileno(), fcntl.LOCK_UN)
        self._held = True
        taken = time.monotonic()
        try:
            self._begin()
        except BaseException:
            self._finish()
            raise
        self._open_at = time.monotonic()
        self._begin_s = self._open_at - taken

    def _finish(self) -> None:
        self._held = False
        started = time.monotonic()
        try:
            self._end()
        finally:
            fcntl.flock(self._lock_file.fileno(), fcntl.LOCK_UN)
            self._end_s = time.monotonic() - started

    def _wait_for(self, file: IO[str], deadline: float) -> None:
        delay = 0.001
        while True:
            try:
                fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise StoreLockedError(
                        f"the data directory {self.lock_path.parent} is in use by another process (the app or "
                        f"another `ragscope` command), still busy after {self.wait_s:g} s: an ingest, delete "
                        "or optimize of a large collection may be running there. Try again when it is done."
                    ) from None
                time.sleep(min(delay, left))
                delay = min(2 * delay, POLL_S)

    def _left(self) -> float:
        """Seconds the idle turn may still linger: until `linger_s` idle, or while someone waits until
        it has had its slice (see the module's docstring)."""
        now = time.monotonic()
        left = self._idle_since + self.linger_s - now
        if left > 0 and self._someone_waits():
            slice_s = max(self.slice_s, HANDOVER_SHARE * (self._begin_s + self._end_s))
            left = min(left, self._open_at + slice_s - now)
        return left

    def _someone_waits(self) -> bool:
        """Whether another process (or another store on this collection) is queued for a turn."""
        try:
            fcntl.flock(self._queue_file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(self._queue_file.fileno(), fcntl.LOCK_UN)
        return False

    def _start_lingerer(self) -> None:
        if self._lingerer is None or not self._lingerer.is_alive():
            self._lingerer = threading.Thread(target=self._linger, name=f"lease {self.lock_path.name}", daemon=True)
            self._lingerer.start()

    def _linger(self) -> None:
        """End each lingering turn once idle for `linger_s`, or sooner when someone waits for it."""
        with self._idle:
            while not self._closed:
                if not self._held:
                    self._idle.wait()
                    continue
                left = self._left()
                if left > 0:
                    self._idle.wait(min(left, POLL_S))
                    continue
                try:
                    self._finish()
                except RagError as e:  # no caller to tell: the next turn reopens from what is on disk
                    log.warning("ending the turn on %s failed: %s", self.lock_path, e)
