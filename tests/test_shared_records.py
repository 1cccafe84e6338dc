"""State every replica must share (stored collection settings, question sets, eval runs) lives in Qdrant on a
server and in files on the embedded default (rag/settings/shared_home.py).

Two replicas are two Settings (and a second process) with DIFFERENT data dirs on one `local:` folder: qdrant-client's
local mode standing in for a server, as the lease tests do. Real engines, no fakes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from apptest_pages import open_page
from click.testing import CliRunner

from rag.ask.log import AskLog
from rag.catalog.sample import sample_files
from rag.cli import main
from rag.components import build_components
from rag.ingest.pipeline import ingest_files
from rag.errors import ConfigError, StoreError
from rag.settings.shared_home import record_key
from rag.eval.qsets import (
    append_question,
    delete_question_set,
    list_question_sets,
    load_question_set,
    save_question_set,
)
from rag.eval.runs import EvalRun, QuestionResult, baseline_of, delete_run, list_runs, load_run, rename_run, save_run
from rag.eval.runs import db_path, set_baseline
from rag.eval.qsets import sample_question_set_text, sets_dir
from rag.settings.collection_settings import in_force, load_collection_settings, reset_collection_settings
from rag.settings.collection_settings import save_collection_settings, settings_dir, settings_path
from rag.settings.config import RetrievalConfig, Settings
from rag.store import shared_home

SET = '{"question": "How long do refunds take?", "gold": "5 to 10 business days"}\n'


def _replicas(tmp_path: Path) -> tuple[Settings, Settings]:
    url = f"local:{tmp_path / 'qdrant'}"
    return Settings(data_dir=tmp_path / "a", qdrant_url=url), Settings(data_dir=tmp_path / "b", qdrant_url=url)


def _run(rid: str, created: str, set_name: str = "faq") -> EvalRun:
    question = QuestionResult("q1", "How long?", True, "5 days", ("g",), ("c1",), {"final": {"ndcg@10": 0.5}},
                              {"final": 1}, None, {"q": "How long?"})  # fmt: skip
    return EvalRun(rid, created, set_name, "docs", RetrievalConfig(fusion="rrf"), {"dense": "m"}, "fp",
                   {"rerank": {"ndcg@10": 0.5}}, {}, (question,), name=f"run {rid}")  # fmt: skip


def _no_files(settings: Settings) -> None:
    """Nothing shared was written under this replica's data dir."""
    for path in (settings_dir(settings.data_dir), sets_dir(settings.data_dir), db_path(settings.data_dir)):
        assert not path.exists(), path


def test_two_replicas_see_each_others_settings_sets_and_runs(tmp_path: Path) -> None:
    a, b = _replicas(tmp_path)
    home_a, home_b = shared_home(a), shared_home(b)
    assert home_a.on_server and "local mode" in home_a.engine
    # Stored collection settings: written by A, in force on B.
    save_collection_settings(home_a, "docs", {"fusion": "rrf", "candidates": 30}, note="tuned on A")
    force = in_force(b, home_b)
    assert (force.config.fusion, force.config.candidates) == ("rrf", 30) and force.stored.note == "tuned on A"
    save_collection_settings(home_b, "docs", {"final_k": 4})  # merged over A's
    assert load_collection_settings(home_a, "docs").values == {"fusion": "rrf", "candidates": 30, "final_k": 4}
    # Question sets: saved by A, listed, extended and read by B.
    save_question_set(home_a, "faq", SET)
    assert list_question_sets(home_b) == ["faq"]
    append_question(home_b, "faq", "Can I pay by card?", None, answerable=False)
    assert [q.id for q in load_question_set(home_a, "faq").questions] == ["q1", "q2"]
    # Eval runs and baselines: saved by A, listed, marked, renamed and compared by B.
    save_run(home_a, _run("r1", "2026-12-01T10:00:00"))
    save_run(home_a, _run("r2", "2026-12-02T10:00:00"))
    assert [r.id for r in list_runs(home_b, "faq")] == ["r2", "r1"]
    set_baseline(home_b, "r1")
    set_baseline(home_b, "r2")  # one baseline per set, as in the file
    assert baseline_of(home_a, "faq") == "r2" and [r.baseline for r in list_runs(home_a)] == [True, False]
    rename_run(home_b, "r1", "  the  first ")
    loaded = load_run(home_a, "r1")
    assert loaded.name == "the first" and loaded.questions[0].scores == {"final": {"ndcg@10": 0.5}}
    assert loaded.config == RetrievalConfig(fusion="rrf") and loaded.set_name == "faq"
    delete_run(home_a, "r2")
    assert [r.id for r in list_runs(home_b)] == ["r1"] and baseline_of(home_b, "faq") is None
    # Reset and delete reach the other replica too; neither data dir got a file of them.
    assert reset_collection_settings(home_b, "docs") and load_collection_settings(home_a, "docs") is None
    delete_question_set(home_b, "faq")
    assert list_question_sets(home_a) == []
    _no_files(a), _no_files(b)


