"""The one-time ONNX export of a dense model's weights, and the graphs made from it (fused float, int8).

The export is written once per model folder into `<data dir>/models/onnx/<model>-<hash of the
weights>/model.onnx`, with beside it the graph the float runtime runs (`model-fused.onnx`,
`ensure_fused`) and the int8 one (`model-int8.onnx`, `ensure_int8`); every later process just loads
them (rag.encoders.dense_onnx). A BERT model in safetensors (the default all-MiniLM-L6-v2) has its
graph written from the weights without torch (rag.encoders.bert_graph); any other model is exported
by `torch.onnx.export`, the only place torch is imported, from the `torch` extra. Only what
sentence-transformers folders of plain encoders hold is read: tokenizer.json, the window
(sentence_bert_config.json), mean or CLS pooling (1_Pooling/config.json) and modules.json
(Transformer, Pooling, Normalize and nothing else).
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rag.encoders.base import TORCH_EXTRA, offline, resolve_dense_path
from rag.encoders.bert_graph import build_bert_graph, unsupported
from rag.errors import EncoderError
from rag.settings.atomic import replacing

log = logging.getLogger("rag.encoders")  # the model-load lines the CLI shows on stderr
ONNX_DIR = "onnx"  # under the models folder (Settings.data_dir / "models")
EXPORT_FILE = "model.onnx"  # the export itself (`ensure_export`)
FUSED_FILE = "model-fused.onnx"  # beside the export: what the float runtime runs (`ensure_fused`)
INT8_FILE = "model-int8.onnx"  # beside the export: quantised from it (`ensure_int8`)
# The only sentence-transformers modules whose computation this encoder reproduces.
_MODULES = {
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
}
TORCH_HINT = f"use RAGSCOPE_DENSE_RUNTIME=torch for this model ({TORCH_EXTRA})"


@dataclass(frozen=True)
class ModelFolder:
    """What a sentence-transformers folder says about computing its vectors, read without loading it."""

    path: Path
    max_seq_length: int  # tokens per text; the rest is truncated, as sentence-transformers does
    pooling: str  # "mean" (over the attention mask) or "cls"
    dim: int
    weights: Path  # the file the ONNX export is made from (its hash names the export)

    @classmethod
    def read(cls, name: str) -> ModelFolder:
        """The folder of model `name` (the packaged default, a local folder, or a Hugging Face name in its cache).

        Raises:
            EncoderError: no such folder, or a model this encoder cannot reproduce (another pooling,
                extra modules), naming the torch runtime as the way to use it.
        """
        path = _model_path(name)
        modules = _json(path / "modules.json", name)
        extra = sorted({m.get("type", "?") for m in modules} - _MODULES)
        if extra:
            raise EncoderError(
                f"dense model {name!r} has modules the ONNX runtime does not run ({', '.join(extra)}); {TORCH_HINT}"
            )
        pooling_dir = next(
            (m.get("path", "") for m in modules if m.get("type") == "sentence_transformers.models.Pooling"), None
        )
        if pooling_dir is None:
            raise EncoderError(f"dense model {name!r} has no pooling module; {TORCH_HINT}")
        pooling_config = _json(path / pooling_dir / "config.json", name)
        modes = sorted(
            k.removeprefix("pooling_mode_")
            for k, v in pooling_config.items()
            if k.startswith("pooling_mode_") and v is True
        )
        if modes not in (["mean_tokens"], ["cls_token"]):
            raise EncoderError(
                f"dense model {name!r} pools with {modes or 'nothing'}; the ONNX runtime does mean or CLS "
                f"pooling only; {TORCH_HINT}"
            )
        st_config = (
            _json(path / "sentence_bert_config.json", name) if (path / "sentence_bert_config.json").exists() else {}
        )
        window = st_config.get("max_seq_length") or _json(path / "config.json", name).get("max_position_embeddings")
        weights = next((path / f for f in ("model.safetensors", "pytorch_model.bin") if (path / f).is_file()), None)
        if not isinstance(window, int) or weights is None:
            raise EncoderError(f"dense model {name!r}: {path} lacks its window size or its weights file; {TORCH_HINT}")
        return cls(
            path,
            window,
            "mean" if modes == ["mean_tokens"] else "cls",
            int(pooling_config["word_embedding_dimension"]),
            weights,
        )

    def digest(self) -> str:
        """A short hash of the weights file: it names the export, so other weights (another package
        version) get their own export instead of a stale one."""
        with open(self.weights, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()[:12]


def _model_path(name: str) -> Path:
    path = Path(resolve_dense_path(name))
    if path.is_dir():
        return path
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name, local_files_only=offline()))
    except Exception as e:  # noqa: BLE001 - any failure to find the model is the same advice
        raise EncoderError(
            f"could not find dense model {name!r} ({type(e).__name__}: {e}). Without internet, use a local folder path "
            "or the default all-MiniLM-L6-v2."
        ) from None


def _json(path: Path, name: str) -> Any:  # noqa: ANN401 - a JSON document
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise EncoderError(f"dense model {name!r}: cannot read {path} ({e}); {TORCH_HINT}") from None


def ensure_export(folder: ModelFolder, models_dir: Path, name: str) -> Path:
    """The model's ONNX file under `models_dir`, written first if it is not there (`write_graph`);
    every later process finds the file, whichever way it was made (torch wrote those of earlier versions)."""
    target = export_folder(folder, models_dir, name) / EXPORT_FILE
    if not target.is_file():
        write_graph(folder, target)
    return target


def export_folder(folder: ModelFolder, models_dir: Path, name: str) -> Path:
    """Where model `name`'s graphs are kept: named after the model and a hash of its weights."""
    return models_dir / ONNX_DIR / f"{Path(name).name}-{folder.digest()}"


