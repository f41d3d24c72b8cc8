"""The fixed interface every operator implements.

An op knows its attributes (dataclass fields), its output shape, its MAC count and, for ops that
slide a window over the rows of a feature map, the receptive field that fusion needs. Feature maps
are (H, W, C) without the batch dimension; vectors are (C,).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

import numpy as np

from ..errors import UserError

Shape = tuple[int, ...]


@dataclass(frozen=True)
class Window:
    """A sliding window: kernel, strides and explicit pads (top, left, bottom, right)."""

    kernel: tuple[int, int]
    strides: tuple[int, int] = (1, 1)
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)

    @staticmethod
    def resolve(kernel, stride, padding, in_hw: tuple[int, int]) -> "Window":
        """Build a window from user-level attributes: padding is an int, 'same' or 'valid'."""
        kh, kw = _pair(kernel, "kernel")
        sh, sw = _pair(stride, "stride")
        if isinstance(padding, str):
            mode = padding.lower()
            if mode == "valid":
                pads = (0, 0, 0, 0)
            elif mode == "same":  # TensorFlow's rule: extra padding goes to the bottom/right
                ph = max((-(-in_hw[0] // sh) - 1) * sh + kh - in_hw[0], 0)
                pw = max((-(-in_hw[1] // sw) - 1) * sw + kw - in_hw[1], 0)
                pads = (ph // 2, pw // 2, ph - ph // 2, pw - pw // 2)
            else:
                raise UserError(f"bad padding {padding!r}: expected an integer, 'same' or 'valid'")
        else:
            if isinstance(padding, bool) or not isinstance(padding, int) or padding < 0:
                raise UserError(f"bad padding {padding!r}: must be a non-negative integer, 'same' or 'valid'")
            pads = (padding,) * 4
        return Window((kh, kw), (sh, sw), pads)

    def output_hw(self, h: int, w: int) -> tuple[int, int]:
        top, left, bottom, right = self.pads
        if h + top + bottom < self.kernel[0] or w + left + right < self.kernel[1]:
            raise UserError(f"kernel {self.kernel[0]}x{self.kernel[1]} is larger than its (padded) {h}x{w} input")
        return ((h + top + bottom - self.kernel[0]) // self.strides[0] + 1,
                (w + left + right - self.kernel[1]) // self.strides[1] + 1)

    def input_rows(self, out_rows: int) -> int:
        """Input rows (padding included) needed to produce `out_rows` consecutive output rows."""
        return (out_rows - 1) * self.strides[0] + self.kernel[0]


def _pair(value, what: str) -> tuple[int, int]:
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value, value)
    if (not isinstance(value, (list, tuple)) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise UserError(f"bad {what} {value!r}: expected a positive integer or a pair of them")
    if min(value) <= 0:
        raise UserError(f"bad {what} {list(value)}: must be positive")
    return int(value[0]), int(value[1])


@dataclass(frozen=True)
class KernelContext:
    """What a numpy reference kernel needs besides its input arrays.

    `input_quant`/`output_quant` hold ir.Quant (scale, zero_point) per tensor, or None in float32
    graphs; `consts` are the node's constant tensors ("weights", "bias", "weight_scales").
    """

    consts: Mapping[str, np.ndarray] = field(default_factory=dict)
    input_quant: tuple[Any, ...] = ()
    output_quant: Any = None

    @property
    def is_float(self) -> bool:
        return self.output_quant is None


class Op:
    """Base class: subclasses are dataclasses whose fields are the op's attributes."""

    kind: ClassVar[str]
    arity: ClassVar[int] = 1  # number of activation inputs

    @property
    def window(self) -> Window | None:
        """The sliding window over rows, or None for ops that are not spatial windows."""
        return None

    def output_shape(self, inputs: list[Shape]) -> Shape:
        raise NotImplementedError

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        """Multiply-accumulates of one unfused execution (pooling and adds count one per tap)."""
        raise NotImplementedError

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        """The numpy reference kernel: unbatched (H, W, C) / (C,) arrays in, one array out.

        int8 graphs follow TFLite's integer arithmetic exactly; float32 graphs compute in float32.
        """
        raise NotImplementedError(f"{self.kind} has no numpy kernel yet")

    def describe(self) -> str:
        return self.kind


def require_feature_map(shape: Shape, kind: str) -> tuple[int, int, int]:
    if len(shape) != 3:
        raise UserError(f"{kind} needs an (H, W, C) feature map, got shape {list(shape)}")
    return shape  # type: ignore[return-value]
