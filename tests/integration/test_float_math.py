"""kernels/float_math.h (the float32 kernels' own exp, tanh and logistic) against float64 numpy.

A driver compiled with the header maps a sweep of float32 inputs (a dense grid over and beyond the
clamped range, random values, tiny values of both signs, signed zeros) through each function;
the errors are taken against np.exp / np.tanh / np.expm1 in float64. Bounds: exp within 1 ulp
of the float64 value rounded to float32's spacing, expm1 of a non-positive value within 1 ulp,
tanh within 3 ulp (and 2e-7 absolute), the logistic within 1e-7 absolute and 3 ulp relative where
it is a normal float. Outside the clamped range exp saturates to finite values. The host build
and (marked qemu) Cortex-M4's, whose FPU runs the single-precision arithmetic itself, both hold.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from support.c_kernels_harness import KERNELS, STRICT
from support.toolchains import require_target, require_tools

LOW, HIGH = -87.33, 88.37  # MSF_EXP_LOW, MSF_EXP_HIGH

DRIVER = r"""
#include <stdio.h>
#include "float_math.h"

int main(int argc, char **argv)
{
    FILE *in, *out;
    float x, y[4];
    if (argc < 3 || (in = fopen(argv[1], "rb")) == NULL || (out = fopen(argv[2], "wb")) == NULL) {
        return 1;
    }
    while (fread(&x, sizeof x, 1, in) == 1) {
        y[0] = msf_expf(x);
        y[1] = msf_tanhf(x);
        y[2] = msf_logisticf(x);
        y[3] = msf_expm1f_nonpositive(x < 0.0f ? x : -x);
        if (fwrite(y, sizeof y, 1, out) != 1) {
            return 2;
        }
    }
    fclose(in);
    return fclose(out) == 0 ? 0 : 3;
}
"""


def sweep(values: int) -> np.ndarray:
    rng = np.random.default_rng(24)
    tiny = np.float32(10.0) ** rng.uniform(-38, 1.9, values // 8) * rng.choice([-1, 1], values // 8)
    return np.concatenate([np.linspace(-100, 100, values // 2), rng.uniform(-20, 20, values // 4), tiny,
                           rng.normal(0, 1e-3, values // 8), [0.0, -0.0, 1e-45, -1e-45]]).astype(np.float32)


def ulp(v: np.ndarray) -> np.ndarray:
    """float32's spacing at |v| (v in float64), at least the smallest subnormal's."""
    return np.spacing(np.minimum(np.abs(v), np.finfo(np.float32).max).astype(np.float32)).astype(np.float64)


def run(tmp_path: Path, x: np.ndarray, build, command) -> np.ndarray:
    src, exe, data, out = tmp_path / "float_math.c", tmp_path / "float_math", tmp_path / "x.bin", tmp_path / "y.bin"
    src.write_text(DRIVER)
    data.write_bytes(x.tobytes())
    done = subprocess.run([*build, f"-I{KERNELS}", "-o", str(exe), str(src)], capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    done = subprocess.run(command(str(exe), str(data), str(out)), capture_output=True, timeout=600)
    assert done.returncode == 0, (done.stdout + done.stderr).decode(errors="replace")
    return np.frombuffer(out.read_bytes(), np.float32).reshape(-1, 4).astype(np.float64)


def check(x32: np.ndarray, y: np.ndarray) -> None:
    x = x32.astype(np.float64)
    inside = (x >= LOW) & (x <= HIGH)
    with np.errstate(over="ignore"):
        exp, logistic = np.exp(x), 1.0 / (1.0 + np.exp(-x))
    assert np.all(np.abs(y[inside, 0] - exp[inside]) <= ulp(exp[inside]))
    assert np.all(np.isfinite(y[:, 0])) and np.all(y[:, 0] > 0)
    assert np.all(y[x > HIGH, 0] == y[x > HIGH, 0].max()) and y[x > HIGH, 0].max() > 2e38
    assert np.all(y[x < LOW, 0] == y[x < LOW, 0].min()) and y[x < LOW, 0].min() < 1.2e-38

    tanh = np.tanh(x)
    assert np.all(np.abs(y[:, 1] - tanh) <= 3 * ulp(tanh))
    assert np.max(np.abs(y[:, 1] - tanh)) <= 2e-7
    assert np.all(np.signbit(y[:, 1]) == np.signbit(x32))  # tanh(-0) = -0 too

    assert np.max(np.abs(y[:, 2] - logistic)) <= 1e-7
    normal = logistic >= np.finfo(np.float32).tiny
    assert np.all(np.abs(y[normal, 2] - logistic[normal]) <= 3 * ulp(logistic[normal]))

    negative = -np.abs(x)
    expm1 = np.expm1(negative)
    held = negative >= LOW
    assert np.all(np.abs(y[held, 3] - expm1[held]) <= ulp(expm1[held]))


def test_float_math_on_the_host_against_float64(tmp_path):
    require_tools("gcc", packages=("gcc",))
    x = sweep(800_000)
    # the driver as the kernels are built: strict C99, -O2, and every warning of the product
    build = ["gcc", *STRICT, "-O2", "-Wconversion", "-Wsign-conversion", "-Wshadow", "-Wundef", "-Wcast-align"]
    check(x, run(tmp_path, x, build, lambda exe, data, out: [exe, data, out]))


@pytest.mark.qemu
def test_float_math_on_cortex_m4_against_float64(tmp_path):
    target = require_target("cortex-m4")
    x = sweep(40_000)
    build = [target.cc, *target.cflags.split(), *target.ldflags.split()]
    check(x, run(tmp_path, x, build, target.run_command))
