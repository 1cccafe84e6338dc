"""A BERT encoder's ONNX graph written straight from its safetensors weights, without torch.

torch (two gigabytes of install, more with CUDA) was only ever needed to turn the default model's weights
into an ONNX graph once per data dir. A BERT encoder is a short list of ONNX operators, so this module
writes them itself with `onnx.helper`, computing what torch's exporter writes (Gather embeddings,
LayerNormalization, per layer Q/K/V MatMul+Add, heads by Reshape/Transpose, scaled Q.K plus the extended
mask, Softmax, exact GELU through Erf): on the eager attention path in the operators ONNX Runtime's BERT
optimiser recognises and fuses (rag.encoders.export.ensure_fused), and on torch's default path with
the token states of earlier versions' torch exports bit for bit (see `build_bert_graph`). Inputs and
output keep the export's names (input_ids, attention_mask, token_type_ids -> last_hidden_state), so
rag.encoders.dense_onnx runs either.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import numpy as np

OPSET = 17  # LayerNormalization is an operator from opset 17 on
IR_VERSION = 8  # the IR of opset 17: ONNX Runtime releases older than the installed onnx still load it
# safetensors dtypes the builder reads; every float kind is widened to float32, as the runtime computes.
_DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16, "I64": np.int64}


def unsupported(config: dict[str, Any], weights: Path) -> str | None:
    """Why this builder cannot write the model's graph, or None when it can: a BERT encoder (absolute
    positions, exact GELU, no decoder parts) whose weights are in safetensors."""
    if config.get("model_type") != "bert":
        return f"its model_type is {config.get('model_type')!r}, not bert"
    if weights.suffix != ".safetensors":
        return f"its weights are {weights.name}, not safetensors"
    checks = {
        "hidden_act": (config.get("hidden_act", "gelu"), "gelu"),
        "position_embedding_type": (config.get("position_embedding_type", "absolute"), "absolute"),
        "is_decoder": (bool(config.get("is_decoder")), False),
        "add_cross_attention": (bool(config.get("add_cross_attention")), False),
    }
    for key, (value, wanted) in checks.items():
        if value != wanted:
            return f"its {key} is {value!r}, not {wanted!r}"
    if int(config["hidden_size"]) % int(config["num_attention_heads"]):
        return "its hidden size is not a multiple of its number of heads"
    return None


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a safetensors file as a numpy array (floats as float32): an 8-byte little-endian
    header length, a JSON header of dtype, shape and byte offsets, then the raw little-endian bytes.

    Raises:
        ValueError: a damaged file, or a dtype this builder does not read.
    """
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + length)
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if entry["dtype"] not in _DTYPES:
            raise ValueError(f"{path.name}: tensor {name} is {entry['dtype']}, which the ONNX builder does not read")
        start, end = entry["data_offsets"]
        array = data[start:end].view(_DTYPES[entry["dtype"]]).reshape(entry["shape"])
        if entry["dtype"] == "BF16":  # bfloat16 is the top half of a float32
            array = (array.astype(np.uint32) << 16).view(np.float32)
        out[name] = array.astype(np.float32) if array.dtype.kind == "f" else np.array(array)
    return out


class _Graph:
    """Nodes and initializers added in order, each output named after its node (`op` returns it)."""

    def __init__(self, weights: dict[str, np.ndarray], prefix: str) -> None:
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._weights = weights
        self._prefix = prefix  # "bert." in checkpoints saved from a task model (BertForMaskedLM and the like)

    def weight(self, name: str, transpose: bool = False) -> str:
        """An initializer holding the model's tensor `name` (a Linear's weight transposed for MatMul)."""
        key = self._prefix + name
        if key not in self._weights:
            raise ValueError(f"the weights have no tensor {key!r}")
        array = self._weights[key]
        return self._add(name, np.ascontiguousarray(array.T) if transpose else array)

    def const(self, name: str, value: Any) -> str:  # noqa: ANN401 - a number, a list or an array
        """A constant of the graph (int64 for integers), named uniquely after `name`."""
        return self._add(f"{name}_{len(self.initializers)}", np.asarray(value))

    def _add(self, name: str, array: np.ndarray) -> str:
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def op(self, op_type: str, *inputs: str, out: str | None = None, **attrs: Any) -> str:  # noqa: ANN401
        from onnx import helper

        name = out or f"{op_type}_{len(self.nodes)}"
        self.nodes.append(
            helper.make_node(op_type, list(inputs), [name], name=f"/{op_type}_{len(self.nodes)}", **attrs)
        )
        return name

    def dense(self, x: str, layer: str) -> str:
        """A Linear layer: x @ W.T + b, as torch exports it (MatMul, then Add with the bias first)."""
        return self.op("Add", self.weight(f"{layer}.bias"), self.op("MatMul", x, self.weight(f"{layer}.weight", True)))

    def layer_norm(self, x: str, prefix: str, eps: float, out: str | None = None) -> str:
        return self.op(
            "LayerNormalization",
            x,
            self.weight(f"{prefix}.weight"),
            self.weight(f"{prefix}.bias"),
            out=out,
            axis=-1,
            epsilon=eps,
        )


