"""The ONNX Runtime dense encoder gives PyTorch's vectors, exports once, and runs without torch (real MiniLM)."""

from __future__ import annotations

import dataclasses
import filecmp
import json
import logging
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest

from rag.ingest.chunker import chunk_document
from rag.components import build_components
from rag.settings.config import ChunkConfig, Settings
from rag.encoders.base import resolve_dense_path
from rag.encoders.dense_torch import SentenceTransformerEncoder
from rag.encoders.factory import dense_encoder
from rag.errors import ConfigError, EncoderError
from rag.ingest.pipeline import ingest_files
from rag.ingest.loaders.document import load_document
from rag.encoders.dense_onnx import OnnxEncoder, _session
from rag.encoders.export import FUSED_FILE, ModelFolder, ensure_export, ensure_fused, ensure_int8, export_onnx
from rag.retrieval.retrieve import retrieve
from rag.catalog.sample import sample_files
from rag.ingest.sentences import sentence_spans
from rag.store.base import CollectionModels

ROOT = Path(__file__).resolve().parent.parent
MODEL = "all-MiniLM-L6-v2"
LONG = " ".join(f"Stop number {i} of the harbour line is served every hour." for i in range(60))  # far past 256 tokens


@pytest.fixture(scope="module")
def torch_dense(models_dir):
    pytest.importorskip("sentence_transformers", reason="the torch extra (pip install -e '.[torch]') is not installed")
    return dense_encoder(MODEL, "torch", models_dir)


@pytest.fixture(scope="module")
def onnx_dense(models_dir):
    encoder = dense_encoder(MODEL, "onnx", models_dir)
    assert isinstance(encoder, OnnxEncoder)
    return encoder


@pytest.fixture(scope="module")
def chunks():
    return [c for name, data in sample_files() for c in chunk_document(load_document(name, data), ChunkConfig())]


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def test_onnx_vectors_are_the_torch_vectors(onnx_dense, torch_dense, chunks):
    texts = [c.embed_text for c in chunks] + ["refund", "How long until my refund arrives?", LONG, "  padded  "]
    ours, theirs = onnx_dense.encode_documents(texts, batch_size=8), torch_dense.encode_documents(texts)
    assert ours.shape == theirs.shape == (len(texts), 384) and onnx_dense.dim == 384
    assert _cosines(ours, theirs).min() >= 0.9999
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert _cosines(onnx_dense.encode_query("refund")[None], theirs[[-4]])[0] >= 0.9999


def test_onnx_span_vectors_are_the_torch_span_vectors(onnx_dense, torch_dense, chunks):
    texts = [c.embed_text for c in chunks] + [LONG]
    spans = [sentence_spans(c) for c in chunks] + [[(m, m + 58) for m in range(0, len(LONG), 59)]]
    ours, theirs = onnx_dense.encode_spans(texts, spans, batch_size=4), torch_dense.encode_spans(texts, spans)
    assert _cosines(ours.texts, theirs.texts).min() >= 0.9999
    assert ours.beyond == theirs.beyond and ours.beyond  # the long text's last sentences are past the window
    for i, (a, b) in enumerate(zip(ours.spans, theirs.spans, strict=True)):
        pooled = [j for j in range(len(spans[i])) if (i, j) not in ours.beyond]
        assert _cosines(a[pooled], b[pooled]).min() >= 0.9999


def test_cls_pooling_matches_torch_and_other_poolings_are_refused(tmp_path, models_dir):
    pytest.importorskip("sentence_transformers", reason="the torch extra is not installed")
    source = Path(resolve_dense_path(MODEL))
    folder = tmp_path / MODEL  # the same weights (so the same export), other pooling settings
    folder.mkdir()
    for item in source.iterdir():
        (folder / item.name).symlink_to(item)
    (folder / "1_Pooling").unlink()
    (folder / "1_Pooling").mkdir()
    config = json.loads((source / "1_Pooling" / "config.json").read_text()) | {"pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True}
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(config))
    texts = ["The ferry leaves at seven.", "Dogs travel free if they stay on a lead."]
    ours = OnnxEncoder(str(folder), models_dir).encode_documents(texts)
    assert _cosines(ours, SentenceTransformerEncoder(str(folder)).encode_documents(texts)).min() >= 0.9999
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(config | {"pooling_mode_cls_token": False, "pooling_mode_max_tokens": True}))
    with pytest.raises(EncoderError, match="RAGSCOPE_DENSE_RUNTIME=torch"):
        ModelFolder.read(str(folder))


