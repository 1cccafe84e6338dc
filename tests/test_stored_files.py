"""Files the product rewrites survive two writers and a kill, and a damaged one is refused and repaired (issue 37).

Writers are real processes (each a `python -c` child running the product's own save functions), so the
lock is tested across processes, not threads; a kill is SIGKILL in the middle of a write loop. Damage is
met as a user meets it: through `ragscope` (settings, doctor) and through the Eval tab (AppTest).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from apptest_pages import open_page
from click.testing import CliRunner, Result

from rag.cli import main
from rag.encoders.export import export_problem
from rag.eval.qsets import load_question_set, save_question_set
from rag.settings.collection_settings import load_collection_settings, save_collection_settings, settings_path
from rag.settings.config import Settings

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = 200


def _spawn(code: str, data_dir: Path, **pipes: int) -> subprocess.Popen:
    """A child process running `code` with the product importable and `data` bound to the data dir."""
    prelude = f"from pathlib import Path\ndata = Path({str(data_dir)!r})\n"  # cwd=ROOT: `rag` imports
    pipes = pipes or {"stderr": subprocess.PIPE}
    return subprocess.Popen([sys.executable, "-c", prelude + code], cwd=ROOT, text=True, **pipes)


def _finish(children: list[subprocess.Popen]) -> None:
    for child in children:
        _, err = child.communicate(timeout=120)
        assert child.returncode == 0, err[-2000:]


SAVE_LOOP = """
from rag.settings.collection_settings import save_collection_settings
for i in range({rounds}):
    save_collection_settings(data, "docs", {{{key!r}: {base} + i}})
"""


def test_two_processes_saving_one_collections_settings_keep_every_key_from_both(tmp_path):
    data = tmp_path / "data"
    children = [
        _spawn(SAVE_LOOP.format(rounds=ROUNDS, key=key, base=base), data)
        for key, base in (("candidates", 100), ("rrf_k", 1))
    ]
    _finish(children)  # no FileNotFoundError from a shared temp name
    stored = load_collection_settings(data, "docs")  # strict: valid JSON, no key twice
    assert dict(stored.values) == {"candidates": 100 + ROUNDS - 1, "rrf_k": ROUNDS}  # each writer's last value
    assert json.loads(settings_path(data, "docs").read_text())["values"] == dict(stored.values)
    assert not [p for p in settings_path(data, "docs").parent.iterdir() if p.name.endswith(".tmp")]


ADD_LOOP = """
from rag.eval.qsets import append_question
for i in range({rounds}):
    append_question(data, "asked", "{who} question %d?" % i, None, answerable=False)
"""


def test_two_processes_adding_to_one_question_set_both_land(tmp_path):
    data = tmp_path / "data"
    _finish([_spawn(ADD_LOOP.format(rounds=60, who=who), data) for who in ("first", "second")])
    questions = load_question_set(data, "asked").questions
    assert len(questions) == 120 and len({q.id for q in questions}) == 120
    assert sum(q.question.startswith("first") for q in questions) == 60


RUN_LOOP = """
from rag.eval.runs import EvalRun, save_run
from rag.settings.config import RetrievalConfig
for i in range({rounds}):
    save_run(data, EvalRun(f"{who}-{{i}}", "2026-12-02T00:00:00+00:00", "set", "docs", RetrievalConfig(), {{}}, "f",
                           {{"final": {{"ndcg@10": i / 100}}}}, {{}}, ()))
"""


def test_two_processes_storing_eval_runs_both_land(tmp_path):
    from rag.eval.runs import list_runs

    data = tmp_path / "data"
    _finish([_spawn(RUN_LOOP.format(rounds=50, who=who), data) for who in ("first", "second")])
    assert len({r.id for r in list_runs(data)}) == 100  # SQLite's own lock and transaction serialise them


REWRITE_LOOP = """
import itertools
from rag.eval.qsets import save_question_set
from rag.settings.collection_settings import save_collection_settings
note = "x" * 400_000  # a write long enough that a kill lands inside one
for i in itertools.count():
    save_collection_settings(data, "docs", {"candidates": 1 + i % 2000}, note=f"{i}{note}")
    save_question_set(data, "big", "".join('{"question": "q%d round %d", "answerable": false}\\n' % (n, i)
                                           for n in range(4000)))
    if i == 0:
        print("written", flush=True)
