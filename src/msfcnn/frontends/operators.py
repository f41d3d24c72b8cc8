"""What each frontend's operators become: format operator name -> the op classes its converter
can produce (src/msfcnn/ops/). Kept free of the format packages (tflite, onnx), so that the list
of supported operators costs no model reader to print.

An op class declares the element types it has kernels for (`Op.elements`); a frontend refuses an
operator on an element type that none of its op classes supports, in one line naming both.
"""

from __future__ import annotations

from ..ops import AvgPool2D, Conv2D, Dense, DepthwiseConv2D, GlobalAvgPool, MaxPool2D, Op, Pad, Requantize, Reshape, Softmax
from ..ops.abs import Abs
from ..ops.activation import Activation
from ..ops.add import Add
from ..ops.add_const import AddConst
from ..ops.add_uint8 import AddUint8
from ..ops.axis_mean import AxisMean
from ..ops.channel_gather import ChannelGather
from ..ops.channel_slice import ChannelSlice
from ..ops.concat import Concat
from ..ops.pack_step import PackStep
from ..ops.depth_to_space import DepthToSpace
from ..ops.dequantize import Dequantize
from ..ops.elu import Elu
from ..ops.float_unary import FloatUnary
from ..ops.gru import Gru
from ..ops.hard_sigmoid import HardSigmoid
from ..ops.hard_swish import HardSwish
from ..ops.leaky_relu import LeakyRelu, WideLeakyRelu
from ..ops.logistic import Logistic
from ..ops.lstm import Lstm
from ..ops.min_max import Maximum, MaximumConst, Minimum, MinimumConst
from ..ops.mul import Mul, MulBroadcast, MulConst
from ..ops.pool2d import AvgPool2DHalfUp
from ..ops.prelu import Prelu
from ..ops.quantize import Quantize
from ..ops.resize_bilinear import ResizeBilinear
from ..ops.resize_nearest import ResizeNearest
from ..ops.rnn import Rnn
from ..ops.rsqrt import Rsqrt
from ..ops.space_to_depth import SpaceToDepth
from ..ops.tanh import Tanh
from ..ops.sub import SquaredDifference, SquaredDifferenceConst, Sub, SubConst
from ..ops.svdf import Svdf
from ..ops.transpose import Transpose
from ..ops.transpose_conv import TransposeConv

OpClasses = tuple[type[Op], ...]

# TFLite builtin operator -> the op classes its converter (frontends/tflite.py) can produce. An
# empty tuple: shape arithmetic folded into constants at import.
TFLITE: dict[str, OpClasses] = {
    "CONV_2D": (Conv2D,),
    "DEPTHWISE_CONV_2D": (DepthwiseConv2D,),
    "TRANSPOSE_CONV": (TransposeConv,),
    "FULLY_CONNECTED": (Dense,),
    "SVDF": (Svdf,),
    "ADD": (Add, AddConst, AddUint8),
    "MUL": (Mul, MulConst, MulBroadcast),
    "SUB": (Sub, SubConst),
    "SQUARED_DIFFERENCE": (SquaredDifference, SquaredDifferenceConst),
    "MAXIMUM": (Maximum, MaximumConst),
    "MINIMUM": (Minimum, MinimumConst),
    "LEAKY_RELU": (LeakyRelu, WideLeakyRelu),
    "TANH": (Tanh, FloatUnary),
    "PRELU": (Prelu,),
    "RELU": (Activation,),
    "RELU6": (Activation,),
    "RELU_N1_TO_1": (Activation,),
    "RELU_0_TO_1": (Activation,),
    "MAX_POOL_2D": (MaxPool2D,),
    "AVERAGE_POOL_2D": (AvgPool2D, GlobalAvgPool, AvgPool2DHalfUp),
    "MEAN": (GlobalAvgPool, AxisMean),
    "REDUCE_MAX": (MaxPool2D,),
    "SOFTMAX": (Softmax,),
    "CONCATENATION": (Concat,),
    "TRANSPOSE": (Transpose,),
    "RESIZE_NEAREST_NEIGHBOR": (ResizeNearest,),
    "RESIZE_BILINEAR": (ResizeBilinear,),
    "SPACE_TO_DEPTH": (SpaceToDepth,),
    "DEPTH_TO_SPACE": (DepthToSpace,),
    "RESHAPE": (Reshape, ChannelGather),
    "SQUEEZE": (Reshape,),
    "EXPAND_DIMS": (Reshape,),
    "PAD": (Pad,),
    "PADV2": (Pad,),
    "QUANTIZE": (Quantize, Requantize),
    "DEQUANTIZE": (Dequantize,),
    "SHAPE": (),
    "PACK": (PackStep, Reshape),  # of constants: folded (TFLITE_FOLDED_FOR)
    "UNPACK": (ChannelSlice,),
    "REVERSE_V2": (ChannelGather, Reshape),
    "STRIDED_SLICE": (ChannelSlice,),
    "SPLIT": (ChannelSlice,),
    "SPLIT_V": (ChannelSlice,),
    "SLICE": (ChannelSlice,),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": (Lstm,),
}

