"""SOFTMAX of an int8 input under TFLite Micro's numerics (`--numerics tflm`). LiteRT's int8 kernel
works in float32 (a table of exps, ops/softmax.py); TFLite Micro runs TFLite's reference integer
kernel, in gemmlowp's fixed point, whose outputs differ now and then by one step. Both int8 to
int16 (SoftmaxWideTflm, kernels/softmax_wide.c) and int8 to int8 (SoftmaxTflm,
kernels/softmax_tflm.c) run that arithmetic here, each a latency family of its own. Every other
SOFTMAX stays the op itself."""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from .. import numerics as nx
from ..errors import UserError
from .base import KernelContext, c_struct, numerics_variant
from .loop_counts import KernelBuild
from .softmax import Softmax, softmax_tflm, tflm_exp_table


@dataclass(frozen=True)
class SoftmaxWideTflm(Softmax):
    kernel_family = "softmax_wide_tflm"

    @classmethod
    def latency_families(cls, kernel: KernelBuild) -> tuple[str, ...]:
        """Its int8 kernel's only (an int8 input is the only one it takes)."""
        return (cls.kernel_family,) if kernel.element == "int8" else ()


@dataclass(frozen=True)
class SoftmaxTflm(SoftmaxWideTflm, elements=frozenset({"int8"})):
    """int8 to int8: the output's scale must be 1/256 and its zero point -128 (TFLite Micro's
    Prepare refuses any other)."""

    kernel_family = "softmax_tflm"

    @property
    def c_kernel(self) -> str:  # type: ignore[override]
        return "msf_softmax_tflm"

    def describe(self) -> str:
        return "softmax"

    def count_vector(self, family: str, kernel: KernelBuild, shape, counts) -> None:
        """Each row's reciprocal of its sum (Newton-Raphson steps) is most of a short row's cost."""
        counts[f"{family}:vector_row"] += int(np.prod(shape[:-1], dtype=np.int64))

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        return softmax_tflm(inputs[0], tflm_exp_table(ctx.input_quant[0].scale, self.beta), np.int8)

    def c_consts(self, ctx: KernelContext) -> dict[str, np.ndarray]:
        return {"exp_fixed": tflm_exp_table(ctx.input_quant[0].scale, self.beta)}

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        depth = int(out_shape[-1])
        outer = int(np.prod(out_shape[:-1], dtype=np.int64))
        return c_struct({"depth": depth, "outer": outer, "exp_fixed": names["exp_fixed"]})


def _tflm_output_quant(ctx: KernelContext) -> None:
    quant = ctx.output_quant
    if quant.zero_point != -128 or abs(quant.scale - 1 / 256) > 0.001 / 256:
        raise UserError(f"SOFTMAX's int8 output is quantised with scale {quant.scale:g} and zero point "
                        f"{quant.zero_point}: TFLite Micro takes only 1/256 and -128 (--numerics tflm)")


@numerics_variant(Softmax, nx.TFLM)
def _tflm_softmax(op: Softmax, ctx: KernelContext, shape) -> Softmax:
    """SOFTMAX of an int8 input as TFLite Micro runs it."""
    if isinstance(op, SoftmaxWideTflm) or ctx.is_float or ctx.is_int16 or ctx.dtype != "int8":
        return op
    attributes = {f.name: getattr(op, f.name) for f in fields(op)}
    if op.output_type is not None:
        return SoftmaxWideTflm(**attributes)
    _tflm_output_quant(ctx)
    return SoftmaxTflm(**attributes)
