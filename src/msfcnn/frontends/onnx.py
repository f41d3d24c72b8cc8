"""The float32 ONNX frontend (docs/models.md): an `.onnx` file becomes a Graph.

ONNX feature maps are NCHW with a batch of 1; in the IR they are (H, W, C), and an ONNX (1, N)
matrix is an IR vector (N,). Weights are converted to the IR's TFLite-style layouts: Conv2D
(C_out, kh, kw, C_in), DepthwiseConv2D (1, kh, kw, C_out), Dense (units, in_features).

Each ONNX op type maps to a small converter through `CONVERTERS`. A converter reads its
activation inputs (`_Importer.value`) and constants (`_Importer.const`), appends IR nodes and
binds its output name. Some ops fold into the node that produced their input instead of
becoming nodes: Relu/Clip become the producer's fused activation, BatchNormalization is folded
into the preceding convolution's weights, a constant Add after MatMul becomes the dense bias.
Those rewrites are the rules of frontends/rewrite.py, which the TFLite importer shares.

PyTorch's Conv1d models have rank-3 (N, C, L) maps and 3-D weights: such a map is the IR's one-row
map (1, L, C), the map (N, C, 1, L) the same bytes in NCHW, and the importer remembers its ONNX
names (`_Importer.one_row`). The converters of windows (Conv, MaxPool, AveragePool) and Pad read
their 1-D attributes and weights as those of a 1 x k window (`_as_one_row`), so a Conv1d stack is
a conv stack over one row, as the TFLite importer makes of Keras' Conv1D.

Flattening an NCHW feature map orders its elements (C, H, W) while the IR flattens (H, W, C);
the flattened value remembers the map it came from (`_Value.flat_from`) and the Gemm/MatMul that
reads it permutes its weight columns, so the numbers equal onnxruntime's.
"""

from __future__ import annotations

import math
from math import prod
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..errors import UserError
from ..jsontext import INT_LIMIT
from ..ir import Graph, GraphInput, input_tensor, is_network_input
from ..ops import AvgPool2D, Conv2D, Dense, DepthwiseConv2D, GlobalAvgPool, MaxPool2D, Op, Pad, Softmax, Window
from ..ops.add import Add
from ..ops.transpose_conv import TransposeConv
from ..ops.add_const import AddConst
from ..ops.channel_slice import ChannelSlice
from ..ops.concat import Concat
from ..ops.float_unary import FloatUnary
from ..ops.gru import Gru
from ..ops.channel_gather import ChannelGather
from ..ops.lstm import Lstm
from ..ops.lstm_cell_state import LstmCellState
from ..ops.reshape import Reshape
from ..ops.rnn import Rnn
from ..ops.hard_sigmoid import HardSigmoid
from ..ops.prelu import Prelu
from ..ops.hard_swish import HardSwish
from ..ops.logistic import Logistic
from ..ops.min_max import Maximum, MaximumConst, Minimum, MinimumConst
from ..ops.mul import Mul, MulBroadcast, MulConst
from ..ops.resize_bilinear import ResizeBilinear
from ..ops.resize_nearest import ResizeNearest
from ..ops.sub import Sub, SubConst
from . import rewrite as stage
from .rewrite import Append, BatchNorm, BiasAdd, ChannelView, Clamp, Flatten, UnitAxes, float32 as _float32

FLOAT = 1  # onnx.TensorProto.FLOAT


def load_onnx(path: Path) -> Graph:
    try:
        import onnx
    except ImportError:
        raise UserError(f"{path}: reading ONNX models needs the onnx package: pip install 'msfcnn[onnx]'") from None
    model = _parse(onnx, Path(path))
    try:
        return _Importer(onnx, model, Path(path).stem).run()
    except UserError as err:
        raise UserError(f"{path}: {err}") from None


def _label(index: int, node) -> str:
    return f"node {index} ({node.op_type}{' ' + repr(node.name) if node.name else ''})"


def _first_line(err: BaseException) -> str:
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    text = lines[0] if lines else type(err).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def _parse(onnx, path: Path):
    try:
        data = path.read_bytes()
    except OSError as err:
        raise UserError(f"cannot read {path}: {err.strerror}") from None
    try:
        model = onnx.load_model_from_string(data)
    except Exception as err:  # protobuf's DecodeError and whatever else a broken file provokes
        raise UserError(f"{path}: not a valid ONNX file ({_first_line(err)})") from None
    try:
        if any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer):
            from onnx.external_data_helper import load_external_data_for_model
            load_external_data_for_model(model, str(path.parent))
        onnx.checker.check_model(model)
    except Exception as err:  # onnx.checker.ValidationError, missing external data, ...
        raise UserError(f"{path}: invalid ONNX model: {_first_line(err)}") from None
    return model


@dataclass(frozen=True, eq=False)
class _Value:
    """An ONNX activation as the IR holds it: IR tensor `index`.

    `flat_from` is (H, W, C) for a vector flattened from an NCHW feature map, whose elements the
    IR orders (H, W, C) and ONNX (C, H, W); None when the two orders agree. `one_row`: the ONNX
    name it was read by is an (N, C, L) map (see _Importer.one_row), whose constants broadcast
    as (C, 1).
    """

    index: int
    flat_from: tuple[int, int, int] | None = None
    one_row: bool = False


