"""The offline answerer quotes the sentence that answers the kind of question asked, not the one naming its topic.

Small documents made here, in the shapes that fooled it (a sentence naming advantages and disadvantages
followed by the list of disadvantages; the value after the sentence naming the setting; the command after
the sentence naming the task), answered through the product's path with the real models.
"""

from __future__ import annotations

import pytest

from rag.answer.kinds import fit, names_its_section, question_kind, states
from rag.answer.terms import named_terms
from rag.answer.units import Unit
from rag.ask.answerer import answer_question
from rag.ingest.pipeline import ingest_files

JOURNAL = """# Journal modes

## Write-ahead log

There are advantages and disadvantages to using the write-ahead log instead of a rollback journal.

Advantages include:

- Readers do not block writers and a writer does not block readers.
- Most workloads run faster, since disk writes are more often sequential.

The write-ahead log also has disadvantages:

- Every process using the database must be on the same host computer.
- A database in this mode cannot be changed to another page size.
- Very large transactions make the log file grow without bound until a checkpoint.

## Checkpoints

A checkpoint moves the pages of the log back into the database file. Checkpoints run on their own when the log
passes the default checkpoint threshold. It is 1000 pages, and a pragma changes it for one connection.

## Backups

Taking a copy of a live database with an ordinary file copy can catch it in the middle of a write. Copies made
this way are often corrupt and must not be trusted.

To take a safe copy while the database is in use, run the backup command of the shell:

```
dbshell main.db ".backup copy.db"
```
"""

OTHER = """# Tuning

## Memory

The page cache holds recently used pages in memory. A larger cache helps read-heavy workloads.

## Locking

Locks are taken per database file. A reader holds a shared lock while it reads.
"""


@pytest.fixture
def journal(components):
    assert not ingest_files(components, [("journal.md", JOURNAL.encode()), ("tuning.md", OTHER.encode())]).errors
    return components


def test_the_disadvantages_question_is_answered_with_the_list_not_the_sentence_naming_the_topic(journal):
    answer = answer_question(journal, "What are the disadvantages of write-ahead log mode?")
    assert not answer.abstained, answer.reason
    assert "There are advantages and disadvantages" not in answer.text
    for item in ("same host computer", "another page size", "grow without bound"):
        assert item in answer.text, answer.text
    assert "Readers do not block writers" not in answer.text  # the advantages are not the answer
    first = answer.citations[0]
    span = JOURNAL[first.start : first.end]
    assert span.startswith("The write-ahead log also has disadvantages:") and span.rstrip().endswith(
        "until a checkpoint."
    )


def test_a_default_question_gets_the_sentence_with_the_value(journal):
    answer = answer_question(journal, "What is the default checkpoint threshold?")
    assert not answer.abstained, answer.reason
    assert answer.text.splitlines()[0].startswith("It is 1000 pages"), answer.text
    assert "default checkpoint threshold" not in answer.text  # the sentence naming the setting is not the answer


def test_a_how_do_i_question_gets_the_command(journal):
    answer = answer_question(journal, "How do I take a safe copy of a live database?")
    assert not answer.abstained, answer.reason
    assert answer.text.startswith("To take a safe copy while the database is in use"), answer.text
    assert 'dbshell main.db ".backup copy.db"' in answer.text.split("\n```")[1], answer.text
    assert "ordinary file copy" not in answer.text  # the sentence restating the task is not the answer


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("What are the disadvantages of WAL mode?", "list"),
        ("What is the default page size?", "value"),
        ("How long is a session kept?", "value"),
        ("How do I stash untracked files?", "how"),
        ("Why does my reader block?", "reason"),
        ("What is a checkpoint?", "definition"),
        ("Can I pay by invoice?", "other"),
        ("如何安装软件包？", "how"),
        ("为什么需要重启？", "reason"),
    ],
)
def test_question_kinds(question, kind):
    assert question_kind(question) == kind


def test_fit_reads_the_shape_of_the_unit_not_its_words():
    listed = Unit("S1", "It has drawbacks:\n- one\n- two", 0, 1, "", carries="list")
    named = Unit("S1", "There are advantages and disadvantages to using it.", 0, 1, "")
    assert fit("list", listed) == 1.0 and fit("list", named) == 0.0
    code = Unit("S1", "Run this:\n```\nmake\n```", 0, 1, "", carries="code")
    assert fit("how", code) == 1.0 and fit("how", named) == 0.0
    assert fit("value", Unit("S1", "By default it is 30 seconds.", 0, 1, "")) == 1.0
    assert fit("value", Unit("S1", "The timeout has a default.", 0, 1, "")) == 0.0
    assert fit("reason", Unit("S1", "It blocks because the lock is held.", 0, 1, "")) == 1.0


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("Can I pay my Tidepool invoice with Bitcoin?", {"tidepool", "bitcoin"}),
        ("Is there an app for iPhone or for GraphQL clients over SMS?", {"iphon", "graphql", "sms"}),
        ("Does it speak ipv6, and what does timestamp_timeout change?", {"ipv6", "timestamp_timeout"}),
        ("How do I undo with `dnf history undo`?", {"dnf", "histori", "undo"}),
        ("flatpak 怎么添加 flathub 仓库？", {"flatpak", "flathub"}),  # Latin words in a Chinese question name things
        # Ordinary words, even ones the sources never use, are the asker's wording: a sentence's first word too.
        ("Branded error pages: how do I make every visitor bounce to https?", set()),
        ("Which switch ignores white space? Windows-1252 files too.", set()),
        ("How do I plot every 10th point of a 10MB file?", set()),  # numbers with a unit or as ordinals
    ],
)
def test_only_words_written_as_names_can_be_what_the_sources_lack(question, names):
    assert named_terms(question) - {"i"} == names


