"""One step of a PACK of an unrolled recurrent layer's hidden states (Keras' GRU with
`unroll=True`, frontends/unrolled.py): the (T * U) stack of the steps so far, with step `step`'s
U values written into it. The first step starts a stack of zeros; every later one takes the stack
before it and writes its step in place, its output written over its dying input (an alias of the
same size, schemes/single.py), so the stack is one buffer that fills step by step. TFLite's PACK
copies values: the steps and the stack share one quantisation, and the bytes are copied as they
are (one kernel for int8 and float32)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UserError
from .base import KernelContext, Op, Pattern, Shape, c_struct
from .loop_counts import Counts, KernelRun


@dataclass(frozen=True)
class PackStep(Op, pattern=Pattern.OPAQUE, elements=frozenset({"int8", "float32", "uint8"})):
    kind = "pack_step"
    step: int  # the step written, 0..steps - 1
    steps: int

    def __post_init__(self):
        if not 0 <= self.step < self.steps:
            raise UserError(f"bad pack step {self.step} of {self.steps}")

    @property
    def c_kernel(self) -> str:  # type: ignore[override]
        return "msf_pack_first" if self.step == 0 else "msf_pack_step"

    @property
    def writes_over_input(self) -> bool:
        """Every value but the step's is the stack's before it: written over that stack."""
        return self.step > 0

    def describe(self) -> str:
        return f"pack_step {self.step}/{self.steps}"

    def _parts(self, inputs: list[Shape]) -> tuple[int, ...]:
        """The step's shape (the stack's, when it has one, must hold `steps` of it)."""
        if len(inputs) != (1 if self.step == 0 else 2):
            raise UserError(f"pack step {self.step} reads {len(inputs)} tensors")
        step = inputs[-1]
        if len(step) != 1 or self.step and inputs[0] != (self.steps * step[0],):
            raise UserError(f"pack step of {[list(s) for s in inputs]}: a vector step and a stack of "
                            f"{self.steps} of them expected")
        return step

    def output_shape(self, inputs: list[Shape]) -> Shape:
        return (self.steps * self._parts(inputs)[0],)

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        return 0

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        if not ctx.is_float and any(q != ctx.output_quant for q in ctx.input_quant):
            raise ValueError("a pack step's inputs and output must share one quantisation")
        step = inputs[-1].reshape(-1)
        stack = np.zeros(self.steps * step.size, step.dtype) if self.step == 0 else inputs[0].reshape(-1).copy()
        stack[self.step * step.size:(self.step + 1) * step.size] = step
        return stack

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        size = in_shapes[-1][0]
        return c_struct({"offset": self.step * size, "size": size, "total": self.steps * size})

    def count_region(self, run: KernelRun, counts: Counts) -> None:
        """The bytes copied: the step's (the stack is written over, not copied), and the stack's
        zeros before the first step."""
        size = run.shape[-1] // self.steps * (4 if run.is_float else 1)
        counts[f"{run.family}:byte"] += size
        if self.step == 0:
            counts[f"{run.family}:zero_byte"] += self.steps * size