"""


def test_a_kill_in_the_middle_of_a_write_leaves_the_old_file_or_the_new_one(tmp_path):
    data = tmp_path / "data"
    for delay in (0.05, 0.13, 0.21, 0.29, 0.37, 0.45):
        child = _spawn(REWRITE_LOOP, data, stdout=subprocess.PIPE)
        assert child.stdout.readline().strip() == "written"  # both files exist before the kill
        time.sleep(delay)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        stored = load_collection_settings(data, "docs")  # never half a file: it parses, strictly
        assert stored.note.endswith("x" * 1000) and len(stored.note) > 400_000
        assert len(load_question_set(data, "big").questions) == 4000


def test_deleting_a_collection_deletes_its_stored_settings_so_a_new_one_starts_clean():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90).run()
    at.sidebar.text_input(key="ui_collection_new").input("notes").run()
    at.sidebar.button(key="ui_collection_create").click().run()
    data = Settings.from_env().data_dir
    save_collection_settings(data, "notes", {"fusion": "rrf"}, note="tuned")
    at.sidebar.text_input(key="ui_collection_confirm").input("notes").run()
    at.sidebar.button(key="ui_collection_delete").click().run()
    assert not at.exception, at.exception
    at.sidebar.text_input(key="ui_collection_new").input("notes").run()
    at.sidebar.button(key="ui_collection_create").click().run()
    shown = CliRunner().invoke(main, ["settings", "--collection", "notes", "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["stored"] is None and "all defaults" in json.loads(shown.stdout)["in_words"]


DAMAGE = {
    "a key given twice": ('{"values": {"fusion": "rrf", "fusion": "dbsf"}}', "'fusion' is given twice"),
    "cut short": ('{"values": {"fusion": "rrf", "candi', "cut short"),
    "a wrong type": ('{"values": ["fusion", "rrf"]}', "'values' should be dict, found list"),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_settings_file_is_refused_naming_the_file_the_problem_and_the_repair(damage):
    text, problem = DAMAGE[damage]
    path = settings_path(Settings.from_env().data_dir, "docs")
    path.parent.mkdir(parents=True)
    path.write_text(text)
    refused = CliRunner().invoke(main, ["settings"])
    assert refused.exit_code == 1 and "Traceback" not in refused.output
    assert str(path) in refused.output and problem in refused.output, refused.output
    assert "ragscope settings --reset --collection docs" in refused.output
    assert CliRunner().invoke(main, ["settings", "--reset"]).exit_code == 0  # the repair it names works
    assert CliRunner().invoke(main, ["settings"]).exit_code == 0


def test_the_eval_tab_shows_a_damaged_settings_file_with_the_reset_that_repairs_it(settings):
    save_question_set(settings.data_dir, "mine", '{"question": "Anything?", "answerable": false}\n')
    path = settings_path(settings.data_dir, "docs")
    path.parent.mkdir(parents=True)
    path.write_text(DAMAGE["a key given twice"][0])
    at = open_page("pages/ask.py", timeout=120, tab="Eval")
    assert not at.exception, at.exception
    shown = " ".join(e.value for e in at.error).replace("\\", "")
    assert "given twice" in shown and path.name in shown
    at.button(key="tune_reset").click().run()
    assert not at.exception, at.exception
    assert not path.exists() and not [e for e in at.error if "given twice" in e.value]
    assert at.button(key="tune_start")  # the tab is whole again: the sweep form is drawn


def _doctor(*args: str) -> Result:
    return CliRunner().invoke(main, ["doctor", *args])


def test_doctor_names_every_damaged_stored_file_and_fix_repairs_them(settings):
    data = settings.data_dir
    (data / "models" / "onnx").unlink()  # no graphs to load: the next test covers them
    save_collection_settings(data, "docs", {"fusion": "rrf"})
    settings_file = settings_path(data, "docs")
    settings_file.write_text(settings_file.read_text()[:-12])  # cut short
    save_question_set(data, "mine", '{"question": "Anything?", "answerable": false}\n')
    qset = data / "eval_sets" / "mine.jsonl"
    qset.write_text('{"question": "Anything?", "question": "Twice?", "answerable": false}\n')
    history = data / "eval.sqlite"
    history.write_bytes(b"SQLite format 3\x00" + b"\x07" * 200)  # a header, then garbage
    save_collection_settings(data, "gone", {"fusion": "rrf"})  # of no collection: a new "gone" would inherit them
    orphan = settings_path(data, "gone")
    found = _doctor()
    assert found.exit_code == 1, found.output
    problems = [line for line in found.stdout.splitlines() if line.startswith("problem:")]
    assert len(problems) == 4, found.stdout
    for path in (settings_file, qset, history, orphan):
        assert any(str(path) in line for line in problems), (path, found.stdout)
    fixed = _doctor("--fix")
    assert fixed.exit_code == 0, fixed.output
    assert fixed.stdout.count("fixed:") == 4, fixed.stdout
    assert not any(p.exists() for p in (settings_file, qset, history, orphan))
    assert len(list(settings_file.parent.glob("docs.json.damaged-*"))) == 1  # kept for a person to look at
    again = _doctor()
    assert again.exit_code == 0 and "problem:" not in again.stdout, again.stdout


def test_doctor_finds_a_truncated_onnx_export_and_fix_exports_it_again(settings, default_dense, models_dir):
    default_dense.encode_documents(["warm"])  # the shared export exists
    onnx = settings.data_dir / "models" / "onnx"
    onnx.unlink()  # this data dir gets its own copy, so the session's export is never touched
    shutil.copytree(models_dir / "onnx", onnx)
    (export,) = onnx.glob("*/model.onnx")
    whole = export.stat().st_size
    with open(export, "r+b") as f:
        f.truncate(whole // 3)
    found = _doctor()
    assert found.exit_code == 1 and f"problem: ONNX graph {export} is damaged" in found.stdout, found.stdout
    fixed = _doctor("--fix")
    assert fixed.exit_code == 0 and f"fixed: ONNX graph {export}" in fixed.stdout, fixed.output
    assert export.stat().st_size > whole // 2 and export_problem(export) == ""  # loads as the encoder loads it


ASK_LOOP = """
import itertools
from rag.answer.result import Answer
from rag.ask.log import AskLog
from rag.retrieval.result import RetrievalResult
from rag.settings.config import RetrievalConfig
log = AskLog(data / "asks.sqlite")
retrieval = RetrievalResult("{who} asks", RetrievalConfig(), "none", ())
answer = Answer("{who} asks", "x" * 200_000, (), True, "nothing to cite", "offline", (), (), (), retrieval, 1.0, "")
for i in itertools.count() if {rounds} < 0 else range({rounds}):
    log.record(answer, "docs")
    if i == 0:
        print("written", flush=True)
"""


def test_two_processes_logging_asks_both_land(tmp_path):
    from rag.ask.log import AskLog

    data = tmp_path / "data"
    _finish([_spawn(ASK_LOOP.format(rounds=40, who=who), data) for who in ("first", "second")])
    asks = AskLog(data / "asks.sqlite").recent(200)
    assert len(asks) == 80  # SQLite's lock and WAL serialise the two writers: none lost, none torn
    assert {a.question for a in asks} == {"first asks", "second asks"}


def test_a_kill_while_logging_an_ask_leaves_a_log_that_reads_and_takes_the_next_ask(tmp_path):
    from rag.ask.log import AskLog

    data = tmp_path / "data"
    for delay in (0.05, 0.2):
        child = _spawn(ASK_LOOP.format(rounds=-1, who="killed"), data, stdout=subprocess.PIPE)
        assert child.stdout.readline().strip() == "written"
        time.sleep(delay)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    _finish([_spawn(ASK_LOOP.format(rounds=1, who="after"), data)])
    asks = AskLog(data / "asks.sqlite").recent(10_000)
    assert asks[0].question == "after asks" and len(asks) >= 3  # every committed ask is whole and readable
    assert all(a.answer == "x" * 200_000 for a in asks)
