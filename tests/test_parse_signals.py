"""Parse quality tied to failures (issue 40, item 5): each chunk's parse signals, measured at ingest and stored,
flag an index page and a page of furniture in a PDF made here and not its prose; a failed question whose
gold sits in a flagged chunk is named by Eval, the CLI and the stored run."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from parse_pdf import FOOTER, harbour_pdf

from rag.catalog.parse import chunk_flags, parse_overview
from rag.cli import main
from rag.eval.qsets import parse_question_set
from rag.eval.runner import run_eval
from rag.eval.runs import load_run
from rag.eval.verdict_report import verdict_report
from rag.ingest.chunker import chunk_document
from rag.ingest.loaders.document import load_document
from rag.ingest.parse_signals import PAYLOAD_KEY, SIGNALS, ParseSignals, measure
from rag.ingest.pipeline import ingest_files
from rag.settings.config import RetrievalConfig
from rag.types import ChunkFilter, Document

PROSE = (
    "# Refunds\n\nAn approved refund reaches your card in 5 to 10 business days. A refund for a yearly plan is "
    "worked out for the months left, and the money goes back to the card the plan was paid with.\n\n"
    "Refunds are not given for a monthly plan, but you can cancel it at any time and it runs to the end of "
    "the month you have paid for."
)
# A table whose rows pypdf extracted one cell a line, as a PDF without tagged tables often reads.
BROKEN_TABLE = (
    "# Timetable\n\nDeparture times from the pier:\n\n"
    + "\n".join(["Day", "First", "Last", "Monday", "07:10", "21:40", "Tuesday", "07:10", "21:40", "Sunday", "09:00"])
    + "\n"
)
DISCLAIMER = (
    "This page is provided for information only; the harbour authority accepts no liability for changes to the "
    "timetable made after it was printed."
)


def _signals(text: str, name: str = "guide.md") -> dict[tuple[str, ...], ParseSignals]:
    doc = load_document(name, text.encode())
    chunks = chunk_document(doc)
    measured = measure(chunks, doc)
    return {c.heading_path: measured[c.id] for c in chunks}


def test_the_signals_flag_an_index_page_and_a_page_of_furniture_in_a_pdf_and_not_its_prose():
    doc = load_document("harbour.pdf", harbour_pdf())
    assert FOOTER[0] in doc.text  # the loader keeps the footer's inner lines: what the signals must find
    chunks = chunk_document(doc)
    measured = measure(chunks, doc)
    flags = {c.heading_path: measured[c.id].flags() for c in chunks}
    assert flags == {
        ("Ferry services",): (),
        ("Tickets",): (),
        ("Notes",): ("furniture", "thin_page"),  # a footer and one line: furniture, and a near-empty page
        ("Index",): ("index",),
    }
    notes = next(measured[c.id] for c in chunks if c.heading_path == ("Notes",))
    assert notes.furniture >= SIGNALS["furniture"].threshold and notes.page_chars < SIGNALS["thin_page"].threshold
    prose = next(measured[c.id] for c in chunks if c.heading_path == ("Tickets",))
    assert 0 < prose.furniture < SIGNALS["furniture"].threshold  # the footer is there, but the page is prose
    assert prose.page_chars > 400


def test_a_broken_table_and_repeated_boilerplate_are_flagged_and_prose_is_not():
    assert _signals(PROSE)[("Refunds",)].flags() == ()
    assert _signals(PROSE)[("Refunds",)].page_chars is None  # Markdown has no pages: not measured
    assert _signals(BROKEN_TABLE)[("Timetable",)].flags() == ("table",)
    sections = "\n\n".join(f"# Pier {n}\n\nThe pier {n} has a ramp for bicycles.\n\n{DISCLAIMER}" for n in range(1, 5))
    measured = _signals(sections)
    assert all(s.flags() == ("boilerplate",) for s in measured.values()), measured
    # Said once, the same sentence is the chunk's own text.
    assert _signals(f"# Pier\n\nThe pier has a ramp.\n\n{DISCLAIMER}")[("Pier",)].flags() == ()


def test_signals_round_trip_through_the_payload_and_old_payloads_read_as_not_measured():
    signals = ParseSignals(index=0.8, furniture=0.1, page_chars=90)
    assert ParseSignals.from_payload(signals.payload()) == signals
    assert signals.flags() == ("index", "thin_page")
    assert ParseSignals.from_payload(None) is None
    assert ParseSignals.from_payload({"index": 0.2}) == ParseSignals(index=0.2)


def test_a_scan_placeholder_is_a_near_empty_page():
    doc = Document(
        "scan.pdf", "# scan\n\nNo text layer: needs OCR.", "pdf", 10, pages=(0,), roles=(("scan", "no-text"),)
    )
    (chunk,) = chunk_document(doc)
    assert measure([chunk], doc)[chunk.id].flags() == ("thin_page",)


def test_ingest_stores_the_signals_and_the_overview_counts_the_flagged_chunks(components):
    assert not ingest_files(components, [("harbour.pdf", harbour_pdf()), ("guide.md", PROSE.encode())]).errors
    records = components.store.records(ChunkFilter(include_quarantined=True))
    assert all(ParseSignals.from_payload(r.payload.get(PAYLOAD_KEY)) is not None for r in records)
    by_source = {d.source: d for d in parse_overview(components)}
    harbour = by_source["harbour.pdf"]
    assert (harbour.total, harbour.measured_now) == (2, 0)
    assert {k: v for k, v in harbour.counts.items() if v} == {"index": 1, "furniture": 1, "thin_page": 1}
    assert [p.record.chunk.heading_path for p in harbour.flagged] == [("Notes",), ("Index",)]
    assert by_source["guide.md"].total == 0
    # A collection stored before the signals: measured on reading, all but the text per page.
    components.store.set_source_payload("harbour.pdf", {PAYLOAD_KEY: None})
    again = {d.source: d for d in parse_overview(components)}["harbour.pdf"]
    assert again.measured_now == 4
    assert {p.record.chunk.heading_path: p.flags for p in again.flagged} == {
        ("Notes",): ("furniture",),
        ("Index",): ("index",),
    }
    assert chunk_flags(
        components, [p.record.chunk.id for p in again.flagged] + ["00000000-0000-0000-0000-000000000000"]
    ) == {p.record.chunk.id: p.flags for p in again.flagged}


def test_eval_names_the_failed_question_whose_gold_sits_in_a_flagged_chunk(components, settings):
    assert not ingest_files(components, [("harbour.pdf", harbour_pdf())]).errors
    qset = parse_question_set(
        "\n".join(
            json.dumps(q)
            for q in (
                # Its gold is the page that is all footer: failed at k=1, named.
                {"id": "blank", "question": "How much is a season ticket?", "gold": "Intentionally left blank"},
                # Failed too, but its gold is prose: not named.
                {"id": "address", "question": "When do the ferries run in a gale?", "gold": "proof of address"},
                {"id": "season", "question": "How much is a season ticket?", "gold": "forty pounds a month"},
            )
        ),
        "harbour",
    )
    config = RetrievalConfig(final_k=1, candidates=20)
    run = run_eval(components, qset, config)
    failed = {q.id for q in run.questions if q.failed}
    assert failed == {"blank", "address"}
    assert [q.id for q in run.parse_flagged] == ["blank"]
    (flags,) = run.parse_flagged[0].parse_flags.values()
    assert "furniture" in flags
    assert "page furniture" in run.parse_flagged[0].parse_note
    stored = load_run(settings.data_dir, run.id)
    assert [q.id for q in stored.parse_flagged] == ["blank"]
    assert run.as_json()["parse_flagged"][0]["id"] == "blank"
    # The verdict's failure report says it of the gold it tracks.
    report = verdict_report(components, run, run.parse_flagged[0])
    section = report.section("parse")
    assert "furniture" in section.data["flags"] and "**Flagged: page furniture" in section.markdown
    assert "## Parse signals of the target" in report.markdown()


@pytest.mark.parametrize("as_json", [False, True])
def test_cli_lists_documents_by_their_parse_signals(components, as_json):
    assert not ingest_files(components, [("harbour.pdf", harbour_pdf()), ("guide.md", PROSE.encode())]).errors
    components.close()
    result = CliRunner().invoke(main, ["docs", "--parse", *(["--json"] if as_json else [])])
    assert result.exit_code == 0, result.output
    if as_json:
        rows = json.loads(result.stdout)
        assert [r["source"] for r in rows] == ["harbour.pdf", "guide.md"]  # most flagged first
        assert [c["flags"] for c in rows[0]["flagged_chunks"]] == [["furniture", "thin_page"], ["index"]]
    else:
        assert "harbour.pdf\t2 of 4 chunks flagged\tindex 1, furniture 1, thin_page 1" in result.stdout
        assert "index or contents lines" in result.stdout


def test_cli_refuses_flagged_and_parse_together():
    result = CliRunner().invoke(main, ["docs", "--parse", "--flagged"])
    assert result.exit_code == 2 and "give one" in result.output
