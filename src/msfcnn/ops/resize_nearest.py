"""RESIZE_NEAREST_NEIGHBOR of a feature map to (out_h, out_w): output position (r, c) copies input
position (rows[r], cols[c]), so int8 values keep their quantisation (TFLite's int8 kernel copies
them; an output quantised differently is refused at import).

The source index of each output position follows TFLite's reference rule (its `align_corners` and
`half_pixel_centers` flags), computed once in float32 as the interpreter does and kept as two
int32 tables that the C kernel (kernels/resize_nearest.c) reads: no float arithmetic on the board.
An output row reads one input row chosen by a table, not a sliding window, so the op needs its
whole input and never fuses. `Resize` holds what it shares with RESIZE_BILINEAR
(ops/resize_bilinear.py): sizes, flags, their checks, the tables' C parameters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..errors import UserError
from ..jsontext import INT_LIMIT
from .base import KernelContext, Op, Pattern, Shape, c_struct, require_feature_map


def nearest_indices(in_size: int, out_size: int, align_corners: bool, half_pixel_centers: bool) -> np.ndarray:
    """The input position each of `out_size` output positions reads along one axis (int32).

    TFLite's rule, in float32: scale = (in - 1) / (out - 1) with align_corners (and out > 1), else
    in / out; the position is (i + 0.5 if half_pixel_centers else i) * scale, rounded half away
    from zero with align_corners, else floored; then clamped to [0, in - 1]."""
    f32 = np.float32
    if align_corners and out_size > 1:
        scale = f32(in_size - 1) / f32(out_size - 1)
    else:
        scale = f32(in_size) / f32(out_size)
    offset = f32(0.5) if half_pixel_centers else f32(0.0)
    at = (np.arange(out_size, dtype=f32) + offset) * f32(scale)
    index = np.floor(at)
    if align_corners:  # round half away from zero (the values are >= 0); the fraction is exact
        index += at - index >= f32(0.5)
    index = np.minimum(index.astype(np.int64), in_size - 1)
    if half_pixel_centers:
        index = np.maximum(index, 0)
    return index.astype(np.int32)


@dataclass(frozen=True)
class Resize(Op, pattern=Pattern.OPAQUE):
    """What the TFLite resize operators share: the input and output sizes, the two flags, their
    checks, and C parameters of per-row and per-column tables (`tables`, `c_consts`)."""
    operator: ClassVar[str]  # the TFLite operator, for messages
    mode: ClassVar[str]  # "nearest" or "bilinear", for describe()
    in_hw: tuple[int, int]  # the input's (H, W): the tables depend on it
    size: tuple[int, int]  # (out_h, out_w)
    align_corners: bool = False
    half_pixel_centers: bool = False

    def __post_init__(self):
        if min(self.size) <= 0:
            raise UserError(f"bad resize size {list(self.size)}: must be positive")
        if self.align_corners and self.half_pixel_centers:
            # TFLite's converter never writes both, and TensorFlow and the interpreters refuse the pair.
            raise UserError(f"{self.operator} with both align_corners and half_pixel_centers is not supported")

    def describe(self) -> str:
        flags = "".join((" align_corners" if self.align_corners else "",
                         " half_pixel" if self.half_pixel_centers else ""))
        return f"resize {self.mode} {self.size[0]}x{self.size[1]}{flags}"

    def output_shape(self, inputs: list[Shape]) -> Shape:
        h, w, c = require_feature_map(inputs[0], self.kind)
        if (h, w) != tuple(self.in_hw):
            raise UserError(f"resize built for a {self.in_hw[0]}x{self.in_hw[1]} input reads {h}x{w}")
        elements = self.size[0] * self.size[1] * c
        if elements > INT_LIMIT:  # before the tables, which would take 12 bytes per output row
            raise UserError(f"{self.operator} to {self.size[0]}x{self.size[1]}x{c} is too large ({elements} elements; "
                            f"at most {INT_LIMIT})")
        self.tables()  # refuses the sizes whose tables cannot be made
        return (*self.size, c)

    def tables(self) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        _, _, c = require_feature_map(in_shapes[0], self.kind)
        return c_struct({"channels": c, "rows": names["rows"], "cols": names["cols"]})


@dataclass(frozen=True)
class ResizeNearest(Resize, elements=frozenset({"int8", "float32"})):
    kind = "resize_nearest"
    passes_zeros = True
    c_kernel = "msf_resize_nearest"
    operator = "RESIZE_NEAREST_NEIGHBOR"
    mode = "nearest"

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        return 0

    def tables(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows, cols): the input row of each output row, the input column of each output column."""
        return tuple(nearest_indices(n_in, n_out, self.align_corners, self.half_pixel_centers)
                     for n_in, n_out in zip(self.in_hw, self.size))

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        if not ctx.is_float and ctx.input_quant[0] != ctx.output_quant:
            raise ValueError("int8 resize with an output quantised differently from its input")
        rows, cols = self.tables()
        return np.ascontiguousarray(x[rows][:, cols])

    def c_consts(self, ctx: KernelContext) -> dict[str, np.ndarray]:
        rows, cols = self.tables()
        return {"rows": rows, "cols": cols}
