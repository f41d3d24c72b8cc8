"""A slice of a feature map's channels: output channel k is input channel begin + k, for
`channels` channels. What remains of TFLite's SPLIT / SPLIT_V (one node per part, all reading the
same input), SLICE and STRIDED_SLICE along the last axis, and of ONNX's Split / Slice along the
channels. The values are copied as they are (the runtimes' kernels do not requantise), so int8,
int16 and float maps share one byte-copying kernel. An output pixel reads only the same pixel of
the input: it is element-wise for fusion."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UserError
from .base import KernelContext, Op, Pattern, Shape, as_feature_map, c_struct


@dataclass(frozen=True)
class ChannelSlice(Op, pattern=Pattern.ELEMENTWISE, elements=frozenset({"int8", "int16", "float32", "uint8"})):
    kind = "channel_slice"
    passes_zeros = True
    c_kernel = "msf_channel_slice"
    begin: int  # the first input channel kept
    channels: int  # how many are kept

    def __post_init__(self):
        if self.begin < 0 or self.channels < 1:
            raise UserError(f"bad channel slice: {self.channels} channels from channel {self.begin}")

    @property
    def writes_over_input(self) -> bool:
        """Output value i is not input value i (and the output is smaller): a slice run alone is
        never written over its input, so its output is always pushed on top of the arena."""
        return False

    def describe(self) -> str:
        return f"channel_slice [{self.begin}:{self.begin + self.channels}]"

    def output_shape(self, inputs: list[Shape]) -> Shape:
        shape = inputs[0]
        if not shape or self.begin + self.channels > shape[-1]:
            raise UserError(f"channels [{self.begin}, {self.begin + self.channels}) of a tensor of shape "
                            f"{list(shape)}: beyond its last axis")
        return (*shape[:-1], self.channels)

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        return 0

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        if not ctx.is_float and ctx.input_quant[0] != ctx.output_quant:
            raise ValueError("a channel slice's input and output must share one quantisation")
        return np.ascontiguousarray(inputs[0][..., self.begin:self.begin + self.channels])

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        return c_struct({"begin": self.begin, "channels": self.channels})
