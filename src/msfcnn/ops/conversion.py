"""What DEQUANTIZE and QUANTIZE inside a graph share: element-wise ops between an int8 tensor and
a float32 one (a float island's edges), whose arithmetic depends on where a value lies in the
whole tensor.

The interpreter's optimised kernels convert the leading (n / 8) * 8 values of an n-value tensor
with vector code and the rest with scalar code, which round differently (numerics.vector_mask);
TFLite Micro runs the scalar code on every value. So the op records the whole tensor's shape,
and a region of it (a fused block's rows or tile) its origin (`in_region`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import prod
from typing import Any, Callable, ClassVar

import numpy as np

from .. import numerics as nx
from .base import KernelContext, Pattern, ValueMap, as_feature_map, c_struct
from .loop_counts import Counts, KernelRun


@dataclass(frozen=True)
class Conversion(ValueMap, pattern=Pattern.ELEMENTWISE):
    """A subclass names its output type and its value conversion (numerics' quantize_values or
    dequantize_values: values, which of them the vector code converts, the int8 side's Quant, the
    numerics)."""

    shape: tuple[int, ...]  # the whole tensor's (a vector's too): a value's flat position in it
    origin: tuple[int, int] = (0, 0)  # the first row and column of the region computed
    output_type: ClassVar[str]
    convert: ClassVar[Callable[[np.ndarray, np.ndarray, Any, str], np.ndarray]]

    def output_element(self, input_element: str) -> str:
        return self.output_type

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        return type(self).convert(x, self.vector(x.shape, ctx.numerics), self.quant(ctx), ctx.numerics)

    def in_region(self, rows: tuple[int, int], cols: tuple[int, int]) -> "Conversion":
        return replace(self, origin=(rows[0], cols[0]))

    def vector(self, region_shape: tuple[int, ...], numerics: str) -> np.ndarray:
        """Which values of a region (at `origin`) the interpreter converts with vector code."""
        _, width, channels = as_feature_map(self.shape)
        rows, cols, _ = as_feature_map(region_shape)
        r = self.origin[0] + np.arange(rows)[:, None, None]
        c = self.origin[1] + np.arange(cols)[None, :, None]
        positions = (r * width + c) * channels + np.arange(channels)[None, None, :]
        return nx.vector_mask(positions, prod(self.shape), numerics).reshape(region_shape)

    def quant(self, ctx: KernelContext):
        """The quantisation of the op's int8 side: its output's (QUANTIZE) or its input's."""
        return ctx.output_quant if self.output_type == "int8" else ctx.input_quant[0]

    # ---- the latency model's counts (ops/loop_counts.py) -----------------------------------------
    counts_by_position = True  # which values take the scalar code depends on where the region lies

    def value_path(self, ctx: KernelContext) -> str:
        """The vector code's end in the whole tensor, which splits the values between the two
        paths (TFLite Micro: 0, the scalar code for every value), as the path's name."""
        return str(nx.vector_part(prod(self.shape), ctx.numerics))

    def count_region(self, run: KernelRun, f: Counts) -> None:
        """kernels/conversion.c: the values past the vector code's end take the scalar code (a
        division in double precision for QUANTIZE, software floating point on most cores)."""
        _, width, channels = as_feature_map(self.shape)
        r0, r1, c0, c1 = run.region
        end, *offset = (run.path or "0").split()
        starts = (np.arange(r0, r1)[:, None] * width + np.arange(c0, c1)[None, :]) * channels
        scalar = np.clip(starts + channels - int(end), 0, channels)
        f[f"{run.family}:output_scalar"] += int(scalar.sum())
        if offset:  # (Dequantize.value_path)
            f[f"{run.family}:output_offset"] += run.pixels * run.channels

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        _, width, channels = as_feature_map(self.shape)
        quant = self.quant(ctx)
        return c_struct({"width": width, "channels": channels,
                         "vector_end": nx.vector_part(prod(self.shape), ctx.numerics),
                         "float_division": int(ctx.numerics == nx.TFLM), "scale": float(quant.scale),
                         "zero_point": quant.zero_point})