def test_the_export_is_made_once_and_reused(onnx_dense, models_dir, caplog):
    onnx_dense.encode_query("warm")  # exported by now, by this or an earlier test
    folder = ModelFolder.read(MODEL)
    target = ensure_export(folder, models_dir, MODEL)
    made = target.stat().st_mtime_ns
    with caplog.at_level(logging.INFO, logger="rag.encoders"):
        assert ensure_export(folder, models_dir, MODEL) == target
    assert target.stat().st_mtime_ns == made and "exporting" not in caplog.text
    # No temporary file left: the export, the fused graph the float encoder runs, and the int8 export
    # once some test's ingest has made it.
    assert target.parent.parent == models_dir / "onnx" and {p.name for p in target.parent.iterdir()} - {"model-int8.onnx"} == {"model.onnx", FUSED_FILE}


def _linked_export(models: Path, shared_models: Path) -> tuple[ModelFolder, Path, Path]:
    """A models folder holding only the session's float export (linked, not made again): the
    model's folder, the shared export and the folder the linked export sits in."""
    folder = ModelFolder.read(MODEL)
    shared = ensure_export(folder, shared_models, MODEL)
    where = models / "onnx" / shared.parent.name
    where.mkdir(parents=True)
    (where / "model.onnx").symlink_to(shared)
    return folder, shared, where


def _full_disk(*_args) -> None:
    raise OSError(28, "No space left on device")


def test_the_float_encoder_runs_the_fused_graph_and_gets_the_exports_vectors(onnx_dense, models_dir, chunks, caplog):
    """One Attention kernel per layer instead of the exporter's small operators: the same vectors, faster."""
    onnx_dense.encode_query("warm")
    folder = ModelFolder.read(MODEL)
    with caplog.at_level(logging.INFO, logger="rag.encoders"):
        fused = ensure_fused(folder, models_dir, MODEL)
    assert fused.name == FUSED_FILE and "fusing" not in caplog.text  # made once, by the first use
    ops = Counter(node.op_type for node in onnx.load(str(fused)).graph.node)
    assert ops["Attention"] == 6 and ops["EmbedLayerNormalization"] == 1  # MiniLM-L6: six layers
    plain = OnnxEncoder(MODEL, models_dir)
    plain._model = _session(folder, ensure_export(folder, models_dir, MODEL), MODEL)  # the unfused export
    texts = [c.embed_text for c in chunks[:40]]
    assert np.abs(onnx_dense.encode_documents(texts) - plain.encode_documents(texts)).max() < 1e-5


def test_a_fused_graph_that_cannot_be_written_leaves_the_export_running(tmp_path, models_dir, monkeypatch, caplog):
    folder, shared, where = _linked_export(tmp_path, models_dir)
    monkeypatch.setattr("rag.settings.atomic.os.replace", _full_disk)
    with caplog.at_level(logging.WARNING, logger="rag.encoders"):
        assert ensure_fused(folder, tmp_path, MODEL) == where / "model.onnx"
    assert "No space left on device" in caplog.text
    assert [p.name for p in where.iterdir()] == ["model.onnx"]  # neither the fused file nor a temporary one


@pytest.mark.parametrize("failure", ["disagrees", "raises"])
def test_a_fused_graph_that_fails_its_check_is_replaced_by_the_export(tmp_path, models_dir, monkeypatch, caplog, failure):
    folder, shared, where = _linked_export(tmp_path, models_dir)
    monkeypatch.setattr("rag.encoders.export.write_graph", lambda _folder, target, attention=None: shutil.copyfile(shared, target))

    def bad_fusion(_source, target, _heads, _hidden) -> None:
        if failure == "raises":
            raise RuntimeError("unsupported graph")
        shutil.copyfile(ensure_int8(folder, models_dir, MODEL), target)  # a graph whose token states differ

    monkeypatch.setattr("rag.encoders.export.fuse_bert", bad_fusion)
    with caplog.at_level(logging.WARNING, logger="rag.encoders"):
        fused = ensure_fused(folder, tmp_path, MODEL)
    assert filecmp.cmp(fused, shared, shallow=False)  # the export as it is, under the name, so never retried
    assert sorted(p.name for p in where.iterdir()) == [FUSED_FILE, "model.onnx"]  # no temporary file left
    assert ("could not fuse" if failure == "raises" else "differ from the export") in caplog.text


