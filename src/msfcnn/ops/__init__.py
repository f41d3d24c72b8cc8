"""Operators, one per file, each implementing the interface in `base.Op`."""

from .add import Add
from .base import AxisWindow, CCall, KernelContext, Op, Pattern, Shape, Window
from .conv2d import Conv2D
from .dense import Dense
from .depthwise_conv2d import DepthwiseConv2D
from .global_avg_pool import GlobalAvgPool
from .pad import Pad
from .pool2d import AvgPool2D, MaxPool2D
from .requantize import Requantize
from .reshape import Reshape
from .softmax import Softmax

# The numerics variants register themselves with the ops they vary (base.numerics_variant): imported
# here, so that every op finds its variants without its module importing them back.
from . import add_const_litert, add_litert, depthwise_conv2d_litert  # noqa: E402,F401  (isort: skip)

__all__ = ["Add", "AvgPool2D", "AxisWindow", "CCall", "Pattern", "Conv2D", "Dense", "DepthwiseConv2D", "GlobalAvgPool", "KernelContext",
           "MaxPool2D", "Op", "Pad", "Requantize", "Reshape", "Shape", "Softmax", "Window"]
