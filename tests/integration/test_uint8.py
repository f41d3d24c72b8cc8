"""uint8 TFLite models (TF1-era asymmetric quantisation, `fixtures/make_uint8_models.py`): imported
as int8 with weight-offset kernels, bit-exact with the LiteRT interpreter's uint8 kernels.

Per fixture, on random uint8 inputs: each layer's numpy kernel on the interpreter's own inputs
gives its output; the unfused executor and the fused one (the min-RAM plan and random plans) give
the interpreter's uint8 output; and the C of two of those plans gives the fused executor's bytes
(so the interpreter's too)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from support import cache
from support.c_build import check_c
from support.cli import run_cli
from support.fused_cases import random_plan
from support.litert_oracle import run_jobs
from support.paths import FIXTURES
from msfcnn.errors import UserError
from msfcnn.executor import from_int8, run_unfused, to_int8
from msfcnn.frontends.tflite import load_tflite
from msfcnn import numerics as nx
from msfcnn.fusion import solvers
from msfcnn.ops.depthwise_conv2d import ROUNDING as DEPTHWISE_ROUNDING
from msfcnn.ir import NETWORK_INPUT
from msfcnn.ops.pool2d import AvgPool2D, AvgPool2DHalfUp
from msfcnn.ops.weight_offset import Conv2DWeightOffset, DenseWeightOffset, DepthwiseConv2DWeightOffset
from msfcnn.tensors import random_input

# (u8_split, whose SPLIT is two IR nodes, and u8_shuffle, whose three operators are one, are checked
# end to end in test_split_ops.py and test_shuffle_ops.py)
MODELS = sorted(p for p in (FIXTURES / "models").glob("u8_*.tflite") if p.stem not in ("u8_split", "u8_shuffle"))
SEEDS = range(4)
C_SEEDS = SEEDS[:2]  # the C of the min-RAM plan and of one random plan (test_codegen builds another)
OFFSET_OPS = (Conv2DWeightOffset, DepthwiseConv2DWeightOffset, DenseWeightOffset)


@functools.cache
def _interpreter_runs() -> dict:
    """Each model's inputs (one per seed) and its interpreter run, every layer's output kept: one
    LiteRT subprocess for all models."""
    jobs = [(path, [random_input(cache.model(str(path)), seed) for seed in SEEDS]) for path in MODELS]
    return {path: (inputs, run) for (path, inputs), run in zip(jobs, run_jobs(jobs, layers=True))}


def _interpreter(path, graph):
    return _interpreter_runs()[path]


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_numpy_and_c_match_the_interpreter(path):
    graph = cache.model(str(path))
    assert graph.uint8_input and graph.uint8_output
    inputs, run = _interpreter(path, graph)
    _check_layers(graph, inputs, run)
    dag = cache.dag(graph)
    plans = [solvers.min_peak_ram(dag).blocks] + [random_plan(dag, seed) for seed in SEEDS[1:]]
    for seed, x, want, blocks in zip(SEEDS, inputs, run.outputs, plans):
        assert x.dtype == want.dtype == np.uint8
        for got in (run_unfused(graph, x), cache.fused_run(graph, blocks, seed).output):
            assert got.dtype == np.uint8
            np.testing.assert_array_equal(got.reshape(-1), want.reshape(-1))
        if seed in C_SEEDS:
            check_c(graph, blocks, seed=seed)


def _check_layers(graph, inputs, run):
    """Each node's numpy kernel on the interpreter's inputs of that layer gives its output."""
    assert len(run.ops) == len(graph.nodes)
    for x, layers in zip(inputs, run.layers):
        values = {NETWORK_INPUT: to_int8(x).reshape(graph.input_shape)}
        values.update({t: to_int8(layer).reshape(graph.shape_of(t)) for t, layer in enumerate(layers)})
        for index, node in enumerate(graph.nodes):
            out = node.op.reference([values[t] for t in node.inputs], graph.kernel_context(index))
            np.testing.assert_array_equal(from_int8(out).reshape(-1), layers[index].reshape(-1),
                                          err_msg=f"layer {index} ({run.ops[index]})")


def test_fixtures_cover_the_uint8_layers():
    """Every fixture's weights have a non-zero zero point, and together they hold the layers of
    TF1-era MobileNets."""
    kinds, zero_points = set(), set()
    for path in MODELS:
        graph = cache.model(str(path))
        kinds |= {node.op.kind for node in graph.nodes}
        zero_points |= {node.op.weight_zero_point for node in graph.nodes if isinstance(node.op, OFFSET_OPS)}
    assert {"conv2d", "depthwise_conv2d", "dense", "avg_pool2d", "max_pool2d", "softmax", "add", "concat",
            "reshape"} <= kinds
    assert 0 not in zero_points and {-127, 127} <= zero_points  # uint8 zero points 1 and 255


def test_average_pool_inputs_reach_the_rounding_ties():
    """The uint8 pool rounds half up, the int8 one half away from zero: on these inputs the two
    differ, so the layer check above tells them apart."""
    path = FIXTURES / "models" / "u8_avg_pool.tflite"
    graph = cache.model(str(path))
    inputs, run = _interpreter(path, graph)
    pool = graph.nodes[1]
    assert type(pool.op) is AvgPool2DHalfUp
    int8_pool = AvgPool2D(pool.op.win, pool.op.activation)
    ctx = graph.kernel_context(1)
    differ = sum(int(np.count_nonzero(pool.op.reference([arg], ctx) != int8_pool.reference([arg], ctx)))
                 for arg in (to_int8(layers[0]).reshape(graph.shape_of(0)) for layers in run.layers))
    assert differ > 0


@pytest.mark.parametrize("name", ["u8_ties_conv", "u8_ties_depthwise", "u8_ties_dense"])
def test_uint8_layers_form_their_multiplier_from_the_float32_product(name):
    """uint8 layers rescale with one multiplier formed from input scale * weight scale in float32
    (GetQuantizedConvolutionMultipler), not in double as int8 per-channel layers do: on these
    scales the two differ in their last bits, and every input value in every channel reaches the
    accumulators +-256, which the two round differently (fixtures/make_uint8_models.py)."""
    path = FIXTURES / "models" / f"{name}.tflite"
    graph = cache.model(str(path))
    (node,) = graph.nodes
    channel = np.arange(256, dtype=np.uint8)
    both = np.stack([channel, channel[::-1]], axis=-1)  # (256, 2): every value in both channels
    per_input = int(np.prod(graph.input_shape)) // 2  # pixels an input holds: 256 (maps) or 1 (dense)
    inputs = [part.reshape(1, *graph.input_shape) for part in np.split(both, 256 // per_input)]
    expected = run_jobs([(path, inputs)])[0].outputs
    ours = [run_unfused(graph, x) for x in inputs]
    np.testing.assert_array_equal(np.concatenate([y.reshape(-1) for y in ours]),
                                  np.concatenate([y.reshape(-1) for y in expected]))
    ctx = graph.kernel_context(0)
    acc = to_int8(both).astype(np.int64) - ctx.input_quant[0].zero_point + ctx.consts["bias"]  # identity weights
    rounding = DEPTHWISE_ROUNDING if name == "u8_ties_depthwise" else nx.gemm_rounding(graph.numerics)
    double = nx.per_channel_multipliers(ctx.input_quant[0].scale, ctx.consts["weight_scales"],
                                        ctx.output_quant.scale, 2)
    with_double = nx.requantize_accumulator(acc, *double, ctx.output_quant.zero_point, (-128, 127), rounding)
    want = to_int8(np.concatenate([y.reshape(-1) for y in expected]).reshape(256, 2))
    assert (with_double != want).any()


def test_cli_run_takes_and_writes_uint8(tmp_path, capsys):
    path = FIXTURES / "models" / "u8_mobilenet_v1.tflite"
    graph = cache.model(str(path))
    x = random_input(graph, 7)
    np.save(tmp_path / "x.npy", x[0])
    code, _, err = run_cli(capsys, "run", str(path), "--input", str(tmp_path / "x.npy"),
                           "--output", str(tmp_path / "y.npy"))
    assert code == 0, err
    y = np.load(tmp_path / "y.npy")
    assert y.dtype == np.uint8
    np.testing.assert_array_equal(y.reshape(-1), run_jobs([(path, [x])])[0].outputs[0].reshape(-1))
    np.save(tmp_path / "signed.npy", x[0].view(np.int8))
    code, _, err = run_cli(capsys, "run", str(path), "--input", str(tmp_path / "signed.npy"))
    assert code == 2 and "expected uint8" in err and "Traceback" not in err


def test_unchecked_uint8_operators_are_refused():
    """Operators whose uint8 kernels were not checked against the interpreter's refuse uint8."""
    with pytest.raises(UserError, match="operator 1 \\(MUL\\): MUL on uint8 tensors is not supported"):
        load_tflite(FIXTURES / "models" / "unsupported_u8_mul.tflite")


def test_tflm_numerics_refuse_a_uint8_model(capsys):
    code, _, err = run_cli(capsys, "run", str(FIXTURES / "models" / "u8_conv_same.tflite"), "--numerics", "tflm")
    assert code == 2
    assert "uint8 model" in err and "TFLite Micro" in err and len(err.strip().splitlines()) == 1