def test_the_int8_export_is_made_once_from_the_float_export_and_reused(tmp_path, models_dir, caplog):
    """RAGSCOPE_SENTENCE_POOLING=separate-int8's model: quantised from the float export, once per data dir."""
    models = tmp_path / "models"
    folder, shared, _ = _linked_export(models, models_dir)  # the float export, not made again here
    with caplog.at_level(logging.INFO, logger="rag.encoders"):
        target = ensure_int8(folder, models, MODEL)
        made = target.stat().st_mtime_ns
        assert ensure_int8(folder, models, MODEL) == target and target.stat().st_mtime_ns == made
    assert caplog.text.count("quantising") == 1 and "exporting" not in caplog.text
    assert sorted(p.name for p in target.parent.iterdir()) == ["model-int8.onnx", "model.onnx"]
    assert target.stat().st_size < shared.stat().st_size / 3  # int8 weights: a quarter of the float ones, plus the graph
    int8 = OnnxEncoder(MODEL, models, int8=True)
    texts = ["The first ferry leaves at seven.", "Bikes ride free on weekdays."]
    cosines = np.sum(int8.encode_documents(texts) * OnnxEncoder(MODEL, models).encode_documents(texts), axis=1)
    assert np.all(cosines > 0.9) and np.all(cosines < 0.9999)  # near the float vectors, and not them


def test_a_failed_quantisation_leaves_nothing_under_the_final_name(tmp_path, models_dir, monkeypatch):
    folder, shared, where = _linked_export(tmp_path, models_dir)
    monkeypatch.setattr("rag.settings.atomic.os.replace", _full_disk)
    with pytest.raises(EncoderError, match="could not quantise.*RAGSCOPE_SENTENCE_POOLING=separate"):
        ensure_int8(folder, tmp_path, MODEL)
    assert [p.name for p in where.iterdir()] == ["model.onnx"]  # neither model-int8.onnx nor the temporary file


def test_a_failed_export_leaves_nothing_under_the_final_name(tmp_path, monkeypatch):
    monkeypatch.setattr("rag.settings.atomic.os.replace", _full_disk)
    with pytest.raises(EncoderError, match="could not export"):
        ensure_export(ModelFolder.read(MODEL), tmp_path, MODEL)
    (where,) = (tmp_path / "onnx").iterdir()
    assert list(where.iterdir()) == []  # neither model.onnx nor the temporary file


def test_once_exported_a_process_runs_the_model_without_torch(onnx_dense, settings):
    onnx_dense.encode_query("warm")  # the export exists in the shared models folder this data dir links to
    code = (
        "import json, sys\n"
        "from rag.components import build_components\n"
        "from rag.settings.config import Settings\n"
        "c = build_components(Settings.from_env())\n"
        "v = c.dense.encode_documents(['The ferry leaves at seven.'])\n"
        "print(json.dumps({'shape': list(v.shape), 'loaded': [m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules]}))"
    )
    env = os.environ | {"PYTHONPATH": str(ROOT), "RAGSCOPE_DATA_DIR": str(settings.data_dir)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"shape": [1, 384], "loaded": []}
    assert "exporting" not in done.stderr


def test_a_process_without_torch_writes_and_fuses_the_graph_and_gets_the_torch_vectors(tmp_path, torch_dense, chunks):
    """The default install has no torch: a fresh models folder gets its graph from the weights
    (rag.encoders.bert_graph), ONNX Runtime fuses it, and the vectors are sentence-transformers' own."""
    texts = [c.embed_text for c in chunks[:16]] + ["refund", "How long until my refund arrives?", LONG, "  padded  "]
    code = (
        "import json, sys\n"
        "for m in ('torch', 'transformers', 'sentence_transformers', 'sympy'):\n"
        "    sys.modules[m] = None  # any import of them raises ImportError (sympy came with torch)\n"
        "import logging\n"
        "from collections import Counter\n"
        "from pathlib import Path\n"
        "import onnx\n"
        "logging.basicConfig(level=logging.INFO)\n"
        "from rag.encoders.dense_onnx import OnnxEncoder\n"
        "from rag.encoders.export import ModelFolder, ensure_fused\n"
        "models = Path(sys.argv[1])\n"
        "vectors = OnnxEncoder('all-MiniLM-L6-v2', models).encode_documents(json.loads(sys.stdin.read()), batch_size=8)\n"
        "fused = ensure_fused(ModelFolder.read('all-MiniLM-L6-v2'), models, 'all-MiniLM-L6-v2')\n"
        "ops = Counter(n.op_type for n in onnx.load(str(fused)).graph.node)\n"
        "print(json.dumps({'vectors': vectors.tolist(), 'fused': fused.name, 'attention': ops['Attention'],\n"
        "    'files': sorted(p.name for p in fused.parent.iterdir())}))"
    )
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "models")], input=json.dumps(texts), capture_output=True, text=True, env=env, cwd=ROOT, timeout=300
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["fused"] == FUSED_FILE and out["attention"] == 6  # fused, not the unfused fallback
    assert out["files"] == ["model-fused.onnx", "model.onnx"] and "from its weights" in done.stderr
    assert _cosines(np.array(out["vectors"], dtype=np.float32), torch_dense.encode_documents(texts)).min() >= 0.9999