def test_a_second_process_with_its_own_data_dir_sees_them(tmp_path: Path) -> None:
    a, b = _replicas(tmp_path)
    child = (
        "import sys\nfrom rag.settings.config import Settings\nfrom rag.store import shared_home\n"
        "from rag.settings.collection_settings import save_collection_settings\n"
        "from rag.eval.qsets import save_question_set\n"
        "home = shared_home(Settings(data_dir=sys.argv[1], qdrant_url=sys.argv[2]))\n"
        "save_collection_settings(home, 'docs', {'fusion': 'sparse'}, note='from the child')\n"
        f"save_question_set(home, 'child', {SET!r})\n"
        "sys.path.insert(0, sys.argv[3])\nfrom test_shared_records import _run\nfrom rag.eval.runs import save_run\n"
        "save_run(home, _run('child-run', '2026-12-03T10:00:00', 'child'))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-c", child, str(a.data_dir), a.qdrant_url, str(Path(__file__).parent)], env=env, timeout=120,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    home = shared_home(b)
    assert load_collection_settings(home, "docs").note == "from the child"
    assert load_question_set(home, "child").questions[0].question == "How long do refunds take?"
    assert load_run(home, "child-run").questions[0].scores == {"final": {"ndcg@10": 0.5}}
    # The CLI on replica B reads them as the pages do.
    shown = CliRunner().invoke(
        main, ["settings", "--json"], env={"RAGSCOPE_DATA_DIR": str(b.data_dir), "QDRANT_URL": b.qdrant_url}
    )
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["config"]["fusion"] == "sparse"
    _no_files(b)


def test_two_writers_adding_to_one_set_at_once_both_land(tmp_path: Path) -> None:
    a, b = _replicas(tmp_path)
    homes = shared_home(a), shared_home(b)
    errors: list[BaseException] = []

    def add(i: int) -> None:
        try:
            append_question(homes[i % 2], "faq", f"question {i}?", None, answerable=False)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=add, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    asked = sorted(q.question for q in load_question_set(homes[0], "faq").questions)
    assert asked == sorted(f"question {i}?" for i in range(6))


