"""FULLY_CONNECTED / Gemm: a dense layer on the flattened input."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Op, Shape


@dataclass(frozen=True)
class Dense(Op):
    kind = "dense"
    units: int
    activation: str | None = None

    def output_shape(self, inputs: list[Shape]) -> Shape:
        return (self.units,)

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        size = 1
        for dim in inputs[0]:
            size *= dim
        return size * self.units

    def describe(self) -> str:
        return f"dense {self.units}"
