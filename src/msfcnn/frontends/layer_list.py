"""The JSON layer-list format (docs/models.md): {"name", "input": [H, W, C], "layers": [...]}.

Each layer kind maps to a small converter through `CONVERTERS`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .. import jsontext
from ..errors import UserError
from ..ir import NETWORK_INPUT, Graph
from ..ops import Add, AvgPool2D, Conv2D, Dense, DepthwiseConv2D, GlobalAvgPool, MaxPool2D, Op, Pad, Softmax, Window
from ..ops.activation import Activation
from ..ops.add_const import AddConst
from ..ops.axis_mean import AxisMean
from ..ops.base import require_feature_map
from ..ops.channel_gather import ChannelGather, shuffle_indices
from ..ops.channel_slice import ChannelSlice
from ..ops.depth_to_space import DepthToSpace
from ..ops.space_to_depth import SpaceToDepth
from ..ops.concat import Concat
from ..ops.elu import Elu
from ..ops.hard_swish import HardSwish
from ..ops.leaky_relu import LeakyRelu
from ..ops.logistic import Logistic
from ..ops.prelu import Prelu
from ..ops.tanh import Tanh
from ..ops.min_max import Maximum, MaximumConst, Minimum, MinimumConst
from ..ops.mul import Mul, MulBroadcast, MulConst
from ..ops.sub import SquaredDifference, SquaredDifferenceConst, Sub, SubConst
from ..ops.transpose import Transpose

ACTIVATIONS = (None, "relu", "relu6")


def _window(layer: dict, in_shape, dilated: bool = False) -> Window:
    """A layer's window; only a convolution (`dilated`) may have a `dilation`."""
    if "kernel" not in layer:
        raise UserError("missing 'kernel'")
    if len(in_shape) != 3:
        raise UserError(f"needs an (H, W, C) feature map, got shape {list(in_shape)}")
    if "dilation" in layer and not dilated:
        raise UserError("'dilation' is for conv2d and depthwise_conv2d only")
    return Window.resolve(layer["kernel"], layer.get("stride", 1), layer.get("padding", 0), in_shape[:2],
                          layer.get("dilation", 1))


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


def _conv2d(layer, graph, index):
    return Conv2D(_positive_int(layer, "filters"), _window(layer, graph.shape_of(index - 1), True),
                  _activation(layer)), (index - 1,)


def _depthwise(layer, graph, index):
    multiplier = layer.get("depth_multiplier", 1)
    if isinstance(multiplier, bool) or not isinstance(multiplier, int) or multiplier <= 0:
        raise UserError(f"'depth_multiplier' must be a positive integer, got {multiplier!r}")
    return DepthwiseConv2D(_window(layer, graph.shape_of(index - 1), True), multiplier, _activation(layer)), (index - 1,)


def _max_pool(layer, graph, index):
    return MaxPool2D(_window(layer, graph.shape_of(index - 1))), (index - 1,)


def _avg_pool(layer, graph, index):
    return AvgPool2D(_window(layer, graph.shape_of(index - 1))), (index - 1,)


def _source(layer: dict, index: int) -> int:
    source = layer.get("from")
    if isinstance(source, bool) or not isinstance(source, int) or not NETWORK_INPUT <= source < index - 1:
        raise UserError(f"'from' must be an earlier layer index or -1 (network input), got {source!r}")
    return source


def _constant(layer: dict, graph, index: int) -> dict:
    """The placeholder of a `"const": "scalar" | "channel"` operand: its size; the values (and
    their quantisation) come with the weights (frontends/random_weights.py)."""
    kind = layer.get("const")
    if kind not in ("scalar", "channel"):
        raise UserError(f"'const' must be 'scalar' or 'channel', got {kind!r}")
    size = 1 if kind == "scalar" else graph.shape_of(index - 1)[-1]
    return {"operand": np.zeros(size, np.int8)}


def _add(layer, graph, index):
    if "const" in layer:
        return AddConst(activation=_activation(layer)), (index - 1,), _constant(layer, graph, index)
    return Add(_activation(layer)), (index - 1, _source(layer, index))


def _reversed(layer: dict) -> bool:
    value = layer.get("reversed", False)
    if not isinstance(value, bool):
        raise UserError(f"'reversed' must be true or false, got {value!r}")
    return value


def _sub(layer, graph, index):
    """The previous layer minus the constant or the layer 'from'; with "reversed", the other way."""
    if "const" in layer:
        return SubConst(activation=_activation(layer), reversed=_reversed(layer)), (index - 1,), _constant(layer, graph, index)
    return Sub(_activation(layer), reversed=_reversed(layer)), (index - 1, _source(layer, index))


def _squared_difference(layer, graph, index):
    if "const" in layer:
        return SquaredDifferenceConst(), (index - 1,), _constant(layer, graph, index)
    return SquaredDifference(), (index - 1, _source(layer, index))


def _min_max(op: type, const_op: type) -> Converter:
    def convert(layer, graph, index):
        if "const" in layer:
            return const_op(), (index - 1,), _constant(layer, graph, index)
        return op(), (index - 1, _source(layer, index))
    return convert


