"""SOFTMAX over the last axis; its cost is not counted in MACs."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Op, Shape


@dataclass(frozen=True)
class Softmax(Op):
    kind = "softmax"

    def output_shape(self, inputs: list[Shape]) -> Shape:
        return inputs[0]

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        return 0
