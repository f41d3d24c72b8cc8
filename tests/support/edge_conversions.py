"""The 16x8 models' float edge conversions (kernels/int16.c) run by a test driver, beside what
numerics, the interpreters' rules, gives: on the host (tests/integration/test_int16.py) and on a
QEMU target (tests/targets/test_int16_targets.py)."""

from __future__ import annotations

import numpy as np

from msfcnn import numerics as nx
from msfcnn.ir import Quant
from msfcnn.ops.base import c_float
from support.c_kernels_harness import Driver, build_library


def edge_conversions(directory, defines=(), target=None):
    """(what msf_quantize_f32_s16 / msf_dequantize_s16 and their one-value forms under TFLite
    Micro's scalar rule gave, numerics.quantize_float / dequantize) per case: ties, saturation,
    huge and non-finite values. `defines` and `target` choose the build and where it runs."""
    rng = np.random.default_rng(3)
    lib, d, checks = build_library(directory, defines=defines, target=target), Driver(), []
    for i, (scale, n) in enumerate([(1 / 8192, 8 * 13 + 5), (0.000372, 8 * 7 + 3), (0.5, 16)]):
        q = Quant(scale, 0)
        ties = (rng.integers(-34000, 34000, n) + 0.5) * scale  # exact halves: the two paths disagree
        x = np.where(rng.random(n) < 0.5, ties, rng.uniform(-34000, 34000, n) * scale).astype(np.float32)
        x[:5] = [1e30, -1e30, np.nan, np.inf, 2.0 ** 22 * scale]
        qs = rng.integers(-32768, 32768, n, dtype=np.int16)
        for numerics, quantize, dequantize in (
                (nx.LITERT, "msf_quantize_f32_s16({src}, {dst}, %d, %s, 0);" % (n, c_float(scale)),
                 "msf_dequantize_s16({src}, {dst}, %d, %s, 0);" % (n, c_float(scale))),
                (nx.TFLM, "{{ int32_t k; for (k = 0; k < %d; ++k) {dst}[k] = msf_quantize_f32_s16_one({src}[k] / %s, "
                          "1.0f, 0, 0); }}" % (n, c_float(scale)),
                 "{{ int32_t k; for (k = 0; k < %d; ++k) {dst}[k] = msf_dequantize_s16_one({src}[k], %s, 0, 0); }}"
                 % (n, c_float(scale)))):
            src, dst = d.buffer("x", x), d.zeros("y", np.int16, n)  # (loaded: a C literal has no NaN)
            d.body.append("    " + quantize.format(src=src, dst=dst))
            checks.append((d.dump(dst, np.int16, n), nx.quantize_float(x, q, numerics, np.int16)))
            src, dst = d.const(f"q{i}{numerics}", qs), d.zeros("z", np.float32, n)
            d.body.append("    " + dequantize.format(src=src, dst=dst))
            checks.append((d.dump(dst, np.float32, n), nx.dequantize(qs, q, numerics)))
    got = d.run(directory, lib, tag="edges16", target=target)
    return [(got[slot], np.asarray(want).reshape(-1)) for slot, want in checks]
