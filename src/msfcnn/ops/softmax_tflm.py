"""SOFTMAX from int8 to int16 under TFLite Micro's numerics (`--numerics tflm`): the same op
(ops/softmax.py computes either runtime's arithmetic from its context), whose kernel runs TFLite's
reference fixed-point path instead of LiteRT's float32 one: a path of another cost, so it names a
latency family of its own. Every other SOFTMAX stays the op itself."""

from __future__ import annotations

from dataclasses import dataclass, fields

from .. import numerics as nx
from .base import numerics_variant
from .loop_counts import KernelBuild
from .softmax import Softmax


@dataclass(frozen=True)
class SoftmaxWideTflm(Softmax):
    kernel_family = "softmax_wide_tflm"

    @classmethod
    def latency_families(cls, kernel: KernelBuild) -> tuple[str, ...]:
        """Its int8 kernel's only (an int8 input is the only one it takes)."""
        return (cls.kernel_family,) if kernel.element == "int8" else ()


@numerics_variant(Softmax, nx.TFLM)
def _tflm_softmax(op: Softmax, ctx, shape) -> Softmax:
    """The int8 -> int16 SOFTMAX as TFLite Micro runs it."""
    if op.output_type is None or isinstance(op, SoftmaxWideTflm):
        return op
    return SoftmaxWideTflm(**{f.name: getattr(op, f.name) for f in fields(op)})
