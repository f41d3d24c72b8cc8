"""Model frontends: a MODEL argument (built-in name or file) becomes a Graph."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable

from ..errors import UserError, did_you_mean
from .. import numerics as nx
from ..ir import Graph, check_numerics, with_numerics
from ..ir.arithmetic import check_arithmetic
from .builtin import builtin_layer_list, builtin_names, load_builtin
from .layer_list import load_layer_list
from .onnx import load_onnx
from .random_weights import with_random_weights


def load_tflite(path: Path) -> Graph:
    """tflite.load_tflite, imported when a .tflite file is read: its flatbuffer classes take a
    quarter of a second to import, which listing the supported operators (operators.py) skips."""
    from .tflite import load_tflite as load
    return load(path, numerics=None)  # load_model then sets the numerics asked for


# File suffix -> loader.
LOADERS: dict[str, Callable[[Path], Graph]] = {".json": load_layer_list, ".onnx": load_onnx,
                                               ".tflite": load_tflite}


def load_model(model: str, weights: bool = False, numerics: str = nx.LITERT) -> Graph:
    """The graph of a MODEL argument. With weights=True, a model that has no weights of its own
    (built-ins, JSON layer lists) gets deterministic random int8 weights, ready to run. `numerics`
    (numerics.LITERT or numerics.TFLM) is whose int8 kernels the graph's arithmetic follows."""
    check_numerics(numerics)  # before the model is read
    graph = _load_structure(model)
    if weights and graph.dtype == "int8" and graph.input_quant is None:  # no quantisation: no weights
        graph = with_random_weights(graph)
    graph = with_numerics(graph, numerics)
    if graph.input_quant is not None or graph.dtype != "int8":  # a graph with its weights (or float)
        check_arithmetic(graph)
    return graph


def model_digest(model: str) -> str:
    """The sha256 (hex) of a MODEL argument's bytes: its file's, or a built-in's layer list as JSON.
    Plans record it, so that a plan is never used with another model."""
    if model in builtin_names():
        data = json.dumps(builtin_layer_list(model), sort_keys=True).encode()
    else:
        try:
            data = Path(model).read_bytes()
        except OSError as err:
            raise UserError(f"{model}: cannot read it ({err.strerror})") from None
    return hashlib.sha256(data).hexdigest()


def _load_structure(model: str) -> Graph:
    if model in builtin_names():
        return load_builtin(model)
    path = Path(model)
    loader = LOADERS.get(path.suffix.lower())
    if loader is None:
        known = ", ".join(builtin_names())
        raise UserError(f"unknown model {model!r}{did_you_mean(model, builtin_names())}: give a built-in name ({known}) or a "
                        f"{'/'.join(LOADERS)} file")
    if path.is_dir():
        raise UserError(f"{model}: is a directory, not a model file")
    if not path.exists():
        raise UserError(f"{model}: no such file")
    if not path.is_file():
        raise UserError(f"{model}: not a regular file")
    graph = loader(path)
    _check_sizes(graph, model)
    _check_all_read(graph, model)
    return graph


def _check_all_read(graph: Graph, model: str) -> None:
    """Every op's output is read by a later op or is a model output: the planner streams each
    tensor to its readers, and an op nothing reads (a hand-edited file's) has none."""
    read = {t for node in graph.nodes for t in node.inputs} | set(graph.output_tensors)
    unread = [index for index in range(len(graph.nodes)) if index not in read]
    if unread:
        node = graph.nodes[unread[0]]
        raise UserError(f"{model}: the output of op {unread[0]} ({node.op.describe()}) is never read and is not a "
                        "model output")


def _check_sizes(graph: Graph, model: str) -> None:
    """Every tensor one the generated C can index with 32-bit integers (as layer lists check
    layer by layer): a model file may declare any dimension."""
    from ..ir import NETWORK_INPUT
    from ..jsontext import INT_LIMIT
    for tensor in (*graph.input_tensors, *range(len(graph.nodes))):
        elements = graph.elements(tensor)
        if elements > INT_LIMIT:
            what = f"input {NETWORK_INPUT - tensor}" if tensor < 0 else f"the output of op {tensor}"
            what = "the input" if tensor == NETWORK_INPUT and not graph.extra_inputs else what
            raise UserError(f"{model}: {what} {list(graph.shape_of(tensor))} is too large ({elements} elements; "
                            f"at most {INT_LIMIT})")


__all__ = ["LOADERS", "builtin_names", "load_model", "model_digest"]