# Element-wise TFLite operators without options, each made into one op by the importer's generic
# converter: a table op (ops/lookup.py) becomes its int8 table, any other op runs its own kernel.
# Adding such an operator to the TFLite frontend is one line here.
TFLITE_ELEMENTWISE: dict[str, type[Op]] = {
    "LOGISTIC": Logistic,
    "HARD_SWISH": HardSwish,
    "ELU": Elu,
    "RSQRT": Rsqrt,
    "ABS": Abs,
}
TFLITE.update({name: (op_class,) for name, op_class in TFLITE_ELEMENTWISE.items()})

# ONNX op type -> the op classes its converter (frontends/onnx.py) can produce (all float32).
ONNX: dict[str, OpClasses] = {
    "Conv": (Conv2D, DepthwiseConv2D),
    "ConvTranspose": (TransposeConv,),
    "BatchNormalization": (DepthwiseConv2D,),
    "Relu": (Activation,),
    "Clip": (Activation,),
    "Add": (Add, AddConst),
    "MaxPool": (MaxPool2D,),
    "AveragePool": (AvgPool2D,),
    "GlobalAveragePool": (GlobalAvgPool,),
    "GlobalMaxPool": (MaxPool2D,),
    "ReduceMean": (GlobalAvgPool,),
    "Gemm": (Dense,),
    "MatMul": (Dense,),
    "Flatten": (Reshape, GlobalAvgPool),
    "Reshape": (Reshape, ChannelGather),
    "Transpose": (ChannelGather,),
    "Softmax": (Softmax,),
    "Pad": (Pad,),
    "Mul": (Mul, MulConst, MulBroadcast),
    "Sub": (Sub, SubConst),
    "Max": (Maximum, MaximumConst),
    "Min": (Minimum, MinimumConst),
    "Squeeze": (Reshape,),
    "Unsqueeze": (Reshape,),
    "Concat": (Concat,),
    "Split": (ChannelSlice,),
    "Slice": (ChannelSlice,),
    "Sigmoid": (Logistic,),
    "HardSigmoid": (HardSigmoid,),
    "HardSwish": (HardSwish,),
    "LeakyRelu": (FloatUnary,),
    "Tanh": (FloatUnary,),
    "Elu": (FloatUnary,),
    "PRelu": (Prelu,),
    "Identity": (),
    "Resize": (ResizeNearest, ResizeBilinear),
    "Dropout": (),
    "Constant": (),
    "Shape": (),
    # one op per direction; a bidirectional layer's two concatenated per step
    "LSTM": (Lstm,),
    "GRU": (Gru, Reshape, Concat),
    "RNN": (Rnn, Reshape, Concat),
}


