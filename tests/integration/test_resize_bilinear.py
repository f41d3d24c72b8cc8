"""RESIZE_BILINEAR (`fixtures/make_resize_bilinear_models.py`): int8 maps resized under each flag
combination (none, align_corners, half_pixel_centers) to many sizes, bit-exact with LiteRT (its
optimized resolver) and TFLite Micro, the numpy executor unfused and under fused plans (arena ==
prediction), the generated C on the host bit-exact with numpy."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from support import cache
from support.c_build import check_c
from support.cli import run_cli
from support.fused_cases import random_plan
from support.litert_oracle import run_jobs
from support.micro_oracle import run_jobs as micro_jobs
from support.paths import FIXTURES
from msfcnn import pipeline
from msfcnn.errors import UserError
from msfcnn.executor import from_int8, run_unfused, run_unfused_outputs, to_int8
from msfcnn.fused_executor import run_fused
from msfcnn.fusion import solvers
from msfcnn.ops.resize_bilinear import ResizeBilinear
from msfcnn.ops.resize_nearest import ResizeNearest
from msfcnn.schedule import schedule_plan
from msfcnn.tensors import random_input

MODELS = FIXTURES / "models"
CHAINS = [MODELS / f"bilinear_{flags}.tflite" for flags in ("x2", "half_pixel", "align_corners")]
SWEEP = MODELS / "bilinear_sweep.tflite"
SEEDS = range(4)


def _oracle_outputs(path, inputs, numerics: str, all_outputs: bool = False):
    """Each input's outputs under LiteRT (`litert`) or TFLite Micro (`tflm`)."""
    if numerics == "litert":
        results = run_jobs([(path, inputs)])[0]
        return results.all_outputs if all_outputs else results.outputs
    return micro_jobs([(path, inputs)], "tflm", all_outputs=all_outputs)[0]


@pytest.mark.parametrize("numerics", ["litert", "tflm"])
@pytest.mark.parametrize("path", CHAINS, ids=lambda p: p.stem)
def test_chain_matches_the_oracle_unfused_and_fused(path, numerics):
    """conv -> resize -> conv: the unfused run and fused plans (least RAM, random) equal the
    oracle's output; a fused run touches exactly the predicted arena."""
    graph = pipeline.load(str(path), numerics=numerics)
    assert [n.op.kind for n in graph.nodes] == ["conv2d", "resize_bilinear", "conv2d"]
    inputs = [random_input(graph, seed) for seed in SEEDS]
    dag = cache.dag(graph)
    plans = [solvers.min_peak_ram(dag).blocks] + [random_plan(dag, seed) for seed in (1, 2)]
    for x, want in zip(inputs, _oracle_outputs(path, inputs, numerics)):
        _check_runs(graph, plans, x, want)


def _check_runs(graph, plans, x, want) -> None:
    """The unfused run and each plan's fused run of `x` give `want`; a fused run touches exactly
    the predicted arena."""
    want = np.asarray(want).reshape(-1)
    np.testing.assert_array_equal(run_unfused(graph, x).reshape(-1), want)
    for blocks in plans:
        run = run_fused(schedule_plan(graph, blocks), x)
        np.testing.assert_array_equal(run.outputs[0].reshape(-1), want)
        assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes


@pytest.mark.parametrize("path", CHAINS, ids=lambda p: p.stem)
def test_chain_c_is_bit_exact(path):
    graph = cache.model(str(path))
    dag = cache.dag(graph)
    check_c(graph, solvers.min_peak_ram(dag).blocks, seed=0)
    check_c(graph, random_plan(dag, 1), seed=1)


def _sweep_inputs(graph):
    """Distinct-ish ramp values, extreme values (the sums' range) and a random map."""
    ramp = (np.arange(7 * 11 * 2).reshape(1, 7, 11, 2) * 37 % 256 - 128).astype(np.int8)
    extremes = np.where(np.arange(7 * 11 * 2).reshape(1, 7, 11, 2) % 3 == 0, -128, 127).astype(np.int8)
    return [ramp, extremes, random_input(graph, 0), random_input(graph, 1)]


@pytest.mark.parametrize("numerics", ["litert", "tflm"])
def test_sweep_over_sizes_and_flags(numerics):
    """A 7x11 map resized to 15 sizes (x2, x3, fractional, down to 1x1) under each flag
    combination (45 outputs of one model): every output equal to the oracle's."""
    graph = pipeline.load(str(SWEEP), numerics=numerics)
    assert len(graph.output_tensors) == 45
    inputs = _sweep_inputs(graph)
    for x, want in zip(inputs, _oracle_outputs(SWEEP, inputs, numerics, all_outputs=True)):
        for got, ref in zip(run_unfused_outputs(graph, x), want, strict=True):
            np.testing.assert_array_equal(got.reshape(-1), np.asarray(ref).reshape(-1))