def _onnx_shape(ir_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The ONNX shape (batch 1) of an IR tensor: (H, W, C) -> (1, C, H, W); (N,) -> (1, N)."""
    if len(ir_shape) == 3:
        h, w, c = ir_shape
        return (1, c, h, w)
    return (1, *ir_shape)


def _one_row_declared(shape: tuple[int, int, int]) -> tuple[int, int, int]:
    """The (N, C, L) shape of the one-row map (1, L, C)."""
    return (1, shape[2], shape[1])


# Ops that read an (N, C, L) model input as a map (PyTorch's Conv1d models), not as a sequence
ONE_ROW_READERS = {"Conv", "BatchNormalization", "MaxPool", "AveragePool", "Pad", "GlobalAveragePool",
                   "GlobalMaxPool"}
# Ops reading an (N, C, L) map whose outputs are not (N, C, L) maps just because it is
ONE_ROW_OWN_RANK = {"Squeeze", "Unsqueeze", "Reshape", "Flatten", "Shape"}
# Window attributes of a 1-D op and their 2-D form (the window 1 x k along W)
_ONE_ROW_ATTRIBUTES = {"kernel_shape": 1, "strides": 1, "dilations": 1}


def _as_one_row(op_type: str, attrs: dict) -> dict:
    """A window op's 1-D attributes on an (N, C, L) map as those of a 1 x k window over the one-row
    map: kernel_shape [k] -> [1, k], strides, dilations likewise, pads [begin, end] -> [0, begin,
    0, end]. Attributes of another length are left for the converter to refuse."""
    if op_type not in ("Conv", "MaxPool", "AveragePool", "ConvTranspose"):
        return attrs
    lifted = dict(attrs)
    for key, fill in _ONE_ROW_ATTRIBUTES.items():
        value = attrs.get(key)
        if isinstance(value, (list, tuple)) and len(value) == 1:
            lifted[key] = [fill, *value]
    pads = attrs.get("pads")
    if isinstance(pads, (list, tuple)) and len(pads) == 2:
        lifted["pads"] = [0, pads[0], 0, pads[1]]
    return lifted


class _Importer:
    def __init__(self, onnx, model, name: str):
        self.onnx = onnx
        self.proto = model.graph
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)
        self.name = name
        self.consts: dict[str, np.ndarray] = {}
        self.values: dict[str, _Value] = {}
        self.uses: Counter[str] = Counter()  # readers of each ONNX name not converted yet (+1 for the output)
        # ONNX names of a rank the IR has no tensor for (a Squeeze of one axis of (1, C, 1, 1)): the
        # value holding the same bytes and the ONNX shape, for the Squeeze / Unsqueeze that reads it
        self.unit_views: dict[str, tuple[_Value, tuple[int, ...]]] = {}
        # Channel slices (Split's parts, Slice) not made yet: ONNX name -> (IR tensor, first channel,
        # channels). Each is made where it is first read, so that a part and the branch reading it
        # are neighbours that fusion can join (as the TFLite importer does).
        self.pending_slices: dict[str, tuple[int, int, int]] = {}
        # A channel shuffle under way (see _regroup): ONNX name -> its view of an NCHW map whose
        # channels it holds in the axes (1, g, C/g, H, W) has between the batch and H, W.
        self.channel_views: dict[str, ChannelView] = {}
        # Sequences (a recurrent model's (T, 1, F) or (1, T, F) input and its layers' outputs): ONNX
        # name -> its ONNX shape. The IR holds a sequence as (T, F) or (1, T, F), the same bytes: the
        # views of it that keep the bytes in order (Transpose of the unit batch axis, Squeeze,
        # Reshape) bind the same IR tensor (see _sequence_view).
        self.sequences: dict[str, tuple[int, ...]] = {}
        # (N, C, L) maps (PyTorch's Conv1d): ONNX names of rank-3 tensors held as one-row maps (1, L, C)
        self.one_row: set[str] = set()
        self.graph: Graph | None = None

    # ---- the walk over the ONNX graph ----

    def run(self) -> Graph:
        for tensor in self.proto.initializer:
            self.consts[tensor.name] = self._to_array(tensor)
        inputs = self._inputs()
        (input_name, input_shape), extra = inputs[0], inputs[1:]
        layout = "NHWC" if self.sequences else "NCHW"  # a sequence's bytes are the same in both
        declared = [_one_row_declared(shape) if name in self.one_row else None for name, shape in inputs]
        self.graph = Graph(self.name, input_shape, layout=layout, dtype="float32", declared_input_shape=declared[0],
                           extra_inputs=tuple(GraphInput(shape, None, d) for (_, shape), d in zip(extra, declared[1:])))
        for k, (name, _) in enumerate(inputs):
            self.bind(name, _Value(input_tensor(k)))
        outputs = [o.name for o in self.proto.output]
        if not outputs or len(set(outputs)) != len(outputs):
            raise UserError(f"the model has outputs {outputs}: expected one or more, each once")
        needed = sorted({i for output in outputs for i in self._needed_nodes(output)})
        self._check_op_types(needed)
        for i in needed:
            self.uses.update(name for name in self.proto.node[i].input if name)
        self.uses.update(outputs)
        for i in needed:
            self._convert(i, self.proto.node[i])
        return self._finish(outputs)

    def _inputs(self) -> list[tuple[str, tuple[int, int, int]]]:
        """Each model input's name and (H, W, C) shape, in the model's order."""
        inputs = [i for i in self.proto.input if i.name not in self.consts]
        if not inputs:
            raise UserError("the model has no input")
        return [self._input(info) for info in inputs]

    def _input(self, info) -> tuple[str, tuple[int, int, int]]:
        tensor_type = info.type.tensor_type
        if not info.type.HasField("tensor_type") or tensor_type.elem_type != FLOAT:
            raise UserError(f"input {info.name!r} is not a float32 tensor (quantised ONNX inputs are not supported yet)")
        if tensor_type.HasField("shape") and len(tensor_type.shape.dim) == 3:
            if self._read_as_map(info.name):
                return info.name, self._one_row_input(info, tensor_type.shape.dim)
            return info.name, self._sequence_input(info.name, tensor_type.shape.dim)
        if not tensor_type.HasField("shape") or len(tensor_type.shape.dim) != 4:
            rank = len(tensor_type.shape.dim) if tensor_type.HasField("shape") else "unknown"
            raise UserError(f"input {info.name!r} has rank {rank}; expected an NCHW image (N, C, H, W)")
        dims = []
        for axis, dim in enumerate(tensor_type.shape.dim):
            known = dim.HasField("dim_value")
            if axis == 0:
                if known and dim.dim_value > 1:
                    raise UserError(f"input {info.name!r} has batch size {dim.dim_value}; only batch 1 is supported")
                continue  # a dynamic batch (or 0, as some tools write it) is taken as 1
            if not known:
                what = dim.dim_param or "?"
                raise UserError(f"input {info.name!r} has a dynamic dimension {what!r} on axis {axis}; "
                                "only the batch dimension may be dynamic")
            if dim.dim_value <= 0:
                raise UserError(f"input {info.name!r} has size {dim.dim_value} on axis {axis}")
            dims.append(int(dim.dim_value))
        c, h, w = dims
        return info.name, (h, w, c)

    def _read_as_map(self, name: str) -> bool:
        """Whether a rank-3 input is an (N, C, L) map (read by a convolution, pool, batch
        normalisation or pad, as PyTorch's Conv1d models are) rather than a recurrent model's
        sequence."""
        return any(name in node.input and node.op_type in ONE_ROW_READERS for node in self.proto.node)

    def _one_row_input(self, info, dims) -> tuple[int, int, int]:
        """A rank-3 (N, C, L) input: the one-row map (1, L, C)."""
        shape = [int(d.dim_value) if d.HasField("dim_value") else 0 for d in dims]
        if shape[0] > 1 or min(shape[1:]) <= 0:
            raise UserError(f"input {info.name!r} has shape {shape}: an (N, C, L) input takes batch 1 and static "
                            "C and L")
        self.one_row.add(info.name)
        return (1, shape[2], shape[1])

    def _sequence_input(self, name: str, dims) -> tuple[int, int, int]:
        """A rank-3 input: one sequence, time-major (T, 1, F) or batch-first (1, T, F), held as the
        one-row map (1, T, F)."""
        shape = tuple(int(d.dim_value) if d.HasField("dim_value") else 0 for d in dims)
        if any(d <= 0 for d in (shape[2], max(shape[0], shape[1]))) or min(shape[0], shape[1]) > 1 \
                or 0 in shape[:2] and max(shape[:2]) <= 1:
            raise UserError(f"input {name!r} has shape {list(shape)}: a rank-3 input must be one sequence, "
                            "(T, 1, F) or (1, T, F), with static sizes")
        shape = tuple(d or 1 for d in shape)  # a dynamic batch is taken as 1
        self.sequences[name] = shape
        return (1, shape[0] * shape[1], shape[2])

    def _needed_nodes(self, output: str) -> list[int]:
        """Indices of the nodes the output depends on, in file order."""
        producer = {name: i for i, node in enumerate(self.proto.node) for name in node.output if name}
        needed, stack = set(), [output]
        while stack:
            i = producer.get(stack.pop())
            if i is not None and i not in needed:
                needed.add(i)
                stack.extend(name for name in self.proto.node[i].input if name)
        return sorted(needed)

    def _check_op_types(self, needed: list[int]) -> None:
        """Name every op type we cannot convert at once, before converting anything."""
        unsupported: dict[str, int] = {}
        for i in needed:
            node = self.proto.node[i]
            op_type = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"
            if op_type not in CONVERTERS and op_type not in FOLDABLE:
                unsupported.setdefault(op_type, i)
        if unsupported:
            (op_type, i), *others = unsupported.items()
            node = self.proto.node[i]
            also = "".join(f"; also {t!r} (node {j})" for t, j in others)
            raise UserError(f"{_label(i, node)}: unsupported ONNX op {op_type!r}{also}")

    def _convert(self, index: int, node) -> None:
        standard = node.domain in ("", "ai.onnx")
        converter = CONVERTERS.get(node.op_type) if standard else None
        if standard and node.op_type in FOLDABLE and all(not n or n in self.consts for n in node.input):
            converter = _fold_constants
        label = _label(index, node)
        if converter is None:  # an op only supported on constants, applied to an activation
            raise UserError(f"{label}: unsupported ONNX op {node.op_type!r} on an activation tensor "
                            f"(supported: {', '.join(sorted(CONVERTERS))})")
        try:
            attrs = self._attributes(node)
            one_row = bool(node.input) and node.input[0] in self.one_row
            converter(self, node, _as_one_row(node.op_type, attrs) if one_row else attrs)
            if any(name in self.one_row for name in node.input) and node.op_type not in ONE_ROW_OWN_RANK:
                self.one_row.update(name for name in node.output
                                    if name in self.values and len(self.shape(self.values[name])) == 3)
            for k, name in enumerate(node.output):
                made = (self.values, self.consts, self.unit_views, self.pending_slices, self.channel_views)
                if name and self.uses[name] and not any(name in names for names in made):
                    raise UserError(f"its output {k} ({name!r}) is used, which is not supported")
        except UserError as err:
            raise UserError(f"{label}: {err}") from None
        self.uses.subtract(name for name in node.input if name)

    def _finish(self, outputs: list[str]) -> Graph:
        """The graph, its outputs in the model's order (one of them its last layer's)."""
        graph = self.graph
        indices = []
        for output in outputs:
            if output in self.consts:
                raise UserError(f"the model's output {output!r} is a constant")
            value = self.value(output) if output in self.pending_slices else self.values.get(output)
            if value is None:
                raise UserError(f"the output {output!r} is not computed by any node")
            if value.flat_from is not None:
                raise UserError(f"the model's output {output!r} is a flattened NCHW feature map, which is not supported")
            indices.append(value.index)
        if not graph.nodes:
            raise UserError("the model has no layers")
        if any(is_network_input(i) for i in indices) or len(set(indices)) != len(indices):
            raise UserError("a model output is its input, or two outputs are one tensor")
        if len(graph.nodes) - 1 not in indices:
            raise UserError("the model's output is not its last layer")
        if len(indices) > 1:
            graph.outputs = tuple(indices)
        read = {t for node in graph.nodes for t in node.inputs}
        unread = [k for k, t in enumerate(graph.input_tensors) if t not in read]
        if unread:
            raise UserError(f"the model's input {unread[0]} is read by no layer")
        return graph

    # ---- helpers for converters ----

    def _to_array(self, tensor) -> np.ndarray:
        try:
            array = self.onnx.numpy_helper.to_array(tensor)
        except Exception as err:
            raise UserError(f"constant {tensor.name!r} cannot be decoded ({_first_line(err)})") from None
        if not isinstance(array, np.ndarray) or array.dtype == object:
            raise UserError(f"constant {tensor.name!r} has an unsupported data type")
        return array

    def _attributes(self, node) -> dict[str, Any]:
        attrs = {}
        for attr in node.attribute:
            try:
                value = self.onnx.helper.get_attribute_value(attr)
            except Exception:
                raise UserError(f"attribute {attr.name!r} cannot be decoded") from None
            if isinstance(value, bytes):
                value = value.decode(errors="replace")
            elif attr.type == self.onnx.AttributeProto.TENSOR:
                value = self._to_array(value)
            attrs[attr.name] = value
        return attrs

    def is_const(self, name: str) -> bool:
        return name in self.consts

    def const(self, node, position: int, what: str, optional: bool = False) -> np.ndarray | None:
        """The constant at input `position` (None when an optional input is absent)."""
        name = node.input[position] if position < len(node.input) else ""
        if not name:
            if optional:
                return None
            raise UserError(f"missing {what}")
        if name not in self.consts:
            raise UserError(f"{what} ({name!r}) must be a constant (an initializer or Constant node)")
        return self.consts[name]

    def float_const(self, node, position: int, what: str, shape: tuple[int, ...] | None = None,
                    optional: bool = False) -> np.ndarray | None:
        array = self.const(node, position, what, optional)
        if array is None:
            return None
        if not np.issubdtype(array.dtype, np.floating):
            raise UserError(f"{what} must be floating point, got {array.dtype}")
        if shape is not None and array.shape != shape:
            raise UserError(f"{what} has shape {list(array.shape)}, expected {list(shape)}")
        if not np.isfinite(array).all():
            raise UserError(f"{what} contains NaN or infinity")
        return array

    def value(self, name: str) -> _Value:
        if name in self.pending_slices:
            src, begin, channels = self.pending_slices.pop(name)
            self.bind(name, self.emit(ChannelSlice(begin, channels), (src,)))
        if name in self.values:
            value = self.values[name]
            return replace(value, one_row=True) if name in self.one_row else value
        if name in self.consts:
            raise UserError(f"input {name!r} is a constant where an activation tensor was expected")
        if name in self.unit_views and self.unit_views[name][1][2] == 1:  # (1, C, 1): an (N, C, L) map of one step
            return self._one_step_map(name)
        if name in self.unit_views:
            raise UserError(f"input {name!r} has shape {list(self.unit_views[name][1])}: only a Squeeze or "
                            "Unsqueeze may read it")
        if name in self.channel_views:
            raise UserError(f"input {name!r} holds the channels regrouped into several axes: only a Reshape back to "
                            "(1, C, H, W) (a channel shuffle) or a Transpose of the channel axes may read it")
        raise UserError(f"input {name!r} is not produced by an earlier node")

    def _one_step_map(self, name: str) -> _Value:
        """A (1, C, 1) view read by an op other than a Squeeze or Unsqueeze (a 1-D squeeze-and-excite's
        gate, unsqueezed from (1, C)): the one-row map (1, 1, C), a reshape of a vector."""
        value, shape = self.unit_views.pop(name)
        result = stage.rewrite(self, UnitAxes(value.index, (1, 1, shape[1]), lambda: value.index))
        self.bind(name, self.rewritten(result))
        self.one_row.add(name)
        return self.value(name)

    def shape(self, value: _Value) -> tuple[int, ...]:
        return self.graph.shape_of(value.index)

    def onnx_shape(self, name: str) -> tuple[int, ...]:
        """The ONNX shape (batch 1) of activation `name`: (1, C, L) for a one-row map."""
        shape = self.shape(self.value(name))
        return _one_row_declared(shape) if name in self.one_row else _onnx_shape(shape)

    def feature_map(self, name: str) -> tuple[_Value, tuple[int, int, int]]:
        value = self.value(name)
        shape = self.shape(value)
        if len(shape) != 3:
            raise UserError(f"needs an NCHW feature map, got shape {list(_onnx_shape(shape))}")
        return value, shape  # type: ignore[return-value]

    def vector(self, name: str) -> tuple[_Value, int]:
        value = self.value(name)
        shape = self.shape(value)
        if len(shape) != 1:
            raise UserError(f"needs a (1, N) matrix, got shape {list(_onnx_shape(shape))}")
        return value, shape[0]

    def sole_use(self, value: _Value) -> bool:
        """True when the node being converted is the only reader of the IR tensor, so that the
        tensor's producer may be rewritten: no IR node reads it yet and no other ONNX reader of
        any name bound to it (nor the graph output) is still to come."""
        if any(value.index in node.inputs for node in self.graph.nodes):
            return False
        if any(src == value.index for src, _, _ in self.pending_slices.values()):
            return False  # a slice still to be made reads it
        if any(view.src == value.index for view in self.channel_views.values()):
            return False  # a channel shuffle under way reads it
        names = [name for name, v in self.values.items() if v.index == value.index]
        return sum(self.uses[name] for name in names) == 1

    def sole_reader(self, tensor: int) -> bool:
        """For rewrite.py: sole_use of the tensor."""
        return self.sole_use(_Value(tensor))

    def rewritten(self, result: int | Append, flat_from: tuple[int, int, int] | None = None) -> _Value:
        """The value the rewrite stage answered: a tensor it holds, or a node, appended now."""
        if isinstance(result, Append):
            return _Value(self.emit(result.op, result.inputs, result.consts).index, flat_from)
        return _Value(result, flat_from)

    def emit(self, op: Op, inputs: tuple[int, ...], consts: dict[str, np.ndarray] | None = None) -> _Value:
        if not op.supports("float32"):  # every ONNX tensor the frontend reads is float32
            raise UserError(f"msfcnn's {op.kind} op has no float32 kernel")
        return _Value(self.graph.append(op, inputs, consts))

    def bind(self, name: str, value: _Value) -> None:
        self.values[name] = replace(value, one_row=False) if value.one_row else value  # (a mark of the name read)


# ---- attribute parsing ----


def _ints(attrs: dict, key: str, length: int, default: tuple[int, ...] | None = None) -> tuple[int, ...]:
    value = attrs.get(key, default)
    if value is None:
        raise UserError(f"missing attribute {key!r}")
    if (not isinstance(value, (list, tuple)) or len(value) != length
            or not all(isinstance(v, int) for v in value)):
        raise UserError(f"attribute {key!r} must be {length} integers, got {value!r}")
    return tuple(int(v) for v in value)


def _int(attrs: dict, key: str, default: int) -> int:
    value = attrs.get(key, default)
    if not isinstance(value, int):
        raise UserError(f"attribute {key!r} must be an integer, got {value!r}")
    return value


def _float(attrs: dict, key: str, default: float, infinite_ok: bool = False) -> float:
    """A float attribute; finite in float32 unless `infinite_ok` (Clip's open bounds), since the
    C kernels take it as a float32 literal."""
    value = attrs.get(key, default)
    if not isinstance(value, (int, float)):
        raise UserError(f"attribute {key!r} must be a number, got {value!r}")
    if math.isnan(value) or not (infinite_ok or abs(value) <= np.finfo(np.float32).max):
        raise UserError(f"attribute {key!r} is {value!r}, which is not a finite float32")
    return float(value)


def _scalar(array: np.ndarray | None, what: str, default: float) -> float:
    if array is None:
        return default
    if array.size != 1 or not np.issubdtype(array.dtype, np.number):
        raise UserError(f"{what} must be a scalar, got shape {list(array.shape)}")
    return float(array.reshape(()))


def _window(attrs: dict, kernel: tuple[int, int], in_hw: tuple[int, int], dilated: str | None = None) -> Window:
    """A Window from ONNX's strides, pads ([top, left, bottom, right]), auto_pad and dilations
    (only an op named by `dilated`, a convolution, takes them; a pool refuses them)."""
    if min(kernel) <= 0:
        raise UserError(f"bad kernel {list(kernel)}")
    dilations = _ints(attrs, "dilations", 2, (1, 1))
    if min(dilations) <= 0:
        raise UserError(f"bad dilations {list(dilations)}")
    if dilations != (1, 1) and dilated is None:
        raise UserError(f"dilations {list(attrs['dilations'])} are not supported on a pool")
    dilations = tuple(d if k > 1 else 1 for k, d in zip(kernel, dilations))  # (one tap: no dilation)
    extent = tuple((k - 1) * d + 1 for k, d in zip(kernel, dilations))
    strides = _ints(attrs, "strides", 2, (1, 1))
    if min(strides) <= 0:
        raise UserError(f"bad strides {list(strides)}")
    auto_pad = attrs.get("auto_pad", "NOTSET")
    if auto_pad == "NOTSET":
        pads = _ints(attrs, "pads", 4, (0, 0, 0, 0))
        if min(pads) < 0:
            raise UserError(f"negative pads {list(pads)} are not supported")
    elif auto_pad == "VALID":
        pads = (0, 0, 0, 0)
    elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        totals = [max((-(-size // s) - 1) * s + k - size, 0) for size, s, k in zip(in_hw, strides, extent)]
        small = [t // 2 for t in totals]  # the half that gets the smaller share
        big = [t - t // 2 for t in totals]
        begin, end = (small, big) if auto_pad == "SAME_UPPER" else (big, small)
        pads = (begin[0], begin[1], end[0], end[1])
    else:
        raise UserError(f"unknown auto_pad {auto_pad!r}")
    return Window(kernel, strides, pads, dilations)


# ---- converters: (importer, node, attributes) -> None; each binds its output ----


def _conv(imp: _Importer, node, attrs) -> None:
    x, (h, w, c) = imp.feature_map(node.input[0])
    weights = imp.float_const(node, 1, "the weight")
    if node.input[0] in imp.one_row:  # a Conv1d: (M, C/group, k) is the 1 x k window's (M, C/group, 1, k)
        if weights.ndim != 3:
            raise UserError(f"expected 1-D convolution weights (M, C/group, k) for an (N, C, L) input, got shape "
                            f"{list(weights.shape)}")
        weights = weights[:, :, np.newaxis, :]
    if weights.ndim != 4:
        raise UserError(f"expected 2-D convolution weights (M, C/group, kh, kw), got shape {list(weights.shape)}")
    m, per_group, kh, kw = weights.shape
    if "kernel_shape" in attrs and _ints(attrs, "kernel_shape", 2) != (kh, kw):
        raise UserError(f"kernel_shape {list(attrs['kernel_shape'])} does not match the weights {list(weights.shape)}")
    bias = imp.float_const(node, 2, "the bias", (m,), optional=True)
    win = _window(attrs, (kh, kw), (h, w), dilated="Conv")
    group = _int(attrs, "group", 1)
    if group == 1 and per_group == c:
        op = Conv2D(int(m), win)
        ir_weights = weights.transpose(0, 2, 3, 1)  # (C_out, kh, kw, C_in)
    elif group == c and per_group == 1 and m % c == 0:
        op = DepthwiseConv2D(win, int(m // c))
        ir_weights = weights.reshape(m, kh, kw).transpose(1, 2, 0)[np.newaxis]  # (1, kh, kw, C*multiplier)
    elif group not in (1, c):
        raise UserError(f"grouped convolution (group {group} over {c} channels) is not supported: "
                        "only group 1 or depthwise (group == channels)")
    else:
        raise UserError(f"weights {list(weights.shape)} do not match {c} input channels with group {group}")
    bias = np.zeros(m, np.float32) if bias is None else bias
    imp.bind(node.output[0], imp.emit(op, (x.index,), _float32(weights=ir_weights, bias=bias)))


def _conv_transpose(imp: _Importer, node, attrs) -> None:
    """ConvTranspose: 2-D, group 1, no dilation; pads (or output_padding) set the output's size."""
    x, (h, w, c) = imp.feature_map(node.input[0])
    weights = imp.float_const(node, 1, "the weight")
    if node.input[0] in imp.one_row and weights.ndim == 3:  # a ConvTranspose1d: a 1 x k window
        weights = weights[:, :, np.newaxis, :]
    if weights.ndim != 4 or weights.shape[0] != c:
        raise UserError(f"expected 2-D weights (C, M, kh, kw) for {c} input channels, got shape {list(weights.shape)}")
    _, m, kh, kw = weights.shape
    if _int(attrs, "group", 1) != 1:
        raise UserError(f"group {_int(attrs, 'group', 1)} is not supported: only group 1")
    if _ints(attrs, "dilations", 2, (1, 1)) != (1, 1):
        raise UserError(f"dilations {list(attrs['dilations'])} are not supported")
    if attrs.get("auto_pad", "NOTSET") != "NOTSET" or "output_shape" in attrs:
        raise UserError("auto_pad and output_shape are not supported: only pads (and output_padding)")
    strides, pads = _ints(attrs, "strides", 2, (1, 1)), _ints(attrs, "pads", 4, (0, 0, 0, 0))
    extra = _ints(attrs, "output_padding", 2, (0, 0))
    if min(pads) < 0 or min(strides) <= 0 or min(extra) < 0:
        raise UserError(f"bad strides {list(strides)}, pads {list(pads)} or output_padding {list(extra)}")
    out_hw = tuple(st * (n - 1) + e + k - p0 - p1 for st, n, e, k, p0, p1 in
                   zip(strides, (h, w), extra, (kh, kw), pads[:2], pads[2:]))
    bias = imp.float_const(node, 2, "the bias", (m,), optional=True)
    op = TransposeConv(int(m), (int(kh), int(kw)), strides, pads[:2], out_hw)
    consts = _float32(weights=weights.transpose(1, 2, 3, 0), bias=np.zeros(m, np.float32) if bias is None else bias)
    imp.bind(node.output[0], imp.emit(op, (x.index,), consts))


def _batch_norm(imp: _Importer, node, attrs) -> None:
    if _int(attrs, "training_mode", 0) or _int(attrs, "spatial", 1) != 1:
        raise UserError("only inference-mode, spatial batch normalisation is supported")
    x = imp.value(node.input[0])
    shape = imp.shape(x)
    channels = shape[-1]
    gamma, beta, mean, var = (imp.float_const(node, k, what, (channels,)).astype(np.float64)
                              for k, what in enumerate(("scale", "B", "mean", "var"), start=1))
    var_eps = var + _float(attrs, "epsilon", 1e-5)
    if not (var_eps > 0).all():
        raise UserError("var + epsilon must be positive")
    scale = gamma / np.sqrt(var_eps)
    # folded into the conv / depthwise / dense before it, or a 1x1 depthwise conv (rewrite.py)
    imp.bind(node.output[0], imp.rewritten(stage.rewrite(imp, BatchNorm(x.index, scale, mean, beta))))


def _fuse_activation(imp: _Importer, node, activation: str) -> None:
    """Relu / Clip(0, 6): a clamp, which the rewrite stage may fold into the op producing its input."""
    x = imp.value(node.input[0])
    imp.bind(node.output[0], imp.rewritten(stage.rewrite(imp, Clamp(activation, x.index, None)), x.flat_from))


def _relu(imp: _Importer, node, attrs) -> None:
    _fuse_activation(imp, node, "relu")


def _clip(imp: _Importer, node, attrs) -> None:
    if imp.opset < 11:
        low = _float(attrs, "min", -math.inf, infinite_ok=True)
        high = _float(attrs, "max", math.inf, infinite_ok=True)
    else:
        low = _scalar(imp.const(node, 1, "min", optional=True), "min", -math.inf)
        high = _scalar(imp.const(node, 2, "max", optional=True), "max", math.inf)
    if low == 0 and high == 6:
        _fuse_activation(imp, node, "relu6")
    elif low == 0 and high == math.inf:
        _fuse_activation(imp, node, "relu")
    else:
        raise UserError(f"Clip({low:g}, {high:g}) is not supported: only Clip(0, 6) (ReLU6) and Clip(0, inf)")


def _add(imp: _Importer, node, attrs) -> None:
    a, b = node.input[0], node.input[1]  # (two constants were folded before reaching here)
    if imp.is_const(a) or imp.is_const(b):
        value, constant = (imp.value(b), imp.consts[a]) if imp.is_const(a) else (imp.value(a), imp.consts[b])
        folded = stage.rewrite(imp, BiasAdd(value.index, lambda: _bias_of(imp, value, constant)))
        if folded is None:  # an ADD of its own
            imp.bind(node.output[0], _with_constant(imp, AddConst(), value, constant))
        else:  # into the bias of the conv / gemm before it
            imp.bind(node.output[0], imp.rewritten(folded, value.flat_from))
        return
    x, y = imp.value(a), imp.value(b)
    if x.flat_from != y.flat_from:
        raise UserError("adding tensors flattened in different orders is not supported")
    main, residual = sorted((x.index, y.index), reverse=True)  # the skip tensor is the older one
    out = imp.emit(Add(), (main, residual))
    imp.bind(node.output[0], _Value(out.index, x.flat_from))


def _bias_of(imp: _Importer, value: _Value, constant: np.ndarray) -> np.ndarray:
    """The constant added to `value` as one value per channel, to fold into a bias."""
    if not np.issubdtype(constant.dtype, np.floating):
        raise UserError(f"the added constant must be floating point, got {constant.dtype}")
    per_channel = _per_channel(imp, value, constant, "a per-channel bias for")
    if value.flat_from is not None:
        raise UserError("adding a constant to a flattened feature map is not supported")
    return per_channel


def _with_constant(imp: _Importer, op: Op, value: _Value, constant: np.ndarray) -> _Value:
    """`op` (MUL or ADD of a constant) of an activation and a float constant of one value or one
    per channel (broadcast as (C,), (C, 1, 1), (1, C, 1, 1) or (1, C))."""
    if not np.issubdtype(constant.dtype, np.floating):
        raise UserError(f"the constant operand must be floating point, got {constant.dtype}")
    if not np.isfinite(constant).all():
        raise UserError("the constant operand contains NaN or infinity")
    if constant.size == 1:
        operand = constant.reshape(1)
    else:
        operand = _per_channel(imp, value, constant, "one value or one per channel of")
        if value.flat_from is not None:
            raise UserError("a per-channel constant on a flattened feature map is not supported")
    out = imp.emit(op, (value.index,), _float32(operand=operand))
    return _Value(out.index, value.flat_from)


def _per_channel(imp: _Importer, value: _Value, constant: np.ndarray, what: str) -> np.ndarray:
    """The (C,) values of a constant that broadcasts to one per channel of `value`."""
    shape = imp.shape(value)
    channels = shape[-1]
    target = (1, channels) if len(shape) == 1 else (1, channels, 1) if value.one_row else (1, channels, 1, 1)
    try:
        if np.broadcast_shapes(constant.shape, target) != target:
            raise ValueError
        return np.broadcast_to(constant, target).reshape(channels)
    except ValueError:
        raise UserError(f"a constant of shape {list(constant.shape)} is not {what} "
                        f"{list(_one_row_declared(shape) if value.one_row else _onnx_shape(shape))}") from None


def _mul(imp: _Importer, node, attrs) -> None:
    a, b = node.input[0], node.input[1]
    if imp.is_const(a) or imp.is_const(b):
        value, constant = (imp.value(b), imp.consts[a]) if imp.is_const(a) else (imp.value(a), imp.consts[b])
        imp.bind(node.output[0], _with_constant(imp, MulConst(), value, constant))
        return
    x, y = imp.value(a), imp.value(b)
    if x.flat_from != y.flat_from:
        raise UserError("multiplying tensors flattened in different orders is not supported")
    if imp.shape(x) == imp.shape(y):
        out = imp.emit(Mul(), (x.index, y.index))
    else:  # a map times a per-channel (1, C, 1, 1) tensor: squeeze-and-excite
        big, small = (x, y) if len(imp.shape(x)) >= len(imp.shape(y)) and imp.shape(y)[:2] == (1, 1) else (y, x)
        out = imp.emit(MulBroadcast(), (big.index, small.index))
        x = big
    imp.bind(node.output[0], _Value(out.index, x.flat_from))


def _sub(imp: _Importer, node, attrs) -> None:
    """Of two activations of one shape, or of an activation and a constant (either side)."""
    a, b = node.input[0], node.input[1]
    if imp.is_const(a) or imp.is_const(b):
        value, constant = (imp.value(b), imp.consts[a]) if imp.is_const(a) else (imp.value(a), imp.consts[b])
        op = SubConst(reversed=imp.is_const(a))
        imp.bind(node.output[0], _with_constant(imp, op, value, constant))
        return
    _same_shape_pair(imp, node, lambda first_is_older: Sub(reversed=first_is_older))


def _min_max(op: Op, const_op: Op) -> Callable[[_Importer, Any, dict], None]:
    """Max / Min of two inputs: activations of one shape, or an activation and a constant."""
    def convert(imp: _Importer, node, attrs) -> None:
        if len(node.input) != 2:
            raise UserError(f"{node.op_type} of {len(node.input)} inputs: only of two is supported")
        a, b = node.input[0], node.input[1]
        if imp.is_const(a) or imp.is_const(b):
            value, constant = (imp.value(b), imp.consts[a]) if imp.is_const(a) else (imp.value(a), imp.consts[b])
            imp.bind(node.output[0], _with_constant(imp, const_op, value, constant))
            return
        _same_shape_pair(imp, node, lambda first_is_older: op)
    return convert


def _same_shape_pair(imp: _Importer, node, make: Callable[[bool], Op]) -> None:
    """An element-wise op of two activations of one shape, the later-produced one first (the main
    path, as the IR wants it); `make(first_is_older)` gives the op."""
    x, y = imp.value(node.input[0]), imp.value(node.input[1])
    if x.flat_from != y.flat_from or imp.shape(x) != imp.shape(y):
        raise UserError(f"{node.op_type} of {list(_onnx_shape(imp.shape(x)))} and {list(_onnx_shape(imp.shape(y)))}:"
                        " only of two tensors of one shape (or with a constant) is supported")
    out = imp.emit(make(x.index < y.index), (max(x.index, y.index), min(x.index, y.index)))
    imp.bind(node.output[0], _Value(out.index, x.flat_from))


def _concat(imp: _Importer, node, attrs) -> None:
    if all(name in imp.sequences for name in node.input):
        _concat_steps(imp, node, attrs)
        return
    values = [imp.value(name) for name in node.input]
    rank = len(imp.onnx_shape(node.input[0]))
    axis = _int(attrs, "axis", 1)
    if not -rank <= axis < rank or axis % rank != 1:
        raise UserError(f"Concat along axis {axis} is not supported: only along the channels (axis 1)")
    if any(v.flat_from is not None for v in values):
        raise UserError("concatenating flattened feature maps is not supported")
    out = values[0]
    for value in values[1:]:  # CONCATENATION of more than two: pairwise, left to right
        out = imp.emit(Concat(), (out.index, value.index))
    imp.bind(node.output[0], out)


def _concat_steps(imp: _Importer, node, attrs) -> None:
    """Sequences (T, ..., H) concatenated along their steps (axis 0: the final states Y_h / Y_c of
    a stack's layers, as PyTorch gathers them): their bytes in a row."""
    shapes = [imp.sequences[name] for name in node.input]
    if _int(attrs, "axis", 0) != 0 or len({shape[1:] for shape in shapes}) != 1:
        raise UserError(f"Concat of sequences {[list(s) for s in shapes]}: only along their steps (axis 0)")
    size = prod(shapes[0][1:])
    maps = [imp.graph.append(Reshape((1, 1, shape[0] * size)), (imp.value(name).index,))
            for name, shape in zip(node.input, shapes)]
    out = maps[0]
    for other in maps[1:]:
        out = imp.graph.append(Concat(), (out, other))
    imp.bind(node.output[0], _Value(out))
    imp.sequences[node.output[0]] = (sum(shape[0] for shape in shapes), *shapes[0][1:])


def _sliced_value(imp: _Importer, node) -> tuple[_Value, tuple[int, ...]]:
    """The activation a Split / Slice reads and its ONNX shape (batch 1)."""
    value = imp.value(node.input[0])
    if value.flat_from is not None:
        raise UserError("slicing a flattened feature map is not supported")
    return value, _onnx_shape(imp.shape(value))


def _slice_later(imp: _Importer, name: str, value: _Value, begin: int, channels: int) -> None:
    """ONNX name `name` as channels [begin, begin + channels) of `value`, made when first read."""
    if not name or not imp.uses[name]:
        return  # an output nothing reads
    if begin == 0 and channels == imp.shape(value)[-1]:
        imp.bind(name, value)
        return
    imp.pending_slices[name] = (value.index, begin, channels)


def _split(imp: _Importer, node, attrs) -> None:
    """Split along the channels (axis 1): sizes from the `split` input (opset 13+) or attribute,
    else equal parts (`num_outputs` of opset 18, or one per output)."""
    value, shape = _sliced_value(imp, node)
    axis = _int(attrs, "axis", 0)
    if not -len(shape) <= axis < len(shape) or axis % len(shape) != 1:
        raise UserError(f"Split along axis {axis} is not supported: only along the channels (axis 1)")
    sizes = imp.const(node, 1, "split", optional=True)
    sizes = [int(v) for v in (sizes.reshape(-1) if sizes is not None else attrs.get("split", []))]
    channels, parts = shape[1], len(node.output)
    if not sizes:
        size = -(-channels // parts)  # ONNX: equal parts, the last one smaller if need be
        sizes = [min(size, channels - k * size) for k in range(parts)]
    if len(sizes) != parts or min(sizes) < 1 or sum(sizes) != channels:
        raise UserError(f"split sizes {sizes} for {parts} outputs do not add up to the {channels} channels")
    begin = 0
    for name, size in zip(node.output, sizes):
        _slice_later(imp, name, value, begin, size)
        begin += size


def _slice(imp: _Importer, node, attrs) -> None:
    """Slice of the channels (axis 1) with step 1; starts, ends (and axes, steps) constants."""
    value, shape = _sliced_value(imp, node)
    if imp.opset >= 10:
        starts, ends, axes, steps = (imp.const(node, k, what, optional=k > 2) for k, what in
                                     ((1, "starts"), (2, "ends"), (3, "axes"), (4, "steps")))
    else:
        starts, ends, axes, steps = (np.asarray(attrs[k]) if k in attrs else None for k in ("starts", "ends", "axes", "steps"))
        if starts is None or ends is None:
            raise UserError("missing starts or ends")
    starts, ends = starts.reshape(-1).tolist(), ends.reshape(-1).tolist()
    axes = list(range(len(starts))) if axes is None else [a % len(shape) if -len(shape) <= a < len(shape) else a
                                                         for a in axes.reshape(-1).tolist()]
    steps = [1] * len(starts) if steps is None else steps.reshape(-1).tolist()
    if not len(starts) == len(ends) == len(axes) == len(steps) or set(steps) - {1}:
        raise UserError(f"starts {starts}, ends {ends}, axes {axes}, steps {steps}: only steps of 1 are supported")
    ranges = {axis: (0, dim) for axis, dim in enumerate(shape)}
    for axis, start, end in zip(axes, starts, ends):
        if axis not in ranges:
            raise UserError(f"axis {axis} of a rank-{len(shape)} tensor")
        dim = shape[axis]
        ranges[axis] = tuple(min(max(v + dim if v < 0 else v, 0), dim) for v in (start, end))
    cut = [axis for axis, r in ranges.items() if r != (0, shape[axis])]
    if cut and cut != [1]:
        raise UserError(f"Slice of axes {cut} of a tensor of shape {list(shape)}: only slices of the channels "
                        "(axis 1) are supported")
    begin, end = ranges[1]
    if end <= begin:
        raise UserError(f"an empty slice of the channels [{begin}, {end})")
    _slice_later(imp, node.output[0], value, begin, end - begin)


def _elementwise(op: Op) -> Callable[[_Importer, Any, dict], None]:
    def convert(imp: _Importer, node, attrs) -> None:
        value = imp.value(node.input[0])
        out = imp.emit(op, (value.index,))
        imp.bind(node.output[0], _Value(out.index, value.flat_from))
    return convert


def _hard_sigmoid(imp: _Importer, node, attrs) -> None:
    alpha, beta = _float(attrs, "alpha", 0.2), _float(attrs, "beta", 0.5)
    _elementwise(HardSigmoid(alpha, beta))(imp, node, attrs)


def _float_unary(function: str, default_alpha: float = 0.0) -> Converter:
    """LeakyRelu (alpha 0.01), Tanh, Elu (alpha 1.0): float32 functions (ops/float_unary.py)."""
    def convert(imp: _Importer, node, attrs) -> None:
        alpha = _float(attrs, "alpha", default_alpha)
        _elementwise(FloatUnary(function, alpha))(imp, node, attrs)
    return convert


def _prelu(imp: _Importer, node, attrs) -> None:
    """PRelu with a constant slope of one value or one per channel."""
    value = imp.value(node.input[0])
    slope = imp.const(node, 1, "slope")
    if not np.issubdtype(slope.dtype, np.floating) or not np.isfinite(slope).all():
        raise UserError("the slope must be finite floating point values")
    alpha = np.repeat(slope.reshape(1), imp.shape(value)[-1]) if slope.size == 1 else \
        _per_channel(imp, value, slope, "one slope or one per channel of")
    if slope.size > 1 and value.flat_from is not None:
        raise UserError("a per-channel slope on a flattened feature map is not supported")
    out = imp.emit(Prelu(), (value.index,), _float32(alpha=alpha))
    imp.bind(node.output[0], _Value(out.index, value.flat_from))


def _pool(op_class):
    def convert(imp: _Importer, node, attrs) -> None:
        x, (h, w, c) = imp.feature_map(node.input[0])
        kernel = _ints(attrs, "kernel_shape", 2)
        if _int(attrs, "storage_order", 0):
            raise UserError("storage_order 1 is not supported")
        win = _window(attrs, kernel, (h, w))
        if max(win.pads[0], win.pads[2]) >= kernel[0] or max(win.pads[1], win.pads[3]) >= kernel[1]:
            raise UserError(f"pads {list(win.pads)} must be smaller than the kernel {list(kernel)}")
        if _int(attrs, "ceil_mode", 0):
            top, left, bottom, right = win.pads
            ceil_hw = tuple(-(-(size + p0 + p1 - k) // s) + 1 for size, p0, p1, k, s in
                            zip((h, w), (top, left), (bottom, right), win.kernel, win.strides))
            if ceil_hw != win.output_hw(h, w):
                raise UserError("ceil_mode 1 is not supported where it changes the output size")
        if op_class is AvgPool2D:
            include = bool(_int(attrs, "count_include_pad", 0)) and any(win.pads)
            op = AvgPool2D(win, count_include_pad=include)
        else:
            op = op_class(win)
        imp.bind(node.output[0], imp.emit(op, (x.index,)))
    return convert


def _global_average_pool(imp: _Importer, node, attrs) -> None:
    x, _ = imp.feature_map(node.input[0])
    imp.bind(node.output[0], imp.emit(GlobalAvgPool(keepdims=True), (x.index,)))


def _global_max_pool(imp: _Importer, node, attrs) -> None:
    """A max pool whose window is the whole map (max is exact: the same values either way)."""
    x, (h, w, _) = imp.feature_map(node.input[0])
    imp.bind(node.output[0], imp.emit(MaxPool2D(Window((h, w))), (x.index,)))


def _reduce_mean(imp: _Importer, node, attrs) -> None:
    x, _ = imp.feature_map(node.input[0])
    if imp.opset >= 18:
        axes_array = imp.const(node, 1, "axes", optional=True)
        axes = None if axes_array is None else [int(a) for a in axes_array.reshape(-1)]
    else:
        axes = attrs.get("axes")
    rank = len(imp.onnx_shape(node.input[0]))
    if axes is None or not all(isinstance(a, int) for a in axes) or sorted(a % rank for a in axes) != list(range(2, rank)):
        raise UserError(f"ReduceMean over axes {axes} is not supported: only over H and W (axes 2, 3), or L of "
                        "an (N, C, L) map (axis 2)")
    keepdims = bool(_int(attrs, "keepdims", 1))
    imp.bind(node.output[0], imp.emit(GlobalAvgPool(keepdims=keepdims), (x.index,)))


def _flatten_value(imp: _Importer, value: _Value) -> _Value:
    """The (1, N) flattening of an activation."""
    shape = imp.shape(value)
    if len(shape) == 1:
        return value
    h, w, c = shape
    result = stage.rewrite(imp, Flatten(value.index))  # a mean without keep_dims, or a reshape
    if isinstance(result, Append):  # a flattened map remembers its (H, W, C) order
        return imp.rewritten(result, None if h * w == 1 or c == 1 else (h, w, c))
    return imp.rewritten(result, value.flat_from)


def _flatten(imp: _Importer, node, attrs) -> None:
    value = imp.value(node.input[0])
    rank = len(imp.onnx_shape(node.input[0]))
    axis = _int(attrs, "axis", 1)
    if not -rank <= axis <= rank:
        raise UserError(f"axis {axis} is out of range for rank {rank}")
    if (axis + rank if axis < 0 else axis) > 1:  # with batch 1, axis 0 and 1 flatten the same
        raise UserError(f"Flatten with axis {axis} is not supported: only flattening all but the batch")
    imp.bind(node.output[0], _flatten_value(imp, value))


def _reshape(imp: _Importer, node, attrs) -> None:
    if node.input[0] in imp.sequences:  # a reshape keeps the bytes in order
        target = imp.const(node, 1, "the shape")
        _sequence_view(imp, node, _resolve_reshape(imp.sequences[node.input[0]], [int(d) for d in target.reshape(-1)],
                                                   bool(_int(attrs, "allowzero", 0))))
        return
    view = imp.channel_views.get(node.input[0])
    value = _Value(view.src) if view else imp.value(node.input[0])
    in_shape = _view_shape(imp, view) if view else _onnx_shape(imp.shape(value))
    target = imp.const(node, 1, "the shape")
    if not np.issubdtype(target.dtype, np.integer) or target.ndim != 1:
        raise UserError("the shape must be a 1-D integer constant")
    resolved = _resolve_reshape(in_shape, [int(d) for d in target], bool(_int(attrs, "allowzero", 0)))
    if view or _splits_the_channels(imp, value, resolved):
        view = view or ChannelView(value.index, np.arange(in_shape[1]))
        _regroup(imp, node, view.reshaped(resolved[1:-2]), resolved)
    else:
        _reshape_to(imp, node, value, in_shape, resolved)


def _splits_the_channels(imp: _Importer, value: _Value, resolved: tuple[int, ...]) -> bool:
    """Whether a Reshape of an NCHW map to `resolved` cuts its channels into several axes larger than
    1 and keeps H and W: (1, g, C/g, H, W), the first step of PyTorch's channel shuffle."""
    shape = imp.shape(value)
    return (len(shape) == 3 and value.flat_from is None and len(resolved) > 4 and resolved[0] == 1
            and resolved[-2:] == shape[:2] and sum(d > 1 for d in resolved[1:-2]) >= 2)


def _view_shape(imp: _Importer, view: ChannelView) -> tuple[int, ...]:
    """The ONNX shape of a channel view: (1, channel axes..., H, W)."""
    return (1, *view.places.shape, *imp.graph.shape_of(view.src)[:2])


def _regroup(imp: _Importer, node, view: ChannelView, resolved: tuple[int, ...]) -> None:
    """The node's output as a channel view while there are several channel axes, then as the
    rewrite stage makes it (a channel gather, nothing for the identity)."""
    if resolved[0] != 1 or resolved[-2:] != imp.graph.shape_of(view.src)[:2]:
        raise UserError(f"reshape to {list(resolved)}: the channels regrouped into several axes may only be "
                        "reshaped among themselves (H and W kept)")
    result = stage.rewrite(imp, view)
    if result is None:
        imp.channel_views[node.output[0]] = view
    else:
        imp.bind(node.output[0], imp.rewritten(result))


def _transpose(imp: _Importer, node, attrs) -> None:
    """Transpose of the channel axes of a channel shuffle's (1, g, C/g, H, W) (see _regroup): perm
    [0, 2, 1, 3, 4], or any that keeps the batch, H and W in place. (Or a view of a sequence.)"""
    if node.input[0] in imp.sequences:
        shape = imp.sequences[node.input[0]]
        perm = [int(p) for p in attrs.get("perm", range(len(shape) - 1, -1, -1))]
        if sorted(perm) != list(range(len(shape))):
            raise UserError(f"bad permutation {perm} of {list(shape)}")
        moved = [a for a in perm if shape[a] != 1]
        if moved != sorted(moved):
            raise UserError(f"Transpose {perm} of the sequence {list(shape)} moves its data: only axes of size 1 "
                            "may move (the batch of one sequence)")
        _sequence_view(imp, node, tuple(shape[a] for a in perm))
        return
    if node.input[0] in imp.one_row:
        _one_row_as_sequence(imp, node, attrs)
        return
    if node.input[0] not in imp.channel_views:
        raise UserError("Transpose of an activation is supported only in a channel shuffle (Reshape to "
                        "(1, g, C/g, H, W), Transpose of the channel axes, Reshape back)")
    view = imp.channel_views[node.input[0]]
    rank = view.places.ndim + 3
    perm = [int(p) for p in attrs.get("perm", range(rank - 1, -1, -1))]
    if sorted(perm) != list(range(rank)) or perm[0] != 0 or perm[-2:] != [rank - 2, rank - 1]:
        raise UserError(f"Transpose {perm} of {list(_view_shape(imp, view))}: only the channel axes of a "
                        "channel shuffle may move (the batch, H and W stay)")
    moved = view.transposed([p - 1 for p in perm[1:-2]])
    _regroup(imp, node, moved, _view_shape(imp, moved))


def _one_row_as_sequence(imp: _Importer, node, attrs) -> None:
    """Transpose of an (N, C, L) map that puts L before C (PyTorch's permute(2, 0, 1) or
    permute(0, 2, 1) before a recurrent layer): the sequence (L, 1, C) or (1, L, C), whose bytes
    are the one-row map's (1, L, C)."""
    shape = imp.onnx_shape(node.input[0])
    perm = [int(p) for p in attrs.get("perm", (2, 1, 0))]
    if sorted(perm) != [0, 1, 2] or [a for a in perm if shape[a] != 1] != [a for a in (2, 1) if shape[a] != 1]:
        raise UserError(f"Transpose {perm} of the (N, C, L) map {list(shape)}: only to a sequence of its steps "
                        "((L, N, C) or (N, L, C)) is supported")
    imp.bind(node.output[0], imp.value(node.input[0]))
    imp.sequences[node.output[0]] = tuple(shape[a] for a in perm)


def _squeeze_unsqueeze(imp: _Importer, node, attrs) -> None:
    """Squeeze / Unsqueeze: the reshapes _reshape supports, with the axes as an attribute (opset
    < 13) or a constant second input."""
    if node.input[0] in imp.sequences:
        shape, axes = imp.sequences[node.input[0]], imp.const(node, 1, "the axes", optional=True)
        axes = [int(a) for a in (axes.reshape(-1) if axes is not None else attrs.get("axes", []))]
        rank = len(shape) + (len(axes) if node.op_type == "Unsqueeze" else 0)
        dims = {a % rank for a in axes if -rank <= a < rank}
        if node.op_type == "Squeeze":
            dims = dims or {i for i, d in enumerate(shape) if d == 1}
            if any(shape[d] != 1 for d in dims):
                raise UserError(f"Squeeze of axes {axes} of {list(shape)}: only axes of size 1")
            _sequence_view(imp, node, tuple(d for i, d in enumerate(shape) if i not in dims))
        else:
            rest = iter(shape)
            _sequence_view(imp, node, tuple(1 if i in dims else next(rest) for i in range(rank)))
        return
    if node.input[0] in imp.unit_views:
        value, in_shape = imp.unit_views[node.input[0]]
    else:
        value = imp.value(node.input[0])
        in_shape = imp.onnx_shape(node.input[0])
    axes = imp.const(node, 1, "the axes", optional=True)
    axes = [int(a) for a in (axes.reshape(-1) if axes is not None else attrs.get("axes", []))]
    if node.op_type == "Squeeze":
        rank = len(in_shape)
        dims = {a % rank for a in axes if -rank <= a < rank} if axes else {i for i, d in enumerate(in_shape) if d == 1}
        if len(dims) != len(axes or dims) or 0 in dims or any(in_shape[d] != 1 for d in dims):
            raise UserError(f"Squeeze of axes {axes} of {list(in_shape)}: only axes of size 1 other than the batch")
        resolved = tuple(d for i, d in enumerate(in_shape) if i not in dims)
    else:
        rank = len(in_shape) + len(axes)
        dims = {a % rank for a in axes if -rank <= a < rank}
        if len(dims) != len(axes) or 0 in dims:
            raise UserError(f"Unsqueeze at axes {axes} of {list(in_shape)}: only after the batch")
        rest = iter(in_shape)
        resolved = tuple(1 if i in dims else next(rest) for i in range(rank))
    if value.flat_from is None and _one_row_view(imp, node, value, in_shape, resolved):
        return
    if len(resolved) == 3 and value.flat_from is None:  # one axis at a time: wait for the next
        imp.unit_views[node.output[0]] = (value, resolved)
    else:
        _reshape_to(imp, node, value, _onnx_shape(imp.shape(value)), resolved)


def _one_row_view(imp: _Importer, node, value: _Value, in_shape: tuple[int, ...], resolved: tuple[int, ...]) -> bool:
    """An (N, C, L) map unsqueezed at H to (N, C, 1, L), or an (N, C, 1, L) map squeezed at H: the
    same bytes, the same IR map (1, L, C). Binds the output and says so; False for other reshapes."""
    if node.input[0] in imp.one_row and len(in_shape) == 3 and resolved == (*in_shape[:2], 1, in_shape[2]):
        imp.bind(node.output[0], value)
        return True
    if len(in_shape) == 4 and in_shape[2] == 1 < in_shape[3] and resolved == (*in_shape[:2], in_shape[3]) \
            and node.input[0] not in imp.unit_views:
        imp.bind(node.output[0], value)
        imp.one_row.add(node.output[0])
        return True
    return False


def _reshape_to(imp: _Importer, node, value: _Value, in_shape: tuple[int, ...], resolved: tuple[int, ...]) -> None:
    """Reshape / Squeeze / Unsqueeze of `value` (of ONNX shape `in_shape`) to `resolved`: to its own
    shape or from (1, N) to (1, N, 1, 1), which only add or remove axes of size 1 (the rewrite
    stage's UnitAxes rules: the tensor itself, or a reshape node), or a flattening to (1, N)."""
    to_map = len(resolved) == 4 and resolved[0] == 1 and resolved[2:] == (1, 1) and len(in_shape) == 2
    if resolved == in_shape or (to_map and value.flat_from is None):
        ir_shape = imp.shape(value) if resolved == in_shape else (1, 1, resolved[1])
        result = stage.rewrite(imp, UnitAxes(value.index, ir_shape, lambda: value.index))
        imp.bind(node.output[0], imp.rewritten(result, value.flat_from))  # (never a view: no more axes)
    elif len(resolved) == 2 and resolved[0] == 1:
        imp.bind(node.output[0], _flatten_value(imp, value))
    elif to_map:
        raise UserError("reshaping a flattened feature map back is not supported")
    else:
        raise UserError(f"reshape {list(in_shape)} -> {list(resolved)} is not supported: only flattening to "
                        "(1, N) and (1, N) -> (1, N, 1, 1)")


def _resolve_reshape(in_shape: tuple[int, ...], target: list[int], allowzero: bool) -> tuple[int, ...]:
    dims = [in_shape[i] if d == 0 and not allowzero and i < len(in_shape) else d for i, d in enumerate(target)]
    total = math.prod(in_shape)
    if dims.count(-1) > 1 or any(d < -1 for d in dims):
        raise UserError(f"bad reshape target {target}")
    if -1 in dims:
        known = math.prod(d for d in dims if d != -1)
        if known <= 0 or total % known:
            raise UserError(f"cannot reshape {list(in_shape)} to {target}")
        dims[dims.index(-1)] = total // known
    if math.prod(dims) != total:
        raise UserError(f"cannot reshape {list(in_shape)} to {target}")
    return tuple(dims)


def _gemm(imp: _Importer, node, attrs) -> None:
    if _int(attrs, "transA", 0):
        raise UserError("transA is not supported")
    x, features = imp.vector(node.input[0])
    b = imp.float_const(node, 1, "B")
    if b.ndim != 2:
        raise UserError(f"B must be a matrix, got shape {list(b.shape)}")
    weights = b if _int(attrs, "transB", 0) else b.T  # (units, in_features)
    units = weights.shape[0]
    c = imp.float_const(node, 2, "C", optional=True)
    bias = np.zeros(units) if c is None else _broadcast_bias(c, units)
    alpha, beta = _float(attrs, "alpha", 1.0), _float(attrs, "beta", 1.0)
    _emit_dense(imp, node, x, features, weights.astype(np.float64) * alpha, bias.astype(np.float64) * beta)


def _broadcast_bias(c: np.ndarray, units: int) -> np.ndarray:
    try:
        return np.broadcast_to(c, (1, units)).reshape(units)
    except ValueError:
        raise UserError(f"C of shape {list(c.shape)} does not broadcast to (1, {units})") from None


def _emit_dense(imp: _Importer, node, x: _Value, features: int, weights: np.ndarray, bias: np.ndarray) -> None:
    if weights.shape[1] != features:
        raise UserError(f"weights {list(weights.shape)} do not match {features} input features")
    if x.flat_from is not None:  # columns from ONNX's (C, H, W) order to the IR's (H, W, C)
        h, w, c = x.flat_from
        weights = weights.reshape(-1, c, h, w).transpose(0, 2, 3, 1).reshape(-1, h * w * c)
    op = Dense(int(weights.shape[0]))
    imp.bind(node.output[0], imp.emit(op, (x.index,), _float32(weights=weights, bias=bias)))


def _matmul(imp: _Importer, node, attrs) -> None:
    x, features = imp.vector(node.input[0])
    b = imp.float_const(node, 1, "the right-hand matrix")
    if b.ndim != 2:
        raise UserError(f"the right-hand matrix must be 2-D, got shape {list(b.shape)}")
    _emit_dense(imp, node, x, features, b.T, np.zeros(b.shape[1]))


def _softmax(imp: _Importer, node, attrs) -> None:
    value = imp.value(node.input[0])
    shape = imp.shape(value)
    rank = len(_onnx_shape(shape))
    axis = _int(attrs, "axis", -1 if imp.opset >= 13 else 1)
    if not -rank <= axis < rank:
        raise UserError(f"axis {axis} is out of range for rank {rank}")
    # Over the channels of a vector, or of a 1x1 feature map (the IR's last axis).
    if not (axis % rank == 1 and math.prod(shape[:-1]) == 1):
        raise UserError(f"Softmax over axis {axis} of {list(_onnx_shape(shape))} is not supported: "
                        "only over the channels of a (1, N) or (1, N, 1, 1) tensor")
    out = imp.emit(Softmax(), (value.index,))
    imp.bind(node.output[0], _Value(out.index, value.flat_from))


def _pad(imp: _Importer, node, attrs) -> None:
    x, _ = imp.feature_map(node.input[0])
    mode = attrs.get("mode", "constant")
    if mode != "constant":
        raise UserError(f"Pad mode {mode!r} is not supported: only constant (zero) padding")
    if imp.opset >= 11:
        pads_array = imp.const(node, 1, "pads")
        if not np.issubdtype(pads_array.dtype, np.integer):
            raise UserError("pads must be integers")
        pads = [int(p) for p in pads_array.reshape(-1)]
        fill = _scalar(imp.const(node, 2, "constant_value", optional=True), "constant_value", 0.0)
        if len(node.input) > 3 and node.input[3]:
            raise UserError("Pad with axes is not supported")
    else:
        pads = list(_ints(attrs, "pads", 8))
        fill = _float(attrs, "value", 0.0)
    if fill != 0:
        raise UserError(f"padding with {fill:g} is not supported: only zero padding")
    if node.input[0] in imp.one_row and len(pads) == 6:  # (N, C, L): L is the one-row map's W
        pads = [*pads[:2], 0, pads[2], *pads[3:5], 0, pads[5]]
    if len(pads) != 8 or pads[0] or pads[1] or pads[4] or pads[5] or min(pads) < 0:
        raise UserError(f"pads {pads} are not supported: only non-negative padding of H and W")
    imp.bind(node.output[0], imp.emit(Pad((pads[2], pads[3], pads[6], pads[7])), (x.index,)))


# ONNX's coordinate transformations of a linear Resize as TFLite's flags (align_corners,
# half_pixel_centers): the same source positions (pytorch_half_pixel is half_pixel when no axis
# shrinks to one position).
_LINEAR_TRANSFORMS = {"asymmetric": (False, False), "align_corners": (True, False), "half_pixel": (False, True),
                      "pytorch_half_pixel": (False, True)}


def _resize(imp: _Importer, node, attrs) -> None:
    """Nearest-neighbour upsampling of H and W by whole factors (PyTorch's nn.Upsample(scale_factor=k,
    mode="nearest"): coordinate_transformation_mode asymmetric, nearest_mode floor): output
    position i reads input position i // k, which is TFLite's rule without flags for these sizes
    (checked), so it imports as that resize. Linear resizes of H and W to any size (PyTorch's
    bilinear interpolate, either align_corners) import as RESIZE_BILINEAR's float32 kernel. Other
    modes are refused."""
    x, (h, w, c) = imp.feature_map(node.input[0])
    mode = attrs.get("mode", "nearest")
    transform = attrs.get("coordinate_transformation_mode", "asymmetric" if imp.opset < 11 else "half_pixel")
    out = _resize_size(imp, node, (h, w, c))
    if mode == "linear":
        _resize_linear(imp, node, attrs, x, (h, w), out[2:], transform)
        return
    rounding = attrs.get("nearest_mode", "floor" if imp.opset < 11 else "round_prefer_floor")
    if (mode, transform, rounding) != ("nearest", "asymmetric", "floor"):
        raise UserError(f"Resize mode {mode!r}, coordinate_transformation_mode {transform!r}, nearest_mode "
                        f"{rounding!r}: only nearest, asymmetric, floor (PyTorch's nearest upsampling) or linear "
                        "is supported")
    if out[2] % h or out[3] % w:
        raise UserError(f"Resize of 1x{c}x{h}x{w} to {'x'.join(map(str, out))}: only whole upsampling factors of H "
                        "and W are supported")
    op = ResizeNearest((h, w), (out[2], out[3]))
    exact = [np.arange(n_out) // (n_out // n_in) for n_in, n_out in zip((h, w), op.size)]
    if any(not np.array_equal(table, want) for table, want in zip(op.tables(), exact)):
        raise UserError(f"Resize of {h}x{w} to {op.size[0]}x{op.size[1]}: not exactly representable")
    imp.bind(node.output[0], imp.emit(op, (x.index,)))


def _resize_size(imp: _Importer, node, hwc) -> tuple[int, ...]:
    """The output's (N, C, H, W) from a Resize's sizes or scales (only H and W may change)."""
    h, w, c = hwc
    scales = imp.const(node, 1 if imp.opset < 11 else 2, "scales", optional=True)
    sizes = imp.const(node, 3, "sizes", optional=True) if imp.opset >= 11 else None
    if sizes is not None and sizes.size:
        out = tuple(int(d) for d in sizes.reshape(-1))
    elif scales is not None and scales.size == 4:
        if scales.dtype.kind not in "fiu" or not np.all(np.isfinite(scales)) or np.any(scales <= 0):
            raise UserError(f"Resize scales {scales.tolist()}: each must be a finite positive number")
        out = (1, c, *(int(np.floor(n * float(f))) for n, f in zip((h, w), scales.reshape(-1)[2:])))
        if any(float(f) != 1 for f in scales.reshape(-1)[:2]):
            raise UserError(f"Resize scales {scales.tolist()}: only H and W may change")
    else:
        raise UserError("Resize needs 4 scales or 4 sizes (N, C, H, W)")
    if len(out) != 4 or out[:2] != (1, c) or min(out[2:]) <= 0:
        raise UserError(f"Resize of 1x{c}x{h}x{w} to {'x'.join(map(str, out))}: only H and W may change")
    if prod(out) > INT_LIMIT:  # before any table of its positions is made
        raise UserError(f"Resize of 1x{c}x{h}x{w} to {'x'.join(map(str, out))}: more than {INT_LIMIT} values")
    return out


def _resize_linear(imp: _Importer, node, attrs, x, in_hw, out_hw, transform: str) -> None:
    """A linear Resize of H and W: TFLite's float RESIZE_BILINEAR with the matching flags."""
    if transform not in _LINEAR_TRANSFORMS or (transform == "pytorch_half_pixel" and min(out_hw) == 1):
        raise UserError(f"linear Resize with coordinate_transformation_mode {transform!r} is not supported "
                        f"(supported: {', '.join(_LINEAR_TRANSFORMS)}, the last to sizes above 1)")
    if _int(attrs, "antialias", 0) or _int(attrs, "exclude_outside", 0):
        raise UserError("linear Resize with antialias or exclude_outside is not supported")
    align, half_pixel = _LINEAR_TRANSFORMS[transform]
    op = ResizeBilinear(tuple(in_hw), tuple(out_hw), align, half_pixel)
    imp.bind(node.output[0], imp.emit(op, (x.index,)))


def _identity(imp: _Importer, node, attrs) -> None:
    name = node.input[0]
    if imp.is_const(name):
        imp.consts[node.output[0]] = imp.consts[name]
    else:
        imp.bind(node.output[0], imp.value(name))


def _shape(imp: _Importer, node, attrs) -> None:
    """Shape of an activation (batch 1): a constant, for the shape arithmetic that may follow."""
    shape = imp.sequences.get(node.input[0]) or imp.onnx_shape(node.input[0])
    start, end = _int(attrs, "start", 0), _int(attrs, "end", len(shape))
    imp.consts[node.output[0]] = np.array(shape[start:end], dtype=np.int64)


# ---- recurrent layers (ONNX LSTM, GRU, RNN as PyTorch exports them) ----

def _sequence_view(imp: _Importer, node, shape: tuple[int, ...]) -> None:
    """The node's output as the same bytes as its sequence input, of ONNX shape `shape`."""
    if prod(shape) != prod(imp.sequences[node.input[0]]):
        raise UserError(f"reshape {list(imp.sequences[node.input[0]])} -> {list(shape)} changes the size")
    imp.bind(node.output[0], imp.values[node.input[0]])
    imp.sequences[node.output[0]] = shape


# gate order of each op's W, R and B: ONNX LSTM i, o, f, c -> TFLite's i, f, c, o (ops/lstm.py)
_LSTM_GATES = (0, 2, 3, 1)
_RECURRENT_GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
_DEFAULT_ACTIVATIONS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"], "RNN": ["Tanh"]}


def _recurrent(imp: _Importer, node, attrs) -> None:
    """LSTM / GRU / RNN (float32, zero initial states, no peepholes, clip or sequence lengths):
    one op per direction; a bidirectional layer's output Y (T, 2, 1, H) is the two directions'
    (T, H) outputs concatenated along the channels, which are its bytes. Y_h (D, 1, H) holds each
    direction's last hidden state, Y_c (an LSTM's) its last cell state: see _final_states."""
    kind, x = node.op_type, node.input[0]
    if x not in imp.sequences:
        raise UserError(f"input {x!r} is not a sequence: a recurrent layer reads the model's rank-3 input or "
                        "another recurrent layer's output")
    steps, batch, features = imp.sequences[x] if _int(attrs, "layout", 0) == 0 else \
        (imp.sequences[x][1], imp.sequences[x][0], imp.sequences[x][2])
    units = _int(attrs, "hidden_size", 0)
    direction = attrs.get("direction", "forward")
    directions = 2 if direction == "bidirectional" else 1
    if len(imp.sequences[x]) != 3 or batch != 1:
        raise UserError(f"input {list(imp.sequences[x])}: only one sequence (batch 1) is supported")
    if direction not in ("forward", "reverse", "bidirectional") or units < 1:
        raise UserError(f"direction {direction!r} and hidden_size {units}: unsupported")
    activations = [a.decode() if isinstance(a, bytes) else str(a)
                   for a in attrs.get("activations", _DEFAULT_ACTIVATIONS[kind] * directions)]
    if activations not in (_DEFAULT_ACTIVATIONS[kind] * directions, ["Relu"] * directions if kind == "RNN" else []):
        raise UserError(f"activations {activations}: only the default ones (and Relu for an RNN)")
    if "clip" in attrs or _int(attrs, "input_forget", 0):
        raise UserError("clip and input_forget are not supported")
    if any(k < len(node.input) and node.input[k] for k in (4,)):
        raise UserError("sequence_lens is not supported: every sequence runs all its steps")
    for k, what in ((5, "initial_h"), (6, "initial_c"), (7, "peephole weights P")):
        value = imp.const(node, k, what, optional=True)
        if value is not None and np.any(value):
            raise UserError(f"a non-zero {what} is not supported" if k < 7 else "peepholes are not supported")
    gates = _RECURRENT_GATES[kind]
    w = imp.float_const(node, 1, "W", (directions, gates * units, features))
    r = imp.float_const(node, 2, "R", (directions, gates * units, units))
    b = imp.float_const(node, 3, "B", (directions, 2 * gates * units), optional=True)
    b = np.zeros((directions, 2 * gates * units), np.float32) if b is None else b
    src = imp.values[x].index
    used = [k < len(node.output) and bool(node.output[k]) and imp.uses[node.output[k]] > 0 for k in range(3)]
    outputs, finals = [], []
    for d in range(directions):
        reverse = direction == "reverse" or d == 1
        op, consts = _recurrent_op(kind, activations[0], attrs, units, reverse, w[d], r[d], b[d])
        if kind != "LSTM":
            outputs.append(imp.emit(op, (src,), consts).index)
            if used[1]:  # a reverse layer's last step is its first in time order
                finals.append((_step_of(imp, outputs[-1], steps, units, 0 if reverse else steps - 1), None))
            continue
        outputs_d, finals_d = _lstm_direction(imp, op, consts, src, (steps, features), reverse, used)
        outputs += outputs_d
        finals.append(finals_d)
    if used[0]:
        if directions == 2:  # the directions side by side in each step: a concatenation of (1, T, H) maps
            maps = [imp.graph.append(Reshape((1, steps, units)), (o,)) for o in outputs]
            outputs = [imp.graph.append(Concat(), tuple(maps))]
        imp.bind(node.output[0], _Value(outputs[0]))
        imp.sequences[node.output[0]] = (steps, directions, 1, units)
    for k in (1, 2):
        if used[k]:
            _final_states(imp, node.output[k], [final[k - 1] for final in finals], units)


def _lstm_direction(imp: _Importer, op: Lstm, consts: dict, src: int, shape: tuple[int, int], reverse: bool,
                    used: list[bool]) -> tuple[list[int], tuple[int | None, int | None]]:
    """One direction of an ONNX LSTM: its output sequence in time order (when Y is read), its last
    h and c (when Y_h, Y_c are). msfcnn's LSTM runs forward: a reverse one runs on the steps
    reversed (a gather), its output reversed back; its last h is then the forward run's last."""
    steps, features = shape
    if reverse:
        src = _reversed_steps(imp, src, steps, features)
    outputs, h = [], None
    if used[0]:
        run = imp.emit(op, (src,), consts).index
        outputs.append(_reversed_steps(imp, run, steps, op.units) if reverse else run)
        if used[1]:
            h = _step_of(imp, run, steps, op.units, steps - 1)
    elif used[1]:  # the last step alone
        h = imp.emit(replace(op, return_sequences=False), (src,), consts).index
    c = imp.emit(LstmCellState(op.units), (src,), consts).index if used[2] else None
    return outputs, (h, c)


def _reversed_steps(imp: _Importer, src: int, steps: int, size: int) -> int:
    """Sequence `src` (steps of `size` values) with its steps in reverse order, as (1, T, size)."""
    flat = imp.graph.append(Reshape((1, 1, steps * size)), (src,))
    indices = tuple(int(i) for i in np.arange(steps * size).reshape(steps, size)[::-1].reshape(-1))
    return imp.graph.append(Reshape((1, steps, size)), (imp.graph.append(ChannelGather(indices), (flat,)),))


def _step_of(imp: _Importer, src: int, steps: int, size: int, step: int) -> int:
    """Step `step` of sequence `src`, as a (1, 1, size) map."""
    flat = imp.graph.append(Reshape((1, 1, steps * size)), (src,))
    return imp.graph.append(ChannelSlice(step * size, size), (flat,))


def _final_states(imp: _Importer, name: str, states: list[int], units: int) -> None:
    """ONNX output `name` (Y_h or Y_c: (D, 1, H)) from each direction's (H,) state: their bytes in a
    row, a sequence of D steps (see _concat for a stack's Concat of them)."""
    maps = [imp.graph.append(Reshape((1, 1, units)), (t,)) for t in states]
    out = maps[0] if len(maps) == 1 else imp.graph.append(Concat(), tuple(maps))
    imp.bind(name, _Value(out))
    imp.sequences[name] = (len(states), 1, units)




def _recurrent_op(kind: str, activation: str, attrs: dict, units: int, reverse: bool, w, r, b) -> tuple[Op, dict[str, np.ndarray]]:
    """One direction's op and constants: the gates' weights (gates, units, n), biases (gates, units)."""
    gates = _RECURRENT_GATES[kind]
    w, r = (np.asarray(a, np.float32).reshape(gates, units, -1) for a in (w, r))
    bw, br = (np.asarray(a, np.float32).reshape(gates, units) for a in (b[:gates * units], b[gates * units:]))
    if kind == "LSTM":
        order = list(_LSTM_GATES)
        return Lstm(units), {"input_weights": w[order], "recurrent_weights": r[order], "bias": (bw + br)[order]}
    consts = {"input_weights": w, "recurrent_weights": r, "input_bias": bw, "recurrent_bias": br}
    if kind == "GRU":
        return Gru(units, reverse, linear_before_reset=bool(_int(attrs, "linear_before_reset", 0))), consts
    return Rnn(units, reverse, activation=activation.lower()), consts


# Shape arithmetic exporters leave in graphs (e.g. PyTorch's pads for ZeroPad2d) is evaluated at
# import time, with onnx's reference implementation, when every input of the node is a constant.
FOLDABLE = {"Add", "Sub", "Mul", "Div", "Neg", "Cast", "Concat", "ConstantOfShape", "Expand", "Gather", "Reshape",
            "Slice", "Squeeze", "Unsqueeze", "Transpose", "Flatten", "Identity"}
FOLD_LIMIT = 1 << 24  # elements: no folded constant may be larger


def _fold_constants(imp: _Importer, node, attrs) -> None:
    inputs = {name: imp.consts[name] for name in node.input if name}
    arrays = list(inputs.values())
    if node.op_type == "ConstantOfShape" and arrays:
        size = math.prod(int(d) for d in arrays[0].reshape(-1)) if arrays[0].size < 16 else FOLD_LIMIT + 1
    elif node.op_type == "Gather" and len(arrays) == 2:
        size = arrays[0].size * max(arrays[1].size, 1)
    elif node.op_type in ("Add", "Sub", "Mul", "Div") and len(arrays) == 2:
        try:
            size = math.prod(np.broadcast_shapes(arrays[0].shape, arrays[1].shape))
        except ValueError:
            raise UserError(f"shapes {[list(a.shape) for a in arrays]} do not broadcast") from None
    else:
        size = sum(a.size for a in arrays)
    if size > FOLD_LIMIT:
        raise UserError("constant too large to evaluate")
    try:
        from onnx.reference import ReferenceEvaluator
        outputs = ReferenceEvaluator(node, opsets={"": imp.opset}).run(None, inputs)
    except Exception as err:  # whatever the reference implementation raises on bad constants
        raise UserError(f"cannot evaluate it on its constant inputs ({_first_line(err)})") from None
    for name, array in zip(node.output, outputs):
        if name:
            imp.consts[name] = np.asarray(array)


def _constant(imp: _Importer, node, attrs) -> None:
    for key in ("value", "value_float", "value_floats", "value_int", "value_ints"):
        if key in attrs:
            imp.consts[node.output[0]] = np.asarray(attrs[key], dtype=np.float32 if "float" in key else None)
            return
    raise UserError(f"unsupported Constant attributes {sorted(attrs)}")


Converter = Callable[[_Importer, Any, dict], None]
CONVERTERS: dict[str, Converter] = {
    "Conv": _conv,
    "ConvTranspose": _conv_transpose,
    "BatchNormalization": _batch_norm,
    "Relu": _relu,
    "Clip": _clip,
    "Add": _add,
    "MaxPool": _pool(MaxPool2D),
    "AveragePool": _pool(AvgPool2D),
    "GlobalAveragePool": _global_average_pool,
    "GlobalMaxPool": _global_max_pool,
    "ReduceMean": _reduce_mean,
    "Gemm": _gemm,
    "MatMul": _matmul,
    "Flatten": _flatten,
    "Reshape": _reshape,
    "Transpose": _transpose,  # of a channel shuffle (a Transpose of constants is folded)
    "Softmax": _softmax,
    "Pad": _pad,
    "Mul": _mul,
    "Sub": _sub,
    "Max": _min_max(Maximum(), MaximumConst()),
    "Min": _min_max(Minimum(), MinimumConst()),
    "Squeeze": _squeeze_unsqueeze,
    "Unsqueeze": _squeeze_unsqueeze,
    "Concat": _concat,
    "Split": _split,
    "Slice": _slice,  # of an activation (a Slice of constants is folded)
    "Sigmoid": _elementwise(Logistic()),
    "HardSigmoid": _hard_sigmoid,
    "HardSwish": _elementwise(HardSwish()),
    "LeakyRelu": _float_unary("leaky_relu", 0.01),
    "Tanh": _float_unary("tanh"),
    "Elu": _float_unary("elu", 1.0),
    "PRelu": _prelu,
    "Identity": _identity,
    "Resize": _resize,
    "Dropout": _identity,
    "Constant": _constant,
    "Shape": _shape,
    "LSTM": _recurrent,
    "GRU": _recurrent,
    "RNN": _recurrent,
}
