"""Small wording helpers for messages people read (the pages, the CLI, abstention reasons)."""

from __future__ import annotations

from datetime import datetime, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


def plural(n: int, word: str, many: str | None = None) -> str:
    """`n` and the word in the right number: plural(1, "file") -> "1 file",
    plural(3, "entry", "entries") -> "3 entries".

    One helper instead of "file(s)": issue 12 found "(s)" read as unfinished on every page.
    """
    return f"{n:,} {word if n == 1 else many or word + 's'}"


def readable_time(iso: str, tz: str | None = None, now: datetime | None = None) -> str:
    """A stored UTC ISO timestamp in the reader's time zone: "today 14:05", "yesterday 09:12", "28 Nov 2026 17:40".

    Args:
        iso: the timestamp as stored ("2026-11-30T14:05:09+00:00"; a naive one is read as UTC).
        tz: an IANA zone name (the browser's, from st.context.timezone); None or unknown means UTC,
            and the result then says so.
        now: the current time, for tests.
    """
    try:
        zone, suffix = ZoneInfo(tz) if tz else timezone.utc, "" if tz else " UTC"
    except (ZoneInfoNotFoundError, ValueError):
        zone, suffix = timezone.utc, " UTC"
    try:
        when = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    when = (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).astimezone(zone)
    today = (now or datetime.now(timezone.utc)).astimezone(zone).date()
    day = {0: "today", 1: "yesterday"}.get((today - when.date()).days, f"{when.day} {when:%b %Y}")
    return f"{day} {when:%H:%M}{suffix}"
