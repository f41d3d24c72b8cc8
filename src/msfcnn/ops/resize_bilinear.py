"""RESIZE_BILINEAR of an int8 (or int16) feature map to (out_h, out_w), as TFLite's integer kernel
computes it.

Both runtimes msfcnn follows run the same integer code for int8: LiteRT's optimized resolver hands
int8 to the reference ResizeBilinearInteger (its vectorised paths are for uint8 and float only), and
TFLite Micro calls that same reference function. The whole computation is in fixed point with 10
fractional bits:

- per axis, scale_10 = round(1024 * in / out) (with align_corners and out > 1: (in - 1) / (out - 1)),
  the integer division rounding half up;
- output position i sits at s = i * scale_10 (half_pixel_centers: i * scale_10 + scale_10 / 2 - 512,
  which may be negative), between input positions lo = max(s / 1024, 0) (C division, towards zero)
  and hi = min(ceil(s / 1024), in - 1), with weight f = s - 1024 * lo for hi (1024 - f for lo; f is
  negative near the start under half_pixel_centers, where lo == hi and the weights still sum to 1024);
- a value is the sum of the four neighbours times the products of their weights (units of 2^-20),
  rounded to the nearest integer with halves away from zero (TFLite's build without
  TFLITE_SINGLE_ROUNDING), never requantised: int8 in and out share one quantisation.

uint8 models take LiteRT's uint8 kernel instead (`uint8`): TFLite's float formula (float32 positions
and weights, the four products summed in float32) on the uint8 values, plus 0.5, truncated; the
same tables as float32 maps (`float_tables`), in the same order in the C. TFLite Micro has no uint8.

16x8 models (int16 maps) get the same arithmetic: LiteRT runs ResizeBilinearInteger<int16_t> in both
resolvers; TFLite Micro has no int16 kernel, so `--numerics tflm` refuses them (for_numerics).

The (lo, hi, f) triples of every output row and column are computed once at compile time and kept
as two int32 tables the C kernel (kernels/resize_bilinear.c) reads. An output row reads two input
rows chosen by a table, not a sliding window, so like RESIZE_NEAREST_NEIGHBOR the op needs its whole
input and never fuses."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import numerics as nx
from ..errors import UserError
from .base import KernelContext, Shape, c_struct, require_feature_map
from .loop_counts import KernelBuild
from .resize_nearest import Resize

ONE = 1 << 10  # the fixed-point unit of positions and weights
HALF_OUTPUT = 1 << 19  # half of the unit of a weighted sum (2^20)


def _c_div(a: np.ndarray, b: int) -> np.ndarray:
    """C's integer division (towards zero) of an int64 array by a positive b."""
    q = np.abs(a) // b
    return np.where(a < 0, -q, q)