def _float_formula(x: np.ndarray, op: ResizeBilinear) -> np.ndarray:
    """TFLite's float reference formula on the int8 values (float32 positions and weights, + 0.5,
    truncated): what the interpreter's uint8 kernels do, not what its int8 kernel does."""
    f32 = np.float32
    positions = []
    for n_in, n_out in zip(op.in_hw, op.size):
        scale = f32(n_in - 1) / f32(n_out - 1) if op.align_corners and n_out > 1 else f32(n_in) / f32(n_out)
        i = np.arange(n_out, dtype=f32)
        at = (i + f32(0.5)) * scale - f32(0.5) if op.half_pixel_centers else i * scale
        lo = np.maximum(np.floor(at), 0).astype(np.int64)
        hi = np.minimum(np.ceil(at).astype(np.int64), n_in - 1)
        positions.append((at - lo.astype(f32), lo, hi))
    (fy, y0, y1), (fx, x0, x1) = positions
    fy, fx, v = fy[:, None, None], fx[None, :, None], x.astype(f32)
    total = (v[y0][:, x0] * (1 - fy) * (1 - fx) + v[y1][:, x0] * fy * (1 - fx)
             + v[y0][:, x1] * (1 - fy) * fx + v[y1][:, x1] * fy * fx + f32(0.5))
    return np.trunc(total).astype(np.int8)


def test_a_float_formula_would_fail_the_sweep():
    """The test can fail: the float formula (with its truncation) differs from LiteRT's int8
    results on many values, which the fixed-point kernel matches."""
    graph = cache.model(str(SWEEP))
    inputs = _sweep_inputs(graph)
    expected = run_jobs([(SWEEP, inputs)])[0].all_outputs
    nodes = [n for n in graph.nodes if isinstance(n.op, ResizeBilinear)]
    differing = 0
    for x, want in zip(inputs, expected):
        for node, ref in zip(nodes, want, strict=True):
            differing += int(np.sum(_float_formula(x.reshape(7, 11, 2), node.op).reshape(-1)
                                    != np.asarray(ref).reshape(-1)))
    assert differing > 50


def test_sweep_c_is_bit_exact_on_all_outputs():
    graph = cache.model(str(SWEEP))
    check_c(graph, solvers.min_peak_ram(cache.dag(graph)).blocks)


def test_flags_are_read():
    flags = {p.stem: next((n.op.align_corners, n.op.half_pixel_centers) for n in cache.model(str(p)).nodes
                          if isinstance(n.op, ResizeBilinear)) for p in CHAINS}
    assert flags == {"bilinear_x2": (False, False), "bilinear_half_pixel": (False, True),
                     "bilinear_align_corners": (True, False)}


def test_both_flags_are_refused():
    with pytest.raises(UserError, match="both align_corners and half_pixel_centers"):
        ResizeBilinear((4, 4), (8, 8), align_corners=True, half_pixel_centers=True)


# ---- 16x8 (int16 activations) ------------------------------------------------------------------

INT16_CHAIN = MODELS / "bilinear_i16_chain.tflite"


def test_int16_chain_matches_litert_unfused_fused_and_in_c():
    """Two int16 resizes (half_pixel_centers up, align_corners down and up) between 16x8 convs:
    LiteRT's bytes over the whole int16 range, unfused and under fused plans; the C equal to numpy."""
    graph = pipeline.load(str(INT16_CHAIN))
    assert graph.dtype == "int16"
    assert [n.op.kind for n in graph.nodes] == ["conv2d", "resize_bilinear", "resize_bilinear", "conv2d"]
    rng = np.random.default_rng(0)
    inputs = [rng.integers(-32768, 32768, size=graph.input_shape, dtype=np.int16) for _ in SEEDS]
    run = run_jobs([(INT16_CHAIN, inputs)], layers=True)[0]
    dag = cache.dag(graph)
    plans = [solvers.min_peak_ram(dag).blocks, random_plan(dag, 1)]
    for x, want, layers in zip(inputs, run.outputs, run.layers):
        # each resize alone on the interpreter's own input, so that its int16 arithmetic is pinned
        for index in (1, 2):
            node = graph.nodes[index]
            ours = node.op.reference([layers[index - 1].reshape(graph.shape_of(index - 1))], graph.kernel_context(index))
            np.testing.assert_array_equal(ours, layers[index].reshape(ours.shape))
        _check_runs(graph, plans, x, want)
    check_c(graph, plans[0], seed=0)


def test_int16_under_tflm_is_refused_in_one_line(capsys):
    """TFLite Micro has no int16 RESIZE_BILINEAR: nothing to be bit-exact with."""
    code, _, err = run_cli(capsys, "run", str(INT16_CHAIN), "--numerics", "tflm")
    assert code == 2
    assert err.count("\n") == 1 and "TFLite Micro's kernel runs int8 and float32 only" in err


