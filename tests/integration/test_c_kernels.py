"""The C kernel library against the numpy kernels (the executable spec of the numerics).

int8 kernels must be bit-exact with `op.reference`, float32 kernels within float rounding
(1e-4 relative). Every op runs on random configurations (kernels 1-7, strides 1-2, asymmetric
pads, non-square maps, random quantisation) over four regions (the whole output, one row, one
column band, a sub-rectangle) and on inputs and outputs held in every kind of view (whole tensor,
patch buffer, row ring, column ring over a band, both rings); every node of the TFLite / ONNX
fixtures runs on the numpy executor's own input to that node (the TFLite ones under each
`--numerics`, litert and tflm). The params come from each op's
`c_params` / `c_consts`, compiled as the code generator will emit them. A subset runs again with
AddressSanitizer and UndefinedBehaviorSanitizer.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from support.paths import FIXTURES, UINT8_PREFIX  # noqa: E402
from support.c_kernels_harness import (LAYOUTS, STRICT, Cases, Driver, build_library, c_array_literal,  # noqa: E402
                                       kernel_object, kernel_sources, library_flags, node_inputs, regions)
from support.toolchains import require_tools  # noqa: E402
from msfcnn import numerics as nx  # noqa: E402
from msfcnn.codegen.emit import kernel_headers, kernel_symbols  # noqa: E402
from msfcnn.errors import UserError  # noqa: E402
from msfcnn.frontends import load_model  # noqa: E402
from msfcnn.ir import Quant  # noqa: E402
from msfcnn.ops import (Add, AvgPool2D, Conv2D, Dense, DepthwiseConv2D, GlobalAvgPool, KernelContext,  # noqa: E402
                        MaxPool2D, Pad, Requantize, Softmax, Window)
from msfcnn.ops.add_const import AddConst  # noqa: E402
from msfcnn.ops.activation import Activation  # noqa: E402
from msfcnn.ops.base import C_ROUNDING, c_float  # noqa: E402
from msfcnn.ops.conv2d import output_stage_consts  # noqa: E402
from msfcnn.ops.depthwise_conv2d_litert import DepthwiseConv2DLitert, tail_start  # noqa: E402
from msfcnn.targets import get_target  # noqa: E402

ACTIVATIONS = (None, "relu", "relu6")


# ---- building --------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def c_dir(tmp_path_factory) -> Path:
    """Where the C is built: every test that compiles asks for it, so it checks for gcc."""
    require_tools("gcc", packages=("gcc",))
    return tmp_path_factory.mktemp("c_kernels")


@pytest.fixture(scope="session")
def lib(c_dir) -> Path:
    return build_library(c_dir)


@pytest.fixture(scope="session")
def san_lib(c_dir) -> Path:
    return build_library(c_dir, sanitize=True)


@pytest.mark.parametrize("source", kernel_sources(), ids=lambda p: p.name)
def test_each_kernel_file_compiles_strict_c99(source, c_dir):
    # the object the kernel library links (compiled once, see support.build_cache); a failed
    # compile raises with the compiler's messages, and a clean one prints nothing
    compiler, flags = library_flags()
    assert {*STRICT, "-O2"} <= set(flags)
    obj, printed = kernel_object(source, compiler, flags)
    assert obj.stat().st_size > 0
    assert printed == ""


@pytest.mark.parametrize("header", sorted(kernel_sources()[0].parent.glob("*.h")), ids=lambda p: p.name)
def test_each_kernel_header_compiles_on_its_own(header):
    # model.c includes only the headers of the kernels it calls: each must bring what it needs
    code = f'#include "{header.name}"\nint msf_test_unit_is_not_empty;\n'
    for compiler, language in (("gcc", [*STRICT, "-x", "c"]), ("g++", ["-Wall", "-Werror", "-x", "c++"])):
        done = subprocess.run([compiler, *language, "-fsyntax-only", f"-I{header.parent}", "-"], input=code,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


def test_model_c_includes_the_headers_of_the_names_it_uses():
    code = "msf_view in; msf_conv2d_params p = { .rounding = MSF_ROUND_RUY }; msf_conv2d_s8(&p, &in, &in, 0, 1, 0, 1);"
    assert kernel_headers(code) == ["msfcnn_common.h", "conv2d.h", "numerics.h"]
    assert kernel_headers("msf_view v;") == ["msfcnn_common.h"]
    # every kernel has a header that declares it (in a header of its own source)
    headers = {name: kernel_headers(name) for name in kernel_symbols()}
    assert all(len(found) == 2 for found in headers.values()), [n for n, found in headers.items() if len(found) != 2]


def test_kernels_use_no_libc_beyond_the_allowed_headers():
    # <arm_acle.h> and <arm_mve.h>: the compiler's own headers of Arm intrinsics (no library), for
    # the DSP and Helium loops; and the kernel library's own headers
    folder = kernel_sources()[0].parent
    headers = sorted(folder.glob("*.h"))
    allowed = {"<stdint.h>", "<stddef.h>", "<math.h>", "<string.h>", "<arm_acle.h>", "<arm_mve.h>",
               *(f'"{h.name}"' for h in headers)}
    for source in [*kernel_sources(), *headers]:
        for line in source.read_text().splitlines():
            if line.startswith("#include"):
                assert line.split()[1] in allowed, f"{source.name}: {line}"
            assert "malloc" not in line, f"{source.name}: {line}"


# ---- random configurations -------------------------------------------------------------------

def f32(x) -> float:
    return float(np.float32(x))


def rand_quant(rng, lo=0.004, hi=0.08, zp=100, ties=False) -> Quant:
    """A random quantisation; with ties, a power-of-two scale, so that rescale factors between
    such tensors are exact powers of two and rounding ties are frequent (where the schemes differ)."""
    scale = 2.0 ** -int(rng.integers(4, 9)) if ties else f32(np.exp(rng.uniform(np.log(lo), np.log(hi))))
    return Quant(scale, int(rng.integers(-zp, zp + 1)))


def wants_ties(rng, is_float) -> bool:
    return not is_float and rng.random() < 0.35


def rand_window(rng, max_k=7, square=False):
    kh = int(rng.integers(1, max_k + 1))
    kw = kh if square else int(rng.integers(1, max_k + 1))
    sh, sw = (int(v) for v in rng.integers(1, 3, 2))
    pads = tuple(int(rng.integers(0, k)) for k in (kh, kw, kh, kw))  # top, left, bottom, right
    h = int(rng.integers(max(1, kh - pads[0] - pads[2]), kh + 9))
    w = int(rng.integers(max(1, kw - pads[1] - pads[3]), kw + 9))
    return Window((kh, kw), (sh, sw), pads), (h, w)


def rand_activation(rng):
    return ACTIVATIONS[int(rng.integers(0, 3))]


def weighted_consts(rng, weight_shape, channels, fan_in, in_q, is_float, per_tensor=False, ties=False):
    """Weights, bias (or none) and weight scales; plus a sensible output quantisation. With ties:
    small weights, power-of-two scales, multipliers exactly 2^-k (k >= -1), inputs near the zero
    point (see `near`): many accumulators fall exactly half-way."""
    if ties:
        weights = rng.integers(-4, 5, weight_shape, dtype=np.int8)
        scales = (2.0 ** -rng.integers(6, 9, 1 if per_tensor else channels)).astype(np.float32)
        consts = {"weights": weights, "weight_scales": scales}
        if rng.random() < 0.8:
            consts["bias"] = rng.integers(-30, 31, channels).astype(np.int32)
        out_q = Quant(in_q.scale * 2.0 ** (int(rng.integers(0, 4)) - 7), int(rng.integers(-40, 41)))
        return consts, out_q
    if is_float:
        consts = {"weights": (rng.standard_normal(weight_shape) / np.sqrt(fan_in)).astype(np.float32)}
        if rng.random() < 0.8:
            consts["bias"] = rng.standard_normal(channels).astype(np.float32)
        return consts, None
    weights = rng.integers(-127, 128, weight_shape, dtype=np.int8)
    n_scales = 1 if per_tensor else channels
    scales = (np.exp(rng.uniform(np.log(0.002), np.log(0.05), n_scales))).astype(np.float32)
    consts = {"weights": weights, "weight_scales": scales}
    acc_std = np.sqrt(fan_in) * 80 * 73  # |x - zp| ~ 80, |w| ~ 73
    if rng.random() < 0.8:
        consts["bias"] = np.round(rng.standard_normal(channels) * acc_std).astype(np.int32)
    real_std = acc_std * in_q.scale * float(np.median(scales))
    out_q = Quant(f32(real_std / 40 * rng.uniform(0.5, 2)), int(rng.integers(-60, 61)))
    return consts, out_q


def rand_map(rng, shape, is_float):
    if is_float:
        return rng.standard_normal(shape).astype(np.float32)
    return rng.integers(-128, 128, shape, dtype=np.int8)


def near(rng, shape, zero_point, spread=10):
    """int8 values within `spread` of a zero point."""
    return np.clip(zero_point + rng.integers(-spread, spread + 1, shape), -128, 127).astype(np.int8)


def conv_config(rng, is_float, wide=False):
    """wide: the channel counts of real layers (in_c up to 200, out_c up to 40), half of them 1x1,
    for the Arm DSP loops' word, pair, chunk and block boundaries."""
    win, (h, w) = rand_window(rng, max_k=3 if wide else 7)
    cin, cout = (int(v) for v in rng.integers(1, 9, 2))
    if wide:
        cin, cout = int(rng.integers(1, 201)), int(rng.integers(1, 41))
        if rng.random() < 0.5:
            win, (h, w) = Window((1, 1), tuple(int(v) for v in rng.integers(1, 3, 2)), (0, 0, 0, 0)), \
                tuple(int(v) for v in rng.integers(1, 8, 2))
    op = Conv2D(cout, win, rand_activation(rng))
    ties = wants_ties(rng, is_float)
    in_q = None if is_float else rand_quant(rng, ties=ties)
    consts, out_q = weighted_consts(rng, (cout, *win.kernel, cin), cout, cin * win.kernel[0] * win.kernel[1],
                                    in_q, is_float, per_tensor=rng.random() < 0.25, ties=ties)
    x = near(rng, (h, w, cin), in_q.zero_point) if ties else rand_map(rng, (h, w, cin), is_float)
    return op, KernelContext(consts, (in_q,), out_q), [x]


