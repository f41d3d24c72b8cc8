"""The int8 TFLite frontend: a `.tflite` flatbuffer (full-integer quantised, TFLM operator set)
becomes a Graph.

The flatbuffer is read with the classes flatc generated from TFLite's schema, from the small
`tflite` package (no hand-written parsing). Each builtin operator maps to
a small converter through `CONVERTERS`. A converter either appends one IR node, or aliases its
output to an existing IR tensor (edge QUANTIZE/DEQUANTIZE, a RELU folded into its producer), or
folds shape arithmetic into a constant (the SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE that Keras
emits for Flatten with a dynamic batch), or records channel slices (SPLIT's parts, SLICE) that are
made where they are first read.

Shapes drop TFLite's batch dimension, which must be 1. Weight layouts stay TFLite's: conv
(C_out, kh, kw, C_in), depthwise (1, kh, kw, C_out), fully connected (units, inputs).

A corrupted file must never escape as anything but a UserError: every accessor of the generated
classes can raise on a bad offset, so reading is wrapped once, and every index or length read from
the file is checked before it is used to loop or allocate.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, replace
from functools import partial
from math import isfinite, prod
from pathlib import Path
from typing import Callable

import numpy as np
import tflite as schema

from ..errors import UserError
from .. import numerics as nx
from ..ir import NETWORK_INPUT, Graph, GraphInput, Quant, input_tensor, is_network_input, with_numerics
from ..ops import (Add, AvgPool2D, Conv2D, Dense, DepthwiseConv2D, GlobalAvgPool, MaxPool2D, Op, Pad, Requantize,
                   Reshape, Softmax, Window)
from ..ops.activation import Activation
from ..ops.add_uint8 import AddUint8
from ..ops.channel_gather import ChannelGather
from ..ops.channel_slice import ChannelSlice
from ..ops.dense_rows import DenseRows
from ..ops.depth_to_space import DepthToSpace
from ..ops.space_to_depth import SpaceToDepth
from ..ops.transpose_conv import TransposeConv
from ..ops.add_const import AddConst
from ..ops.base import as_feature_map
from ..ops.concat import Concat
from ..ops.float_unary import FloatUnary
from ..ops.hard_swish import HardSwish, hard_swish_params
from ..ops.leaky_relu import LeakyRelu, WideLeakyRelu
from ..ops.lookup import LookupOp
from ..ops.lstm import Lstm
from ..ops.pack_step import PackStep
from ..ops.min_max import Maximum, MaximumConst, Minimum, MinimumConst
from ..ops.mul import Mul, MulBroadcast, MulConst
from ..ops.pool2d import AvgPool2DHalfUp
from ..ops.prelu import Prelu
from ..ops.resize_bilinear import ResizeBilinear
from ..ops.resize_nearest import ResizeNearest
from ..ops.tanh import OUTPUT_QUANT as TANH_OUTPUT_QUANT, Tanh
from ..ops.svdf import STATE_TYPES as SVDF_STATE_TYPES, Svdf
from ..ops.sub import SquaredDifference, SquaredDifferenceConst, Sub, SubConst
from ..ops.weight_offset import with_weight_offset
from . import rewrite as stage
from .unrolled import UnrolledSteps, split_gates, step_major
from .operators import TFLITE as OPERATORS, TFLITE_ELEMENTWISE, op_kinds, tflite_converted as converted
from .rewrite import (Append, ChannelView, Clamp, Dequantisation, InputQuantisation, Mean, MovedAxes, Requantisation,
                      UnitAxes, in_byte_order, unit_layout)

IDENTIFIER = b"TFL3"
_OP_NAMES = {code: name for name, code in vars(schema.BuiltinOperator).items() if not name.startswith("_")}
_TYPE_NAMES = {code: name.lower() for name, code in vars(schema.TensorType).items() if not name.startswith("_")}
_DTYPES = {schema.TensorType.INT8: np.int8, schema.TensorType.INT32: np.int32, schema.TensorType.INT64: np.int64,
           schema.TensorType.UINT8: np.uint8, schema.TensorType.FLOAT32: np.float32}
_FLOAT32 = schema.TensorType.FLOAT32
_UINT8_SHIFT = 128  # a uint8 value q with zero point z is the int8 value q - 128 with zero point z - 128
_INTEGER_ACTIVATIONS = (schema.TensorType.INT8, schema.TensorType.UINT8, schema.TensorType.INT16)
_ACTIVATIONS = {schema.ActivationFunctionType.NONE: None, schema.ActivationFunctionType.RELU: "relu",
                schema.ActivationFunctionType.RELU6: "relu6"}
_PADDINGS = {schema.Padding.SAME: "same", schema.Padding.VALID: "valid"}
_MAX_RANK = 8  # far above any CNN tensor; bounds what a corrupted shape vector can make us read
# What the generated accessors (and numpy views on the buffer) raise on a corrupted file.
_CORRUPT = (IndexError, struct.error, UnicodeDecodeError, ValueError, TypeError, OverflowError)


@dataclass(frozen=True)
class Operator:
    index: int
    name: str  # builtin operator name, e.g. "CONV_2D"
    inputs: tuple[int, ...]  # TFLite tensor indices; -1 marks an omitted optional input
    outputs: tuple[int, ...]
    raw: schema.Operator


def load_tflite(path: Path, numerics: str | None = nx.LITERT) -> Graph:
    """A .tflite model as a graph whose int8 kernels are bit-exact with `numerics`' interpreter
    (numerics.LITERT, the default, or numerics.TFLM); None: not set yet (the caller sets it, and
    an op that one runtime refuses loads for the other)."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise UserError(f"{path}: cannot read: {err.strerror}") from None
    try:
        graph = graph_from_tflite(data, path.stem)
        return graph if numerics is None else with_numerics(graph, numerics)
    except UserError as err:
        raise UserError(f"{path}: {err}") from None


def graph_from_tflite(data: bytes, name: str = "model") -> Graph:
    if len(data) < 8 or data[4:8] != IDENTIFIER:
        raise UserError("not a TFLite model (no 'TFL3' file identifier)")
    try:
        return _Importer(data, name).run()
    except _CORRUPT as err:
        raise UserError(f"corrupted TFLite file ({type(err).__name__} while reading it)") from None


def _ints(table, field: str) -> tuple[int, ...]:
    """An int vector field as a tuple (the generated `...AsNumpy` returns 0 when it is absent)."""
    if getattr(table, f"{field}IsNone")():
        return ()
    return tuple(int(v) for v in getattr(table, f"{field}AsNumpy")())


def _dims(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape)) or "scalar"