def write_graph(folder: ModelFolder, target: Path, attention: str | None = None) -> None:
    """Write the folder's transformer as an ONNX graph (token states out) to `target`, atomically
    (`rag.settings.atomic.replacing`: a crash or a second writer never leaves half a file under the final
    name): built from the weights without torch where rag.encoders.bert_graph can, else exported by torch
    (`export_onnx`). `attention` is the attention path either writes ("eager" for `ensure_fused`; None for
    torch's default, which the export and so its int8 graph keep).

    Raises:
        EncoderError: the graph could not be written, or torch is needed and missing.
    """
    config = _json(folder.path / "config.json", str(folder.path))
    why_not = unsupported(config, folder.weights)
    if why_not is not None:
        export_onnx(folder, target, attention, why_not)
        return
    log.info("exporting dense model to ONNX from its weights (once): %s -> %s", folder.path, target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with replacing(target) as tmp:
            build_bert_graph(config, folder.weights, tmp, attention)
    except (OSError, ValueError, KeyError) as e:  # a read-only data dir, a full disk, damaged weights
        raise EncoderError(
            f"could not export dense model {folder.path} to ONNX in {target.parent} ({type(e).__name__}: {e}); "
            f"check that the data dir is writable, or {TORCH_HINT}"
        ) from None


def ensure_fused(folder: ModelFolder, models_dir: Path, name: str) -> Path:
    """The float graph the encoder runs: the export with ONNX Runtime's BERT fusions, made once beside it.

    torch's exporter writes attention as some twenty small operators per layer, in a form (PyTorch's
    scaled-dot-product path) that neither ONNX Runtime's load-time optimiser nor its offline BERT
    optimiser recognises. On the eager attention path instead (the form rag.encoders.bert_graph
    writes), the offline optimiser fuses each layer into one Attention kernel (plus embedding, skip and
    bias-GELU fusions): the same vectors in less time (`bench/dense_runtime.py --unfused`,
    bench/README.md). The graph fused is written afresh (`write_graph`), so a data dir whose export
    torch made gets its fused graph without torch too. The fused graph is checked against
    the export on a padded probe batch before it is kept; a model that is not BERT-shaped, or one
    whose fused graph disagrees, is run from the export as it is. The int8 files stay quantised from
    the export itself (`ensure_int8`): quantising the fused graph gives other int8 vectors.
    """
    export = ensure_export(folder, models_dir, name)
    target = export.with_name(FUSED_FILE)
    if target.is_file():
        return target
    config = _json(folder.path / "config.json", name)
    if config.get("model_type") != "bert":
        return export
    log.info("fusing the dense model's attention for ONNX Runtime (once): %s", target)
    try:
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp, replacing(target) as out:
            eager = Path(tmp) / "eager.onnx"
            try:
                write_graph(folder, eager, attention="eager")
                fuse_bert(eager, out, int(config["num_attention_heads"]), int(config["hidden_size"]))
                kept = same_token_states(folder, export, out)
                if not kept:
                    log.warning(
                        "the fused dense model's token states differ from the export's; running the export as it is"
                    )
            except Exception as e:  # noqa: BLE001 - an export or optimiser failure means the same: run the export
                log.warning("could not fuse the dense model (%s: %s); running the export as it is", type(e).__name__, e)
                kept = False
            if not kept:
                shutil.copyfile(export, out)
    except OSError as e:  # a full disk or a read-only models folder: the export still runs, as it did before
        log.warning("could not write the fused dense model in %s (%s); running the export as it is", target.parent, e)
        return export
    return target


def fuse_bert(source: Path, target: Path, num_heads: int, hidden_size: int) -> None:
    """ONNX Runtime's offline BERT fusions of `source`, written to `target` (no hardware-specific
    rewrites: the load-time optimiser of the machine that runs it does the rest).

    Without symbolic shape inference: it needs sympy, which only torch used to bring, and MiniLM's
    fused graph is the same operator for operator without it. The optimiser then warns, once per
    skip-layer-norm fusion, that the inference is off; warnings are muted while it runs (a second or two,
    once per data dir).
    """
    from onnxruntime.transformers import optimizer
    from onnxruntime.transformers.fusion_options import FusionOptions

    options = FusionOptions("bert")
    options.enable_shape_inference = False
    was = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        model = optimizer.optimize_model(
            str(source),
            model_type="bert",
            num_heads=num_heads,
            hidden_size=hidden_size,
            opt_level=0,
            use_gpu=False,
            optimization_options=options,
        )
    finally:
        logging.disable(was)
    model.save_model_to_file(str(target))


def same_token_states(folder: ModelFolder, a: Path, b: Path) -> bool:
    """Whether two graphs give the same token states (within 1e-4) for a padded batch of real text."""
    import onnxruntime
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder.path / "tokenizer.json"))
    tokenizer.enable_padding()
    encodings = tokenizer.encode_batch(["Refunds reach the original card within five days.", "How long?"])
    feed = {
        "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
    }
    states = []
    for path in (a, b):
        session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        states.append(session.run(["last_hidden_state"], {i.name: feed[i.name] for i in session.get_inputs()})[0])
    real = feed["attention_mask"].astype(bool)
    return bool(np.abs(states[0][real] - states[1][real]).max() <= 1e-4)


