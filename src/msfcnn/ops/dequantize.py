"""DEQUANTIZE inside a graph: int8 -> float32, where a float island starts (TensorFlow's converter
leaves ops without int8 kernels in float32 between a DEQUANTIZE and a QUANTIZE), bit-exact with
the interpreter's kernel (ops/conversion.py: vector and scalar code round differently)."""

from __future__ import annotations

from dataclasses import dataclass

from .. import numerics as nx
from .conversion import Conversion


@dataclass(frozen=True)
class Dequantize(Conversion, elements=frozenset({"int8"})):
    kind = "dequantize"
    c_kernel = "msf_dequantize_region"  # _s8: the kernel of its int8 input
    output_type = "float32"
    convert = nx.dequantize_values