def depthwise_config(rng, is_float, wide=False):
    win, (h, w) = rand_window(rng)
    cin, mult = int(rng.integers(1, 9)), int(rng.integers(1, 4))
    if rng.random() < 0.3:  # a multiplier of 4 or more: four channels of one input channel at a time
        mult = int(rng.integers(4, 11))
    if wide:  # channels in blocks and words, the multiplier mostly 1 (the DSP loop's case)
        cin, mult = int(rng.integers(1, 41)), 1 if rng.random() < 0.8 else 2
    op = DepthwiseConv2D(win, mult, rand_activation(rng))
    ties = wants_ties(rng, is_float)
    in_q = None if is_float else rand_quant(rng, ties=ties)
    consts, out_q = weighted_consts(rng, (1, *win.kernel, cin * mult), cin * mult, win.kernel[0] * win.kernel[1],
                                    in_q, is_float, per_tensor=rng.random() < 0.25, ties=ties)
    x = near(rng, (h, w, cin), in_q.zero_point) if ties else rand_map(rng, (h, w, cin), is_float)
    return op, KernelContext(consts, (in_q,), out_q), [x]


def pool_config(cls):
    def make(rng, is_float):
        win, (h, w) = rand_window(rng)
        kwargs = {"count_include_pad": bool(rng.random() < 0.3)} if cls is AvgPool2D else {}
        op = cls(win, rand_activation(rng), **kwargs)
        q = None if is_float else rand_quant(rng, zp=60)
        c = int(rng.integers(1, 9))
        return op, KernelContext({}, (q,), q), [rand_map(rng, (h, w, c), is_float)]
    return make


def add_config(rng, is_float):
    shape = (int(rng.integers(1, 10)), int(rng.integers(1, 10)), int(rng.integers(1, 9)))
    if rng.random() < 0.2:
        shape = (int(rng.integers(1, 30)),)  # a vector
    # int8: TFLite Micro's ADD, or LiteRT's (vector code on blocks of 16, the scalar code on the rest)
    numerics = nx.NUMERICS[int(rng.integers(0, len(nx.NUMERICS)))]
    ties = wants_ties(rng, is_float)
    qs = (None, None, None) if is_float else (rand_quant(rng, ties=ties), rand_quant(rng, ties=ties),
                                              rand_quant(rng, 0.01, 0.1, ties=ties))
    ctx = KernelContext({}, qs[:2], qs[2], numerics, "float32" if is_float else "int8")
    op = Add(rand_activation(rng)).for_numerics(ctx, shape)
    return op, ctx, [rand_map(rng, shape, is_float), rand_map(rng, shape, is_float)]


ROUND_SCALES = (0.02, 0.025, 0.03, 0.04, 0.05, 0.06, 0.08)