def build_bert_graph(config: dict[str, Any], weights: Path, target: Path, attention: str | None = None) -> None:
    """Write the encoder of a BERT model (its `config.json` as `config`) as an ONNX graph to `target`.

    `attention` is the form of the attention scores, as torch's exporter names its paths: "eager" divides
    Q.K by sqrt(head size), the form ONNX Runtime's optimiser fuses; None (torch's default,
    scaled-dot-product) scales Q and K by head size ** -0.25 each. The two agree to float rounding, but
    int8 quantisation (rag.encoders.export.ensure_int8, of the unfused export) amplifies that rounding
    (cosine 0.995 between the two int8 graphs), so the export keeps the form earlier versions' torch
    exports had and its int8 vectors stay theirs.

    Raises:
        ValueError: the weights lack a tensor the config implies (or hold one the reader cannot read).
        OSError: `target` cannot be written.
    """
    import onnx
    from onnx import TensorProto, helper

    tensors = read_safetensors(weights)
    g = _Graph(tensors, "bert." if any(k.startswith("bert.") for k in tensors) else "")
    hidden, heads = int(config["hidden_size"]), int(config["num_attention_heads"])
    head_size = hidden // heads
    eps = float(config.get("layer_norm_eps", 1e-12))

    # Embeddings: word + token type + position (positions 0..tokens-1, sliced from a constant row).
    summed = g.op(
        "Add",
        g.op("Gather", g.weight("embeddings.word_embeddings.weight"), "input_ids"),
        g.op("Gather", g.weight("embeddings.token_type_embeddings.weight"), "token_type_ids"),
    )
    tokens = g.op(
        "Unsqueeze", g.op("Gather", g.op("Shape", "input_ids"), g.const("one", 1), axis=0), g.const("axis", [0])
    )
    positions = np.arange(int(config["max_position_embeddings"]), dtype=np.int64)[None]
    position_ids = g.op(
        "Slice",
        g.const("position_ids", positions),
        g.const("start", [0]),
        tokens,
        g.const("axis", [1]),
        g.const("step", [1]),
    )
    summed = g.op("Add", summed, g.op("Gather", g.weight("embeddings.position_embeddings.weight"), position_ids))
    x = g.layer_norm(summed, "embeddings.LayerNorm", eps)

    # The extended mask: 0 where a token is real, the lowest float where it is padding (as BERT's eager path).
    mask = g.op("Unsqueeze", g.op("Unsqueeze", "attention_mask", g.const("axis", [1])), g.const("axis", [2]))
    mask = g.op("Sub", g.const("one", np.float32(1)), g.op("Cast", mask, to=TensorProto.FLOAT))
    mask = g.op("Mul", mask, g.const("lowest", np.finfo(np.float32).min))

    split = g.const("heads_shape", [0, 0, heads, head_size])
    merged = g.const("hidden_shape", [0, 0, hidden])
    layers = int(config["num_hidden_layers"])
    for i in range(layers):
        p = f"encoder.layer.{i}"
        q, k, v = (g.op("Reshape", g.dense(x, f"{p}.attention.self.{n}"), split) for n in ("query", "key", "value"))
        q, k = g.op("Transpose", q, perm=[0, 2, 1, 3]), g.op("Transpose", k, perm=[0, 2, 3, 1])
        if attention == "eager":
            scores = g.op("Div", g.op("MatMul", q, k), g.const("sqrt_head_size", np.float32(math.sqrt(head_size))))
        else:
            root = g.const("head_size_root", np.float32(head_size**-0.25))
            scores = g.op("MatMul", g.op("Mul", q, root), g.op("Mul", k, root))
        probs = g.op("Softmax", g.op("Add", scores, mask), axis=-1)
        context = g.op("MatMul", probs, g.op("Transpose", v, perm=[0, 2, 1, 3]))
        context = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), merged)
        x = g.layer_norm(
            g.op("Add", g.dense(context, f"{p}.attention.output.dense"), x), f"{p}.attention.output.LayerNorm", eps
        )
        h = g.dense(x, f"{p}.intermediate.dense")
        erf = g.op("Erf", g.op("Div", h, g.const("sqrt2", np.float32(math.sqrt(2)))))
        gelu = g.op(
            "Mul", g.op("Mul", h, g.op("Add", erf, g.const("one", np.float32(1)))), g.const("half", np.float32(0.5))
        )
        out = "last_hidden_state" if i == layers - 1 else None
        x = g.layer_norm(g.op("Add", g.dense(gelu, f"{p}.output.dense"), x), f"{p}.output.LayerNorm", eps, out=out)

    axes = ["batch", "tokens"]
    graph = helper.make_graph(
        g.nodes,
        "bert",
        [
            helper.make_tensor_value_info(n, TensorProto.INT64, axes)
            for n in ("input_ids", "attention_mask", "token_type_ids")
        ],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*axes, hidden])],
        g.initializers,
    )
    # No producer name: ONNX Runtime's BERT optimiser warns about any producer but "pytorch".
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    onnx.save_model(model, str(target))