def _mul(layer, graph, index):
    if "const" in layer:
        return MulConst(activation=_activation(layer)), (index - 1,), _constant(layer, graph, index)
    source = _source(layer, index)
    if graph.shape_of(source) == graph.shape_of(index - 1):
        return Mul(_activation(layer)), (index - 1, source)
    # a map times a per-channel vector (squeeze-and-excite), whichever of the two comes first
    vector_first = len(graph.shape_of(index - 1)) < len(graph.shape_of(source))
    return MulBroadcast(_activation(layer)), ((source, index - 1) if vector_first else (index - 1, source))


def _concat(layer, graph, index):
    return Concat(), (index - 1, _source(layer, index))


def _channel_slice(layer, graph, index):
    """Channels [begin, begin + channels) of the previous layer's output, or of layer `from`'s
    (a ShuffleNet split: a slice of each half of one map)."""
    source = _source(layer, index) if "from" in layer else index - 1
    begin = layer.get("begin", 0)
    if isinstance(begin, bool) or not isinstance(begin, int) or begin < 0:
        raise UserError(f"'begin' must be a non-negative integer, got {begin!r}")
    op = ChannelSlice(begin, _positive_int(layer, "channels"))
    op.output_shape([graph.shape_of(source)])  # the range checked here, in the layer's name
    return op, (source,)


def _channel_shuffle(layer, graph, index):
    """ShuffleNet's channel shuffle of the previous layer's output in `groups` groups."""
    groups, channels = _positive_int(layer, "groups"), graph.shape_of(index - 1)[-1]
    if channels % groups:
        raise UserError(f"{channels} channels do not split into {groups} groups")
    return ChannelGather(shuffle_indices(groups, channels)), (index - 1,)


def _block_moves(op_class: type) -> Converter:
    def convert(layer, graph, index):
        return op_class(_positive_int(layer, "block")), (index - 1,)
    return convert


def _global_avg_pool(layer, graph, index):
    return GlobalAvgPool(), (index - 1,)


def _mean(layer, graph, index):
    axes = layer.get("axes")
    if axes not in ([0], [1], [0, 1]):
        raise UserError(f"'axes' must be [0] (H), [1] (W) or [0, 1], got {axes!r}")
    return AxisMean.over(tuple(axes), require_feature_map(graph.shape_of(index - 1), "mean")), (index - 1,)


def _pad(layer, graph, index):
    pads = layer.get("pads")
    if (not isinstance(pads, list) or len(pads) != 4
            or not all(isinstance(p, int) and not isinstance(p, bool) and 0 <= p <= 1024 for p in pads)):
        raise UserError(f"'pads' must be [top, left, bottom, right] integers in 0..1024, got {pads!r}")
    return Pad(tuple(pads)), (index - 1,)


def _transpose(layer, graph, index):
    perm = layer.get("perm")
    if not isinstance(perm, list) or sorted(perm) != [0, 1, 2] or any(isinstance(p, bool) for p in perm):
        raise UserError(f"'perm' must order the axes [0, 1, 2] (H, W, C), got {perm!r}")
    return Transpose(tuple(perm)), (index - 1,)


def _dense(layer, graph, index):
    return Dense(_positive_int(layer, "units"), _activation(layer)), (index - 1,)


def _leaky_relu(layer, graph, index):
    alpha = layer.get("alpha", 0.2)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 <= alpha <= 1024:
        raise UserError(f"'alpha' must be a number in 0..1024, got {alpha!r}")
    return LeakyRelu(float(np.float32(alpha))), (index - 1,)


def _prelu(layer, graph, index):
    """One alpha per channel: placeholders; the values come with the weights (random_weights.py)."""
    return Prelu(), (index - 1,), {"alpha": np.zeros(graph.shape_of(index - 1)[-1], np.int8)}


def _unary(op: Op) -> Converter:
    return lambda layer, graph, index: (op, (index - 1,))


# A converter gets the layer's dict, the graph so far and the layer's index; it returns the op and
# the tensors it reads, and maybe placeholder constants.
Converter = Callable[[dict, Graph, int], tuple]
CONVERTERS: dict[str, Converter] = {
    "conv2d": _conv2d,
    "depthwise_conv2d": _depthwise,
    "max_pool2d": _max_pool,
    "avg_pool2d": _avg_pool,
    "add": _add,
    "mul": _mul,
    "sub": _sub,
    "squared_difference": _squared_difference,
    "maximum": _min_max(Maximum, MaximumConst),
    "minimum": _min_max(Minimum, MinimumConst),
    "concat": _concat,
    "channel_slice": _channel_slice,
    "channel_shuffle": _channel_shuffle,
    "space_to_depth": _block_moves(SpaceToDepth),
    "depth_to_space": _block_moves(DepthToSpace),
    "global_avg_pool": _global_avg_pool,
    "mean": _mean,
    "pad": _pad,
    "transpose": _transpose,
    "dense": _dense,
    "softmax": _unary(Softmax()),
    "relu": _unary(Activation("relu")),
    "relu6": _unary(Activation("relu6")),
    "logistic": _unary(Logistic()),
    "hard_swish": _unary(HardSwish()),
    "leaky_relu": _leaky_relu,
    "tanh": _unary(Tanh()),
    "elu": _unary(Elu()),
    "prelu": _prelu,
    "relu_n1_to_1": _unary(Activation("relu_n1_to_1")),
    "relu_0_to_1": _unary(Activation("relu_0_to_1")),
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
            op, inputs, *consts = converter(layer, graph, index)
        except UserError as err:
            raise UserError(f"layer {index} ({kind}): {err}") from None
        graph.append(op, inputs, *consts)
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
