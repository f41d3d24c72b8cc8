"""UNIDIRECTIONAL_SEQUENCE_LSTM under TFLite Micro's numerics (`--numerics tflm`): the same op
(ops/lstm.py computes either runtime's arithmetic from its context), whose int8 kernel calls
TFLite's reference int16 LOGISTIC / TANH (an interpolated table) and MUL instead of gemmlowp's
fixed point: a path of another cost, so it names a latency family of its own."""

from __future__ import annotations

from dataclasses import dataclass, fields

from .. import numerics as nx
from .base import numerics_variant
from .loop_counts import KernelBuild
from .lstm import Lstm


@dataclass(frozen=True)
class LstmTflm(Lstm):
    kernel_family = "lstm_tflm"

    @classmethod
    def latency_families(cls, kernel: KernelBuild) -> tuple[str, ...]:
        """Its int8 kernel's only: a float32 LSTM stays Lstm under TFLite Micro (_tflm_lstm)."""
        return () if kernel.element == "float32" else super().latency_families(kernel)


@numerics_variant(Lstm, nx.TFLM)
def _tflm_lstm(op: Lstm, ctx, shape) -> Lstm:
    """The int8 LSTM as TFLite Micro runs it; the float32 one is the same kernel under both."""
    if ctx.is_float or isinstance(op, LstmTflm):
        return op
    return LstmTflm(**{f.name: getattr(op, f.name) for f in fields(op)})
