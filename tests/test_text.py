"""Wording helpers: plurals and readable local times."""

from __future__ import annotations

from datetime import datetime, timezone

from rag.text.words import plural, readable_time

NOW = datetime(2026, 11, 30, 16, 0, tzinfo=timezone.utc)


def test_plural_picks_the_form_for_the_count():
    assert [plural(0, "file"), plural(1, "file"), plural(2, "file"), plural(1_500, "chunk")] == ["0 files", "1 file", "2 files", "1,500 chunks"]
    assert plural(1, "entry", "entries") == "1 entry" and plural(3, "entry", "entries") == "3 entries"


def test_readable_time_is_in_the_readers_zone_and_says_today_or_yesterday():
    assert readable_time("2026-11-30T14:05:09+00:00", "Europe/Berlin", NOW) == "today 15:05"
    # 23:30 UTC on the 29th is already the 30th in Berlin, but the 29th in New York.
    assert readable_time("2026-11-29T23:30:00+00:00", "Europe/Berlin", NOW) == "today 00:30"
    assert readable_time("2026-11-29T23:30:00+00:00", "America/New_York", NOW) == "yesterday 18:30"
    assert readable_time("2026-11-02T10:00:00", None, NOW) == "2 Nov 2026 10:00 UTC"  # no zone known: says UTC


def test_readable_time_keeps_what_it_cannot_read():
    assert readable_time("not a time", "Europe/Berlin", NOW) == "not a time"
    assert readable_time("2026-11-30T10:00:00+00:00", "No/Such_Zone", NOW) == "today 10:00 UTC"