# JSON layer-list layer type -> the op classes its converter (frontends/layer_list.py) makes (int8).
LAYER_LIST: dict[str, OpClasses] = {
    "conv2d": (Conv2D,),
    "depthwise_conv2d": (DepthwiseConv2D,),
    "max_pool2d": (MaxPool2D,),
    "avg_pool2d": (AvgPool2D,),
    "add": (Add, AddConst),
    "mul": (Mul, MulConst, MulBroadcast),
    "sub": (Sub, SubConst),
    "squared_difference": (SquaredDifference, SquaredDifferenceConst),
    "maximum": (Maximum, MaximumConst),
    "minimum": (Minimum, MinimumConst),
    "concat": (Concat,),
    "channel_slice": (ChannelSlice,),
    "channel_shuffle": (ChannelGather,),
    "space_to_depth": (SpaceToDepth,),
    "depth_to_space": (DepthToSpace,),
    "global_avg_pool": (GlobalAvgPool,),
    "mean": (AxisMean,),
    "pad": (Pad,),
    "transpose": (Transpose,),
    "dense": (Dense,),
    "softmax": (Softmax,),
    "relu": (Activation,),
    "relu6": (Activation,),
    "logistic": (Logistic,),
    "hard_swish": (HardSwish,),
    "leaky_relu": (LeakyRelu,),
    "tanh": (Tanh,),
    "elu": (Elu,),
    "prelu": (Prelu,),
    "relu_n1_to_1": (Activation,),
    "relu_0_to_1": (Activation,),
}
FORMATS = {"tflite": TFLITE, "onnx": ONNX, "layer_list": LAYER_LIST}


def kinds_by_name(operators: dict[str, OpClasses]) -> dict[str, tuple[str, ...]]:
    """A frontend's table as operator name -> the op kinds it can make (sorted)."""
    return {name: tuple(sorted({cls.kind for cls in classes})) for name, classes in operators.items()}


def reaching(element: str, operators: dict[str, OpClasses]) -> set[str]:
    """The operators of a frontend's table with a kernel for `element` among their op classes."""
    return {name for name, classes in operators.items() if any(cls.supports(element) for cls in classes)}


# What each element type of a TFLite model reaches beyond, or short of, the kernels its ops declare:
# frontend facts, not op capabilities (here, not in tflite.py, so that `msfcnn ops` reads them
# without the flatbuffer classes). A 16x8 model's QUANTIZE / DEQUANTIZE at its float32 edges is
# folded into the graph (no op).
TFLITE_FOLDED_FOR = {"int16": frozenset({"QUANTIZE", "DEQUANTIZE", "PACK"})}
# Forms whose op has the kernel but whose converter reads only quantised constants and options, or
# whose uint8 form was never checked against LiteRT (tests/integration/test_uint8.py): refused.
TFLITE_NOT_CONVERTED = {
    "float32": frozenset({"EXPAND_DIMS", "MAXIMUM", "MINIMUM", "PADV2", "PRELU", "REDUCE_MAX", "RELU_0_TO_1",
                          "RELU_N1_TO_1", "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", "SQUARED_DIFFERENCE",
                          "SQUEEZE"}),
    "int16": frozenset({"REDUCE_MAX", "REVERSE_V2", "UNPACK"}),
    "uint8": frozenset({"EXPAND_DIMS", "REDUCE_MAX", "RELU", "RELU6", "REVERSE_V2", "SQUEEZE", "UNPACK"}),
}


def tflite_converted(element: str) -> frozenset[str]:
    """The builtin operators the TFLite importer converts on `element` activations (it refuses the
    others, frontends/tflite.py): those with an op that has a kernel for it, and the shape
    arithmetic folded at import."""
    reached = reaching(element, TFLITE) | {name for name, classes in TFLITE.items() if not classes}
    reached |= TFLITE_FOLDED_FOR.get(element, frozenset())
    return frozenset(reached - TFLITE_NOT_CONVERTED.get(element, frozenset()))


def op_kinds(classes: OpClasses) -> str:
    """The op kinds of some op classes, for a message: "add, add_const and add_uint8"."""
    kinds = sorted({cls.kind for cls in classes})
    return ", ".join(kinds[:-1]) + " and " + kinds[-1] if len(kinds) > 1 else "".join(kinds)