def add_const_config(rng, is_float):
    """ADD of a constant (one value or one per channel), under either numerics; the scales are
    often round decimals, for which LiteRT's vector code rounds unlike its scalar code."""
    shape = (int(rng.integers(1, 8)), int(rng.integers(1, 8)), int(rng.integers(1, 41)))
    per_channel = rng.random() < 0.5
    operand = rng.integers(-128, 128, shape[2] if per_channel else 1).astype(np.int8)

    def scale():
        return float(rng.choice(ROUND_SCALES)) if rng.random() < 0.9 else f32(rng.uniform(0.004, 0.08))
    numerics = nx.NUMERICS[int(rng.integers(0, len(nx.NUMERICS)))]
    for _ in range(30):  # under litert, mostly scales for which its two codes differ (its own kernels)
        in_q, out_q = (None, None) if is_float else (Quant(scale(), int(rng.integers(-20, 21))),
                                                     Quant(scale(), int(rng.integers(-20, 21))))
        ctx = KernelContext({"operand": operand.astype(np.float32) if is_float else operand}, (in_q,), out_q,
                            numerics, "float32" if is_float else "int8")
        op = AddConst(scale(), int(rng.integers(-20, 21)), rand_activation(rng)).for_numerics(ctx, shape)
        if numerics == nx.TFLM or is_float or type(op) is not AddConst or rng.random() < 0.1:
            break
    return op, ctx, [rand_map(rng, shape, is_float)]


def activation_config(rng, is_float):
    shape = (int(rng.integers(1, 10)), int(rng.integers(1, 10)), int(rng.integers(1, 9)))
    op = Activation(("relu", "relu6")[int(rng.integers(0, 2))])
    ties = wants_ties(rng, is_float)
    in_q = None if is_float else rand_quant(rng, ties=ties)
    out_q = None if is_float else rand_quant(rng, 0.004, 0.05, zp=128, ties=ties)
    return op, KernelContext({}, (in_q,), out_q), [rand_map(rng, shape, is_float) * (4 if is_float else 1)]


def requantize_config(rng, is_float):
    shape = (int(rng.integers(1, 10)), int(rng.integers(1, 10)), int(rng.integers(1, 9)))
    ties = wants_ties(rng, is_float)
    in_q = None if is_float else rand_quant(rng, ties=ties)
    out_q = None if is_float else rand_quant(rng, 0.01, 0.2, zp=128, ties=ties)
    return Requantize(), KernelContext({}, (in_q,), out_q), [rand_map(rng, shape, is_float)]


def pad_config(rng, is_float):
    shape = (int(rng.integers(1, 10)), int(rng.integers(1, 10)), int(rng.integers(1, 9)))
    op = Pad(tuple(int(v) for v in rng.integers(0, 4, 4)))
    q = None if is_float else rand_quant(rng)
    return op, KernelContext({}, (q,), q), [rand_map(rng, shape, is_float)]


SPATIAL = {"conv2d": conv_config, "depthwise_conv2d": depthwise_config, "max_pool2d": pool_config(MaxPool2D),
           "avg_pool2d": pool_config(AvgPool2D), "add": add_config, "add_const": add_const_config,
           "activation": activation_config,
           "requantize": requantize_config, "pad": pad_config}


def random_splits(rng, h, w):
    """A partition of an h x w map into row bands split into column pieces, in random layouts."""
    cuts = sorted(set(int(v) for v in rng.integers(1, h, int(rng.integers(0, 3))))) if h > 1 else []
    out = []
    for r0, r1 in zip([0, *cuts], [*cuts, h]):
        cols = sorted(set(int(v) for v in rng.integers(1, w, int(rng.integers(0, 3))))) if w > 1 else []
        for c0, c1 in zip([0, *cols], [*cols, w]):
            layout = ("whole", "patch", "row_ring", "col_ring", "rings")[int(rng.integers(0, 5))]
            out.append(((r0, r1), (c0, c1), layout))
    rng.shuffle(out)
    return out


def gap_case(cases: Cases, rng, is_float, label):
    h, w, c = int(rng.integers(1, 10)), int(rng.integers(1, 10)), int(rng.integers(1, 41))
    op = GlobalAvgPool(keepdims=bool(rng.random() < 0.5))
    ties = wants_ties(rng, is_float)
    in_q = None if is_float else rand_quant(rng, ties=ties)
    out_q = None if is_float else Quant(f32(in_q.scale * rng.uniform(0.1, 1)), int(rng.integers(-60, 61)))
    if ties:  # 1 / count and the scales exact powers of two
        h, w = (int(v) for v in 2 ** rng.integers(0, 3, 2))
        out_q = Quant(in_q.scale / 2 ** int(rng.integers(0, 4)), out_q.zero_point)
    x = rand_map(rng, (h, w, c), is_float)
    if not is_float:  # means near the input zero point, not saturating the output
        x = np.clip(rng.normal(in_q.zero_point, 30, (h, w, c)), -128, 127).astype(np.int8)
    ctx = KernelContext({}, (in_q,), out_q)
    cases.tail(op, ctx, x, label, splits=random_splits(rng, h, w))
    cases.oneshot(op, ctx, x, label, layout=LAYOUTS[int(rng.integers(0, 5))])


def dense_case(cases: Cases, rng, is_float, label):
    h, w, c = int(rng.integers(1, 6)), int(rng.integers(1, 6)), int(rng.integers(1, 9))
    units = int(rng.integers(1, 21))
    op = Dense(units, rand_activation(rng))
    ties = wants_ties(rng, is_float)
    in_q = None if is_float else rand_quant(rng, ties=ties)
    consts, out_q = weighted_consts(rng, (units, h * w * c), units, h * w * c, in_q, is_float,
                                    per_tensor=rng.random() < 0.4, ties=ties)
    if consts.get("weight_scales") is not None and consts["weight_scales"].size == 1 and rng.random() < 0.5:
        consts["weight_scales"] = np.repeat(consts["weight_scales"], units)  # per tensor, repeated
    ctx = KernelContext(consts, (in_q,), out_q)
    x = near(rng, (h, w, c), in_q.zero_point) if ties else rand_map(rng, (h, w, c), is_float)
    if rng.random() < 0.3:  # a vector input
        cases.tail(op, ctx, x.reshape(-1), label)
        cases.oneshot(op, ctx, x.reshape(-1), label)
    else:  # streamed over the map before a flattening reshape
        cases.oneshot(op, ctx, x.reshape(-1), label, in_shape=(h, w, c), layout=LAYOUTS[int(rng.integers(0, 5))])
        cases.tail(op, ctx, x.reshape(-1), label, in_shape=(h, w, c), splits=random_splits(rng, h, w))


