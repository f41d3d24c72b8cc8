"""ADD: element-wise sum of the main path and a residual (skip) tensor."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UserError
from .base import Op, Shape


@dataclass(frozen=True)
class Add(Op):
    kind = "add"
    arity = 2
    activation: str | None = None

    def output_shape(self, inputs: list[Shape]) -> Shape:
        if inputs[0] != inputs[1]:
            raise UserError(f"add of mismatched shapes {list(inputs[0])} and {list(inputs[1])}")
        return inputs[0]

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        size = 1
        for dim in output:
            size *= dim
        return size
