"""DEQUANTIZE inside a graph: int8 -> float32, where a float island starts (TensorFlow's converter
leaves ops without int8 kernels in float32 between a DEQUANTIZE and a QUANTIZE), bit-exact with
the interpreter's kernel (ops/conversion.py: vector and scalar code round differently)."""

from __future__ import annotations

from dataclasses import dataclass

from .. import numerics as nx
from .base import KernelContext
from .conversion import Conversion


@dataclass(frozen=True)
class Dequantize(Conversion, elements=frozenset({"int8"})):
    kind = "dequantize"
    c_kernel = "msf_dequantize_region"  # _s8: the kernel of its int8 input
    output_type = "float32"
    convert = nx.dequantize_values

    def value_path(self, ctx: KernelContext) -> str:
        """The vector code's end, and " offset" where the zero point is not 0: both codes then
        multiply or subtract a non-zero float for it (numerics.c), which soft float does by its
        long path where a 0 takes the short one (`output_offset`, about 300 instructions a value
        on xtensa-lx106)."""
        end = super().value_path(ctx)
        return f"{end} offset" if ctx.input_quant[0].zero_point else end
