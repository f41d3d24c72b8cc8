"""A channel gather: output channel k is input channel `indices[k]`. What remains of ShuffleNet's
channel shuffle (TFLite RESHAPE (H, W, C) -> (H, W, g, C/g), TRANSPOSE of the last two axes,
RESHAPE back; ONNX's Reshape -> Transpose -> Reshape in NCHW), folded at import into one
permutation of the channels. The values are copied as they are (the runtimes' RESHAPE and TRANSPOSE
do not requantise), so int8, int16 and float maps share one kernel that copies values of their
size through a constant index table. An output pixel reads only the same pixel of the input: it is
element-wise for fusion, but never written over its own input (value k is not input value k)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UserError
from .base import KernelContext, Op, Pattern, Shape, c_struct


@dataclass(frozen=True)
class ChannelGather(Op, pattern=Pattern.ELEMENTWISE, elements=frozenset({"int8", "int16", "float32", "uint8"})):
    kind = "channel_gather"
    passes_zeros = True
    c_kernel = "msf_channel_gather"
    indices: tuple[int, ...]  # output channel k is input channel indices[k]

    def __post_init__(self):
        if not self.indices or min(self.indices) < 0:
            raise UserError(f"bad channel gather {list(self.indices)}")

    @property
    def writes_over_input(self) -> bool:
        """Output value k reads input value indices[k], which an earlier output value may have
        overwritten: a gather run alone is pushed on top of the arena, as a channel slice is."""
        return False

    def describe(self) -> str:
        return f"channel_gather {list(self.indices)}"

    def output_shape(self, inputs: list[Shape]) -> Shape:
        shape = inputs[0]
        if not shape or max(self.indices) >= shape[-1]:
            raise UserError(f"channel gather of channel {max(self.indices)} of a tensor of shape {list(shape)}: "
                            "beyond its last axis")
        return (*shape[:-1], len(self.indices))

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        return 0

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        if not ctx.is_float and ctx.input_quant[0] != ctx.output_quant:
            raise ValueError("a channel gather's input and output must share one quantisation")
        return np.ascontiguousarray(inputs[0][..., list(self.indices)])

    def c_consts(self, ctx: KernelContext) -> dict[str, np.ndarray]:
        return {"indices": np.array(self.indices, np.int32)}

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        return c_struct({"channels": len(self.indices), "indices": names["indices"]})


def shuffle_indices(groups: int, channels: int) -> tuple[int, ...]:
    """ShuffleNet's channel shuffle of `channels` channels in `groups` groups: the channels viewed
    as (groups, channels / groups), transposed, flattened."""
    return tuple(np.arange(channels).reshape(groups, channels // groups).T.reshape(-1).tolist())