def test_the_embedded_default_keeps_its_files(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    home = shared_home(settings)
    assert not home.on_server and home.data_dir == settings.data_dir
    save_collection_settings(home, "docs", {"fusion": "rrf"})
    save_question_set(home, "faq", SET)
    save_run(home, _run("r1", "2026-12-01T10:00:00"))
    assert json.loads(settings_path(settings.data_dir, "docs").read_text())["values"] == {"fusion": "rrf"}
    assert (sets_dir(settings.data_dir) / "faq.jsonl").read_text() == SET
    assert db_path(settings.data_dir).is_file() and [r.id for r in list_runs(settings.data_dir)] == ["r1"]
    # In-memory qdrant-client reaches no other process: files too.
    assert not shared_home(Settings(data_dir=tmp_path / "data", qdrant_url=":memory:")).on_server


def test_an_unreachable_server_says_what_to_check(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", qdrant_url="http://127.0.0.1:9")
    with pytest.raises(StoreError, match="could not connect to Qdrant at http://127.0.0.1:9.*QDRANT_URL"):
        shared_home(settings)
    refused = CliRunner().invoke(
        main, ["settings"], env={"RAGSCOPE_DATA_DIR": str(settings.data_dir), "QDRANT_URL": settings.qdrant_url}
    )
    assert refused.exit_code == 1 and "Traceback" not in refused.output and "QDRANT_URL" in refused.output


def test_a_damaged_record_is_refused_whole_and_named_and_reset_clears_it(tmp_path: Path) -> None:
    a, b = _replicas(tmp_path)
    home = shared_home(a)
    bad = {"kind": "collection_settings", "collection": "docs", "stored": {"values": {"fusion": "fastest"}}}
    home.records.swap(record_key("collection_settings", "docs"), lambda _old: bad)
    with pytest.raises(ConfigError, match="metadata collection of qdrant-client's local mode.*damaged.*--reset"):
        in_force(b, shared_home(b))
    assert reset_collection_settings(shared_home(b), "docs") and load_collection_settings(home, "docs") is None


def test_asks_runs_and_sweeps_of_one_replica_are_listed_by_the_other(tmp_path: Path, monkeypatch) -> None:
    """Replica A (the test's data dir) ingests the sample, asks, evaluates and sweeps through the CLI on a `local:`
    folder; replica B, another data dir on the same folder, lists all three."""
    url = f"local:{tmp_path / 'qdrant'}"
    a = Settings(data_dir=tmp_path / "data", qdrant_url=url)
    b_dir = tmp_path / "b"
    (b_dir / "models").mkdir(parents=True)
    (b_dir / "models" / "onnx").symlink_to((a.data_dir / "models" / "onnx").resolve(), target_is_directory=True)
    b = Settings(data_dir=b_dir, qdrant_url=url)
    components = build_components(a)
    try:
        assert not ingest_files(components, sample_files()).errors
    finally:
        components.close()
    qset = tmp_path / "sample.jsonl"
    qset.write_text(sample_question_set_text(), encoding="utf-8")
    monkeypatch.setenv("QDRANT_URL", url)

    def cli(settings: Settings, *args: str) -> str:
        monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(settings.data_dir))
        done = CliRunner().invoke(main, list(args))
        assert done.exit_code == 0, done.output
        return done.stdout

    cli(a, "ask", "How long does a refund take to reach my card?", "--json")
    run = json.loads(cli(a, "eval", str(qset), "--limit", "3", "--mark-baseline", "--json"))
    sweep = cli(a, "tune", str(qset), "--vary", "fusion", "--budget", "2", "--json")
    (asked,) = AskLog.for_settings(b).recent()
    assert asked.question == "How long does a refund take to reach my card?" and asked.id == 1
    assert [r["run_id"] for r in json.loads(cli(b, "eval", "--list-runs", "--json"))] == [run["run_id"]]
    assert baseline_of(shared_home(b), "sample") == run["run_id"]
    listed = json.loads(cli(b, "tune", "--list", "--json"))
    assert [s["sweep_id"] for s in listed] == [json.loads(sweep)["sweep_id"]] and listed[0]["finished"]
    for settings in (a, b):
        _no_files(settings)
        assert not (settings.data_dir / "asks.sqlite").exists() and not (settings.data_dir / "tune.sqlite").exists()


def test_the_eval_tab_of_one_replica_shows_and_stores_what_the_other_sees(tmp_path: Path, monkeypatch) -> None:
    url = f"local:{tmp_path / 'qdrant'}"
    page_replica = Settings(data_dir=tmp_path / "data", qdrant_url=url)  # the app's (the test's data dir)
    other = Settings(data_dir=tmp_path / "other", qdrant_url=url)
    save_question_set(shared_home(other), "faq", SET)
    save_collection_settings(shared_home(other), page_replica.collection, {"fusion": "sparse"}, note="other replica")
    monkeypatch.setenv("QDRANT_URL", url)
    at = open_page("pages/ask.py", timeout=120)
    assert not at.exception, at.exception
    assert at.selectbox(key="eval_set").value == "faq"
    shown = [c.value.replace("\\", "") for c in at.sidebar.caption]  # Markdown-escaped
    assert any("sparse only" in c and "fusion from this collection's stored settings" in c for c in shown)
    good = '{"question": "Do you sell hardware?", "answerable": false}\n'
    at.file_uploader(key="eval_upload").upload("from the page.jsonl", good.encode(), "application/jsonl")
    at.run()
    assert not at.exception, at.exception
    assert list_question_sets(shared_home(other)) == ["faq", "from-the-page"]
    _no_files(page_replica)
