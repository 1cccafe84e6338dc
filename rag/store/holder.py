"""Who holds a document lease (rag/store/doc_lease.py), so a waiter on the same machine can tell that the
holder died and take the lease over at once instead of waiting out its ttl.

A holder is its machine, its pid and its pid's start time. The machine is named by what makes a pid
mean the same process to two processes: the host name, the kernel's boot id and the pid namespace (two
containers on one kernel share the boot id, not the pid namespace). A holder is dead only when that
is certain: same machine, and the pid is gone, a zombie, or now another process (its start time
differs). Anywhere else (another machine, a system without /proc) nothing is certain, and the waiter
waits for the lease to lapse.
"""

from __future__ import annotations

import functools
import os
import socket
from dataclasses import dataclass
from pathlib import Path

_PROC = Path("/proc")


@dataclass(frozen=True)
class Holder:
    host: str  # "" where a pid cannot be checked: never judged dead
    pid: int
    started: str  # the pid's start time, in clock ticks since boot

    @property
    def checkable(self) -> bool:
        """Whether this machine can tell if the holder lives: it runs here."""
        return bool(self.host) and self.host == _machine()

    def gone(self) -> bool:
        """Whether this holder is certainly dead (see the module's docstring)."""
        if not self.checkable:
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:  # alive, another user's
            pass
        stat = _stat(self.pid)
        return stat is None or stat[0] in "ZX" or stat[1] != self.started


def this_process() -> Holder:
    """This process as a holder (read each time: a forked child is another holder)."""
    pid = os.getpid()
    stat = _stat(pid)
    if stat is None:
        return Holder("", pid, "")
    return Holder(_machine(), pid, stat[1])


@functools.cache
def _machine() -> str:
    try:
        boot = (_PROC / "sys/kernel/random/boot_id").read_text().strip()
        namespace = os.readlink(_PROC / "self/ns/pid")
    except OSError:
        return ""
    return f"{socket.gethostname()}|{boot}|{namespace}"


def _stat(pid: int) -> tuple[str, str] | None:
    """The process's state letter and start time from /proc/<pid>/stat, or None when it is gone (or no /proc)."""
    try:
        raw = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2 :].split()  # after "pid (comm) ": the name may hold spaces
    return fields[0], fields[19]  # state (field 3), starttime (field 22)