# ---- ONNX Resize linear (float32) --------------------------------------------------------------

ONNX_LINEAR = sorted(MODELS.glob("onnx_bilinear_*.onnx"))


@pytest.mark.parametrize("path", ONNX_LINEAR, ids=lambda p: p.stem)
def test_onnx_linear_resize_matches_onnxruntime_and_the_c(path):
    """Conv -> Resize linear (pytorch_half_pixel x2, align_corners to 9x7, half_pixel down to 3x3,
    asymmetric to 8x11) -> Relu -> Conv: the numpy executor within float32 rounding of
    onnxruntime, unfused and fused; the float32 C within verify's tolerance of numpy."""
    import onnxruntime as ort

    assert len(ONNX_LINEAR) == 4
    graph = cache.model(str(path))
    assert [n.op.kind for n in graph.nodes] == ["conv2d", "resize_bilinear", "activation", "conv2d"]
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    dag = cache.dag(graph)
    for seed in SEEDS:
        x = random_input(graph, seed)
        want = session.run(None, {"input": x})[0]
        np.testing.assert_allclose(run_unfused(graph, x), want, rtol=1e-5, atol=1e-5)
        fused = run_fused(schedule_plan(graph, random_plan(dag, seed)), x)
        np.testing.assert_allclose(fused.outputs[0], want, rtol=1e-5, atol=1e-5)
    check_c(graph, solvers.min_peak_ram(dag).blocks)


def test_onnx_linear_resize_is_not_nearest():
    """The test can fail: the same model read as a nearest resize is far from onnxruntime."""
    import onnxruntime as ort

    path = MODELS / "onnx_bilinear_pytorch_x2.onnx"
    graph = pipeline.load(str(path))  # its own copy: a node is replaced below
    x = random_input(graph, 0)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
    resize = graph.nodes[1].op
    nearest = ResizeNearest(resize.in_hw, resize.size)
    graph.nodes[1] = replace(graph.nodes[1], op=nearest)
    assert np.max(np.abs(run_unfused(graph, x) - want)) > 0.05


# ---- uint8 models --------------------------------------------------------------------------------

U8_CHAIN, U8_SWEEP = MODELS / "u8_bilinear_chain.tflite", MODELS / "u8_bilinear_sweep.tflite"


def _u8_inputs(shape) -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    ramp = (np.arange(int(np.prod(shape))).reshape(shape) * 37 % 256).astype(np.uint8)
    return [ramp] + [rng.integers(0, 256, shape, dtype=np.uint8) for _ in range(3)]


def test_uint8_sweep_matches_litert():
    """LiteRT's uint8 kernel (TFLite's float formula, + 0.5, truncated; 48 resizes, x8 with
    half_pixel_centers on 16 channels among them) on every output."""
    graph = pipeline.load(str(U8_SWEEP))
    assert all(n.op.uint8 for n in graph.nodes) and len(graph.output_tensors) == 48
    inputs = _u8_inputs((1, 7, 11, 16))
    fixed_point_misses = 0  # the int8 kernel's fixed-point arithmetic on the same values
    for x, want in zip(inputs, run_jobs([(U8_SWEEP, inputs)])[0].all_outputs):
        for got, ref in zip(run_unfused_outputs(graph, x), want, strict=True):  # uint8 in and out
            np.testing.assert_array_equal(got.reshape(-1), np.asarray(ref).reshape(-1))
        x8 = to_int8(x).reshape(7, 11, 16)
        for index, (node, ref) in enumerate(zip(graph.nodes, want)):
            fixed = replace(node.op, uint8=False).reference([x8], graph.kernel_context(index))
            fixed_point_misses += int(np.sum(from_int8(fixed).reshape(-1) != np.asarray(ref).reshape(-1)))
    assert fixed_point_misses > 100  # so the float formula is what this test pins down
    check_c(graph, solvers.min_peak_ram(cache.dag(graph)).blocks)


def test_uint8_chain_matches_litert_unfused_fused_and_in_c():
    graph = pipeline.load(str(U8_CHAIN))
    assert graph.uint8_input and [n.op.kind for n in graph.nodes] == ["conv2d", "resize_bilinear", "conv2d"]
    inputs = _u8_inputs((1, 5, 4, 3))
    dag = cache.dag(graph)
    plans = [solvers.min_peak_ram(dag).blocks, random_plan(dag, 1)]
    for x, want in zip(inputs, run_jobs([(U8_CHAIN, inputs)])[0].outputs):  # uint8 in and out
        _check_runs(graph, plans, x, want)
    check_c(graph, plans[1], seed=1)
