"""Operators, one per file, each implementing the interface in `base.Op`."""

import importlib
import pkgutil
from dataclasses import dataclass

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

ELEMENTS = ("int8", "int16", "float32", "uint8")


@dataclass(frozen=True)
class OpFacts:
    """What one op class declares: for the support matrix (`msfcnn ops`, docs/operators.md)."""

    name: str  # the class, e.g. "AddUint8"
    kind: str  # its kind, which variants of one op share ("add")
    pattern: str  # how it fuses (base.Pattern's value)
    elements: tuple[str, ...]  # the element types it has kernels for, in ELEMENTS' order
    numerics: dict[str, tuple[str, ...]]  # element type -> the numerics it has kernels for
    numerics_by_attributes: bool  # some attribute values have kernels under fewer numerics (refused_under)


def op_classes() -> list[type[Op]]:
    """Every concrete op class (one with a kind) of the modules of this package, by name."""
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    found, stack = set(), [Op]
    while stack:
        for sub in stack.pop().__subclasses__():
            stack.append(sub)
            if hasattr(sub, "kind") and not sub.__name__.startswith("_"):
                found.add(sub)
    return sorted(found, key=lambda cls: (cls.kind, cls.__name__))


def op_facts() -> list[OpFacts]:
    """The facts of every op class (see op_classes)."""
    return [OpFacts(cls.__name__, cls.kind, cls.pattern.value, tuple(e for e in ELEMENTS if cls.supports(e)),
                    {e: cls.numerics_for(e) for e in ELEMENTS if cls.supports(e)},
                    cls.refused_under is not Op.refused_under)
            for cls in op_classes()]


# The numerics variants register themselves with the ops they vary (base.numerics_variant): imported
# here, so that every op finds its variants without its module importing them back.
from . import add_const_litert, add_litert, depthwise_conv2d_litert, lstm_tflm, softmax_tflm  # noqa: E402,F401  (isort: skip)

__all__ = ["Add", "AvgPool2D", "AxisWindow", "CCall", "Pattern", "Conv2D", "Dense", "DepthwiseConv2D", "GlobalAvgPool", "KernelContext",
           "MaxPool2D", "Op", "OpFacts", "op_classes", "op_facts", "Pad", "Requantize", "Reshape", "Shape", "Softmax", "Window"]