def export_onnx(folder: ModelFolder, target: Path, attention: str | None, why: str) -> None:
    """torch's export of the folder's transformer, for a model rag.encoders.bert_graph does not build
    (`why` says what it is not), written as `write_graph` says. `attention` picks the model's attention
    implementation ("eager" for `ensure_fused`); None keeps the library's default.

    Raises:
        EncoderError: torch or transformers missing (naming the extra that has them), or the export failed.
    """
    try:
        import inspect

        import torch
        from transformers import AutoModel
    except ImportError:
        raise EncoderError(
            f"dense model {folder.path}: {why}, so its ONNX export needs torch and transformers, which are not "
            f"installed; {TORCH_EXTRA}"
        ) from None
    log.info("exporting dense model to ONNX with torch (once): %s -> %s", folder.path, target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        model = AutoModel.from_pretrained(
            str(folder.path), **({"attn_implementation": attention} if attention else {})
        ).eval()
        names = ["input_ids", "attention_mask"] + (
            ["token_type_ids"] if "token_type_ids" in inspect.signature(model.forward).parameters else []
        )

        class TokenStates(torch.nn.Module):
            """Keyword arguments in, last_hidden_state out: the forward's positional order varies by version."""

            def __init__(self) -> None:
                super().__init__()
                self.model = model

            def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
                return self.model(**dict(zip(names, inputs, strict=True))).last_hidden_state

        # The example batch has padding (a zero in the mask): an all-ones mask may be traced as "no mask".
        mask = torch.tensor([[1] * 8, [1] * 5 + [0] * 3])
        example = tuple(
            {"input_ids": mask * 1000, "attention_mask": mask, "token_type_ids": torch.zeros_like(mask)}[n]
            for n in names
        )
        axes = {n: {0: "batch", 1: "tokens"} for n in [*names, "last_hidden_state"]}
        with torch.no_grad(), warnings.catch_warnings(), replacing(target) as tmp:
            warnings.simplefilter(
                "ignore"
            )  # the tracer's notes on shapes it treats as constants: about its internals, not ours
            torch.onnx.export(
                TokenStates(),
                example,
                str(tmp),
                input_names=names,
                output_names=["last_hidden_state"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )
    except EncoderError:
        raise
    except Exception as e:  # noqa: BLE001 - the exporter's many failure types all need the same advice
        raise EncoderError(
            f"could not export dense model {folder.path} to ONNX in {target.parent} ({type(e).__name__}: {e}); "
            f"check that the data dir is writable and that onnx is installed (pip install onnx), or {TORCH_HINT}"
        ) from None


def ensure_int8(folder: ModelFolder, models_dir: Path, name: str) -> Path:
    """The export with its weights quantised to int8 (ONNX Runtime's dynamic quantisation), made once
    beside the float export from it, atomically as the export is.

    By default only sentence vectors use it (RAGSCOPE_SENTENCE_POOLING=separate-int8): they are close
    to the float ones, and retrieval did not measurably move while the chunk vectors and every query stay
    float (docs/retrieval-quality.md). RAGSCOPE_DENSE_RUNTIME=onnx-int8 runs everything on it, as a vector
    space of its own (bench/README.md).

    Raises:
        EncoderError: the quantiser failed (a read-only data dir, or onnx missing).
    """
    source = ensure_export(folder, models_dir, name)
    target = source.with_name(INT8_FILE)
    if target.is_file():
        return target
    log.info("quantising the dense model's ONNX export to int8 (once): %s", target)
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic

        root = logging.getLogger()
        was = root.disabled
        root.disabled = True  # the quantiser advises its own users to pre-process, on the root logger
        try:
            with replacing(target) as tmp:
                quantize_dynamic(source, tmp, weight_type=QuantType.QInt8)
        finally:
            root.disabled = was
    except Exception as e:  # noqa: BLE001 - the quantiser's failure types all need the same advice
        raise EncoderError(
            f"could not quantise dense model {name!r} to int8 in {target.parent} ({type(e).__name__}: {e}); "
            "check that the data dir is writable and onnx is installed, or use RAGSCOPE_SENTENCE_POOLING=separate"
        ) from None
    return target


def export_problem(path: Path) -> str:
    """Why ONNX Runtime cannot load the graph at `path` (cut short by a full disk or a copy, say), or "" when it
    loads: the same load the encoder does (rag.encoders.dense_onnx), so `ragscope doctor` finds what it would."""
    import onnxruntime

    try:
        onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - ONNX Runtime's load failures have no common type
        return f"ONNX Runtime cannot load it ({type(e).__name__}: {str(e)[:200]})"
    return ""


def remake(path: Path, models_dir: Path, name: str) -> bool:
    """Delete the damaged graph at `path` and, when it is one of model `name`'s, make it again now (True);
    another model's graph is made again the next time that model is used.

    Raises:
        EncoderError: the model cannot be read or exported (see `write_graph`).
    """
    path.unlink(missing_ok=True)
    folder = ModelFolder.read(name)
    make = {EXPORT_FILE: ensure_export, FUSED_FILE: ensure_fused, INT8_FILE: ensure_int8}.get(path.name)
    if make is None or path.parent != export_folder(folder, models_dir, name):
        return False
    make(folder, models_dir, name)
    return True