class _Importer:
    """The state of one import: the flatbuffer, the Graph being built and the tensor map."""

    def __init__(self, data: bytes, name: str):
        self.data = data
        model = schema.Model.GetRootAs(data, 0)
        if model.Version() != 3:
            raise UserError(f"unsupported TFLite schema version {model.Version()} (expected 3)")
        self.model = model
        if model.SubgraphsLength() < 1:
            raise UserError("the model has no subgraph")
        # Further subgraphs only serve control-flow operators, which are rejected as unsupported.
        self.subgraph = model.Subgraphs(0)
        self.n_tensors = self._count(self.subgraph.TensorsLength(), "tensors")
        self._tensor_tables: dict[int, schema.Tensor] = {}
        self.n_buffers = self._count(model.BuffersLength(), "buffers")
        self.graph = Graph(name, ())
        self.ir_tensor: dict[int, int] = {}  # TFLite tensor -> IR tensor (node index or NETWORK_INPUT)
        self.folded: dict[int, np.ndarray] = {}  # TFLite tensor -> value of folded shape arithmetic
        self.float_inputs: dict[int, int] = {}  # float32 model input tensor -> its k, awaiting its QUANTIZE
        # TFLite tensors that are their IR tensor with the axes moved (TRANSPOSE, MEAN folded at
        # import): the IR axis of each non-batch dimension; IR axes not listed have size 1.
        self.layout: dict[int, tuple[int, ...]] = {}
        # Operators that read unit-axes views (see _unit_axes) as their IR tensors, by index: the
        # layout their output gets (feature_map, activation_sources).
        self.moved_read: dict[int, tuple[int, ...]] = {}
        # Channel slices (SPLIT's parts, SLICE) not made yet: TFLite tensor -> (operator, IR tensor,
        # first channel, channels). A slice is made where it is first read, just before its reader,
        # so that a part and the branch that reads it are neighbours that fusion can join; a part
        # nothing reads is never made.
        self.pending_slices: dict[int, tuple[Operator, int, int, int]] = {}
        # Channel regroupings (see _splits_the_channels): TFLite tensor -> its view of an IR map
        # whose channels it holds in several axes (the trailing ones). Only RESHAPE and TRANSPOSE of
        # those axes may read it; a RESHAPE back to one channel axis makes a gather (rewrite.py).
        self.channel_views: dict[int, ChannelView] = {}
        # An int16 model input QUANTIZEd to int8 (a keyword spotter's audio frames): its int8 tensors
        # then run int8 kernels in the int16 graph (the graph mixes the two types, see `wide`).
        self.narrowed = False
        self.time_major: frozenset[int] = frozenset()  # see _time_major_tensors
        self.map_sequences: frozenset[int] = frozenset()  # see _map_sequences
        self.widened: frozenset[int] = frozenset()  # see _widened_head

    def _count(self, n: int, what: str) -> int:
        # Every element of a flatbuffer vector takes at least 4 bytes: a longer claim is corruption,
        # and checking it keeps loops over a corrupted length from running for billions of steps.
        if n > len(self.data) // 4:
            raise UserError(f"corrupted TFLite file (claims {n} {what})")
        return n

    # ---- the import -----------------------------------------------------------------------

    def run(self) -> Graph:
        sub = self.subgraph
        inputs, outputs = _ints(sub, "Inputs"), _ints(sub, "Outputs")
        if not inputs or not outputs:
            raise UserError(f"the model has {len(inputs)} inputs and {len(outputs)} outputs; at least one of each "
                            "is needed")
        if len(set(inputs)) != len(inputs):
            raise UserError(f"the model lists an input tensor twice ({list(inputs)})")
        if len(set(outputs)) != len(outputs):
            raise UserError(f"the model lists an output tensor twice ({list(outputs)})")
        self.input_tensor, self.output_tensors = inputs[0], outputs
        self.output_tensor = outputs[0] if len(outputs) == 1 else None  # the one a DEQUANTIZE may make
        operators = [self._operator(i) for i in range(self._count(sub.OperatorsLength(), "operators"))]
        for op in operators:  # before any other operator's refusal: a loop's RESHAPE may come first
            if op.name in _LOOP_OPERATORS:
                raise UserError(f"operator {op.index} ({op.name}): {self._loop_refusal(op)}")
        self.map_sequences = _map_sequences(self, operators)
        _check_sequences_of_maps(self, operators)
        self.readers = self._count_readers(operators, outputs)
        self.time_major = _time_major_tensors(self, operators) | _unrolled_time_major(self, operators)
        # unrolled recurrent layers: their steps run step-major, but a Bidirectional's (REVERSE_V2)
        self.unrolled = UnrolledSteps(bidirectional=any(op.name == "REVERSE_V2" for op in operators))
        self.widened = _widened_head(self, operators)
        for k, tensor in enumerate(inputs):
            self._bind_input(tensor, k, operators)
        for op in operators:
            converter = CONVERTERS.get(op.name)
            if converter is None:
                raise UserError(f"unsupported operator {op.name} at operator index {op.index} "
                                f"(supported: {', '.join(sorted(CONVERTERS))})")
            self._check_elements(op)
            if op.name not in MULTI_OUTPUT_OPERATORS and (len(op.outputs) != 1 or op.outputs[0] < 0):
                raise UserError(f"operator {op.index} ({op.name}) has {len(op.outputs)} outputs; expected one")
            try:
                converter(self, op)
            except UserError as err:
                raise UserError(f"operator {op.index} ({op.name}): {err}") from None
        graph = self._finish(self.output_tensors)
        if not self.unrolled.step_of or self.unrolled.bidirectional:
            return graph
        steps = {self.ir_tensor[t]: step for t, step in self.unrolled.step_of.items() if t in self.ir_tensor}
        if self.unrolled.maps:  # a step's map is a view of its slice, which is the step too
            steps.update({graph.nodes[t].inputs[0]: step for t, step in list(steps.items())
                          if t >= 0 and graph.nodes[t].op.is_view})
            moved = split_gates(graph)
            steps = {moved[t]: step for t, step in steps.items() if t in moved}
        return step_major(graph, steps, late=self.unrolled.maps)

    def _loop_refusal(self, op: Operator) -> str:
        """Why a loop operator is refused: a loop whose body convolves is Keras' ConvLSTM2D."""
        bodies = [self.model.Subgraphs(k) for k in range(1, self._count(self.model.SubgraphsLength(), "subgraphs"))]
        conv = schema.BuiltinOperator.CONV_2D
        if any(self._code_of(body.Operators(i)) == conv for body in bodies for i in range(body.OperatorsLength())):
            return _CONV_LOOP_REFUSAL
        return _LOOP_OPERATORS[op.name]

    def _code_of(self, raw) -> int:
        if not 0 <= raw.OpcodeIndex() < self.model.OperatorCodesLength():
            return -1
        code = self.model.OperatorCodes(raw.OpcodeIndex())
        return max(code.BuiltinCode(), code.DeprecatedBuiltinCode())

    def _check_elements(self, op: Operator) -> None:
        """Refuse, in one line, an operator on an element type that none of the ops it becomes has a
        kernel for (ops/*.py declare theirs): int16 activations in a 16x8 model, a float32 first
        input, uint8 tensors. A channel shuffle's TRANSPOSE only moves values: any type."""
        if _reads_a_channel_view(self, op):
            return
        uint8 = any(t >= 0 and self.type_of(t) == schema.TensorType.UINT8 for t in op.inputs + op.outputs)
        for element, applies in (("int16", self.wide(op)), ("float32", self.reads_float32(op)),
                                 ("uint8", uint8)):
            if applies and op.name not in converted(element):
                names = ", ".join(sorted(converted(element) - FOLDED_OPERATORS))
                raise UserError(_REFUSALS[element].format(index=op.index, name=op.name, names=names,
                                                          why=_why_not(op.name, element)))

    def _bind_input(self, tensor: int, k: int, operators: list[Operator]) -> None:
        """Model input k: the graph's input (k = 0) or one of its extra inputs."""
        shape = self.fmap_shape(tensor)
        which = f"input {k} shape" if k else "input shape"
        if len(shape) > 3:
            raise UserError(f"{which} {_dims(self.shape(tensor))} has more than 3 dimensions besides the batch")
        # Feature maps are (H, W, C): a vector input (N,) becomes (1, 1, N) and (A, B) becomes
        # (1, A, B), which is the same bytes in the same order.
        fmap, declared = (1,) * (3 - len(shape)) + shape, tuple(int(d) for d in self.shape(tensor))
        graph, kind = self.graph, self.type_of(tensor)
        readers = [op.name for op in operators if tensor in op.inputs]
        edge = kind == _FLOAT32 and readers == ["QUANTIZE"] and self.readers.get(tensor) == 1
        if k == 0:
            graph.input_shape, graph.declared_input_shape = fmap, declared
            self.float_edge = edge
        else:
            graph.extra_inputs += (GraphInput(fmap, None, declared),)
            first = self.type_of(self.input_tensor)
            if kind != first or edge != self.float_edge:
                what = {True: "a float32 edge", False: _TYPE_NAMES.get(kind, kind)}
                raise UserError(f"input {k} is {what[edge] if kind == _FLOAT32 else what[False]} and input 0 "
                                f"{what[self.float_edge] if first == _FLOAT32 else _TYPE_NAMES.get(first, first)}: "
                                "a model's inputs must all have one type")
        if edge:
            self.float_inputs[tensor] = k  # usable once its QUANTIZE turns it into int8
            return
        if kind == _FLOAT32:  # float32 operators read it: a float32 graph (maybe with int8 islands)
            graph.dtype = "float32"
            self.ir_tensor[tensor] = input_tensor(k)
            return
        self._set_activation_type(tensor)
        stage.set_input_quant(graph, input_tensor(k), self.quant(tensor))
        graph.uint8_input = kind == schema.TensorType.UINT8
        self.ir_tensor[tensor] = input_tensor(k)

    def _operator(self, index: int) -> Operator:
        raw = self.subgraph.Operators(index)
        codes = self.model.OperatorCodesLength()
        if not 0 <= raw.OpcodeIndex() < codes:
            raise UserError(f"operator {index} has opcode index {raw.OpcodeIndex()} of {codes}")
        code = self.model.OperatorCodes(raw.OpcodeIndex())
        # Codes above 127 live only in `builtin_code`; old files set only `deprecated_builtin_code`.
        number = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        name = _OP_NAMES.get(number, f"<builtin code {number}>")
        if number == schema.BuiltinOperator.CUSTOM:
            name = f"CUSTOM ({(code.CustomCode() or b'').decode('utf-8', 'replace')})"
        inputs, outputs = _ints(raw, "Inputs"), _ints(raw, "Outputs")
        for t in inputs + outputs:
            if not -1 <= t < self.n_tensors:
                raise UserError(f"operator {index} ({name}) refers to tensor {t} of {self.n_tensors}")
        return Operator(index, name, inputs, outputs, raw)

    @staticmethod
    def _count_readers(operators: list[Operator], outputs: tuple[int, ...]) -> dict[int, int]:
        """How many operators read each tensor (a model output counts as one more reader)."""
        readers = dict.fromkeys(outputs, 1)
        for op in operators:
            for t in op.inputs:
                readers[t] = readers.get(t, 0) + 1
        return readers

    def sole_reader(self, ir_tensor: int) -> bool:
        """For rewrite.py: whether the operator being converted is the tensor's only reader."""
        return self.readers_of(ir_tensor) == 1

    def readers_of(self, ir_tensor: int) -> int:
        """How many operators (and the model output) read an IR tensor, under all its TFLite names."""
        return sum(self.readers.get(t, 0) for t, ir in self.ir_tensor.items() if ir == ir_tensor)

    def _finish(self, outputs: tuple[int, ...]) -> Graph:
        graph = self.graph
        for output in outputs:
            if output in self.layout:
                self._materialise(output)
            if output in self.pending_slices or output in self.channel_views:
                self.source(output)
        unquantised = [k for k, t in enumerate(graph.input_tensors) if graph.quant_of(t) is None]
        if unquantised and graph.dtype != "float32":
            which = f"input {unquantised[0]}" if unquantised[0] else "input"
            raise UserError(f"the float32 model {which} is never quantised")
        nodes = tuple(self.ir_tensor.get(output) for output in outputs)
        if not graph.nodes or all(n is not None and is_network_input(n) for n in nodes):
            raise UserError("the model has no operators to plan")
        inputs = [n is not None and is_network_input(n) for n in nodes]
        if any(inputs):
            raise UserError(f"output tensor {outputs[inputs.index(True)]} is the model's input")
        read = {t for node in graph.nodes for t in node.inputs}
        unread = [k for k, t in enumerate(graph.input_tensors) if t not in read]
        if unread:
            raise UserError(f"model input {unread[0]} is read by no operator")
        if None in nodes:
            raise UserError(f"output tensor {outputs[nodes.index(None)]} is computed by no operator")
        if len(graph.nodes) - 1 not in nodes:
            raise UserError("no model output is computed by its last operator (dead operators at the end)")
        if len(set(nodes)) != len(nodes):
            raise UserError("two model outputs are the same tensor")
        if len(nodes) > 1:
            graph.outputs = nodes
        uint8 = {self.type_of(output) == schema.TensorType.UINT8 for output in outputs}
        if len(uint8) > 1:
            raise UserError("some model outputs are uint8 and others not")
        graph.uint8_output = uint8.pop()
        return graph

    # ---- tensors ------------------------------------------------------------------------------

    def tensor(self, index: int) -> schema.Tensor:
        if not 0 <= index < self.n_tensors:
            raise UserError(f"missing tensor (index {index})")
        if index not in self._tensor_tables:  # each lookup walks the flatbuffer: read it once
            self._tensor_tables[index] = self.subgraph.Tensors(index)
        return self._tensor_tables[index]

    def type_of(self, index: int) -> int:
        return self.tensor(index).Type()

    def shape(self, index: int) -> tuple[int, ...]:
        """A tensor's static shape, batch dimension included."""
        tensor = self.tensor(index)
        if tensor.ShapeLength() > _MAX_RANK:
            raise UserError(f"tensor {index} has rank {tensor.ShapeLength()}")
        shape = _ints(tensor, "Shape")
        if any(d < 0 for d in shape):  # 0 is legal in the schema (empty tensors), negative is not
            raise UserError(f"tensor {index} has a bad shape {list(shape)}")
        return shape

    def fmap_shape(self, index: int) -> tuple[int, ...]:
        """A tensor's shape without the batch dimension, as the IR stores it."""
        shape = self.shape(index)
        if index in self.time_major:  # (T, 1, F) of a time-major LSTM: the bytes of (1, T, F)
            shape = (1, shape[0], *shape[2:])
        if index in self.map_sequences and shape[0] == 1:  # (1, T, H, W, C): one row of its bytes
            shape = (1, 1, 1, prod(shape))
        if not shape:
            raise UserError(f"tensor {index} is a scalar where a batch of data is expected")
        if shape[0] != 1:
            raise UserError(f"batch size {shape[0]} (tensor {index}): only batch 1 is supported")
        if 0 in shape:
            raise UserError(f"tensor {index} is empty (shape {_dims(shape)})")
        return shape[1:]

    def wide(self, op: Operator) -> bool:
        """Whether the operator reads int16 activations (a 16x8 operator): every operator of a 16x8
        model, but those behind a QUANTIZE of its int16 input to int8, which read int8 ones."""
        if self.graph.dtype != "int16":
            return False
        first = op.inputs[0] if op.inputs else -1
        return not (self.narrowed and first >= 0 and self.type_of(first) == schema.TensorType.INT8)

    def _set_activation_type(self, tensor: int) -> None:
        """An int16 model input (or the int16 output of the input's QUANTIZE) makes a 16x8 graph."""
        if self.type_of(tensor) == schema.TensorType.INT16:
            self.graph.dtype = "int16"

    def reads_float32(self, op: Operator) -> bool:
        """Whether the operator's first input is a float32 activation (its converter then makes a
        float32 node; the tensor types decide, as the interpreter's kernels do)."""
        return bool(op.inputs) and op.inputs[0] >= 0 and self.type_of(op.inputs[0]) == _FLOAT32 \
            and not self.is_const(op.inputs[0])

    def quant(self, index: int) -> Quant | None:
        """Per-tensor quantisation of an activation tensor: int8 (a uint8 one as the int8 tensor
        holding the same real values, see _UINT8_SHIFT), or int16 (zero point 0) in 16x8 graphs;
        None for a float32 tensor (a float island's, or a float32 model's)."""
        tensor = self.tensor(index)
        if tensor.Type() == _FLOAT32:
            return None
        if index in self.widened:
            return _widened_quant(self, index)
        int16, uint8 = tensor.Type() == schema.TensorType.INT16, tensor.Type() == schema.TensorType.UINT8
        mixed = self.narrowed and tensor.Type() == schema.TensorType.INT8
        if self.narrowed and int16 and index != self.input_tensor:
            raise UserError(f"tensor {index} is int16 after the model's int16 input was quantised to int8: only "
                            "int8 activations may follow (but a keyword model's head: a SOFTMAX to int16, a QUANTIZE of "
                            "it to int32)")
        if (self.graph.dtype == "int16") != int16 and tensor.Type() in _INTEGER_ACTIVATIONS and not mixed:
            raise UserError(f"tensor {index} is {_TYPE_NAMES[tensor.Type()]} in a model whose input is "
                            f"{self.graph.dtype}: activations of mixed types are not supported")
        if tensor.Type() not in _INTEGER_ACTIVATIONS:
            raise UserError(f"tensor {index} is {_TYPE_NAMES.get(tensor.Type(), 'of unknown type')}: only int8, "
                            "uint8 and float32 activations (or int16 ones with int8 weights) are supported")
        shift = _UINT8_SHIFT if uint8 else 0
        q = tensor.Quantization()
        scales = () if q is None or q.ScaleIsNone() else tuple(float(s) for s in q.ScaleAsNumpy())
        zeros = () if q is None else _ints(q, "ZeroPoint")
        if not scales or len(zeros) != len(scales):
            raise UserError(f"{_TYPE_NAMES[tensor.Type()]} tensor {index} has no quantisation parameters")
        if len(scales) != 1:
            raise UserError(f"tensor {index} is quantised per channel; only per-tensor activation "
                            "quantisation is supported")
        if not (isfinite(scales[0]) and scales[0] > 0) or not -128 <= zeros[0] - shift <= 127:
            raise UserError(f"{_TYPE_NAMES[tensor.Type()]} tensor {index} has a bad quantisation: scale {scales[0]}, "
                            f"zero point {zeros[0]}")
        if int16 and zeros[0] != 0:
            raise UserError(f"int16 tensor {index} has zero point {zeros[0]}: 16x8 activations are symmetric "
                            "(zero point 0)")
        return Quant(scales[0], zeros[0] - shift)

    def source(self, index: int) -> int:
        """The IR tensor an operator reads as its activation input."""
        if index in self.layout:
            self._materialise(index)
        if index in self.channel_views:
            self._materialise_channel_view(index)
        if index in self.pending_slices:
            op, src, begin, channels = self.pending_slices.pop(index)
            if op.inputs and op.inputs[0] in self.map_sequences:  # a step of a sequence of maps, seen as a map
                step = self.graph.append(ChannelSlice(begin, channels), (src,), quant=self.graph.quant_of(src))
                self.emit(op, Reshape(self.fmap_shape(index)), (step,), out=index)
            else:
                self.emit(op, ChannelSlice(begin, channels), (src,), out=index)
        if index in self.ir_tensor:
            return self.ir_tensor[index]
        if index in self.float_inputs:
            raise UserError(f"reads the float32 model input (tensor {index}) besides its QUANTIZE")
        if index in self.folded or self.is_const(index):
            raise UserError(f"reads constant tensor {index} where an activation is expected")
        raise UserError(f"reads tensor {index} before any operator produces it")

    def bind_moved(self, tensor: int, ir_tensor: int, layout: tuple[int, ...]) -> None:
        """Map a TFLite tensor to an IR tensor whose axes `layout` names (see self.layout)."""
        ir_shape = self.graph.shape_of(ir_tensor)
        if layout == tuple(range(len(ir_shape))):
            self.bind(tensor, ir_tensor)
            return
        declared = self.fmap_shape(tensor)
        inferred = tuple(ir_shape[a] for a in layout)
        if declared != inferred or any(ir_shape[a] != 1 for a in range(len(ir_shape)) if a not in layout):
            raise UserError(f"output tensor {tensor} is declared {_dims(declared)} but computes to {_dims(inferred)}")
        self.ir_tensor[tensor] = ir_tensor
        self.layout[tensor] = layout

    def _materialise(self, tensor: int) -> None:
        """Give a moved tensor (see self.layout) an IR tensor of its own shape, as the rewrite stage
        makes it: a reshape when its bytes are already in order (only axes of size 1 moved), else a
        transpose."""
        layout, src = self.layout.pop(tensor), self.ir_tensor[tensor]
        declared = self.fmap_shape(tensor)
        result = stage.rewrite(self, MovedAxes(src, layout, declared))
        while isinstance(result, Append):  # a transpose, then the plain view of it (maybe a reshape)
            src = self.graph.append(result.op, result.inputs, result.consts, self.graph.quant_of(src))
            result = stage.rewrite(self, MovedAxes(src, tuple(range(len(self.graph.shape_of(src)))), declared))
        if result is None:
            raise UserError(f"tensor {tensor} ({_dims(declared)}) is a transposed map that only a MEAN may read "
                            "(a channel shuffle's TRANSPOSE may move only the channel axes)")
        self.ir_tensor[tensor] = result

    def _materialise_channel_view(self, tensor: int) -> None:
        """Give a channel view (see self.channel_views) read by another operator than RESHAPE or
        TRANSPOSE an IR tensor of its own shape: its channels gathered in its order, reshaped."""
        view = self.channel_views.pop(tensor)
        quant, src = self.graph.quant_of(view.src), stage.rewrite(self, view.reshaped((-1,)))
        if isinstance(src, Append):
            src = self.graph.append(src.op, src.inputs, src.consts, quant)
        self.ir_tensor[tensor] = self.graph.append(Reshape(self.fmap_shape(tensor)), (src,), quant=quant)

    def is_const(self, index: int) -> bool:
        return index in self.folded or self._buffer_data(index) is not None

    def const(self, index: int, what: str) -> np.ndarray:
        """A constant tensor (weights, bias, shape operands) as a numpy array of its shape."""
        if index in self.folded:
            return self.folded[index]
        data = self._buffer_data(index) if index >= 0 else None
        if data is None:
            raise UserError(f"the {what} (tensor {index}) must be a constant")
        kind = self.type_of(index)
        if kind not in _DTYPES:
            raise UserError(f"the {what} (tensor {index}) is {_TYPE_NAMES.get(kind, 'of unknown type')}; "
                            "expected int8, int32 or int64")
        shape = self.shape(index)
        dtype = np.dtype(_DTYPES[kind]).newbyteorder("<")
        if len(data) != prod(shape) * dtype.itemsize:
            raise UserError(f"the {what} (tensor {index}) has {len(data)} bytes of data for shape {_dims(shape)}")
        return np.frombuffer(data, dtype).astype(_DTYPES[kind]).reshape(shape)

    def _buffer_data(self, index: int) -> bytes | None:
        tensor = self.tensor(index)
        if tensor.Sparsity() is not None:
            raise UserError(f"tensor {index} is sparse; sparse weights are not supported")
        external = getattr(tensor, "ExternalBuffer", None)  # newer schemas only
        if external is not None and external():
            raise UserError(f"tensor {index} keeps its data in an external file; not supported")
        number = tensor.Buffer()
        if number == 0:  # buffer 0 is the schema's empty sentinel: not a constant
            return None
        if not 0 < number < self.n_buffers:
            raise UserError(f"tensor {index} refers to buffer {number} of {self.n_buffers}")
        buffer = self.model.Buffers(number)
        if buffer.Offset() > 1:  # large models keep buffers after the flatbuffer, addressed from file start
            start, size = buffer.Offset(), buffer.Size()
            if start + size > len(self.data):
                raise UserError(f"buffer {number} lies outside the file")
            return self.data[start:start + size]
        if buffer.DataIsNone() or buffer.DataLength() == 0:
            return None
        return buffer.DataAsNumpy().tobytes()

    # ---- operator helpers ---------------------------------------------------------------------

    def options(self, op: Operator, cls: type):
        """The operator's builtin options table, typed; `cls` is e.g. schema.Conv2DOptions."""
        table = op.raw.BuiltinOptions()
        if table is None or op.raw.BuiltinOptionsType() != getattr(schema.BuiltinOptions, cls.__name__):
            raise UserError(f"missing {cls.__name__}")
        options = cls()
        options.Init(table.Bytes, table.Pos)
        return options

    def input(self, op: Operator, position: int, optional: bool = False) -> int:
        """The TFLite tensor at `position` of the operator's inputs (-1 if optional and omitted)."""
        if position < len(op.inputs) and op.inputs[position] >= 0:
            return op.inputs[position]
        if optional:
            return -1
        raise UserError(f"input {position} is missing")

    def feature_map(self, op: Operator, transposable: bool = False) -> tuple[int, tuple[int, int, int]]:
        """The operator's first input as an IR tensor that is an (H, W, C) feature map.

        With `transposable` (a window op: emit can swap its window's axes), a map of one row or
        one column whose TFLite tensor has H and W swapped against its IR tensor (Keras' Conv1D and
        Pooling1D expand a sequence at different axes, see _unit_axes) is read as it is, with no
        copy: the shape returned is the TFLite tensor's, and emit transposes the op."""
        index = self.input(op, 0)
        if transposable and self.layout.get(index) == (1, 0, 2) and 1 in self.graph.shape_of(self.ir_tensor[index])[:2]:
            self.moved_read[op.index] = (1, 0, 2)
            h, w, c = self.graph.shape_of(self.ir_tensor[index])
            return self.ir_tensor[index], (w, h, c)
        src = self.source(index)
        shape = self.graph.shape_of(src)
        if len(shape) != 3:
            raise UserError(f"needs an (H, W, C) feature map, got shape {list(shape)}")
        return src, shape  # type: ignore[return-value]

    def activation_sources(self, op: Operator) -> list[int]:
        """The IR tensors of an element-wise operator's activation (not constant) inputs. When they
        are all unit-axes views of IR tensors of one shape in one layout, channels last (two Conv1D
        outputs, squeezed), the operator runs on those tensors and emit gives its output the same
        layout, so a residual Conv1D block stays a map of one row."""
        inputs = [t for t in op.inputs if t >= 0 and not self.is_const(t)]
        layouts = {self.layout.get(t) for t in inputs}
        if len(layouts) == 1 and None not in layouts:
            layout = layouts.pop()
            shapes = {self.graph.shape_of(self.ir_tensor[t]) for t in inputs}
            if len(shapes) == 1 and layout[-1] == len(shapes.pop()) - 1:
                self.moved_read[op.index] = layout
                return [self.ir_tensor[t] for t in inputs]
        return [self.source(t) for t in inputs]

    def emit(self, op: Operator, ir_op: Op, inputs: tuple[int, ...], consts=None, out: int | None = None) -> int:
        """Append an IR node computing the operator's output tensor (`out`, by default its first),
        with that tensor's quantisation."""
        out = op.outputs[0] if out is None else out
        element = "uint8" if self.type_of(out) == schema.TensorType.UINT8 else self.graph.dtype_of(inputs[0])
        if not ir_op.supports(element):  # _check_elements refuses the operator first; this guards the op made
            raise UserError(f"msfcnn's {ir_op.kind} op has no {element} kernel")
        layout = self.moved_read.get(op.index)
        if layout == (1, 0, 2):  # see feature_map: the op on the IR map, its output swapped too
            ir_op, consts = _transposed(ir_op), _transposed_weights(consts)
        node = self.graph.append(ir_op, inputs, consts, self.quant(out))
        if self.graph.element_of(node).is_float != (self.type_of(out) == _FLOAT32):
            raise UserError(f"output tensor {out} is {_TYPE_NAMES.get(self.type_of(out), 'of unknown type')} but the "
                            f"operator computes {self.graph.dtype_of(node)} from its input (only DEQUANTIZE and "
                            "QUANTIZE change the type)")
        if layout is not None:
            self.bind_moved(out, node, layout)
            return node
        return self.bind(out, node)

    def emit_rewritten(self, op: Operator, result: int | Append) -> int:
        """The operator's output as the rewrite stage answered: a tensor it holds, or a node (whose
        output the operator's may see with its axes moved: Append.layout)."""
        if isinstance(result, Append) and result.layout is not None:
            node = self.graph.append(result.op, result.inputs, result.consts, self.quant(op.outputs[0]))
            self.bind_moved(op.outputs[0], node, result.layout)
            return node
        if isinstance(result, Append):
            return self.emit(op, result.op, result.inputs, result.consts)
        return self.bind(op.outputs[0], result)

    def bind(self, tensor: int, ir_tensor: int, declared: tuple[int, ...] | None = None) -> int:
        """Map a TFLite tensor to an IR tensor, checking that the shapes agree. A sequence (T, F)
        may be the (1, T, F) map it was computed as (see _bind_input): the same bytes."""
        declared = self.fmap_shape(tensor) if declared is None else declared
        inferred = self.graph.shape_of(ir_tensor)
        if len(declared) < len(inferred) and inferred[len(inferred) - len(declared):] == declared:
            declared = (1,) * (len(inferred) - len(declared)) + declared
        if declared != inferred:
            raise UserError(f"output tensor {tensor} is declared {_dims(declared)} but computes to {_dims(inferred)}")
        self.ir_tensor[tensor] = ir_tensor
        return ir_tensor

    def weighted(self, op: Operator, weights_rank: int, channel_axis: int) -> dict[str, np.ndarray]:
        """Weights, bias (int32; int64 in 16x8 graphs) and per-output-channel weight scales of a conv /
        depthwise / dense."""
        index = self.input(op, 1)
        weights = self.const(index, "weights")
        if self.reads_float32(op):
            return self._float_weighted(op, weights, weights_rank, channel_axis)
        if weights.ndim != weights_rank or weights.dtype not in (np.int8, np.uint8):
            raise UserError(f"expected rank-{weights_rank} int8 weights, got {weights.dtype} {_dims(weights.shape)}")
        in_type = self.type_of(self.input(op, 0))
        if (in_type == schema.TensorType.UINT8) != (weights.dtype == np.uint8):
            raise UserError(f"{weights.dtype} weights on a {_TYPE_NAMES.get(in_type, 'other')} input: int8 models have "
                            "int8 weights, uint8 models uint8 weights")
        channels = weights.shape[channel_axis]
        scales = self.weight_scales(index, channels, channel_axis)
        if weights.dtype == np.uint8:
            return {**self._uint8_weights(index, weights), "bias": self.bias(op, channels), "weight_scales": scales}
        return {"weights": weights, "bias": self.bias(op, channels), "weight_scales": scales}

    def weight_quant(self, index: int) -> Quant:
        """The per-tensor quantisation of an int8 constant operand of a 16x8 graph (PRELU's alpha)."""
        q = self.tensor(index).Quantization()
        scales = () if q is None or q.ScaleIsNone() else tuple(float(v) for v in q.ScaleAsNumpy())
        zeros = () if q is None else _ints(q, "ZeroPoint")
        if len(scales) != 1 or len(zeros) != 1 or not (isfinite(scales[0]) and scales[0] > 0) \
                or not -128 <= zeros[0] <= 127:
            raise UserError(f"tensor {index} needs one finite positive scale and one int8 zero point")
        return Quant(scales[0], zeros[0])

    def _float_weighted(self, op: Operator, weights: np.ndarray, rank: int, channel_axis: int) -> dict[str, np.ndarray]:
        """float32 weights and bias of a float32 conv / depthwise / dense (same layouts as int8)."""
        if weights.ndim != rank or weights.dtype != np.float32:
            # int8 weights on a float32 input: a hybrid (dynamic-range quantised) operator
            raise UserError(f"a float32 input needs rank-{rank} float32 weights, got {weights.dtype} "
                            f"{_dims(weights.shape)} (hybrid, dynamic-range quantised, operators are not supported)")
        channels = weights.shape[channel_axis]
        bias_index = self.input(op, 2, optional=True)
        bias = self.const(bias_index, "bias") if bias_index >= 0 else np.zeros(channels, np.float32)
        if bias.dtype != np.float32 or bias.shape != (channels,):
            raise UserError(f"expected a float32 bias of {channels}, got {bias.dtype} {_dims(bias.shape)}")
        return {"weights": weights, "bias": bias}

    def _uint8_weights(self, index: int, weights: np.ndarray) -> dict[str, np.ndarray]:
        """uint8 weights with their (per-tensor) zero point z: the exact values w - z (int16, within
        +-255), and z - 128, which the weight-offset kernels need to store them as int8."""
        zeros = _ints(self.tensor(index).Quantization(), "ZeroPoint")
        if len(zeros) != 1 or not 0 <= zeros[0] <= 255:
            raise UserError(f"the uint8 weights (tensor {index}) need one zero point in [0, 255], got {list(zeros)}")
        centred = weights.astype(np.int16) - np.int16(zeros[0])
        return {"weights": centred, "weight_zero_point": np.array(zeros[0] - _UINT8_SHIFT, np.int32)}

    def bias(self, op: Operator, channels: int, position: int = 2) -> np.ndarray:
        """The int32 (16x8: int64) bias at input `position`, zeros when omitted."""
        bias_index = self.input(op, position, optional=True)
        bias_type = np.int64 if self.wide(op) else np.int32
        if bias_index < 0:
            return np.zeros(channels, bias_type)
        bias = self.const(bias_index, "bias")
        if bias.dtype != bias_type or bias.shape != (channels,):
            # 16x8: TFLite's kernels take int32 biases too, but run other (optimised) code on them
            raise UserError(f"expected an {np.dtype(bias_type).name} bias of {channels}, got {bias.dtype} "
                            f"{_dims(bias.shape)}")
        return bias

    def weight_scales(self, index: int, channels: int, axis: int) -> np.ndarray:
        q = self.tensor(index).Quantization()
        if q is None or q.ScaleIsNone() or q.DetailsType() != schema.QuantizationDetails.NONE:
            raise UserError(f"the weights (tensor {index}) have no (affine) quantisation")
        scales = np.asarray(q.ScaleAsNumpy(), np.float32)
        zeros = _ints(q, "ZeroPoint")
        if any(zeros) and self.type_of(index) != schema.TensorType.UINT8:
            raise UserError(f"the weights (tensor {index}) have non-zero zero points; TFLite int8 weights "
                            "are symmetric")
        if len(scales) == 1:  # per-tensor: the same scale for every channel
            scales = np.repeat(scales, channels)
        elif len(scales) != channels or q.QuantizedDimension() != axis:
            raise UserError(f"the weights (tensor {index}) have {len(scales)} scales along axis "
                            f"{q.QuantizedDimension()}; expected 1 or {channels} along axis {axis}")
        if not np.all(np.isfinite(scales) & (scales > 0)):
            raise UserError(f"the weights (tensor {index}) have a non-positive or non-finite scale")
        return scales


