"""The operators of issue 14 (MUL / ADD with a constant, ...) on their fixtures
(`fixtures/make_op_models.py`): the numpy executor bit-exact with the TFLite interpreter on several
random inputs, and the generated C, under several fused plans, bit-exact with the numpy executor on
the same inputs (so with the interpreter too)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from support import cache
from support.c_build import check_c
from support.fused_cases import random_plan
from support.litert_oracle import run_jobs
from support.paths import FIXTURES
from msfcnn.executor import run_unfused
from msfcnn.fusion import solvers
from msfcnn.tensors import random_input

MODELS = sorted(p for d in ("executor", "models") for p in (FIXTURES / d).glob("op14_*.tflite"))
SEEDS = range(6)


@functools.cache
def _interpreter_outputs() -> dict:
    """Each model's inputs (one per seed) and the interpreter's outputs: one LiteRT subprocess."""
    jobs = [(path, [random_input(cache.model(str(path)), seed) for seed in SEEDS]) for path in MODELS]
    return {path: (inputs, run.outputs) for (path, inputs), run in zip(jobs, run_jobs(jobs))}


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_numpy_and_c_match_the_interpreter(path):
    graph = cache.model(str(path))
    inputs, expected = _interpreter_outputs()[path]
    for x, want in zip(inputs, expected):
        got = run_unfused(graph, x if x.ndim == len(graph.input_shape) + 1 else x[None])
        np.testing.assert_array_equal(got.reshape(-1), np.asarray(want).reshape(-1))
    dag = cache.dag(graph)
    check_c(graph, solvers.min_peak_ram(dag).blocks, seed=SEEDS[0])
    check_c(graph, random_plan(dag, SEEDS[1]), seed=SEEDS[1])


@pytest.mark.slow
@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_c_under_more_random_plans(path):
    """The other seeds' random plans in C (each build about 0.4 s of CPU; the test above builds two)."""
    graph = cache.model(str(path))
    for seed in SEEDS[2:]:
        check_c(graph, random_plan(cache.dag(graph), seed), seed=seed)


def test_fixtures_exist():
    assert len(MODELS) >= 2


def test_every_int8_value_through_the_table_ops():
    """Every int8 value, in every position class (the interpreter's vector blocks and its scalar
    tail), through HARD_SWISH (left- and right-shifting multipliers, a final shift of 0) and
    LOGISTIC, layer by layer."""
    for name, ops in (("op14_hard_swish_scales", ["HARD_SWISH", "QUANTIZE", "HARD_SWISH", "LOGISTIC"]),
                      ("op14_hard_swish_narrow", ["HARD_SWISH"])):
        _every_value_layer_by_layer(FIXTURES / "executor" / f"{name}.tflite", ops)


def _every_value_layer_by_layer(path, ops):
    from msfcnn.ir import NETWORK_INPUT
    from msfcnn.ops import KernelContext

    graph = cache.model(str(path))
    size = int(np.prod(graph.input_shape))
    values = np.arange(-128, 128, dtype=np.int8)
    inputs = [np.resize(np.roll(values, k), size).reshape(graph.input_shape) for k in (0, 101)]
    run = run_jobs([(path, inputs)], layers=True)[0]
    assert run.ops == ops
    for x, layers in zip(inputs, run.layers):
        for index, node in enumerate(graph.nodes):
            args = [x if t == NETWORK_INPUT else layers[t].reshape(graph.shape_of(t)) for t in node.inputs]
            ctx = KernelContext(node.consts, tuple(graph.quant_of(t) for t in node.inputs), node.quant)
            np.testing.assert_array_equal(node.op.reference(args, ctx).reshape(-1), layers[index].reshape(-1))


def test_mul_multiplier_is_formed_in_float32():
    """TFLite's MUL forms its rescale factor a_scale * b_scale / out_scale in float32, which for
    these scales is exactly 5/512, where the same product in double is a little larger: products
    on a rounding tie then round one way in the interpreter and the other with the double factor.
    Inputs are chosen so that x * a (node 1) lands on such ties, also in the last values of the
    tensor (180 values: not a whole number of vector blocks)."""
    from msfcnn import numerics as nx
    from msfcnn.ir import NETWORK_INPUT
    from msfcnn.ops import KernelContext
    from msfcnn.ops.mul import mul_multiplier

    path = FIXTURES / "executor" / "op14_mul_ties.tflite"
    graph = cache.model(str(path))
    # a(x) for every int8 x, channel by channel (node 0: x times a per-channel constant)
    values = np.arange(-128, 128, dtype=np.int8)
    channels = graph.input_shape[2]
    a_of = graph.nodes[0].op.reference([np.repeat(values[:, None], channels, axis=1)[None]],
                                       graph.kernel_context(0))[0]
    qx, qa, qy = graph.input_quant, graph.nodes[0].quant, graph.nodes[1].quant
    product = (values[:, None].astype(np.int64) - qx.zero_point) * (a_of.astype(np.int64) - qa.zero_point)
    mult, shift = mul_multiplier(qx.scale, qa.scale, qy.scale)
    double = nx.quantize_multiplier(float(np.float32(qx.scale)) * float(np.float32(qa.scale)) / float(np.float32(qy.scale)))
    assert (mult, shift) != double
    tie = ((nx.multiply_by_quantized_multiplier(product, mult, shift) !=
            nx.multiply_by_quantized_multiplier(product, *double)) & (np.abs(product) * 5 < 512 * 120))
    rng = np.random.default_rng(0)
    x = rng.integers(-128, 128, size=graph.input_shape, dtype=np.int8)
    ties = 0
    for index in np.ndindex(*graph.input_shape):
        choices = np.nonzero(tie[:, index[2]])[0]
        if len(choices):
            x[index] = values[rng.choice(choices)]
            ties += 1
    assert ties >= 20 and tie[:, channels - 4:].any()
    run = run_jobs([(path, [x])], layers=True)[0]
    assert run.ops == ["MUL", "MUL", "MUL"]
    for index, node in enumerate(graph.nodes):
        args = [x if t == NETWORK_INPUT else run.layers[0][t].reshape(graph.shape_of(t)) for t in node.inputs]
        ours = node.op.reference(args, KernelContext(node.consts, tuple(graph.quant_of(t) for t in node.inputs),
                                                     node.quant))
        np.testing.assert_array_equal(ours.reshape(-1), run.layers[0][index].reshape(-1))
