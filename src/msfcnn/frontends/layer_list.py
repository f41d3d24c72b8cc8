"""The JSON layer-list format (docs/models.md): {"name", "input": [H, W, C], "layers": [...]}.

Each layer kind maps to a small converter through `CONVERTERS`; a converter gets the layer's
dict and the input shape and returns the op plus the tensors it reads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from .. import jsontext
from ..errors import UserError
from ..ir import NETWORK_INPUT, Graph
from ..ops import Add, AvgPool2D, Conv2D, Dense, DepthwiseConv2D, GlobalAvgPool, MaxPool2D, Op, Softmax, Window

ACTIVATIONS = (None, "relu", "relu6")


def _window(layer: dict, in_shape) -> Window:
    if "kernel" not in layer:
        raise UserError("missing 'kernel'")
    if len(in_shape) != 3:
        raise UserError(f"needs an (H, W, C) feature map, got shape {list(in_shape)}")
    return Window.resolve(layer["kernel"], layer.get("stride", 1), layer.get("padding", 0), in_shape[:2])


def _activation(layer: dict) -> str | None:
    act = layer.get("act")
    if act not in ACTIVATIONS:
        raise UserError(f"unknown activation {act!r}: expected 'relu' or 'relu6'")
    return act


def _positive_int(layer: dict, key: str) -> int:
    value = layer.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise UserError(f"'{key}' must be a positive integer, got {value!r}")
    return value


def _conv2d(layer, in_shape, index):
    return Conv2D(_positive_int(layer, "filters"), _window(layer, in_shape), _activation(layer)), (index - 1,)


def _depthwise(layer, in_shape, index):
    multiplier = layer.get("depth_multiplier", 1)
    if isinstance(multiplier, bool) or not isinstance(multiplier, int) or multiplier <= 0:
        raise UserError(f"'depth_multiplier' must be a positive integer, got {multiplier!r}")
    return DepthwiseConv2D(_window(layer, in_shape), multiplier, _activation(layer)), (index - 1,)


def _max_pool(layer, in_shape, index):
    return MaxPool2D(_window(layer, in_shape)), (index - 1,)


def _avg_pool(layer, in_shape, index):
    return AvgPool2D(_window(layer, in_shape)), (index - 1,)


def _add(layer, in_shape, index):
    source = layer.get("from")
    if isinstance(source, bool) or not isinstance(source, int) or not NETWORK_INPUT <= source < index - 1:
        raise UserError(f"'from' must be an earlier layer index or -1 (network input), got {source!r}")
    return Add(_activation(layer)), (index - 1, source)


def _global_avg_pool(layer, in_shape, index):
    return GlobalAvgPool(), (index - 1,)


def _dense(layer, in_shape, index):
    return Dense(_positive_int(layer, "units"), _activation(layer)), (index - 1,)


def _softmax(layer, in_shape, index):
    return Softmax(), (index - 1,)


Converter = Callable[[dict, tuple, int], tuple[Op, tuple[int, ...]]]
CONVERTERS: dict[str, Converter] = {
    "conv2d": _conv2d,
    "depthwise_conv2d": _depthwise,
    "max_pool2d": _max_pool,
    "avg_pool2d": _avg_pool,
    "add": _add,
    "global_avg_pool": _global_avg_pool,
    "dense": _dense,
    "softmax": _softmax,
}


def graph_from_layer_list(doc: Any, default_name: str = "model") -> Graph:
    if not isinstance(doc, dict):
        raise UserError("a layer list must be a JSON object with 'input' and 'layers'")
    shape = doc.get("input")
    if (not isinstance(shape, list) or len(shape) != 3
            or not all(isinstance(d, int) and not isinstance(d, bool) for d in shape)):
        raise UserError(f"'input' must be [H, W, C] integers, got {shape!r}")
    if min(shape) <= 0:
        raise UserError(f"'input' sizes must be positive, got {shape}")
    layers = doc.get("layers")
    if not isinstance(layers, list) or not layers:
        raise UserError("'layers' must be a non-empty list")
    name = doc.get("name", default_name)
    graph = Graph(str(name), tuple(shape))
    _check_size(graph, NETWORK_INPUT, "'input'")
    for index, layer in enumerate(layers):
        if not isinstance(layer, dict):
            raise UserError(f"layer {index}: expected an object, got {type(layer).__name__}")
        kind = layer.get("op")
        converter = CONVERTERS.get(kind) if isinstance(kind, str) else None
        if converter is None:
            raise UserError(f"layer {index}: unknown op {kind!r} (supported: {', '.join(CONVERTERS)})")
        try:
            op, inputs = converter(layer, graph.shape_of(index - 1), index)
        except UserError as err:
            raise UserError(f"layer {index} ({kind}): {err}") from None
        graph.append(op, inputs)
        _check_size(graph, index, f"layer {index} ({kind}): output")
    return graph


def _check_size(graph: Graph, tensor: int, what: str) -> None:
    """A tensor the generated C can index with 32-bit integers."""
    elements = graph.elements(tensor)
    if elements > jsontext.INT_LIMIT:
        raise UserError(f"{what} {list(graph.shape_of(tensor))} is too large ({elements} elements; at most "
                        f"{jsontext.INT_LIMIT})")


def load_layer_list(path: Path) -> Graph:
    try:
        doc = jsontext.loads(path.read_text())
    except UnicodeDecodeError:
        raise UserError(f"{path}: not a text JSON file") from None
    except json.JSONDecodeError as err:
        raise UserError(f"{path}: malformed JSON at line {err.lineno} column {err.colno}: {err.msg}") from None
    except jsontext.JSONLimitError as err:
        raise UserError(f"{path}: {err}") from None
    try:
        return graph_from_layer_list(doc, path.stem)
    except UserError as err:
        raise UserError(f"{path}: {err}") from None