def axis_scale(in_size: int, out_size: int, align_corners: bool) -> int:
    """TFLite's scale_10: the input distance between two output positions, in 1/1024 units."""
    if align_corners and out_size > 1:
        return (ONE * (in_size - 1) + (out_size - 1) // 2) // (out_size - 1)
    return (ONE * in_size + out_size // 2) // out_size


def axis_table(in_size: int, out_size: int, align_corners: bool, half_pixel_centers: bool) -> np.ndarray:
    """(out_size, 3) int32: each output position's (lo, hi, weight of hi in 1/1024 units)."""
    scale = axis_scale(in_size, out_size, align_corners)
    at = np.arange(out_size, dtype=np.int64) * scale
    if half_pixel_centers:
        at += scale // 2 - ONE // 2
    lo = np.maximum(_c_div(at, ONE), 0)
    hi = np.minimum(_c_div(at + ONE - 1, ONE), in_size - 1)
    if lo.max() > in_size - 1:  # TFLite would read past the input: no size the converters write
        raise UserError(f"RESIZE_BILINEAR of {in_size} to {out_size} positions reads past its input")
    return np.stack([lo, hi, at - ONE * lo], axis=1).astype(np.int32)


def float_axis(in_size: int, out_size: int, align_corners: bool, half_pixel_centers: bool):
    """Float32 maps: TFLite's float formula (which ONNX's linear Resize shares up to rounding) along
    one axis: ((out_size, 2) int32 (lo, hi) pairs, (out_size,) float32 weights of hi)."""
    f32 = np.float32
    scale = f32(in_size - 1) / f32(out_size - 1) if align_corners and out_size > 1 else f32(in_size) / f32(out_size)
    i = np.arange(out_size, dtype=f32)
    at = (i + f32(0.5)) * scale - f32(0.5) if half_pixel_centers else i * scale
    lo = np.maximum(np.floor(at), 0).astype(np.int64)
    hi = np.minimum(np.ceil(at).astype(np.int64), in_size - 1)
    return np.stack([lo, hi], axis=1).astype(np.int32), (at - lo.astype(f32)).astype(f32)


def round_weighted_sum(total: np.ndarray) -> np.ndarray:
    """A sum in units of 2^-20 to the nearest integer, halves away from zero (C division)."""
    return _c_div(total + np.where(total > 0, HALF_OUTPUT, -HALF_OUTPUT), 1 << 20)


@dataclass(frozen=True)
class ResizeBilinear(Resize, elements=frozenset({"int8", "int16", "float32", "uint8"})):
    kind = "resize_bilinear"
    c_kernel = "msf_resize_bilinear"
    operator = "RESIZE_BILINEAR"
    mode = "bilinear"
    # A uint8 model's resize (on the int8 form of its values): LiteRT's uint8 kernel, which runs
    # TFLite's float formula on the uint8 values (q + 128), adds 0.5 and truncates.
    uint8: bool = False

    def latency_family(self, kernel: KernelBuild) -> str:
        """The uint8 kernel's float formula costs apart from the int8 kernel's."""
        return "resize_bilinear_u8" if self.uint8 else super().latency_family(kernel)

    @classmethod
    def latency_families(cls, kernel: KernelBuild) -> tuple[str, ...]:
        return ("resize_bilinear_u8",) if kernel.element == "uint8" else super().latency_families(kernel)

    def tables(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows, cols): the (lo, hi, weight) triple of each output row, then of each output column."""
        return tuple(axis_table(n_in, n_out, self.align_corners, self.half_pixel_centers)
                     for n_in, n_out in zip(self.in_hw, self.size))

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        return 4 * int(np.prod(output))  # four weighted neighbours per output value

    def for_numerics(self, ctx: KernelContext, shape: Shape) -> "ResizeBilinear":
        if ctx.numerics == nx.TFLM and ctx.is_int16:
            raise UserError("RESIZE_BILINEAR on int16 activations: TFLite Micro's kernel runs int8 and float32 only, "
                            "so there are no tflm numerics to follow (use the default, litert)")
        return self

    @classmethod
    def numerics_for(cls, element: str) -> tuple[str, ...]:
        """TFLite Micro has no int16 RESIZE_BILINEAR (see for_numerics)."""
        return (nx.LITERT,) if element == "int16" else super().numerics_for(element)

    def float_tables(self) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
        """Float32 graphs (ONNX Resize linear): ((rows, row weights), (cols, col weights))."""
        return tuple(float_axis(n_in, n_out, self.align_corners, self.half_pixel_centers)
                     for n_in, n_out in zip(self.in_hw, self.size))

    def _float_reference(self, x: np.ndarray) -> np.ndarray:
        (rows, wy), (cols, wx) = self.float_tables()
        wy, wx, one = wy[:, None, None], wx[None, :, None], np.float32(1)
        total = np.zeros((*self.size, x.shape[2]), np.float32)
        for r, row_weight in ((rows[:, 0], one - wy), (rows[:, 1], wy)):
            for c, col_weight in ((cols[:, 0], one - wx), (cols[:, 1], wx)):
                total += x[r][:, c].astype(np.float32) * (row_weight * col_weight)
        return total

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        if ctx.is_float:
            return self._float_reference(inputs[0])
        if ctx.input_quant[0] != ctx.output_quant:
            raise ValueError("integer resize with an output quantised differently from its input")
        if self.uint8:  # float32 sum of the uint8 values, + 0.5, truncated (the sum is >= 0)
            total = self._float_reference(inputs[0].astype(np.float32) + np.float32(128)) + np.float32(0.5)
            return (np.trunc(total).astype(np.int64) - 128).astype(np.int8)
        x = inputs[0].astype(np.int64)
        rows, cols = (t.astype(np.int64) for t in self.tables())
        wy = rows[:, 2][:, None, None]
        wx = cols[:, 2][None, :, None]
        total = 0
        for r, row_weight in ((rows[:, 0], ONE - wy), (rows[:, 1], wy)):
            for c, col_weight in ((cols[:, 0], ONE - wx), (cols[:, 1], wx)):
                total = total + x[r][:, c] * (row_weight * col_weight)
        return round_weighted_sum(total).astype(ctx.qtype)

    def c_consts(self, ctx: KernelContext) -> dict[str, np.ndarray]:
        if ctx.is_float or self.uint8:  # the positions' (lo, hi) pairs and their float32 weights
            (rows, wy), (cols, wx) = self.float_tables()
            return {"rows": rows.reshape(-1), "cols": cols.reshape(-1), "row_weights": wy, "col_weights": wx}
        rows, cols = self.tables()
        return {"rows": rows.reshape(-1), "cols": cols.reshape(-1)}

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        _, _, c = require_feature_map(in_shapes[0], self.kind)
        return c_struct({"channels": c, "rows": names["rows"], "cols": names["cols"],
                         "row_weights": names.get("row_weights"), "col_weights": names.get("col_weights")})