def test_a_paraphrase_the_sources_never_use_is_answered_not_refused(journal):
    # "users" is nowhere in the documents, and the answer matches the question better without it: the asker's own
    # wording for "while the database is in use", not a subject the sources lack (it was refused as one).
    answer = answer_question(journal, "How do I take a safe copy of a live database without my users noticing?")
    assert not answer.abstained, answer.reason
    assert answer.text.startswith("To take a safe copy while the database is in use"), answer.text


# A manual as a PDF's text reads: plain paragraphs, a cross-reference cut at "(p." by a naive splitter, "e.g." inside
# a sentence, and the option that does what is asked stated as "The --x option <does> ...".
ARCHIVER = """# Archiver manual

## Compression

Archives written by the archiver are plain tape archives unless compression is requested. See also the chapter
on filters (p. 42) for how to compress archives with an external program.

The --squeeze option compresses each archive with the built-in codec while it is written.

## Splitting

Large archives can be split into volumes, e.g. to fit them on removable disks of a fixed size. The --volume
option sets the size of each volume in megabytes.
"""


@pytest.fixture
def archiver(components):
    assert not ingest_files(components, [("archiver.md", ARCHIVER.encode())]).errors
    return components


def test_a_manual_answers_how_with_the_option_that_does_it_not_the_cross_reference(archiver):
    answer = answer_question(archiver, "How do I compress archives?")
    assert not answer.abstained, answer.reason
    # The pointer to another chapter names where an answer is; the option's sentence is the answer.
    assert answer.text.splitlines()[0].startswith("The --squeeze option compresses each archive"), answer.text
    assert not answer.text.startswith("42)")


def test_e_g_and_page_references_end_no_sentence(archiver):
    answer = answer_question(archiver, "How can I split a large archive into volumes?")
    assert not answer.abstained, answer.reason
    first = answer.text.splitlines()[0]
    assert first.startswith("Large archives can be split into volumes, e.g. to fit them on removable disks"), first
    assert ARCHIVER[answer.citations[0].start : answer.citations[0].end].split()[-1] == "size."


def test_pointers_and_fragments_state_nothing_and_option_sentences_fit_how():
    pointer = Unit("S1", "See also the chapter on filters (p. 42) for how to use an external program.", 0, 1, "")
    assert not states(pointer) and fit("how", pointer) == 0.0  # "use" alone made it look like an answer
    assert not states(Unit("S1", "Syntax:", 0, 1, "")) and states(Unit("S1", "Syntax:\n- a", 0, 1, "", carries="list"))
    does = Unit("S1", "The --squeeze option enables the built-in codec for each archive.", 0, 1, "")
    assert states(does) and fit("how", does) == 0.5 and fit("definition", does) == 1.0
    allows = Unit("S1", "The every keyword allows a periodic sampling of the input.", 0, 1, "")
    assert fit("how", allows) == 0.5 and fit("definition", allows) == 1.0


# A reference manual as its PDF's text reads: a section opens by saying what its command does, a subsection's
# synopsis and detail share more of the question's words, and a neighbouring section names the same task.
PLOTTER = """# Plotter manual

## Commands

### Camera

The set camera command sets the viewing angle for three-dimensional plots. It controls how the coordinates of the
scene are mapped onto the flat page.

Syntax:

set camera <rot_x>, <rot_z> {, <scale>}

The angles are given in degrees and default to 60 and 30.

#### Camera projection

Rotates the viewing angle of a three-dimensional plot so that one of the primary planes lies in the plane of the
page.

### Stretch

The set stretch command scales the plot along one axis without changing its viewing angle.
"""


@pytest.fixture
def plotter(components):
    assert not ingest_files(components, [("plotter.md", PLOTTER.encode())]).errors
    return components


def test_the_sentence_saying_what_the_sections_command_does_is_quoted_beside_the_detail(plotter):
    answer = answer_question(plotter, "How do I rotate the viewing angle of a three-dimensional plot?")
    assert not answer.abstained, answer.reason
    # The subsection's detail repeats the question's words; what the command is for is said where its section opens.
    assert "The set camera command sets the viewing angle for three-dimensional plots." in answer.text, answer.text


def test_a_sentence_names_its_section_when_the_sections_subject_does_something_in_it():
    def unit(text: str, heading: str) -> Unit:
        return Unit("S1", text, 0, 1, heading)

    assert names_its_section(unit("The set camera command sets the viewing angle.", "Commands > Camera"))
    assert names_its_section(unit("The every keyword allows a periodic sampling.", "Data > Every"))
    assert names_its_section(unit("set contour enables contour drawing for surfaces.", "Set-show > Contour"))
    assert names_its_section(unit("The -C option is used to prevent overwriting.", "Options > -C option"))
    # The detail of a subsection does not have its subject first; a synopsis says no verb; another section's subject
    # is not this one's.
    assert not names_its_section(unit("Rotates the camera so that one plane lies flat.", "Camera > Camera projection"))
    assert not names_its_section(unit("set camera projection {xy|xz|yz}", "Camera > Camera projection"))
    assert not names_its_section(unit("The set stretch command scales the plot.", "Commands > Camera"))
    assert not names_its_section(unit("The camera command sets the angle.", ""))