def softmax_case(cases: Cases, rng, is_float, label):
    depth = int(rng.integers(1, 41))
    shape = (depth,) if rng.random() < 0.6 else (int(rng.integers(1, 4)), depth)
    op = Softmax(1.0 if rng.random() < 0.6 else f32(rng.uniform(0.3, 2.0)))
    in_q = None if is_float else rand_quant(rng, 0.005, 0.2)
    out_q = None if is_float else (Quant(1 / 256, -128) if rng.random() < 0.7 else rand_quant(rng, 0.002, 0.01))
    x = rand_map(rng, shape, is_float) * (3 if is_float else 1)
    cases.softmax(op, KernelContext({}, (in_q,), out_q), x, label, in_place=bool(rng.random() < 0.3))


TAILS = {"global_avg_pool": gap_case, "dense": dense_case, "softmax": softmax_case}
KINDS = [*SPATIAL, *TAILS]


def add_random_cases(cases: Cases, kind: str, is_float: bool, n: int, seed: int, layout_runs: int = 3):
    rng = np.random.default_rng(seed)
    for i in range(n):
        label = f"{kind} #{i} {'f32' if is_float else 's8'}"
        if kind in SPATIAL:
            op, ctx, inputs = SPATIAL[kind](rng, is_float)
            cases.spatial(op, ctx, inputs, f"{label} {op}", n_layout_runs=layout_runs)
        else:
            TAILS[kind](cases, rng, is_float, label)


# ---- comparing -------------------------------------------------------------------------------

def assert_bit_exact(results, record_property=None):
    total = exact = 0
    failures = []
    for r in results:
        got, want = np.asarray(r.got).reshape(-1), np.asarray(r.expected).reshape(-1)
        assert got.shape == want.shape, r.label
        same = got == want
        total += same.size
        exact += int(same.sum())
        acc_ok = "acc" not in r.extra or np.array_equal(r.extra["acc"].astype(np.int64),
                                                       np.asarray(r.extra["acc_expected"]).astype(np.int64))
        if not same.all() or not r.untouched or not acc_ok:
            failures.append(f"{r.label}: {int((~same).sum())}/{same.size} differ, max "
                            f"{np.abs(got.astype(np.int64) - want.astype(np.int64)).max()}, "
                            f"untouched={r.untouched}, acc_ok={acc_ok}")
    if record_property:
        record_property("values", total)
        record_property("bit_exact_fraction", exact / max(total, 1))
    assert not failures, f"{len(failures)} of {len(results)} runs not bit-exact:\n" + "\n".join(failures[:20])
    return total


def close(got, want, rtol=1e-4):
    got, want = np.asarray(got, np.float64).reshape(-1), np.asarray(want, np.float64).reshape(-1)
    scale = max(float(np.abs(want).max(initial=0.0)), 1e-6)
    err = np.abs(got - want)
    return bool(np.all(err <= rtol * np.abs(want) + rtol * scale)), float((err / scale).max(initial=0.0))


def assert_close(results, record_property=None):
    worst = 0.0
    failures = []
    for r in results:
        ok, rel = close(r.got, r.expected)
        worst = max(worst, rel)
        acc_ok = "acc" not in r.extra or close(r.extra["acc"], r.extra["acc_expected"])[0]
        if not ok or not r.untouched or not acc_ok:
            failures.append(f"{r.label}: max relative error {rel:.3g}, untouched={r.untouched}, acc_ok={acc_ok}")
    if record_property:
        record_property("max_relative_error", worst)
    assert not failures, f"{len(failures)} of {len(results)} runs off:\n" + "\n".join(failures[:20])
    return worst


# ---- random cases ----------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_random_int8_bit_exact(kind, lib, c_dir, record_property):
    cases = Cases(seed=1)
    add_random_cases(cases, kind, False, n=40, seed=KINDS.index(kind))
    results = cases.results(c_dir, lib, tag=f"random_s8_{kind}")
    assert len(results) >= 40 and all(r.untouched for r in results)
    assert_bit_exact(results, record_property)


@pytest.mark.parametrize("kind", KINDS)
def test_random_float32_within_rounding(kind, lib, c_dir, record_property):
    cases = Cases(seed=2)
    add_random_cases(cases, kind, True, n=25, seed=100 + KINDS.index(kind))
    assert_close(cases.results(c_dir, lib, tag=f"random_f32_{kind}"), record_property)