def test_an_export_torch_made_is_used_as_it_is_and_fused_without_torch(tmp_path, monkeypatch, caplog):
    """Data dirs from before keep their export (same folder name: model and hash of the weights); one
    without a fused graph gets it from the builder, checked against that export."""
    pytest.importorskip("torch", reason="the torch extra is not installed")
    folder = ModelFolder.read(MODEL)
    old = tmp_path / "onnx" / f"{MODEL}-{folder.digest()}" / "model.onnx"
    export_onnx(folder, old, None, "made as earlier versions made it")
    made = old.stat().st_mtime_ns
    monkeypatch.setitem(sys.modules, "torch", None)  # from here on, as in a default install
    caplog.clear()  # the export above logged "exporting" itself
    with caplog.at_level(logging.INFO, logger="rag.encoders"):
        assert ensure_export(folder, tmp_path, MODEL) == old and "exporting" not in caplog.text
        fused = ensure_fused(folder, tmp_path, MODEL)
    assert old.stat().st_mtime_ns == made and fused == old.with_name(FUSED_FILE)
    assert Counter(node.op_type for node in onnx.load(str(fused)).graph.node)["Attention"] == 6  # kept: it matched the export
    # A fresh data dir's export, built without torch, gives that export's vectors bit for bit, and so
    # does its int8 graph: collections on a Qdrant server keep their (sentence) vectors from any data dir.
    texts = ["The ferry leaves at seven.", "Dogs travel free if they stay on a lead.", LONG]
    for int8 in (False, True):
        ours, theirs = (OnnxEncoder(MODEL, models, int8=int8).encode_documents(texts) for models in (tmp_path / "new", tmp_path))
        assert np.array_equal(ours, theirs)


def test_torch_and_onnx_share_a_collection_and_it_keeps_its_record(settings):
    pytest.importorskip("sentence_transformers", reason="the torch extra is not installed")
    made = build_components(dataclasses.replace(settings, dense_runtime="torch"))
    try:
        assert not ingest_files(made, sample_files()[:2]).errors
        assert made.store.collection_models().dense_runtime == "torch"
    finally:
        made.close()
    comps = build_components(dataclasses.replace(settings, dense_runtime="onnx"))
    try:
        assert isinstance(comps.dense.encoder, OnnxEncoder)
        name, data = sample_files()[2]
        assert not ingest_files(comps, [(name, data)]).errors  # the same space: onnx may extend a torch collection
        assert comps.store.collection_models().dense_runtime == "torch"  # the record says what made it
        first = chunk_document(load_document(name, data), ChunkConfig())[0].text
        assert retrieve(comps, first).final[0].chunk.chunk.source == name
    finally:
        comps.close()


def test_a_record_from_before_the_runtime_field_reads_as_torch():
    old = {"dense_model": MODEL, "dense_dim": 384, "sparse_model": "Qdrant/bm25", "sentence_vectors": True, "sentence_pooling": "late"}
    assert CollectionModels.from_dict(old).dense_runtime == "torch"


def test_the_runtime_setting_accepts_only_known_runtimes():
    assert Settings.from_env({"RAGSCOPE_DENSE_RUNTIME": "torch"}, secrets_path=Path("/nonexistent")).dense_runtime == "torch"
    with pytest.raises(ConfigError, match="RAGSCOPE_DENSE_RUNTIME"):
        Settings.from_env({"RAGSCOPE_DENSE_RUNTIME": "tensorflow"}, secrets_path=Path("/nonexistent"))