# ---- converters: one per builtin operator ---------------------------------------------------


def _activation(options) -> str | None:
    code = options.FusedActivationFunction()
    if code not in _ACTIVATIONS:
        name = next((k for k, v in vars(schema.ActivationFunctionType).items() if v == code), str(code))
        raise UserError(f"fused activation {name} is not supported (only RELU and RELU6)")
    return _ACTIVATIONS[code]


def _window(options, kernel: tuple[int, int], in_hw: tuple[int, int], dilation=(1, 1)) -> Window:
    if options.Padding() not in _PADDINGS:
        raise UserError(f"unknown padding code {options.Padding()}")
    return Window.resolve(kernel, (options.StrideH(), options.StrideW()), _PADDINGS[options.Padding()], in_hw,
                          dilation)


def _dilation(options) -> tuple[int, int]:
    """A conv's dilation factors (SAME padding and the output size follow the dilated extent)."""
    return options.DilationHFactor(), options.DilationWFactor()


def _conv2d(imp: _Importer, op: Operator) -> None:
    options = imp.options(op, schema.Conv2DOptions)
    src, (h, w, c_in) = imp.feature_map(op, transposable=True)
    consts = imp.weighted(op, weights_rank=4, channel_axis=0)
    c_out, kh, kw, filter_c_in = consts["weights"].shape
    if filter_c_in != c_in:  # TFLite's grouped convolution
        raise UserError(f"filters have {filter_c_in} input channels for a {c_in}-channel input "
                        "(grouped convolution is not supported)")
    win = _window(options, (kh, kw), (h, w), _dilation(options))
    imp.emit(op, with_weight_offset(Conv2D(c_out, win, _activation(options)), consts), (src,), consts)