@pytest.mark.parametrize("runs", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_window_run_batches_do_not_change_results(runs, c_dir):
    """MSF_MAX_RUNS only changes how many runs of a window the window kernels (convolutions and
    pools, int8 and float) gather at once; a window with more is reduced a batch at a time (the
    fast tier runs one run a batch, the most batches)."""
    lib = build_library(c_dir, defines=(f"MSF_MAX_RUNS={runs}",))
    for is_float in (False, True):
        cases = Cases(seed=8)
        for kind in ("conv2d", "depthwise_conv2d", "max_pool2d", "avg_pool2d"):
            add_random_cases(cases, kind, is_float, n=12 if "conv" in kind else 6, seed=800 + KINDS.index(kind),
                             layout_runs=3)
        results = cases.results(c_dir, lib, tag=f"runs{runs}_{is_float}")
        assert_close(results) if is_float else assert_bit_exact(results)


@pytest.mark.slow
@pytest.mark.parametrize("block", [1, 3])
def test_channel_block_size_does_not_change_results(block, c_dir):
    """MSF_CHANNEL_BLOCK only changes how many accumulators a window kernel keeps at once."""
    lib = build_library(c_dir, defines=(f"MSF_CHANNEL_BLOCK={block}",))
    for is_float in (False, True):
        cases = Cases(seed=6)
        for kind in ("conv2d", "depthwise_conv2d", "max_pool2d", "avg_pool2d"):
            add_random_cases(cases, kind, is_float, n=8, seed=700 + KINDS.index(kind), layout_runs=2)
        results = cases.results(c_dir, lib, tag=f"block{block}_{is_float}")
        assert_close(results) if is_float else assert_bit_exact(results)


# ---- the Arm DSP-extension loops, run on the Cortex-M4 under QEMU --------------------------------

@pytest.fixture(scope="session")
def m4():
    return get_target("cortex-m4")


@pytest.mark.slow  # about 6 s of CPU: every kernel built with the cross compiler (the test below reuses it)
def test_the_cortex_m4_build_uses_the_dsp_loops(c_dir, m4):
    objects = build_library(c_dir, target=m4)
    listing = subprocess.run(["arm-none-eabi-objdump", "-d", str(objects / "conv2d.o"), str(objects / "depthwise_conv2d.o")],
                             capture_output=True, text=True, check=True).stdout
    assert "smlad" in listing and "sxtb16" in listing and "smlabb" in listing


@pytest.mark.parametrize("defines", [(), pytest.param(("MSF_POINTWISE_CHUNK=8", "MSF_CHANNEL_BLOCK=6"), marks=pytest.mark.slow)],
                         ids=["default", "small"])  # small: the objects built again, so slow
@pytest.mark.parametrize("kind", ["conv2d", "depthwise_conv2d"])
@pytest.mark.qemu  # its drivers run under QEMU
def test_dsp_loops_bit_exact_on_cortex_m4(kind, defines, c_dir, m4):
    """The same random cases as on the host, plus layers of real width, through every layout: the
    Cortex-M4 build runs the DSP loops (word loads, SXTB16 / SMLAD, the pointwise pairs and their
    chunks), which must give the numpy kernels' bytes. Small chunks and blocks put more of their
    boundaries inside the cases."""
    lib = build_library(c_dir, defines=defines, target=m4)
    config = SPATIAL[kind]
    cases = Cases(seed=11)
    rng = np.random.default_rng(900 + KINDS.index(kind) + len(defines))
    for i in range(40):
        wide = i % 3 != 0
        op, ctx, inputs = config(rng, False, wide=wide)
        cases.spatial(op, ctx, inputs, f"{kind} #{i} {'wide ' if wide else ''}{op}", n_layout_runs=2)
    assert_bit_exact(cases.results(c_dir, lib, tag=f"dsp_{kind}_{len(defines)}", target=m4))


def dsp_depthwise_config(rng, ruy: bool, below_zero: bool = False):
    """A 3x3 int8 depthwise convolution, the blocked DSP loop's case: a multiplier of 1 (4 to 40
    channels, whole and partial groups and blocks) or of 4 or 8, gemmlowp's rounding or LiteRT's
    split (ruy's on the first multiple of 8 channels: a run of the loop each), sometimes a bias
    large enough to take the general output stage.

    below_zero: a case of gemmlowp's ties below zero (see negative_ties): rounding ties throughout,
    with right shifts of 1 to 5; no activation, which would clamp the outputs below the zero point;
    stride 1 on a map of 8 x 8 or more (many outputs); and under LiteRT's split, a scalar tail (its
    gemmlowp channels) that the loop takes: 4 to 7 channels of multiplier 1, or 4 of multiplier 4."""
    win, (h, w) = rand_window(rng, max_k=3, square=True)
    win = Window((3, 3), (1, 1) if below_zero else win.strides, tuple(min(p, 2) for p in win.pads))
    least = 8 if below_zero else 3
    h, w = max(h, least), max(w, least)
    mult = (1, 1, 1, 4, 8)[int(rng.integers(0, 5))]
    cin = int(rng.integers(4, 41)) if mult == 1 else int(rng.integers(1, 4))
    if below_zero and ruy:  # out_c % 8 of 4 to 7 (multiplier 1) or 4 (multiplier 4): the tail
        mult = (1, 1, 4)[int(rng.integers(0, 3))]
        cin = 8 * int(rng.integers(0, 5)) + int(rng.integers(4, 8)) if mult == 1 else 2 * int(rng.integers(0, 2)) + 1
    op = (DepthwiseConv2DLitert if ruy else DepthwiseConv2D)(win, mult, None if below_zero else rand_activation(rng))
    ties = below_zero or rng.random() < 0.6
    in_q = rand_quant(rng, ties=ties)
    consts, out_q = weighted_consts(rng, (1, 3, 3, cin * mult), cin * mult, 9, in_q, False,
                                    per_tensor=rng.random() < 0.25, ties=ties)
    if below_zero:  # multipliers 2^-2 to 2^-6 (weight scales 2^-6 to 2^-8): right shifts of 1 to 5
        out_q = Quant(in_q.scale * 2.0 ** -int(rng.integers(2, 5)), out_q.zero_point)
    elif ties:  # multipliers 2^-3 to 2^-5: a right shift (the fast stage), at ties of either sign
        out_q = Quant(in_q.scale * 2.0 ** -3, out_q.zero_point)
    elif rng.random() < 0.2:  # an accumulator beyond 2^30: the general output stage
        consts["bias"] = np.full(cin * mult, 1 << 30, dtype=np.int32)
    x = near(rng, (h, w, cin), in_q.zero_point) if ties else rand_map(rng, (h, w, cin), False)
    return op, KernelContext(consts, (in_q,), out_q), [x]


def negative_ties(op: DepthwiseConv2D, ctx: KernelContext, x: np.ndarray) -> int:
    """How many outputs of the whole map the DSP loop's fast output stage takes from a tie below
    zero under gemmlowp's rounding, unclamped: those whose byte its ties-away-from-zero adjustment
    decides (ruy's rounding takes such a tie up). They lie on the channels of that rounding (all, or
    the scalar tail of LiteRT's split) when the loop takes them and every shift is to the right."""
    out_c = ctx.consts["weights"].shape[-1]
    first = tail_start(out_c, op.depth_multiplier) if isinstance(op, DepthwiseConv2DLitert) else 0
    out_hw = op.win.output_hw(*x.shape[:2])
    # as msf_depthwise_conv2d_s8 chooses the loop for the whole map (every window here is 3x3)
    takes_loop = op.depth_multiplier % 4 == 0 or (4 <= out_c - first <= 64 and out_hw[0] * out_hw[1] >= 8)
    mult, shift = (v[first:] for v in op.multipliers(ctx))
    if first == out_c or not takes_loop or (shift >= 0).any():
        return 0
    acc = op._accumulate(x.astype(np.int32) - np.int32(ctx.input_quant[0].zero_point),
                         ctx.consts["weights"][0].astype(np.int32), out_hw)[..., first:]
    acc = acc + ctx.consts.get("bias", np.zeros(out_c, np.int32))[first:]
    high = nx.saturating_rounding_doubling_high_mul(acc, mult)
    half = np.int64(1) << (-shift - 1)
    out = nx.rounding_divide_by_pot(high, -shift) + ctx.output_quant.zero_point
    low, top = ctx.activation_range(op.activation)
    tie_below_zero = (high < 0) & ((high & (2 * half - 1)) == half)
    return int(np.sum(tie_below_zero & (out >= low) & (out < top)))  # the other way: out + 1


@pytest.mark.qemu  # its drivers run under QEMU (the library built as for the test above)
def test_dsp_depthwise_3x3_forms_bit_exact_on_cortex_m4(c_dir, m4):
    """The blocked DSP depthwise loop (3x3 windows, multiplier 1 or a multiple of 4) in each of its
    output-stage forms, through every layout (ring buffers included), gives the numpy kernels'
    bytes. Each of gemmlowp's and LiteRT's forms holds outputs on ties below zero (see
    negative_ties), which a tie rounded the other way would change."""
    lib = build_library(c_dir, target=m4)
    cases = Cases(seed=13)
    rng = np.random.default_rng(913)
    ties = {DepthwiseConv2D: 0, DepthwiseConv2DLitert: 0}
    for i in range(32):
        op, ctx, inputs = dsp_depthwise_config(rng, ruy=i % 2 == 1, below_zero=i >= 24)
        ties[type(op)] += negative_ties(op, ctx, inputs[0])
        cases.spatial(op, ctx, inputs, f"dsp depthwise #{i} {op}", n_layout_runs=2)
    assert min(ties.values()) >= 50, ties
    assert_bit_exact(cases.results(c_dir, lib, tag="dsp_depthwise_3x3", target=m4))


# ---- the Helium (MVE) loops, run on the Cortex-M55 under QEMU -------------------------------------

@pytest.fixture(scope="session")
def m55(tmp_path_factory):
    """The cortex-m55 target, its boot script (support/) written where its link finds it."""
    from dataclasses import replace

    from support.toolchains import require_target, write_runtime
    target = require_target("cortex-m55")
    folder = tmp_path_factory.mktemp("m55-runtime")
    write_runtime(folder, target)
    return replace(target, ldflags=target.ldflags.replace("support/boot.ld", str(folder / "support" / "boot.ld")))


# Small blocks and patches, so that the blocks' ends and the fallback to the DSP loop fall inside
# the cases (the default sizes run in tests/targets/test_cortex_m55.py); one library build (~30 s).
HELIUM_SMALL = ("MSF_MVE_BLOCK=8", "MSF_MVE_DEPTHWISE_BLOCK=16", "MSF_MVE_PATCH=20")


# kind -> an instruction of its Helium loop, which its object must hold
HELIUM_LOOPS = {"conv2d": "vmlava.s8", "depthwise_conv2d": "vmullb.s16", "dense": "vmlava.s8",
                "add": "vqrdmulh.s32"}  # (objdump names VMLADAVA vmlava)


@pytest.mark.qemu
@pytest.mark.slow
@pytest.mark.parametrize("kind", list(HELIUM_LOOPS))
def test_helium_loops_bit_exact_on_cortex_m55(kind, c_dir, m55):
    """As the DSP loops on the Cortex-M4: random cases, rounding ties among them, and layers of real
    width through every layout (conv2d requantises with ruy's rounding here, depthwise with
    gemmlowp's; test_cortex_m55.py runs conv2d under --numerics tflm; ADD under either numerics)."""
    defines = HELIUM_SMALL
    lib = build_library(c_dir, defines=defines, target=m55)
    listing = subprocess.run(["arm-none-eabi-objdump", "-d", "-marmv8.1-m.main", str(lib / f"{kind}.o")],
                             capture_output=True, text=True, check=True).stdout
    assert HELIUM_LOOPS[kind] in listing
    cases = Cases(seed=12)
    rng = np.random.default_rng(950 + KINDS.index(kind) + len(defines))
    for i in range(30):
        if kind in ("conv2d", "depthwise_conv2d"):
            wide = i % 3 != 0
            op, ctx, inputs = SPATIAL[kind](rng, False, wide=wide)
            cases.spatial(op, ctx, inputs, f"{kind} #{i} {'wide ' if wide else ''}{op}", n_layout_runs=2)
        elif kind in SPATIAL:
            op, ctx, inputs = SPATIAL[kind](rng, False)
            cases.spatial(op, ctx, inputs, f"{kind} #{i} {op}", n_layout_runs=2)
        else:
            TAILS[kind](cases, rng, False, f"{kind} #{i}")
    assert_bit_exact(cases.results(c_dir, lib, tag=f"mve_{kind}_{len(defines)}", target=m55))


# ---- the shared numerics ---------------------------------------------------------------------

def multiply_inputs(rng):
    """(x, multiplier, shift) triples: random ones, and exact ties for both rounding steps."""
    n = 6000
    shift = rng.integers(-31, 7, n)
    mult = rng.integers(1 << 30, 1 << 31, n)
    mult[: n // 3] = 1 << 30  # 0.5: x * m / 2^31 = x / 2, ties for every odd x
    limit = (np.int64(1) << (30 - np.maximum(shift, 0)))
    x = (rng.uniform(-1, 1, n) * limit).astype(np.int64)
    x[n // 3: n // 2] = rng.integers(-300, 301, n // 2 - n // 3)  # small values: many ties
    x[n // 2: n // 2 + 200] = (rng.integers(-64, 65, 200) * 2 + 1) << rng.integers(0, 8, 200)
    x[:10], mult[:10], shift[:10] = -(1 << 31), -(1 << 31), 0  # the saturating product
    return x.astype(np.int64), mult.astype(np.int64), shift.astype(np.int64)


def test_fixed_point_helpers_match_numerics(lib, c_dir):
    rng = np.random.default_rng(7)
    x, mult, shift = multiply_inputs(rng)
    d = Driver()
    d.const("xs", x.astype(np.int32))
    d.const("ms", mult.astype(np.int32))
    d.const("ss", shift.astype(np.int32))
    n = x.size
    outs = {name: d.zeros(name, np.int32, n) for name in ("o_double", "o_ruy", "o_single", "o_srdhm", "o_rdbpot")}
    d.body.append(f"""    {{ int32_t i; for (i = 0; i < {n}; ++i) {{
        {outs["o_double"]}[i] = msf_mul_by_quantized_mult(xs[i], ms[i], ss[i], MSF_ROUND_DOUBLE);
        {outs["o_ruy"]}[i] = msf_mul_by_quantized_mult(xs[i], ms[i], ss[i], MSF_ROUND_RUY);
        {outs["o_single"]}[i] = msf_mul_by_quantized_mult(xs[i], ms[i], ss[i], MSF_ROUND_SINGLE);
        {outs["o_srdhm"]}[i] = msf_saturating_rounding_doubling_high_mul(xs[i], ms[i]);
        {outs["o_rdbpot"]}[i] = msf_rounding_divide_by_pot(xs[i], ss[i] < 0 ? -ss[i] : 0);
    }} }}""")
    slots = {name: d.dump(c_name, np.int32, n) for name, c_name in outs.items()}
    got = d.run(c_dir, lib, tag="fixed_point")
    valid = np.ones(n, bool)
    valid[:10] = False  # INT32_MIN x INT32_MIN: only the high mul is defined for it
    for mode, name in ((nx.DOUBLE, "o_double"), (nx.RUY, "o_ruy"), (nx.SINGLE, "o_single")):
        want = nx.multiply_by_quantized_multiplier(x, mult, shift, mode)
        want = np.clip(want, -(1 << 31), (1 << 31) - 1)  # C saturates what numpy leaves in int64
        np.testing.assert_array_equal(got[slots[name]][valid], want[valid], err_msg=mode)
    np.testing.assert_array_equal(got[slots["o_srdhm"]], nx.saturating_rounding_doubling_high_mul(x, mult))
    np.testing.assert_array_equal(got[slots["o_rdbpot"]],
                                  nx.rounding_divide_by_pot(x, np.maximum(-shift, 0)))
    # the tie-heavy inputs really contain ties that the schemes round differently
    assert (got[slots["o_double"]] != got[slots["o_ruy"]]).sum() > 50


@pytest.mark.parametrize("mode", [nx.DOUBLE, nx.RUY, nx.SINGLE])
def test_output_stage_block_matches_numerics(mode, lib, c_dir):
    """msf_requantize_block_s8, fed the constants output_stage_consts prepares, is the general
    requantisation + zero point + clamp, ties and saturating values included."""
    rng = np.random.default_rng(17)
    x, mult, shift = multiply_inputs(rng)
    x, mult, shift = x[10:], mult[10:], shift[10:]  # no negative multipliers: never produced
    x[:20], shift[:20] = np.where(np.arange(20) % 2, (1 << 31) - 1, -(1 << 31)), -np.arange(1, 21)  # int32's ends
    if mode == nx.SINGLE:
        shift = np.minimum(shift, 30)  # TFLITE_SINGLE_ROUNDING needs 31 - shift >= 1
    n = x.size
    zero_point = rng.integers(-128, 128, n)
    lo = rng.integers(-128, 0, n)
    hi = rng.integers(0, 128, n)
    consts = output_stage_consts(mult, shift, mode)
    d = Driver()
    xs, zs, los, his = (d.const(name, v.astype(np.int32)) for name, v in
                        (("xs", x), ("zs", zero_point), ("los", lo), ("his", hi)))
    ms, rs = d.const("ms", consts["multiplier"]), d.const("rs", consts["right"])
    out = d.zeros("out", np.int8, n)
    # one value per call: every value gets its own zero point and clamp
    d.body.append(f"""    {{ int32_t i; for (i = 0; i < {n}; ++i) {{
        msf_requantize_block_s8({xs} + i, 1, {ms} + i, {rs} + i, {C_ROUNDING[mode]}, {zs}[i], {los}[i], {his}[i],
                                {out} + i);
    }} }}""")
    # the fast form, on the values it is for (a right shift: RUY and DOUBLE), which the window
    # kernels choose once per call when every channel has one
    fast = d.zeros("fast", np.int8, n)
    if mode != nx.SINGLE:
        d.body.append(f"""    {{ int32_t i; for (i = 0; i < {n}; ++i) {{
        if ({rs}[i] >= 1 && msf_output_stage_is_fast({C_ROUNDING[mode]}, {rs} + i, 1)) {{
            msf_requantize_block_fast_s8({xs} + i, 1, {ms} + i, {rs} + i, {C_ROUNDING[mode]}, {zs}[i], {los}[i],
                                         {his}[i], {fast} + i);
        }} else {{
            {fast}[i] = {out}[i];
        }}
    }} }}""")
    slot, fast_slot = d.dump(out, np.int8, n), d.dump(fast, np.int8, n)
    results = d.run(c_dir, lib, tag=f"output_stage_{mode}")
    got = results[slot]
    want = np.clip(nx.multiply_by_quantized_multiplier(x, mult, shift, mode) + zero_point, lo, hi)
    np.testing.assert_array_equal(got, want)
    assert (want == lo).any() and (want == hi).any() and ((want > lo) & (want < hi)).sum() > n // 10
    if mode != nx.SINGLE:
        np.testing.assert_array_equal(results[fast_slot], want)
        assert (consts["right"] >= 1).sum() > n // 2  # most values took the fast form


def test_edge_quantize_dequantize_match_numerics(lib, c_dir):
    rng = np.random.default_rng(11)
    d = Driver()
    checks = []
    for i, (scale, zp, n) in enumerate([(1 / 64, 3, 8 * 13 + 5), (0.0372, -17, 8 * 7 + 3), (0.5, 0, 16),
                                        (0.0078125, -128, 7)]):
        q = Quant(scale, zp)
        ties = (rng.integers(-200, 200, n) + 0.5) * scale  # exact halves: the two paths disagree
        x = np.where(rng.random(n) < 0.5, ties, rng.uniform(-300, 300, n) * scale).astype(np.float32)
        x[:2] = [1e30, -1e30]
        src = d.const(f"qx{i}", x)
        dst = d.zeros("qy", np.int8, n)
        d.body.append(f"    msf_quantize_f32({src}, {dst}, {n}, {c_float(scale)}, {zp});")
        checks.append((d.dump(dst, np.int8, n), nx.quantize_float(x, q)))
        qs = rng.integers(-128, 128, n, dtype=np.int8)
        src = d.const(f"dq{i}", qs)
        dst = d.zeros("dy", np.float32, n)
        d.body.append(f"    msf_dequantize_s8({src}, {dst}, {n}, {c_float(scale)}, {zp});")
        checks.append((d.dump(dst, np.float32, n), nx.dequantize(qs, q)))
        # --numerics tflm: the scalar rule on every value, msf_*_one(..., 0), on the quotient in float32
        src, dst = d.const(f"tx{i}", x), d.zeros("ty", np.int8, n)
        d.body.append(f"    {{ int32_t k; for (k = 0; k < {n}; ++k) "
                      f"{dst}[k] = msf_quantize_f32_one({src}[k] / {c_float(scale)}, 1.0f, {zp}, 0); }}")
        checks.append((d.dump(dst, np.int8, n), nx.quantize_float(x, q, nx.TFLM)))
        src, dst = d.const(f"tq{i}", qs), d.zeros("tz", np.float32, n)
        d.body.append(f"    {{ int32_t k; for (k = 0; k < {n}; ++k) "
                      f"{dst}[k] = msf_dequantize_s8_one({src}[k], {c_float(scale)}, {zp}, 0); }}")
        checks.append((d.dump(dst, np.float32, n), nx.dequantize(qs, q, nx.TFLM)))
    got = d.run(c_dir, lib, tag="edges")
    for slot, want in checks:
        np.testing.assert_array_equal(got[slot].view(np.uint8), np.asarray(want).reshape(-1).view(np.uint8))


def test_c_array_literal_is_exact_for_float32():
    values = np.array([0.1, -3.4028235e38, 1e-45, 1 / 3], dtype=np.float32)
    text = c_array_literal(values)
    parsed = np.array([float(v) for v in text.strip("{}\n ").replace("\n", "").split(",")], dtype=np.float32)
    np.testing.assert_array_equal(parsed, values)


# ---- the fixtures' real nodes ----------------------------------------------------------------

# Fixtures of operators TFLite Micro has no kernel for (fixtures/make_activation_models.py), or
# none for their type (int16 RESIZE_BILINEAR, fixtures/make_resize_bilinear_models.py).
NOT_IN_TFLM = ("act_relu_n1_to_1", "act_relu_0_to_1", "act_sweep_relu_n1_to_1", "act_sweep_relu_0_to_1",
               "bilinear_i16_chain")
TFLITE = sorted(p for d in ("models", "executor") for p in (FIXTURES / d).glob("*.tflite")
                if not p.name.startswith("unsupported_"))
ONNX = sorted((FIXTURES / "models").glob("*.onnx"))


def add_network_cases(cases: Cases, path: Path, seed: int, layout_runs: int = 1, numerics: str = nx.LITERT) -> int:
    """Every node with a C kernel, on the numpy executor's own input to it; returns the node count."""
    graph = load_model(str(path), numerics=numerics)
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal(graph.shape_of(t)).astype(np.float32) if graph.dtype == "float32"
          else rng.integers(-128, 128, graph.shape_of(t), dtype=np.int8) for t in graph.input_tensors]
    count = 0
    for index, node, ctx, inputs in node_inputs(graph, xs):
        op, label = node.op, f"{path.stem} node {index} {node.op}"
        if op.c_kernel is None:
            continue
        count += 1
        if isinstance(op, (GlobalAvgPool, Dense)):
            cases.tail(op, ctx, inputs[0], label)
            cases.oneshot(op, ctx, inputs[0], label)
            src = node.inputs[0]
            if inputs[0].ndim == 3 and inputs[0].shape[0] * inputs[0].shape[1] > 1:
                h, w = inputs[0].shape[:2]
                cases.tail(op, ctx, inputs[0], label + " split", splits=random_splits(rng, h, w))
            elif src >= 0 and graph.nodes[src].op.kind == "reshape" and len(graph.shape_of(graph.nodes[src].inputs[0])) == 3:
                # the dense streams the map before its flattening reshape
                shape = graph.shape_of(graph.nodes[src].inputs[0])
                cases.tail(op, ctx, inputs[0], label + " streamed", in_shape=shape,
                           splits=random_splits(rng, shape[0], shape[1]))
        elif isinstance(op, Softmax):
            cases.softmax(op, ctx, inputs[0], label)
        else:
            out_hw = op.output_shape([i.shape for i in inputs])
            whole = [((0, out_hw[0]), (0, out_hw[1]), ["whole"] * len(inputs), "whole")] if len(out_hw) == 3 else \
                [((0, 1), (0, 1), ["whole"] * len(inputs), "whole")]
            cases.spatial(op, ctx, inputs, label, runs=whole)
            for _ in range(layout_runs if len(out_hw) == 3 else 0):
                # a row, a column band or a sub-rectangle, in ring / patch views
                r, c = regions(rng, out_hw[:2])[int(rng.integers(1, 4))]
                cases.spatial(op, ctx, inputs, label, runs=[
                    (r, c, [LAYOUTS[int(rng.integers(1, 5))] for _ in inputs], LAYOUTS[int(rng.integers(1, 5))])])
    return count


@pytest.fixture(scope="module", params=[pytest.param(n, marks=pytest.mark.slow) if n == nx.TFLM else n for n in nx.NUMERICS])
def tflite_results(request, lib, c_dir):
    """One driver for every TFLite fixture, under each numerics (litert, tflm): results by model.
    Each driver takes about 7 s of CPU; tflm's is slow (the fast tier checks the kernels' tflm
    rounding in test_output_stage_block_matches_numerics and tflm networks' C in test_int16.py,
    test_binops.py and others)."""
    by_model = {}
    cases = Cases(seed=3)
    for i, path in enumerate(TFLITE):
        if request.param == nx.TFLM and (path.name.startswith(UINT8_PREFIX) or path.stem.startswith(NOT_IN_TFLM)):
            continue  # TFLite Micro has no uint8 kernels (nor these operators'): no tflm numerics to follow
        start = len(cases.checks)
        add_network_cases(cases, path, seed=i, numerics=request.param)
        by_model[path.stem] = (start, len(cases.checks))
    results = cases.results(c_dir, lib, tag=f"tflite_fixtures_{request.param}")
    return {model: results[a:b] for model, (a, b) in by_model.items()}


@pytest.mark.parametrize("path", TFLITE, ids=lambda p: p.stem)
def test_tflite_fixture_nodes_bit_exact(path, tflite_results, record_property):
    if path.stem not in tflite_results:  # a uint8 model (or RELU_N1_TO_1 ...) under tflm numerics, which refuse it
        with pytest.raises(UserError, match="TFLite Micro"):
            load_model(str(path), numerics=nx.TFLM)
        return
    results = tflite_results[path.stem]
    assert results, f"{path.stem}: no node ran"
    # a float island's (or a float32 model's) float32 nodes: within rounding, as ONNX's; the rest bit-exact
    floats = [r for r in results if np.asarray(r.expected).dtype == np.float32]
    assert_bit_exact([r for r in results if np.asarray(r.expected).dtype != np.float32], record_property)
    assert_close(floats)


@pytest.fixture(scope="module")
def onnx_results(lib, c_dir):
    by_model = {}
    cases = Cases(seed=4)
    for i, path in enumerate(ONNX):
        start = len(cases.checks)
        add_network_cases(cases, path, seed=100 + i)
        by_model[path.stem] = (start, len(cases.checks))
    results = cases.results(c_dir, lib, tag="onnx_fixtures")
    return {model: results[a:b] for model, (a, b) in by_model.items()}


@pytest.mark.parametrize("path", ONNX, ids=lambda p: p.stem)
def test_onnx_fixture_nodes_float32_within_rounding(path, onnx_results, record_property):
    results = onnx_results[path.stem]
    assert results, f"{path.stem}: no node ran"
    assert_close(results, record_property)


# ---- sanitizers ------------------------------------------------------------------------------

@pytest.mark.slow
def test_sanitizers_clean_on_a_subset(san_lib, c_dir):
    """ASan + UBSan (fatal on the first report): random cases of every op, both types, in every
    layout, and two fixture networks."""
    cases = Cases(seed=5)
    for kind in KINDS:
        add_random_cases(cases, kind, False, n=6, seed=500 + KINDS.index(kind), layout_runs=4)
    for kind in KINDS:
        add_random_cases(cases, kind, True, n=3, seed=600 + KINDS.index(kind), layout_runs=4)
    add_network_cases(cases, FIXTURES / "models" / "resnet8.tflite", seed=9, layout_runs=2)
    add_network_cases(cases, FIXTURES / "executor" / "ex_mean_softmax.tflite", seed=10, layout_runs=2)
    results = cases.results(c_dir, san_lib, sanitize=True, tag="sanitized")
    int8 = [r for r in results if np.asarray(r.got).dtype == np.int8]
    float32 = [r for r in results if np.asarray(r.got).dtype == np.float32]
    assert_bit_exact(int8)
    assert_close(float32)
