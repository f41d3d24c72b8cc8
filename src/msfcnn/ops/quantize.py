"""QUANTIZE of a float32 tensor inside a graph: float32 -> int8, where a float island ends,
bit-exact with the interpreter's kernel (ops/conversion.py: vector and scalar code round
differently). QUANTIZE from int8 to int8 is ops/requantize.py."""

from __future__ import annotations

from dataclasses import dataclass

from .. import numerics as nx
from .conversion import Conversion


@dataclass(frozen=True)
class Quantize(Conversion, elements=frozenset({"float32"})):
    """Into the output's quantisation (int8 only: 16x8 models quantise only their input)."""

    kind = "quantize"
    c_kernel = "msf_quantize_region"  # _f32: the kernel of its float32 input
    output_type = "int8"
    convert = nx.quantize_values