def _depthwise_conv2d(imp: _Importer, op: Operator) -> None:
    options = imp.options(op, schema.DepthwiseConv2DOptions)
    src, (h, w, c_in) = imp.feature_map(op, transposable=True)
    consts = imp.weighted(op, weights_rank=4, channel_axis=3)
    one, kh, kw, c_out = consts["weights"].shape
    if one != 1 or c_out % c_in:
        raise UserError(f"depthwise filters {_dims(consts['weights'].shape)} do not fit a {c_in}-channel input")
    # TFLite's kernels derive the multiplier from the channel counts, not from the (legacy) option.
    win = _window(options, (kh, kw), (h, w), _dilation(options))
    imp.emit(op, with_weight_offset(DepthwiseConv2D(win, c_out // c_in, _activation(options)), consts), (src,), consts)


def _transpose_conv(imp: _Importer, op: Operator) -> None:
    """TRANSPOSE_CONV: inputs output shape, weights (out_c, kh, kw, in_c), input, optional bias."""
    options = imp.options(op, schema.TransposeConvOptions)
    if options.Padding() not in _PADDINGS:
        raise UserError(f"unknown padding code {options.Padding()}")
    size = imp.const(imp.input(op, 0), "output shape").reshape(-1)
    if size.shape != (4,) or size[0] != 1:
        raise UserError(f"output shape {size.tolist()}: expected (1, H, W, C)")
    x = imp.input(op, 2)
    src = imp.source(x)
    in_shape = imp.graph.shape_of(src)
    out_h, out_w, out_c = (int(v) for v in size[1:])
    weights = imp.const(imp.input(op, 1), "weights")
    if len(in_shape) != 3 or weights.ndim != 4 or weights.shape[0] != out_c or weights.shape[3] != in_shape[2]:
        raise UserError(f"weights {_dims(weights.shape)} do not take a {_dims(in_shape)} input to {out_c} channels")
    kernel, strides = (int(weights.shape[1]), int(weights.shape[2])), (options.StrideH(), options.StrideW())
    # TFLite pads as a convolution from the output back to the input would (ComputePaddingHeightWidth)
    pads = tuple(_transpose_pad(_PADDINGS[options.Padding()], n, k, st) for n, k, st in zip((out_h, out_w), kernel, strides))
    ir_op = TransposeConv(out_c, kernel, strides, pads, (out_h, out_w), _activation(options))
    if imp.type_of(x) == _FLOAT32:
        if weights.dtype != np.float32:
            raise UserError(f"a float32 input needs float32 weights, got {weights.dtype}")
        bias_index = imp.input(op, 3, optional=True)
        bias = imp.const(bias_index, "bias") if bias_index >= 0 else np.zeros(out_c, np.float32)
        consts = {"weights": weights, "bias": bias.astype(np.float32).reshape(out_c)}
    else:
        if weights.dtype != np.int8:
            raise UserError(f"expected int8 weights, got {weights.dtype}")
        consts = {"weights": weights, "bias": imp.bias(op, out_c, position=3),
                  "weight_scales": imp.weight_scales(imp.input(op, 1), out_c, 0)}
    imp.emit(op, ir_op, (src,), consts)


def _transpose_pad(padding: str, out: int, kernel: int, stride: int) -> int:
    """The padding before the first output position: SAME's for a convolution from `out` positions
    (whose output has ceil(out / stride)), VALID's 0."""
    if padding == "valid":
        return 0
    return max((-(-out // stride) - 1) * stride + kernel - out, 0) // 2


def _fully_connected(imp: _Importer, op: Operator) -> None:
    options = imp.options(op, schema.FullyConnectedOptions)
    if options.WeightsFormat() != schema.FullyConnectedOptionsWeightsFormat.DEFAULT:
        raise UserError("shuffled weights are not supported")
    src = _bytes_of(imp, imp.input(op, 0))
    consts = imp.weighted(op, weights_rank=2, channel_axis=0)
    units, n_in = consts["weights"].shape
    size = prod(imp.graph.shape_of(src))
    if size != n_in:
        _fully_connected_rows(imp, op, options, src, consts)
        return
    out = op.outputs[0]
    node = imp.graph.append(with_weight_offset(Dense(units, _activation(options)), consts), (src,), consts,
                            imp.quant(out))
    declared = imp.fmap_shape(out)
    if declared != (units,) and prod(declared) == units:  # keep_num_dims: (1, 1, units) and alike
        node = imp.graph.append(Reshape(declared), (node,), quant=imp.quant(out))
    imp.bind(out, node)


_SVDF_TYPES = {schema.TensorType.INT16: "int16", schema.TensorType.INT8: "int8"}


def _fully_connected_rows(imp: _Importer, op: Operator, options, src: int, consts: dict) -> None:
    """FULLY_CONNECTED on each run of its weights' inputs (a Keras Dense on a (T, F) sequence):
    one output row per input row, as a 1x1 convolution over (1, rows, F) (ops/dense_rows.py)."""
    units, n_in = consts["weights"].shape
    size = prod(imp.graph.shape_of(src))
    if size % n_in:
        raise UserError(f"weights take {n_in} inputs, which do not divide the input's {size} elements")
    element = "float32" if imp.reads_float32(op) else "int16" if imp.wide(op) else \
        "uint8" if imp.type_of(op.inputs[0]) == schema.TensorType.UINT8 else "int8"
    if not DenseRows.supports(element):
        raise UserError(f"a {element} fully connected layer on each of {size // n_in} rows of {n_in} values: "
                        "only int8 and float32 are supported")
    in_shape = imp.graph.shape_of(src)
    if len(in_shape) != 3 or in_shape[-1] != n_in:  # the rows as a one-row map (a map of n_in channels is one)
        src = imp.graph.append(Reshape((1, size // n_in, n_in)), (src,), quant=imp.graph.quant_of(src))
    weights = consts["weights"].reshape(units, 1, 1, n_in)
    node = imp.graph.append(DenseRows.of_units(units, _activation(options)), (src,),
                            {**consts, "weights": weights}, imp.quant(op.outputs[0]))
    out = op.outputs[0]
    rows = tuple(imp.shape(out) if not options.KeepNumDims() else imp.fmap_shape(out))
    if prod(rows) != size // n_in * units or rows[-1] != units:
        raise UserError(f"output tensor {out} is declared {_dims(imp.shape(out))}; expected {size // n_in} rows "
                        f"of {units}")
    computed = imp.graph.shape_of(node)
    if (1,) * (len(computed) - len(rows)) + rows != computed:  # rows declared in another shape: the same bytes
        node = imp.graph.append(Reshape(rows), (node,), quant=imp.quant(out))
    imp.bind(out, node, declared=rows)


def _svdf(imp: _Importer, op: Operator) -> None:
    """SVDF on an int8 vector: its weights, its options and its state, a variable tensor that
    becomes one of the graph's state buffers (ops/svdf.py has the arithmetic)."""
    if len(op.inputs) != 5:
        raise UserError(f"expected 5 inputs (input, feature and time weights, bias, state), got {len(op.inputs)}")
    options = imp.options(op, schema.SVDFOptions)
    src = _bytes_of(imp, imp.input(op, 0))
    features = imp.const(imp.input(op, 1), "feature weights")
    state_index = imp.input(op, 4)
    state_type = _SVDF_TYPES.get(imp.type_of(state_index))
    time_index = imp.input(op, 2)
    if features.dtype != np.int8 or features.ndim != 2 or state_type is None \
            or imp.type_of(time_index) != imp.type_of(state_index):
        raise UserError("only int8 SVDF is supported: int8 feature weights, and a time filter and state both "
                        "int16 or both int8")
    filters, n_input = features.shape
    rank = options.Rank()
    if rank <= 0 or filters % rank:
        raise UserError(f"rank {rank} does not divide the {filters} filters")
    if prod(imp.graph.shape_of(src)) != n_input:
        raise UserError(f"the feature weights take {n_input} inputs but the input has "
                        f"{prod(imp.graph.shape_of(src))} elements")
    times = _typed_const(imp, time_index, "time weights", SVDF_STATE_TYPES[state_type])
    if times.ndim != 2 or times.shape[0] != filters:
        raise UserError(f"the time weights are {_dims(times.shape)}; expected {filters} rows")
    units, memory = filters // rank, times.shape[1]
    bias_index = imp.input(op, 3, optional=True)
    bias = imp.const(bias_index, "bias") if bias_index >= 0 else np.zeros(units, np.int32)
    if bias.dtype != np.int32 or bias.shape != (units,):
        raise UserError(f"expected an int32 bias of {units}, got {bias.dtype} {_dims(bias.shape)}")
    if not imp.tensor(state_index).IsVariable() or imp.shape(state_index) != (1, filters * memory):
        raise UserError(f"the state (tensor {state_index}) must be a variable tensor of 1x{filters * memory}")
    state_q = imp.weight_quant(state_index) if state_type == "int8" else _int16_quant(imp, state_index)
    ir_op = Svdf(rank, units, memory, imp.weight_quant(imp.input(op, 1)).scale,
                 imp.weight_quant(time_index).scale if state_type == "int8" else _int16_quant(imp, time_index).scale,
                 state_q.scale, state_q.zero_point, state_type, _activation(options))
    node = imp.emit(op, ir_op, (src,), {"weights": features, "weights_time": times, "bias": bias})
    initial = imp._buffer_data(state_index)
    value = ir_op.initial_state() if initial is None else \
        np.frombuffer(initial, ir_op.initial_state().dtype).reshape(filters, memory).copy()
    imp.graph.add_state(node, "activation_state", value)


def _typed_const(imp: _Importer, index: int, what: str, dtype: type) -> np.ndarray:
    """A constant of a type `const` does not read (an int16 time filter)."""
    data = imp._buffer_data(index)
    shape = imp.shape(index)
    if data is None or len(data) != prod(shape) * np.dtype(dtype).itemsize:
        raise UserError(f"the {what} (tensor {index}) must be a constant of shape {_dims(shape)}")
    return np.frombuffer(data, np.dtype(dtype).newbyteorder("<")).astype(dtype).reshape(shape)


def _int16_quant(imp: _Importer, index: int) -> Quant:
    """The per-tensor quantisation of an int16 constant or state (symmetric: zero point 0)."""
    q = imp.tensor(index).Quantization()
    scales = () if q is None or q.ScaleIsNone() else tuple(float(v) for v in q.ScaleAsNumpy())
    zeros = () if q is None else _ints(q, "ZeroPoint")
    if len(scales) != 1 or not (isfinite(scales[0]) and scales[0] > 0) or any(zeros):
        raise UserError(f"int16 tensor {index} needs one finite positive scale and zero point 0")
    return Quant(scales[0], 0)


def _add(imp: _Importer, op: Operator) -> None:
    options = imp.options(op, schema.AddOptions)
    if len(op.inputs) != 2:
        raise UserError(f"expected 2 inputs, got {len(op.inputs)}")
    if any(imp.is_const(imp.input(op, i)) for i in (0, 1)):
        if imp.wide(op):
            raise UserError("ADD of a constant is not supported with int16 activations")
        _const_operand(imp, op, AddConst, _activation(options))
        return
    # The IR wants the main path first and the skip tensor second: the later-produced tensor is the
    # main path. Swapping is exact: TFLite's int8 ADD rescales each input on its own, then sums.
    a, b = sorted(imp.activation_sources(op), reverse=True)
    uint8 = imp.type_of(op.outputs[0]) == schema.TensorType.UINT8  # its own vector rounding
    imp.emit(op, (AddUint8 if uint8 else Add)(_activation(options)), (a, b))


def _sub(cls: type, const_cls: type) -> Converter:
    """SUB / SQUARED_DIFFERENCE of two maps of one shape, or of a map and a constant (either
    side): ops/sub.py."""
    def convert(imp: _Importer, op: Operator) -> None:
        activation = _activation(imp.options(op, schema.SubOptions)) if cls is Sub else None
        if len(op.inputs) != 2:
            raise UserError(f"expected 2 inputs, got {len(op.inputs)}")
        first, second = imp.input(op, 0), imp.input(op, 1)
        if imp.is_const(first) or imp.is_const(second):
            _const_operand(imp, op, partial(const_cls, reversed=imp.is_const(first)), activation)
            return
        a, b = imp.activation_sources(op)
        # the main path (the later-produced tensor) first, as for ADD; `reversed` keeps the order of the minus
        imp.emit(op, cls(activation, reversed=a < b), (max(a, b), min(a, b)))
    return convert


def _min_max(cls: type, const_cls: type) -> Converter:
    """MAXIMUM / MINIMUM of two maps of one shape, or of a map and a constant (either side)."""
    def convert(imp: _Importer, op: Operator) -> None:
        if len(op.inputs) != 2:
            raise UserError(f"expected 2 inputs, got {len(op.inputs)}")
        if len({imp.quant(t) for t in (*op.inputs, op.outputs[0])}) != 1:
            raise UserError("inputs and output quantised differently: TFLite's int8 kernel compares the raw "
                            "values, so they must share one quantisation")
        first, second = imp.input(op, 0), imp.input(op, 1)
        if imp.is_const(first) or imp.is_const(second):
            _const_operand(imp, op, const_cls, None)
            return
        a, b = imp.activation_sources(op)
        imp.emit(op, cls(), (max(a, b), min(a, b)))  # the operands commute: the main path first
    return convert


def _mul(imp: _Importer, op: Operator) -> None:
    options = imp.options(op, schema.MulOptions)
    if len(op.inputs) != 2:
        raise UserError(f"expected 2 inputs, got {len(op.inputs)}")
    if any(imp.is_const(imp.input(op, i)) for i in (0, 1)):
        _const_operand(imp, op, MulConst, _activation(options))
        return
    a, b = imp.source(imp.input(op, 0)), imp.source(imp.input(op, 1))
    shape_a, shape_b = imp.graph.shape_of(a), imp.graph.shape_of(b)
    if shape_a == shape_b:  # the operands commute: the later-produced tensor is the main path
        a, b = sorted((a, b), reverse=True)
        imp.emit(op, Mul(_activation(options)), (a, b))
        return
    if len(shape_b) == 3 and len(shape_a) != 3:
        a, b, shape_a, shape_b = b, a, shape_b, shape_a
    if len(shape_a) != 3 or as_feature_map(shape_b) != (1, 1, shape_a[2]):
        raise UserError(f"MUL of {_dims(shape_a)} and {_dims(shape_b)}: only equal shapes, a constant, or a map "
                        "by one value per channel are supported")
    imp.emit(op, MulBroadcast(_activation(options)), (a, b))


def _const_operand(imp: _Importer, op: Operator, cls: type, activation: str | None) -> None:
    """ADD / MUL of an activation and an int8 constant holding one value or one per channel (the
    operands commute in TFLite's int8 kernels, so the constant may be either input)."""
    first, second = imp.input(op, 0), imp.input(op, 1)
    const, data = (first, second) if imp.is_const(first) else (second, first)
    if imp.is_const(data):
        raise UserError("both inputs are constants")
    (src,) = imp.activation_sources(op)
    shape = imp.graph.shape_of(src)
    values = imp.const(const, "constant operand")
    channels = shape[-1]
    if imp.type_of(data) == _FLOAT32:
        if values.dtype != np.float32 or values.size not in (1, channels) or not np.isfinite(values).all():
            raise UserError(f"the constant operand is {values.dtype} {_dims(values.shape)}: a float32 operator takes "
                            f"a finite float32 scalar or one value per channel ({channels})")
        imp.emit(op, cls(activation=activation), (src,), {"operand": values.reshape(-1).copy()})
        return
    quant = imp.quant(const)
    if values.dtype != np.int8 or values.size not in (1, channels) or any(d != 1 for d in values.shape[:-1]):
        raise UserError(f"the constant operand is {values.dtype} {_dims(values.shape)}: only an int8 scalar or "
                        f"one value per channel ({channels}) is supported")
    ir_op = cls(operand_scale=quant.scale, operand_zero_point=quant.zero_point, activation=activation)
    imp.emit(op, ir_op, (src,), {"operand": values.reshape(-1).copy()})


def _elementwise(cls: type) -> Callable[[_Importer, Operator], None]:
    """An element-wise operator without options (operators.TFLITE_ELEMENTWISE): a table op's int8
    form is a table of each value (ops/lookup.py); any other op runs its own kernel."""
    def convert(imp: _Importer, op: Operator) -> None:
        if issubclass(cls, LookupOp):
            _emit_table(imp, op, cls())
        else:
            imp.emit(op, cls(), (imp.source(imp.input(op, 0)),))
    return convert


def _emit_table(imp: _Importer, op: Operator, ir_op: Op) -> None:
    src = imp.source(imp.input(op, 0))
    if imp.graph.element_of(src).is_float:  # a float32 operator: computed, no table
        imp.emit(op, ir_op, (src,))
        return
    in_q, out_q = imp.graph.quant_of(src), imp.quant(op.outputs[0])
    if out_q is None:
        raise UserError(f"reads a quantised tensor and writes float32 tensor {op.outputs[0]}: both must be one type")
    if isinstance(ir_op, HardSwish) and hard_swish_params(in_q, out_q)[1] > 0:
        raise UserError("the output scale is below the input scale / 128 (TFLite refuses this HARD_SWISH)")
    try:
        for numerics in nx.NUMERICS:  # made now, so that scales a table cannot work with are reported here
            ir_op.numerics_table(in_q, out_q, numerics)
    except (OverflowError, ValueError):
        raise UserError(f"no int8 table for input scale {in_q.scale} and output scale {out_q.scale}") from None
    imp.emit(op, ir_op, (src,))


def _leaky_relu(imp: _Importer, op: Operator) -> None:
    alpha = imp.options(op, schema.LeakyReluOptions).Alpha()
    if not (isfinite(alpha) and alpha >= 0):
        raise UserError(f"alpha {alpha}: only a finite alpha >= 0 is supported")
    if imp.wide(op):  # no table of 65536 entries: PRELU's kernel, every alpha 1
        src = imp.source(imp.input(op, 0))
        ones = np.ones(imp.graph.shape_of(src)[-1], np.int8)
        imp.emit(op, WideLeakyRelu(slope=float(np.float32(alpha))), (src,), {"alpha": ones})
        return
    _emit_table(imp, op, LeakyRelu(float(np.float32(alpha))))


def _tanh(imp: _Importer, op: Operator) -> None:
    out_q = imp.quant(op.outputs[0])
    if out_q is None and imp.reads_float32(op):  # a float32 TANH: libm's tanhf
        imp.emit(op, FloatUnary("tanh"), (imp.source(imp.input(op, 0)),))
        return
    if out_q is None:  # a float32 output of a quantised input: refused where the table is made
        _emit_table(imp, op, Tanh())
        return
    if (out_q.scale, out_q.zero_point) != TANH_OUTPUT_QUANT:
        raise UserError(f"output scale {out_q.scale} and zero point {out_q.zero_point}: an int8 TANH's output "
                        "has scale 1/128 and zero point 0 (TFLite's quantisation spec, which TFLite Micro's "
                        "kernel assumes)")
    _emit_table(imp, op, Tanh())


def _clamp(activation: str) -> Callable[[_Importer, Operator], None]:
    """RELU_N1_TO_1 / RELU_0_TO_1: LiteRT's RELU arithmetic with other bounds (ops/activation.py)."""
    def convert(imp: _Importer, op: Operator) -> None:
        imp.emit(op, Activation(activation), (imp.source(imp.input(op, 0)),))
    return convert


def _prelu(imp: _Importer, op: Operator) -> None:
    """PRELU with a constant alpha holding one value per channel (Keras' PReLU shared over H and W)
    or a single value."""
    src = imp.source(imp.input(op, 0))
    channels = imp.graph.shape_of(src)[-1]
    index = imp.input(op, 1)
    alpha = imp.const(index, "alpha")
    uint8 = imp.type_of(imp.input(op, 0)) == schema.TensorType.UINT8
    if alpha.dtype != (np.uint8 if uint8 else np.int8) or alpha.size not in (1, channels) or \
            any(d != 1 for d in alpha.shape[:-1]):
        raise UserError(f"alpha is {alpha.dtype} {_dims(alpha.shape)}: only a constant of the input's type (int8 "
                        f"with int16 activations) with one value per channel ({channels}) or a single value is "
                        "supported")
    # a uint8 alpha as the int8 one holding the same real values (_UINT8_SHIFT); int8 in 16x8 graphs
    quant = imp.quant(index) if imp.graph.dtype != "int16" else imp.weight_quant(index)
    values = np.broadcast_to(alpha.reshape(-1).astype(np.int16) - (_UINT8_SHIFT if uint8 else 0), (channels,))
    values = values.astype(np.int8)
    imp.emit(op, Prelu(alpha_scale=quant.scale, alpha_zero_point=quant.zero_point), (src,), {"alpha": values})


def _concatenation(imp: _Importer, op: Operator) -> None:
    """Along the channels (the last axis), of activations sharing the output's quantisation (as
    TFLite's int8 kernel requires): a chain of two-input concatenations, which is exact."""
    options = imp.options(op, schema.ConcatenationOptions)
    if len(op.inputs) < 2:
        raise UserError(f"expected at least 2 inputs, got {len(op.inputs)}")
    rank = len(imp.shape(op.outputs[0]))
    if options.Axis() not in (-1, rank - 1):
        raise UserError(f"concatenation along axis {options.Axis()} of a rank-{rank} tensor: only along the "
                        "channels (the last axis) is supported")
    out = op.outputs[0]
    quant, activation = imp.quant(out), _activation(options)
    sources = [imp.source(imp.input(op, i)) for i in range(len(op.inputs))]
    if activation is not None or any(imp.graph.quant_of(s) != quant for s in sources):
        raise UserError("inputs quantised differently from the output, or a fused activation: TFLite's "
                        "int8 CONCATENATION supports neither")
    if all(len(imp.graph.shape_of(s)) == 2 for s in sources):  # sequences (T, C): concat's C kernel walks maps
        node = _concat_chain(imp, [imp.graph.append(Reshape((1, *imp.graph.shape_of(s))), (s,), quant=quant)
                                   for s in sources], quant)
        imp.emit(op, Reshape(imp.fmap_shape(out)), (node,))
        return
    imp.emit(op, Concat(), (_concat_chain(imp, sources[:-1], quant), sources[-1]))


def _pool(cls: type) -> Callable[[_Importer, Operator], None]:
    def convert(imp: _Importer, op: Operator) -> None:
        options = imp.options(op, schema.Pool2DOptions)
        src, (h, w, _) = imp.feature_map(op, transposable=True)
        win = _window(options, (options.FilterHeight(), options.FilterWidth()), (h, w))
        if cls is AvgPool2D and imp.type_of(imp.input(op, 0)) == schema.TensorType.UINT8:
            imp.emit(op, AvgPool2DHalfUp(win, _activation(options)), (src,))  # its own rounding
            return
        if cls is AvgPool2D and win.output_hw(h, w) == (1, 1) and win.pads == (0, 0, 0, 0):
            # One window from the top left (DS-CNN's 24 x 5 over its 25 x 5 map): a global average
            # pool over that window with the pool's rounding, which streams as an accumulating
            # tail instead of holding the map.
            extent = None if win.kernel == (h, w) else win.kernel
            imp.emit(op, GlobalAvgPool(True, pool=True, activation=_activation(options), extent=extent), (src,))
            return
        imp.emit(op, cls(win, _activation(options)), (src,))  # the converter fuses a ReLU after a pool
    return convert


def _mean(imp: _Importer, op: Operator) -> None:
    options = imp.options(op, schema.ReducerOptions)
    index = imp.input(op, 0)
    moved = index in imp.layout
    src = imp.ir_tensor[index] if moved else imp.source(index)
    shape = imp.graph.shape_of(src)
    if not moved and len(shape) == 2 and imp.shape(index) == (1, *shape):
        _mean_of_sequence(imp, op, src, shape)
        return
    if len(shape) != 3 or (not moved and imp.fmap_shape(index) != shape):
        raise UserError(f"needs an (H, W, C) feature map, got shape {list(imp.fmap_shape(index))}")
    layout = imp.layout.get(index, (0, 1, 2))
    rank = len(layout) + 1  # of the TFLite tensor, batch included
    axes = imp.const(imp.input(op, 1), "axes").reshape(-1).tolist()
    if not all(-rank <= a < rank for a in axes):
        raise UserError(f"MEAN over axes {axes} of a rank-{rank} tensor")
    reduced = sorted({a % rank for a in axes})  # of the TFLite tensor, maybe given negative
    ir_axes = tuple(sorted(layout[a - 1] for a in reduced if a > 0))
    keep = bool(options.KeepDims())
    if not moved and reduced == [1, 2]:
        imp.emit(op, GlobalAvgPool(keep), (src,))  # the interpreter's two special-cased kernels
        return
    if imp.wide(op):
        raise UserError(f"MEAN over axes {axes} with int16 activations: only the mean over H and W is supported")
    if 0 in reduced or not ir_axes or not set(ir_axes) <= {0, 1}:
        raise UserError(f"MEAN over axes {axes}: only means over H, W or both (maybe after a TRANSPOSE) "
                        "are supported")
    view = MovedAxes(src, layout, imp.fmap_shape(index))
    out = op.outputs[0]
    imp.emit_rewritten(op, stage.rewrite(imp, Mean(view, tuple(a - 1 for a in reduced), keep,
                                                   lambda: imp.fmap_shape(out))))


def _mean_of_sequence(imp: _Importer, op: Operator, src: int, shape: tuple[int, int]) -> None:
    """MEAN of a (1, T, U) sequence (an LSTM's output, (T, U) in the IR): its steps are the W axis
    of the one-row map (1, T, U), a view of the same bytes; over the steps that is a mean over
    every position (GlobalAveragePooling1D), which a time scan accumulates step by step."""
    options = imp.options(op, schema.ReducerOptions)
    axes = sorted({int(a) % 3 for a in imp.const(imp.input(op, 1), "axes").reshape(-1)})
    if axes != [1]:
        raise UserError(f"MEAN over axes {axes} of a (1, T, U) sequence: only over its steps (axis 1)")
    view = imp.graph.append(Reshape((1, *shape)), (src,), quant=imp.graph.quant_of(src))
    out = op.outputs[0]
    imp.emit_rewritten(op, stage.rewrite(imp, Mean(MovedAxes(view, (1, 2), shape), (0,), bool(options.KeepDims()),
                                                   lambda: imp.fmap_shape(out))))


def _reduce_max(imp: _Importer, op: Operator) -> None:
    """REDUCE_MAX over H and W (Keras's GlobalMaxPooling2D): a max pool whose window is the whole
    map, which fuses like any window op. The interpreter requires the output to be quantised as
    the input (it refuses other scales when it runs), so no value is rescaled."""
    options = imp.options(op, schema.ReducerOptions)
    src, (h, w, c) = imp.feature_map(op)
    out = op.outputs[0]
    rank = len(imp.shape(imp.input(op, 0)))
    axes = imp.const(imp.input(op, 1), "axes").reshape(-1).tolist()
    if not all(-rank <= a < rank for a in axes) or sorted({a % rank for a in axes}) != [1, 2]:
        raise UserError(f"REDUCE_MAX over axes {axes}: only the max over H and W (a global max pool) is supported")
    if imp.quant(out) != imp.graph.quant_of(src):
        raise UserError("the output is quantised differently from the input, which the interpreter refuses too")
    pooled = imp.graph.append(MaxPool2D(Window((h, w))), (src,), quant=imp.quant(out))
    if options.KeepDims():
        imp.bind(out, pooled)
    else:  # (1, C): the same bytes
        imp.emit(op, Reshape((c,)), (pooled,))


def _resize(op_class, options_class) -> Converter:
    """RESIZE_NEAREST_NEIGHBOR / RESIZE_BILINEAR to the constant size operand (out_h, out_w), with
    the operator's align_corners and half_pixel_centers flags. Neither int8 kernel requantises
    (nearest copies values, bilinear mixes them in fixed point), so int8 in and out must share one
    quantisation."""
    def convert(imp: _Importer, op: Operator) -> None:
        src, (h, w, _) = imp.feature_map(op)
        size = imp.const(imp.input(op, 1), "size").reshape(-1)
        if size.shape != (2,) or size.dtype == np.int8:
            raise UserError(f"expected an int32 size of 2 values, got {size.dtype} {_dims(size.shape)}")
        table = op.raw.BuiltinOptions()
        options = imp.options(op, options_class) if table is not None else None
        align = bool(options and options.AlignCorners())
        half_pixel = bool(options and options.HalfPixelCenters())
        if imp.quant(op.outputs[0]) != imp.graph.quant_of(src):
            raise UserError("output quantised differently from the input: the int8 resize kernels do not requantise")
        resize = op_class((h, w), (int(size[0]), int(size[1])), align, half_pixel)
        if imp.type_of(imp.input(op, 0)) == schema.TensorType.UINT8:  # (only RESIZE_BILINEAR gets here)
            resize = replace(resize, uint8=True)
        imp.emit(op, resize, (src,))
    return convert


def _block_moves(op_class: type, options_class: type) -> Converter:
    """SPACE_TO_DEPTH / DEPTH_TO_SPACE (b x b blocks of pixels into channels, or back); values are
    copied, so the output keeps the input's quantisation (the runtimes' kernels copy bytes)."""
    def convert(imp: _Importer, op: Operator) -> None:
        src, _ = imp.feature_map(op)
        block = imp.options(op, options_class).BlockSize()
        if block < 1:
            raise UserError(f"bad block size {block}")
        if imp.quant(op.outputs[0]) != imp.graph.quant_of(src):
            raise UserError("output quantised differently from the input: the kernel only copies values")
        imp.emit(op, op_class(block), (src,))
    return convert


def _transpose(imp: _Importer, op: Operator) -> None:
    """Folded at import: the output is the input's IR tensor with its axes moved (self.layout);
    a later reader other than MEAN then gets a reshape or a Transpose node."""
    index = imp.input(op, 0)
    if index in imp.channel_views and _transpose_channel_axes(imp, op):
        return
    src = imp.ir_tensor[index] if index in imp.layout else imp.source(index)
    if index not in imp.layout and imp.fmap_shape(index) != imp.graph.shape_of(src):
        raise UserError("only the TRANSPOSE of an (H, W, C) feature map is supported")
    layout = imp.layout.get(index, tuple(range(len(imp.graph.shape_of(src)))))
    perm = imp.const(imp.input(op, 1), "permutation").reshape(-1).tolist()
    if sorted(perm) != list(range(len(layout) + 1)) or perm[0] != 0:
        raise UserError(f"permutation {perm}: only permutations of a batch-1 tensor's other axes are supported")
    if imp.quant(op.outputs[0]) != imp.graph.quant_of(src):
        raise UserError("the output's quantisation differs from the input's")
    imp.bind_moved(op.outputs[0], src, tuple(layout[p - 1] for p in perm[1:]))


def _softmax(imp: _Importer, op: Operator) -> None:
    beta = imp.options(op, schema.SoftmaxOptions).Beta()
    if not (isfinite(beta) and beta > 0):
        raise UserError(f"bad softmax beta {beta}")
    if op.outputs[0] in imp.widened:
        q = imp.quant(op.outputs[0])
        if q.zero_point != -32768 or abs(q.scale * 65536 - 1) > 1e-3:
            raise UserError(f"an int8 -> int16 SOFTMAX must have the output scale 1/65536 and zero point -32768 (as "
                            f"TFLite requires), not {q.scale:.6g} and {q.zero_point}")
        imp.emit(op, Softmax(beta, output_type="int16"), (imp.source(imp.input(op, 0)),))
        return
    if imp.wide(op) and imp.quant(op.outputs[0]) != Quant(1 / 32768, 0):
        raise UserError("an int16 SOFTMAX must have the output scale 1/32768 (as TFLite requires)")
    imp.emit(op, Softmax(beta), (imp.source(imp.input(op, 0)),))


def _reshape(imp: _Importer, op: Operator) -> None:
    target = _reshape_target(imp, op)
    if any(d == 0 or d < -1 for d in target) or target.count(-1) > 1:
        raise UserError(f"bad target shape {list(target)}")
    size = prod(imp.shape(imp.input(op, 0)))  # batch included, as TFLite counts it
    known = prod(d for d in target if d != -1)
    shape = tuple(size // known if d == -1 else d for d in target)
    if imp.input(op, 0) in imp.time_major or op.outputs[0] in imp.time_major:
        imp.bind(op.outputs[0], _bytes_of(imp, imp.input(op, 0)))  # (1, T, F) <-> (T, 1, F): the same bytes
        return
    if not shape or shape[0] != 1:
        raise UserError(f"target shape {list(target)} does not keep a batch of 1 first")
    out = op.outputs[0]
    in_shape = imp.shape(imp.input(op, 0))
    if imp.input(op, 0) in imp.channel_views and _reshape_channel_axes(imp, op, shape):
        return
    if _is_unit_axes_reshape(imp, op, in_shape, shape):
        _unit_axes(imp, op, shape)
        return
    src = _bytes_of(imp, imp.input(op, 0))
    if _folds_into_input(imp, src, out, shape[1:]):
        # A flat model input reshaped straight away (e.g. 490 -> 49x10x1): the reshaped form becomes
        # the graph's input, so the first layer sees a feature map and no copy is planned.
        imp.graph.input_shape = shape[1:]
        imp.bind(out, NETWORK_INPUT)
        return
    if _splits_the_channels(imp, imp.input(op, 0), src, out, shape):
        _bind_channel_view(imp, op, ChannelView(src, np.arange(in_shape[-1]).reshape(shape[len(in_shape) - 1:])))
        return
    imp.emit(op, Reshape(shape[1:]), (src,))


def _splits_the_channels(imp: _Importer, index: int, src: int, out: int, shape: tuple[int, ...]) -> bool:
    """Whether a RESHAPE of TFLite tensor `index` (IR tensor `src`, of its shape) to `shape` (output
    tensor `out`, in src's quantisation) keeps the other axes and cuts the channels into several
    axes larger than 1: the first step of a channel shuffle. Its output is then a channel view of
    src (see _Importer.channel_views), no node, until a RESHAPE gives it one channel axis again
    (or another reader: then a reshape node, as any RESHAPE's output)."""
    in_shape = imp.shape(index)
    lead, rest = len(in_shape) - 1, shape[len(in_shape) - 1:]
    return (len(in_shape) >= 3 and imp.fmap_shape(index) == imp.graph.shape_of(src) and shape[:lead] == in_shape[:-1]
            and sum(d > 1 for d in rest) >= 2 and imp.quant(out) == imp.graph.quant_of(src))


def _bind_channel_view(imp: _Importer, op: Operator, view: ChannelView) -> None:
    """The operator's output as a channel view (while it has several channel axes), or as the rewrite
    stage makes it once it has one again (a gather, or the view's IR tensor itself)."""
    out, src = op.outputs[0], view.src
    shape = (1, *imp.graph.shape_of(src)[:-1], *view.places.shape)
    if imp.shape(out) != shape:
        raise UserError(f"output tensor {out} is declared {_dims(imp.shape(out))} but computes to {_dims(shape)}")
    if imp.quant(out) != imp.graph.quant_of(src):
        raise UserError("the output's quantisation differs from the input's: a channel shuffle copies values")
    result = stage.rewrite(imp, view)
    if result is None:
        imp.channel_views[out] = view
    else:
        imp.emit_rewritten(op, result)


def _reshape_channel_axes(imp: _Importer, op: Operator, shape: tuple[int, ...]) -> bool:
    """RESHAPE of a channel view (see _splits_the_channels) that changes only its channel axes: the
    view with those axes, or a gather once one is left. False for another reshape (the view then
    becomes a reshape node, as any RESHAPE's output)."""
    index = imp.input(op, 0)
    view = imp.channel_views[index]
    lead = len(imp.graph.shape_of(view.src))  # the batch and the map's axes but the channels
    if shape[:lead] != imp.shape(index)[:lead]:
        return False
    _bind_channel_view(imp, op, view.reshaped(shape[lead:]))
    return True


def _transpose_channel_axes(imp: _Importer, op: Operator) -> bool:
    """TRANSPOSE of a channel view (see _splits_the_channels) that moves only its channel axes: the
    view with its places moved (ShuffleNet's swap of the groups and the channels in a group). False
    for another permutation (the view then becomes a reshape node, as any RESHAPE's output)."""
    index = imp.input(op, 0)
    view = imp.channel_views[index]
    lead = len(imp.graph.shape_of(view.src))
    perm = imp.const(imp.input(op, 1), "permutation").reshape(-1).tolist()
    if sorted(perm) != list(range(len(imp.shape(index)))) or perm[:lead] != list(range(lead)):
        return False
    _bind_channel_view(imp, op, view.transposed([p - lead for p in perm[lead:]]))
    return True


def _is_unit_axes_reshape(imp: _Importer, op: Operator, in_shape: tuple[int, ...], shape: tuple[int, ...]) -> bool:
    """A RESHAPE between a sequence and a map (ranks 3 and 4, batch included) that only adds or
    removes axes of size 1: the EXPAND_DIMS / SQUEEZE of a Conv1D as the TFLite converter may write
    it. (A head's flattening to rank 2 keeps its reshape node, and the model input its own rule.)"""
    same_bytes = [d for d in in_shape if d != 1] == [d for d in shape if d != 1]
    return same_bytes and min(len(in_shape), len(shape)) >= 3 and imp.input(op, 0) != imp.input_tensor


def _squeeze(imp: _Importer, op: Operator) -> None:
    in_shape = imp.shape(imp.input(op, 0))
    table = op.raw.BuiltinOptions()
    dims = _ints(imp.options(op, schema.SqueezeOptions), "SqueezeDims") if table is not None else ()
    if not all(-len(in_shape) <= d < len(in_shape) for d in dims):
        raise UserError(f"squeeze dimensions {list(dims)} of a rank-{len(in_shape)} tensor")
    dims = {d % len(in_shape) for d in dims} or {i for i, d in enumerate(in_shape) if d == 1}
    if 0 in dims or any(in_shape[d] != 1 for d in dims):
        raise UserError(f"squeeze dimensions {sorted(dims)} of {_dims(in_shape)}: only axes of size 1 other "
                        "than the batch can be removed")
    _unit_axes(imp, op, tuple(d for i, d in enumerate(in_shape) if i not in dims))


def _expand_dims(imp: _Importer, op: Operator) -> None:
    in_shape = imp.shape(imp.input(op, 0))
    axis = imp.const(imp.input(op, 1), "axis").reshape(-1)
    if axis.size != 1 or axis.dtype == np.int8 or not -len(in_shape) - 1 <= int(axis[0]) <= len(in_shape):
        raise UserError(f"expected one int32 axis of a rank-{len(in_shape)} tensor, got {axis.tolist()}")
    at = int(axis[0]) % (len(in_shape) + 1)
    if at == 0:
        raise UserError("EXPAND_DIMS before the batch dimension is not supported")
    _unit_axes(imp, op, in_shape[:at] + (1,) + in_shape[at:])


def _unit_axes(imp: _Importer, op: Operator, shape: tuple[int, ...]) -> None:
    """SQUEEZE / EXPAND_DIMS to `shape` (batch included): the same bytes with axes of size 1 removed
    or added, which the rewrite stage folds into a view like a TRANSPOSE (the output is the
    input's IR tensor with its axes named by self.layout), so that Keras' Conv1D (EXPAND_DIMS,
    CONV_2D, SQUEEZE) is a convolution of a map with one row, which fuses with its neighbours; a
    reader other than a window op (see feature_map) or a MEAN then gets a reshape."""
    index, out = imp.input(op, 0), op.outputs[0]
    if imp.shape(out) != shape:
        raise UserError(f"output tensor {out} is declared {_dims(imp.shape(out))} but computes to {_dims(shape)}")
    src = imp.ir_tensor[index] if index in imp.layout else imp.source(index)
    if imp.quant(out) != imp.graph.quant_of(src):
        raise UserError("the output's quantisation differs from the input's")
    result = stage.rewrite(imp, UnitAxes(src, shape[1:], lambda: imp.source(index)))
    if isinstance(result, MovedAxes):
        imp.bind_moved(out, result.src, result.layout)
    else:
        imp.emit_rewritten(op, result)


def _bytes_of(imp: _Importer, index: int) -> int:
    """The IR tensor holding a TFLite tensor's bytes in their order, for readers that see only the
    bytes (RESHAPE, FULLY_CONNECTED): a tensor with axes of size 1 moved (_unit_axes) needs no
    reshape of its own first."""
    return imp.ir_tensor[index] if _in_byte_order(imp, index) else imp.source(index)


def _in_byte_order(imp: _Importer, index: int) -> bool:
    """Whether a TFLite tensor is its IR tensor with only axes of size 1 moved (the same bytes)."""
    return index in imp.layout and in_byte_order(imp.graph.shape_of(imp.ir_tensor[index]), imp.layout[index])


def _transposed(ir_op: Op) -> Op:
    """A window op (conv, depthwise, pool, a one-window average pool) with H and W swapped."""
    if hasattr(ir_op, "win"):
        (kh, kw), (sh, sw), (top, left, bottom, right) = ir_op.win.kernel, ir_op.win.strides, ir_op.win.pads
        return replace(ir_op, win=Window((kw, kh), (sw, sh), (left, top, right, bottom), ir_op.win.dilations[::-1]))
    if getattr(ir_op, "extent", None) is not None:
        return replace(ir_op, extent=ir_op.extent[::-1])
    return ir_op


def _transposed_weights(consts: dict | None) -> dict | None:
    """Conv (C_out, kh, kw, C_in) and depthwise (1, kh, kw, C) weights with kh and kw swapped."""
    if not consts or "weights" not in consts:
        return consts
    return {**consts, "weights": np.ascontiguousarray(np.swapaxes(consts["weights"], 1, 2))}


def _reshape_target(imp: _Importer, op: Operator) -> tuple[int, ...]:
    """RESHAPE's target: the shape operand if present, else the option, else the declared output."""
    index = imp.input(op, 1, optional=True)
    if index >= 0:
        target = imp.const(index, "target shape")
        if target.ndim != 1 or target.dtype == np.int8:
            raise UserError(f"the target shape must be a vector of int32, got {target.dtype} {_dims(target.shape)}")
        return tuple(int(d) for d in target)
    table = op.raw.BuiltinOptions()
    if table is not None and op.raw.BuiltinOptionsType() == schema.BuiltinOptions.ReshapeOptions:
        options = imp.options(op, schema.ReshapeOptions)
        if options.NewShapeLength() > _MAX_RANK:
            raise UserError(f"target shape of rank {options.NewShapeLength()}")
        return _ints(options, "NewShape")
    return imp.shape(op.outputs[0])


def _folds_into_input(imp: _Importer, src: int, out: int, shape: tuple[int, ...]) -> bool:
    flat_input = len(imp.shape(imp.input_tensor)) < 4  # an image input keeps its own shape
    return (flat_input and src == NETWORK_INPUT and not imp.graph.nodes and len(shape) == 3
            and imp.readers_of(NETWORK_INPUT) == 1 and imp.quant(out) == imp.graph.input_quant)


def _pad(imp: _Importer, op: Operator, value: int | None = None) -> None:
    index = imp.input(op, 0)
    if _in_byte_order(imp, index) or (index not in imp.layout and len(imp.fmap_shape(index)) == 2):
        _pad_sequence(imp, op, value)
        return
    src, _ = imp.feature_map(op)
    pads = imp.const(imp.input(op, 1), "paddings")
    if pads.shape != (4, 2) or pads.dtype == np.int8:
        raise UserError(f"expected int32 paddings of shape 4x2, got {pads.dtype} {_dims(pads.shape)}")
    (n0, n1), (top, bottom), (left, right), (c0, c1) = pads.tolist()
    if (n0, n1, c0, c1) != (0, 0, 0, 0) or min(top, bottom, left, right) < 0:
        raise UserError(f"only non-negative padding of H and W is supported, got {pads.tolist()}")
    imp.emit(op, Pad((top, left, bottom, right), value), (src,))


def _padv2(imp: _Importer, op: Operator) -> None:
    """PAD with a constant value: a quantised scalar in the output's quantisation (the interpreter
    refuses any other), written as it is; without one, PAD's zero point."""
    index = imp.input(op, 2, optional=True)
    if index < 0:
        _pad(imp, op)
        return
    constant = imp.const(index, "constant value")
    if constant.size != 1 or constant.dtype != imp.graph.element.numpy:
        raise UserError(f"expected one {imp.graph.dtype} constant value, got {constant.dtype} {_dims(constant.shape)}")
    if imp.graph.dtype != "float32" and imp.quant(index) != imp.quant(op.outputs[0]):
        raise UserError("the constant value is quantised differently from the output, which the interpreter refuses too")
    _pad(imp, op, int(constant.reshape(-1)[0]))


def _pad_sequence(imp: _Importer, op: Operator, value: int | None = None) -> None:
    """PAD of a sequence (a causal Conv1D pads the steps before it), squeezed or the model input:
    the padding of each axis goes to the IR axis the layout names, the output keeps the layout, and
    the PAD fuses."""
    pads = imp.const(imp.input(op, 1), "paddings")
    index = imp.input(op, 0)
    src = imp.ir_tensor[index] if index in imp.layout else imp.source(index)
    if len(imp.graph.shape_of(src)) != 3:
        raise UserError(f"needs a sequence or an (H, W, C) feature map, got shape {list(imp.fmap_shape(index))}")
    layout = imp.layout.get(index) or unit_layout(imp.graph.shape_of(src), imp.fmap_shape(index))
    if pads.shape != (len(layout) + 1, 2) or pads.dtype == np.int8:
        raise UserError(f"expected int32 paddings of shape {len(layout) + 1}x2, got {pads.dtype} {_dims(pads.shape)}")
    ir_pads = {0: (0, 0), 1: (0, 0), 2: (0, 0)}
    ir_pads.update(zip(layout, map(tuple, pads[1:].tolist())))
    if pads[0].any() or pads.min() < 0 or ir_pads[2] != (0, 0):
        raise UserError(f"only non-negative padding of the steps is supported, got {pads.tolist()}")
    imp.moved_read[op.index] = layout
    imp.emit(op, Pad((ir_pads[0][0], ir_pads[1][0], ir_pads[0][1], ir_pads[1][1]), value), (src,))


def _quantize(imp: _Importer, op: Operator) -> None:
    index, out = imp.input(op, 0), op.outputs[0]
    k = imp.float_inputs.get(index)
    if k is not None and imp.graph.quant_of(input_tensor(k)) is None:
        imp._set_activation_type(out)  # an int16 input quantisation makes a 16x8 graph
        imp.bind(out, stage.rewrite(imp, InputQuantisation(input_tensor(k), imp.quant(out))))
        return
    src = imp.source(index)
    if out in imp.widened:  # int16 -> int32 after the widened SOFTMAX: the model's output
        imp.emit(op, Requantize(output_type="int32"), (src,))
        return
    if imp.graph.dtype_of(src) == "int16" and imp.type_of(out) == schema.TensorType.INT8:
        imp.narrowed = True  # int16 -> int8: the int8 kernels take over (see _Importer.wide)
        node = imp.graph.append(Requantize(output_type="int8"), (src,), quant=imp.quant(out))
        shape, declared = imp.graph.shape_of(node), imp.fmap_shape(out)
        # a vector input is a 1 x 1 x N map in the graph: the TFLite tensor is its last axis
        imp.bind_moved(out, node, tuple(range(len(shape) - len(declared), len(shape))))
        return
    if imp.graph.element_of(src).is_float and imp.type_of(out) != schema.TensorType.INT8:
        raise UserError(f"QUANTIZE of float32 to {_TYPE_NAMES.get(imp.type_of(out), 'another type')} inside the "
                        "model: only to int8 (16x8 and uint8 models may quantise only their float32 input)")
    result = stage.rewrite(imp, Requantisation(src, imp.quant(out)))  # no node if nothing changes
    if isinstance(result, Append) and isinstance(result.op, Requantize) and imp.graph.dtype == "int16":
        raise UserError("an int16 QUANTIZE that changes the scale is not supported (only at a float32 input)")
    imp.emit_rewritten(op, result)


def _dequantize(imp: _Importer, op: Operator) -> None:
    out = op.outputs[0]
    if imp.is_const(imp.input(op, 0)):
        raise UserError("DEQUANTIZE of a constant (the float16 or int8 weights of a float16 or dynamic-range "
                        "quantised model) is not supported")
    src = imp.source(imp.input(op, 0))
    if imp.type_of(out) != _FLOAT32:
        raise UserError(f"DEQUANTIZE to {_TYPE_NAMES.get(imp.type_of(out), 'an unknown type')}: expected float32")
    result = stage.rewrite(imp, Dequantisation(src, out == imp.output_tensor and imp.readers[out] == 1))
    if isinstance(result, Append) and (imp.graph.element_of(src).name != "int8"
                                       or imp.type_of(imp.input(op, 0)) != schema.TensorType.INT8):
        raise UserError("a DEQUANTIZE inside the model (a float island) must read an int8 tensor "
                        "(16x8 and uint8 models may dequantise only their output)")
    imp.emit_rewritten(op, result)


def _relu(activation: str) -> Callable[[_Importer, Operator], None]:
    """RELU / RELU6: a clamp, which the rewrite stage may fold into the op producing its input."""
    def convert(imp: _Importer, op: Operator) -> None:
        src = imp.source(imp.input(op, 0))
        imp.emit_rewritten(op, stage.rewrite(imp, Clamp(activation, src, imp.quant(op.outputs[0]))))
    return convert


def _shape(imp: _Importer, op: Operator) -> None:
    has_options = op.raw.BuiltinOptions() is not None
    out_type = imp.options(op, schema.ShapeOptions).OutType() if has_options else schema.TensorType.INT32
    dtype = np.int64 if out_type == schema.TensorType.INT64 else np.int32
    imp.folded[op.outputs[0]] = np.array(imp.shape(imp.input(op, 0)), dtype)


def _strided_slice(imp: _Importer, op: Operator) -> None:
    options = imp.options(op, schema.StridedSliceOptions)
    if not imp.is_const(imp.input(op, 0)):
        if not _last_step_of_lstm(imp, op, options) and not _step_of_maps(imp, op, options):
            _strided_slice_map(imp, op, options)
        return
    value = imp.const(imp.input(op, 0), "sliced tensor")
    begin, end, strides = (imp.const(imp.input(op, i), name).reshape(-1) for i, name in
                           ((1, "begin"), (2, "end"), (3, "strides")))
    if value.ndim != 1 or not len(begin) == len(end) == len(strides) == 1:
        raise UserError("only the 1-D slicing of a constant shape (as Keras' Flatten emits) is supported")
    if options.EllipsisMask() or options.NewAxisMask() or strides[0] == 0:
        raise UserError("ellipsis / new-axis masks and zero strides are not supported")
    start, stop, step = int(begin[0]), int(end[0]), int(strides[0])
    if options.Offset():
        stop += start
    if options.ShrinkAxisMask() & 1:  # one element, as a scalar
        if not -len(value) <= start < len(value):
            raise UserError(f"slice index {start} out of range")
        imp.folded[op.outputs[0]] = value[start]
        return
    imp.folded[op.outputs[0]] = value[None if options.BeginMask() & 1 else start:
                                      None if options.EndMask() & 1 else stop:step]


def _sliced_map(imp: _Importer, op: Operator, position: int = 0) -> tuple[int, tuple[int, ...]]:
    """The IR tensor a slicing operator reads (its input at `position`) and its TFLite shape (batch
    included), which must be the IR tensor's own (the slice's axes are the tensor's axes)."""
    index = imp.input(op, position)
    src = imp.source(index)
    if imp.fmap_shape(index) != imp.graph.shape_of(src):
        raise UserError(f"slices a tensor of shape {_dims(imp.shape(index))} that msfcnn holds as "
                        f"{_dims(imp.graph.shape_of(src))}")
    return src, imp.shape(index)


def _const_axis(imp: _Importer, index: int, rank: int) -> int:
    axis = imp.const(index, "axis").reshape(-1)
    if axis.size != 1 or not -rank <= int(axis[0]) < rank:
        raise UserError(f"bad axis {axis.tolist()} of a rank-{rank} tensor")
    return int(axis[0]) % rank


def _channel_parts(imp: _Importer, op: Operator, src: int, shape: tuple[int, ...], axis: int,
                   sizes: list[int]) -> None:
    """SPLIT / SPLIT_V: output k is the `sizes[k]` channels after the previous outputs', a channel
    slice of its own."""
    if axis != len(shape) - 1:
        raise UserError(f"split along axis {axis} of a rank-{len(shape)} tensor: only along the channels "
                        "(the last axis) is supported")
    if len(sizes) != len(op.outputs) or any(t < 0 for t in op.outputs):
        raise UserError(f"{len(op.outputs)} outputs for {len(sizes)} parts")
    begin = 0
    for out, size in zip(op.outputs, sizes):
        if size:  # an empty part (Keras' original GRU splits off one) is no tensor: reading it is refused
            _channel_slice(imp, op, src, out, begin, size)
        else:  # TFLite Micro takes it for a dynamic tensor and refuses the model
            imp.graph.refused_numerics[nx.TFLM] = (
                f"operator {op.index} ({op.name}) has an empty output part (Keras' GRU with reset_after=False), "
                "a dynamic tensor TFLite Micro does not allocate")
        begin += size


def _channel_slice(imp: _Importer, op: Operator, src: int, out: int, begin: int, channels: int) -> None:
    """Output tensor `out` as channels [begin, begin + channels) of IR tensor `src`, made when it is
    first read (see _Importer.pending_slices); its values are copied, so it must keep the input's
    quantisation (the runtimes' kernels copy bytes too)."""
    if imp.quant(out) != imp.graph.quant_of(src):
        raise UserError(f"output tensor {out} is quantised differently from the input: the slice copies values")
    if begin == 0 and channels == imp.graph.shape_of(src)[-1]:
        imp.bind(out, src)  # the whole tensor: no copy
        return
    ChannelSlice(begin, channels)  # checks the range now, in the operator's name
    imp.pending_slices[out] = (op, src, begin, channels)


def _split(imp: _Importer, op: Operator) -> None:
    """SPLIT (axis, tensor) into NumSplits equal parts."""
    parts = imp.options(op, schema.SplitOptions).NumSplits()
    src, shape = _sliced_map(imp, op, 1)
    axis = _const_axis(imp, imp.input(op, 0), len(shape))
    if parts < 1 or shape[axis] % parts:
        raise UserError(f"{shape[axis]} channels do not split into {parts} equal parts")
    _channel_parts(imp, op, src, shape, axis, [shape[axis] // parts] * parts)


def _split_v(imp: _Importer, op: Operator) -> None:
    """SPLIT_V (tensor, size_splits, axis): parts of the given sizes, one of them -1 (the rest)."""
    src, shape = _sliced_map(imp, op)
    axis = _const_axis(imp, imp.input(op, 2), len(shape))
    sizes = [int(v) for v in imp.const(imp.input(op, 1), "size_splits").reshape(-1)]
    if sizes.count(-1) == 1:
        sizes[sizes.index(-1)] = shape[axis] - sum(sizes) - 1
    if any(size < 0 for size in sizes) or not any(sizes) or sum(sizes) != shape[axis]:
        raise UserError(f"split sizes {sizes} do not add up to the {shape[axis]} channels")
    _channel_parts(imp, op, src, shape, axis, sizes)


def _slice(imp: _Importer, op: Operator) -> None:
    """SLICE (tensor, begin, size): size -1 runs to the axis' end."""
    src, shape = _sliced_map(imp, op)
    begin, size = (imp.const(imp.input(op, i), name).reshape(-1).tolist() for i, name in ((1, "begin"), (2, "size")))
    if not len(begin) == len(size) == len(shape):
        raise UserError(f"begin {begin} and size {size} for a rank-{len(shape)} tensor")
    ends = [dim if n == -1 else b + n for b, n, dim in zip(begin, size, shape)]
    _slice_channels(imp, op, src, shape, list(zip(begin, ends)))


def _strided_slice_map(imp: _Importer, op: Operator, options) -> None:
    """STRIDED_SLICE of an activation tensor, with unit strides (bounds clamped as TFLite does)."""
    src, shape = _sliced_map(imp, op)
    begin, end, strides = (imp.const(imp.input(op, i), name).reshape(-1).tolist() for i, name in
                           ((1, "begin"), (2, "end"), (3, "strides")))
    if not len(begin) == len(end) == len(strides) == len(shape):
        raise UserError(f"begin {begin}, end {end} and strides {strides} for a rank-{len(shape)} tensor")
    if options.EllipsisMask() or options.NewAxisMask() or options.ShrinkAxisMask() or set(strides) != {1}:
        raise UserError(f"strides {strides} and ellipsis / new-axis / shrink-axis masks: only unit strides "
                        "without those masks are supported on a feature map")
    ranges = []
    for axis, (b, e, dim) in enumerate(zip(begin, end, shape)):
        if options.Offset():
            e += b
        b = 0 if options.BeginMask() >> axis & 1 else min(max(b + dim if b < 0 else b, 0), dim)
        e = dim if options.EndMask() >> axis & 1 else min(max(e + dim if e < 0 else e, 0), dim)
        ranges.append((b, e))
    _slice_channels(imp, op, src, shape, ranges)


def _slice_channels(imp: _Importer, op: Operator, src: int, shape: tuple[int, ...],
                    ranges: list[tuple[int, int]]) -> None:
    """A slice given as a [begin, end) per axis (batch included): only the last axis may be cut."""
    cut = [axis for axis, ((b, e), dim) in enumerate(zip(ranges, shape)) if (b, e) != (0, dim)]
    if any(axis != len(shape) - 1 for axis in cut):
        raise UserError(f"slice {[list(r) for r in ranges]} of a tensor of shape {_dims(shape)}: only slices of the "
                        "channels (the last axis) are supported")
    b, e = ranges[-1]
    if not 0 <= b < e <= shape[-1]:
        raise UserError(f"channels [{b}, {e}) of {shape[-1]}: an empty or out-of-range slice")
    _channel_slice(imp, op, src, op.outputs[0], b, e - b)


def _pack(imp: _Importer, op: Operator) -> None:
    """PACK of constants (shape arithmetic, folded), or of activations along a leading axis: the
    hidden states of an unrolled recurrent layer stacked in time, whose bytes are those of their
    concatenation."""
    options = imp.options(op, schema.PackOptions)
    if op.inputs and not any(imp.is_const(t) for t in op.inputs):
        _pack_steps(imp, op, options.Axis())
        return
    values = [imp.const(t, "packed value") for t in op.inputs]
    rank = values[0].ndim + 1 if values else 0
    if not values or len({v.shape for v in values}) != 1 or not -rank <= options.Axis() < rank:
        raise UserError("PACK of constants needs equally shaped values and a valid axis")
    imp.folded[op.outputs[0]] = np.stack(values, axis=options.Axis())


def _pack_steps(imp: _Importer, op: Operator, axis: int) -> None:
    """PACK of T activations (1, U) into (T, 1, U) or (1, T, U): the flat steps written one at a
    time into one stack (ops/pack_step.py), reshaped to the output's shape."""
    out_shape = imp.shape(op.outputs[0])
    axis %= max(len(out_shape), 1)
    if prod(out_shape[:axis]) != 1:
        raise UserError(f"PACK along axis {axis} into {_dims(out_shape)}: only a stack along a leading axis "
                        "(the steps of a sequence, one after the other) is supported")
    sources = [_flat(imp, t) for t in op.inputs]
    quant = imp.quant(op.outputs[0])
    if imp.unrolled.bidirectional:  # run in the file's order: concatenated at the end (a stack from the first step costs more)
        imp.emit(op, Reshape(imp.fmap_shape(op.outputs[0])), (_concat_chain(imp, sources, quant),))
        return
    if any(imp.graph.quant_of(s) != quant or imp.graph.shape_of(s) != imp.graph.shape_of(sources[0]) for s in sources):
        raise UserError("steps quantised differently from the output, or of different sizes: TFLite's PACK copies values")
    node = imp.graph.append(PackStep(0, len(sources)), (sources[0],), quant=quant)
    for step, src in enumerate(sources[1:], 1):
        node = imp.graph.append(PackStep(step, len(sources)), (node, src), quant=quant)
    imp.unrolled.packed[node] = tuple(sources)
    imp.emit(op, Reshape(imp.fmap_shape(op.outputs[0])), (node,))


def _flat(imp: _Importer, index: int) -> int:
    """The IR tensor of a TFLite tensor's bytes as a vector: itself if it is one, else a reshape."""
    src = _bytes_of(imp, index)
    shape = imp.graph.shape_of(src)
    if len(shape) == 1:
        return src
    return imp.graph.append(Reshape((prod(shape),)), (src,), quant=imp.graph.quant_of(src))


def _concat_chain(imp: _Importer, sources: list[int], quant: Quant | None) -> int:
    """Two-input concatenations along the channels, of tensors sharing `quant` (TFLite's int8
    kernels copy the values as they are): the last one's IR tensor."""
    if any(imp.graph.quant_of(s) != quant for s in sources):
        raise UserError("inputs quantised differently from the output: TFLite's int8 kernel copies values")
    node = sources[0]
    for src in sources[1:]:
        node = imp.graph.append(Concat(), (node, src), quant=quant)
    return node


def _unpack(imp: _Importer, op: Operator) -> None:
    """UNPACK along a leading axis (Keras' unrolled recurrent layers split the time-major (T, 1, F)
    input into its steps): output t is the t-th run of F values, a channel slice of the flat input,
    made when it is first read."""
    options = imp.options(op, schema.UnpackOptions)
    index = imp.input(op, 0)
    shape = imp.shape(index)
    axis = options.Axis() % max(len(shape), 1)
    if prod(shape[:axis]) != 1 or len(op.outputs) != shape[axis] or any(t < 0 for t in op.outputs):
        raise UserError(f"UNPACK of {_dims(shape)} along axis {axis} into {len(op.outputs)} outputs: only the "
                        "steps along a leading axis (a sequence's) are supported")
    flat = _steps_of(imp, index)
    size = prod(shape[axis + 1:])
    packed = imp.unrolled.unpacked(imp.graph, flat, len(op.outputs))  # a stacked layer's hidden states
    for t, out in enumerate(op.outputs):
        imp.unrolled.step_of[out] = t
        if packed is not None and imp.quant(out) == imp.graph.quant_of(packed[t]):
            imp.bind(out, _unflattened(imp, packed[t], imp.fmap_shape(out)))
        else:
            _channel_slice(imp, op, flat, out, t * size, size)


def _steps_of(imp: _Importer, index: int) -> int:
    """The IR tensor whose last axis holds a sequence's bytes: a sequence of maps is one row of
    them already (fmap_shape), which a reshape would copy whole into the arena (the network input)."""
    if index in imp.map_sequences:
        imp.unrolled.maps = True
        return imp.source(index)
    return _flat(imp, index)


def _unflattened(imp: _Importer, flat: int, shape: tuple[int, ...]) -> int:
    """The map a flat step (`_flat`'s reshape of it) was made from, when that map has `shape`."""
    node = imp.graph.nodes[flat] if flat >= 0 else None
    if node is not None and isinstance(node.op, Reshape) and imp.graph.shape_of(node.inputs[0]) == shape:
        return node.inputs[0]
    return flat


def _step_of_maps(imp: _Importer, op: Operator, options) -> bool:
    """STRIDED_SLICE of step t of a sequence of maps (x[:, t] of a (1, T, H, W, C) tensor, a ConvLSTM
    written step by step): what UNPACK's output t is, a slice of the flat sequence."""
    index = imp.input(op, 0)
    if index not in imp.map_sequences:
        return False
    shape = imp.shape(index)
    begin, end, strides = (imp.const(imp.input(op, i), name).reshape(-1).tolist() for i, name in
                           ((1, "begin"), (2, "end"), (3, "strides")))
    one_step = len(begin) == len(end) == len(strides) == 5 and set(strides) == {1} and not (
        options.EllipsisMask() or options.NewAxisMask() or options.Offset()) and options.ShrinkAxisMask() == 2
    whole = one_step and all((options.BeginMask() >> a & 1 or begin[a] == 0)
                             and (options.EndMask() >> a & 1 or end[a] >= shape[a]) for a in (0, 2, 3, 4))
    if not whole or not -shape[1] <= begin[1] < shape[1]:
        raise UserError(f"slices {_dims(shape)}, a sequence of maps, otherwise than one whole step (x[:, t])")
    step, size = begin[1] % shape[1], prod(shape[2:])
    out = op.outputs[0]
    imp.graph.refused_numerics.setdefault(nx.TFLM, (
        f"operator {op.index} ({op.name}) slices a rank-5 tensor, which TFLite Micro does not prepare (its STRIDED_SLICE "
        "takes at most 4 dimensions): take the steps apart with tf.unstack (UNPACK) instead"))
    imp.unrolled.step_of[out] = step
    _channel_slice(imp, op, _steps_of(imp, index), out, step * size, size)
    return True


def _map_sequences(imp: _Importer, operators: list[Operator]) -> frozenset[int]:
    """The sequences of maps: rank-5 activations (1, T, H, W, C) that an UNPACK takes apart or a
    STRIDED_SLICE slices, or that a PACK stacks (a ConvLSTM written step by step)."""
    found = set()
    for op in operators:
        ends = op.inputs[:1] if op.name in ("UNPACK", "STRIDED_SLICE") else op.outputs[:1] if op.name == "PACK" else ()
        found.update(t for t in ends if t >= 0 and len(imp.shape(t)) == 5 and not imp.is_const(t))
    return frozenset(found)


def _check_sequences_of_maps(imp: _Importer, operators: list[Operator]) -> None:
    """A sequence of maps is held as one row of its bytes (fmap_shape): only the operators that
    take its steps apart or stack them may touch it."""
    for op in operators:
        if op.name in _SEQUENCE_OF_MAPS_OPERATORS:
            continue
        for t in op.inputs + op.outputs:
            if t in imp.map_sequences:
                raise UserError(f"operator {op.index} ({op.name}) reads or writes the sequence of maps tensor {t} "
                                f"({_dims(imp.shape(t))}): only UNPACK, PACK and STRIDED_SLICE of one step may "
                                "(a ConvLSTM written step by step)")


def _reverse_v2(imp: _Importer, op: Operator) -> None:
    """REVERSE_V2 of a sequence along its steps (Keras' Bidirectional runs its backward layer on the
    reversed input and reverses its output back): a gather of the flat sequence's values, step by
    step from the last. Copies values, so the output keeps the input's quantisation."""
    index = imp.input(op, 0)
    shape = imp.shape(index)
    axes = [int(a) % len(shape) for a in imp.const(imp.input(op, 1), "axis").reshape(-1)]
    if len(axes) != 1 or prod(shape[:axes[0]]) != 1 or axes[0] == len(shape) - 1:
        raise UserError(f"REVERSE_V2 of {_dims(shape)} along {axes}: only the steps of a sequence (a leading axis "
                        "other than the channels) may be reversed")
    steps, size = shape[axes[0]], prod(shape[axes[0] + 1:])
    indices = tuple(int(i) for i in np.arange(steps * size).reshape(steps, size)[::-1].reshape(-1))
    flat = _flat(imp, index)
    node = imp.graph.append(ChannelGather(indices), (flat,), quant=imp.graph.quant_of(flat))
    imp.emit(op, Reshape(imp.fmap_shape(op.outputs[0])), (node,))  # the bytes, relabelled


def _unrolled_time_major(imp: _Importer, operators: list[Operator]) -> frozenset[int]:
    """The time-major (T, 1, F) tensors of unrolled recurrent layers (Keras' GRU with unroll=True):
    a RESHAPE of the (1, T, F) input that an UNPACK splits into steps, and the PACK of the steps'
    hidden states that a RESHAPE turns back. Their bytes are those of (1, T, F) (fmap_shape)."""
    tensors = set()
    unpacked = {op.inputs[0] for op in operators if op.name == "UNPACK" and op.inputs}
    for op in operators:
        if op.name not in ("RESHAPE", "PACK") or not op.outputs or op.outputs[0] < 0:
            continue
        out = op.outputs[0]
        shape = imp.shape(out)
        if len(shape) != 3 or shape[0] == 1 or shape[1] != 1:
            continue
        if op.name == "RESHAPE" and out in unpacked:
            tensors.add(out)
        elif op.name == "PACK" and not any(imp.is_const(t) for t in op.inputs if t >= 0):
            tensors.add(out)
    return frozenset(tensors)


# UNIDIRECTIONAL_SEQUENCE_LSTM's inputs (TFLite's lstm_shared.h): the input, four input-to-gate and
# four recurrent-to-gate weights, peepholes, four gate biases, projection, the two state tensors
# and layer-norm coefficients. Gates in TFLite's order: input, forget, cell, output.
_LSTM_INPUT_WEIGHTS, _LSTM_RECURRENT_WEIGHTS, _LSTM_BIASES = (1, 2, 3, 4), (5, 6, 7, 8), (12, 13, 14, 15)
_LSTM_HIDDEN, _LSTM_CELL = 18, 19
_LSTM_UNSUPPORTED = {"peephole connections are": (9, 10, 11), "a projection is": (16, 17),
                     "layer normalisation is": (20, 21, 22, 23)}


def _lstm(imp: _Importer, op: Operator) -> None:
    """A whole-sequence LSTM. Its states are TFLite variable tensors, which both runtimes keep from
    one invocation to the next. An LSTM of one step per invocation (a streaming model) keeps them
    too, as graph state buffers; a longer sequence starts from zero states every run."""
    options = imp.options(op, schema.UnidirectionalSequenceLSTMOptions)
    if options.FusedActivationFunction() != schema.ActivationFunctionType.TANH:
        raise UserError("only the tanh cell activation is supported")
    if len(op.inputs) != 24:
        raise UserError(f"{len(op.inputs)} inputs; expected the 24 of a full-integer or float LSTM")
    if imp.input(op, 1, optional=True) < 0:
        raise UserError("a coupled input and forget gate (CIFG, no input gate weights) is not supported")
    for what, positions in _LSTM_UNSUPPORTED.items():
        if any(imp.input(op, k, optional=True) >= 0 for k in positions):
            raise UserError(f"{what} not supported")
    for k in (_LSTM_HIDDEN, _LSTM_CELL):
        if imp.is_const(imp.input(op, k)) and np.any(imp.const(imp.input(op, k), "state")):
            raise UserError(f"state tensor {imp.input(op, k)} starts from non-zero values")
    src = imp.source(imp.input(op, 0))
    steps, features = imp.fmap_shape(imp.input(op, 0))[-2:]
    weights = [imp.const(imp.input(op, k), "weights") for k in _LSTM_INPUT_WEIGHTS + _LSTM_RECURRENT_WEIGHTS]
    units = weights[0].shape[0]
    if any(w.shape != (units, features) for w in weights[:4]) or any(w.shape != (units, units) for w in weights[4:]):
        raise UserError(f"gate weights {[_dims(w.shape) for w in weights]} do not fit {features} features "
                        f"and {units} units")
    biases = [imp.const(imp.input(op, k), "bias") for k in _LSTM_BIASES]
    consts = {"input_weights": np.stack(weights[:4]), "recurrent_weights": np.stack(weights[4:]),
              "bias": np.stack(biases)}
    if imp.reads_float32(op):
        if any(w.dtype != np.float32 for w in weights + biases):
            raise UserError("a float32 LSTM needs float32 weights and biases (hybrid LSTMs are not supported)")
        ir_op = Lstm(units, cell_clip=float(options.CellClip()))
    else:
        ir_op = _integer_lstm(imp, op, units, consts, float(options.CellClip()))
    streaming = steps == 1 and all(imp.tensor(imp.input(op, k)).IsVariable() for k in (_LSTM_HIDDEN, _LSTM_CELL))
    node = imp.emit(op, replace(ir_op, stateful=streaming), (src,), consts)
    if streaming:  # one step a call: the states carry the sequence across invocations
        for name, value in zip(("hidden_state", "cell_state"), ir_op.state_buffers(imp.reads_float32(op))):
            imp.graph.add_state(node, name, value)


def _widened_head(imp: _Importer, operators: list[Operator]) -> frozenset[int]:
    """The tensors of a keyword model's head (TFLite Micro's keyword models): the int16 output of a
    SOFTMAX of int8, and the int32 output of a QUANTIZE of that. Only these may widen an int8 graph
    (or the int8 part behind an int16 input's QUANTIZE)."""
    int8, int16, int32 = schema.TensorType.INT8, schema.TensorType.INT16, schema.TensorType.INT32
    tensors: set[int] = set()
    for op in operators:
        if not op.inputs or op.inputs[0] < 0 or len(op.outputs) != 1:
            continue
        source, out = imp.type_of(op.inputs[0]), imp.type_of(op.outputs[0])
        if (op.name == "SOFTMAX" and (source, out) == (int8, int16)) \
                or (op.name == "QUANTIZE" and op.inputs[0] in tensors and out == int32):
            tensors.add(op.outputs[0])
    return frozenset(tensors)


def _widened_quant(imp: _Importer, index: int) -> Quant:
    """The quantisation of a widened head's tensor (_widened_head): one scale and zero point, in
    its type's range."""
    q = imp.tensor(index).Quantization()
    scales = () if q is None or q.ScaleIsNone() else tuple(float(s) for s in q.ScaleAsNumpy())
    zeros = () if q is None else _ints(q, "ZeroPoint")
    if len(scales) != 1 or len(zeros) != 1 or not (isfinite(scales[0]) and scales[0] > 0):
        raise UserError(f"tensor {index} needs one positive scale and one zero point")
    return Quant(scales[0], int(zeros[0]))


def _time_major_tensors(imp: _Importer, operators: list[Operator]) -> frozenset[int]:
    """The input and output tensors of time-major LSTMs with one sequence: (T, 1, F), whose bytes
    are those of the batch-major (1, T, F), so they import as such (fmap_shape)."""
    tensors = set()
    for op in operators:
        if op.name != "UNIDIRECTIONAL_SEQUENCE_LSTM" or not op.inputs or not op.outputs:
            continue
        if not imp.options(op, schema.UnidirectionalSequenceLSTMOptions).TimeMajor():
            continue
        for tensor in (op.inputs[0], op.outputs[0]):
            shape = imp.shape(tensor) if tensor >= 0 else ()
            if len(shape) != 3 or shape[1] != 1:
                raise UserError(f"operator {op.index} (UNIDIRECTIONAL_SEQUENCE_LSTM): time-major tensor {tensor} of "
                                f"shape {_dims(shape)}: only one sequence (batch 1) is supported")
            tensors.add(tensor)
    return frozenset(tensors)


def _integer_lstm(imp: _Importer, op: Operator, units: int, consts: dict, cell_clip: float) -> Lstm:
    """The int8 LSTM's quantisation: per-tensor int8 weights, int32 biases, an int8 hidden state
    (also the output's quantisation), an int16 cell state of a power-of-two scale, and the hidden
    state's intermediate (LiteRT requantises h with it)."""
    if imp.type_of(imp.input(op, 0)) != schema.TensorType.INT8:
        raise UserError("only int8 (full-integer, int16 cell state) and float32 LSTMs are supported")
    if any(w.dtype != np.int8 for w in (consts["input_weights"], consts["recurrent_weights"])) \
            or consts["bias"].dtype != np.int32:
        raise UserError("an int8 LSTM needs int8 weights and int32 biases")
    scales = [imp.weight_quant(imp.input(op, k)).scale for k in _LSTM_INPUT_WEIGHTS + _LSTM_RECURRENT_WEIGHTS]
    consts["input_scales"], consts["recurrent_scales"] = np.array(scales[:4], np.float32), np.array(scales[4:], np.float32)
    hidden, cell = imp.input(op, _LSTM_HIDDEN), imp.input(op, _LSTM_CELL)
    if imp.type_of(cell) != schema.TensorType.INT16:
        raise UserError(f"the cell state (tensor {cell}) is {_TYPE_NAMES.get(imp.type_of(cell))}; expected int16")
    hidden_q = imp.quant(hidden)
    cell_scale = _cell_scale(imp, cell)
    log2 = int(round(np.log2(cell_scale)))
    if 2.0 ** log2 != cell_scale:
        raise UserError(f"the cell state's scale {cell_scale} is not a power of two")
    # The runtimes copy the hidden state's bytes to the output, whatever the output's quantisation
    # says (Keras' Bidirectional gives the forward output the concatenation's): the node keeps the
    # output's label, its bytes are the hidden state's.
    intermediates = _ints(op.raw, "Intermediates")
    if len(intermediates) != 5:
        raise UserError(f"{len(intermediates)} intermediate tensors; expected the 5 of the 8x8_16 integer LSTM")
    effective = imp.quant(intermediates[4])
    return Lstm(units, cell_clip=cell_clip, cell_log2=log2, hidden_scale=hidden_q.scale,
                hidden_zero=hidden_q.zero_point, litert_hidden_scale=effective.scale,
                litert_hidden_zero=effective.zero_point)


def _cell_scale(imp: _Importer, tensor: int) -> float:
    q = imp.tensor(tensor).Quantization()
    scales = () if q is None or q.ScaleIsNone() else tuple(float(s) for s in q.ScaleAsNumpy())
    if len(scales) != 1 or any(_ints(q, "ZeroPoint")):
        raise UserError(f"the cell state (tensor {tensor}) needs one scale and zero point 0")
    return scales[0]


def _last_step_of_lstm(imp: _Importer, op: Operator, options) -> bool:
    """Fold a STRIDED_SLICE of the last step of a whole-sequence LSTM (Keras' return_sequences
    False) into the LSTM: it then keeps only its last hidden state."""
    index = imp.input(op, 0)
    node = imp.ir_tensor.get(index)
    graph = imp.graph
    if node is None or node < 0 or node != len(graph.nodes) - 1 or not isinstance(graph.nodes[node].op, Lstm) \
            or not graph.nodes[node].op.return_sequences or imp.readers_of(node) != 1:
        return False
    shape = imp.shape(index)
    begin, end, strides = (imp.const(imp.input(op, i), name).reshape(-1).tolist() for i, name in
                           ((1, "begin"), (2, "end"), (3, "strides")))
    if len(shape) != 3 or not len(begin) == len(end) == len(strides) == 3 or set(strides) != {1} \
            or options.EllipsisMask() or options.NewAxisMask() or options.Offset() or options.ShrinkAxisMask() != 2:
        return False
    whole = all((options.BeginMask() >> a & 1 or begin[a] == 0) and (options.EndMask() >> a & 1 or end[a] >= shape[a])
                for a in (0, 2))
    if not whole or begin[1] not in (-1, shape[1] - 1) or imp.quant(op.outputs[0]) != graph.nodes[node].quant:
        return False
    lstm = graph.nodes[node]
    graph.nodes[node] = replace(lstm, op=replace(lstm.op, return_sequences=False), shape=(lstm.op.units,))
    imp.bind(op.outputs[0], node)
    return True


# Shape arithmetic, folded at import (and STRIDED_SLICE of a constant shape, which else is a slice).
FOLDED_OPERATORS = frozenset({"SHAPE", "PACK"})
MULTI_OUTPUT_OPERATORS = frozenset({"SPLIT", "SPLIT_V", "UNPACK"})
_SEQUENCE_OF_MAPS_OPERATORS = frozenset({"UNPACK", "PACK", "STRIDED_SLICE"})
_CONV_LOOP_REFUSAL = ("a ConvLSTM2D (a loop whose body convolves) is not supported: write its cell unrolled, a Python loop "
                      "over the steps applying shared Conv2D layers, sigmoid / tanh gates, Multiply and Add "
                      "(docs/models.md)")
# Control flow, refused in one line that says what converts instead.
_LOOP_OPERATORS = {
    "WHILE": "a recurrent layer converted as a loop is not supported: export a Keras GRU or RNN with "
             "unroll=True (or an LSTM with tf_keras, which keeps the fused UNIDIRECTIONAL_SEQUENCE_LSTM)",
}
# _check_elements' refusals (which operators each element type reaches: operators.tflite_converted).
_REFUSALS = {
    "int16": "operator {index} ({name}) has int16 activations: 16x8 models support only {names} ({why})",
    "float32": "operator {index} ({name}) reads float32 activations: float32 operators may be {names} ({why})",
    "uint8": "operator {index} ({name}): {name} on uint8 tensors is not supported (uint8 models may use {names}; "
             "{why})",
}


def _why_not(name: str, element: str) -> str:
    classes = OPERATORS[name]
    if any(cls.supports(element) for cls in classes):
        return f"msfcnn converts no {element} {name} yet"
    return f"msfcnn's {op_kinds(classes)} {'op has' if len({c.kind for c in classes}) == 1 else 'ops have'} " \
           f"no {element} kernel"


Converter = Callable[[_Importer, Operator], None]
CONVERTERS: dict[str, Converter] = {
    "CONV_2D": _conv2d,
    "TRANSPOSE_CONV": _transpose_conv,
    "CONCATENATION": _concatenation,
    "DEPTHWISE_CONV_2D": _depthwise_conv2d,
    "FULLY_CONNECTED": _fully_connected,
    "SVDF": _svdf,
    "ADD": _add,
    "MUL": _mul,
    "SUB": _sub(Sub, SubConst),
    "SQUARED_DIFFERENCE": _sub(SquaredDifference, SquaredDifferenceConst),
    "MAXIMUM": _min_max(Maximum, MaximumConst),
    "MINIMUM": _min_max(Minimum, MinimumConst),
    "LEAKY_RELU": _leaky_relu,
    "TANH": _tanh,
    "PRELU": _prelu,
    "RELU_N1_TO_1": _clamp("relu_n1_to_1"),
    "RELU_0_TO_1": _clamp("relu_0_to_1"),
    "MAX_POOL_2D": _pool(MaxPool2D),
    "AVERAGE_POOL_2D": _pool(AvgPool2D),
    "MEAN": _mean,
    "REDUCE_MAX": _reduce_max,
    "SOFTMAX": _softmax,
    "TRANSPOSE": _transpose,
    "RESIZE_NEAREST_NEIGHBOR": _resize(ResizeNearest, schema.ResizeNearestNeighborOptions),
    "RESIZE_BILINEAR": _resize(ResizeBilinear, schema.ResizeBilinearOptions),
    "SPACE_TO_DEPTH": _block_moves(SpaceToDepth, schema.SpaceToDepthOptions),
    "DEPTH_TO_SPACE": _block_moves(DepthToSpace, schema.DepthToSpaceOptions),
    "RESHAPE": _reshape,
    "SQUEEZE": _squeeze,
    "EXPAND_DIMS": _expand_dims,
    "PAD": _pad,
    "PADV2": _padv2,
    "RELU": _relu("relu"),
    "RELU6": _relu("relu6"),
    "QUANTIZE": _quantize,
    "DEQUANTIZE": _dequantize,
    # Shape arithmetic, folded into constants at import.
    "SHAPE": _shape,
    "STRIDED_SLICE": _strided_slice,  # or a channel slice of a feature map
    "PACK": _pack,  # or the steps of an unrolled recurrent layer stacked in time
    "UNPACK": _unpack,
    "REVERSE_V2": _reverse_v2,  # of a sequence's steps (a bidirectional layer's backward half)
    "SPLIT": _split,
    "SPLIT_V": _split_v,
    "SLICE": _slice,
    "UNIDIRECTIONAL_SEQUENCE_LSTM": _lstm,
    **{name: _elementwise(op_class) for name, op_class in TFLITE_ELEMENTWISE.items()},
}


def _reads_a_channel_view(imp: _Importer, op: Operator) -> bool:
    """A TRANSPOSE of a channel shuffle (see _splits_the_channels): a copy of values, for any type."""
    return op.name == "TRANSPOSE" and bool(op.inputs) and op.inputs[0] in imp.channel_views
