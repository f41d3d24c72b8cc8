"""The numpy executor against the TFLite interpreter (the oracle of docs/numerics.md).

Every importable `.tflite` fixture runs on seeded random inputs through `run_unfused` and through
the interpreter (in a subprocess, see `litert_oracle`). The contract is at most 1 LSB apart with at
least 99% of the values bit-exact; on x86-64, the platform whose interpreter kernels the executor
follows (ruy's AVX2 / AVX-512 output stage, NEON code run through its SSE translation), every value
must be bit-exact.

The networks are also checked layer by layer: each layer runs on the interpreter's own values of
its inputs, so one wrong layer cannot hide behind (or blame) another.
"""

from __future__ import annotations

import platform

import numpy as np
import pytest

import ai_edge_litert.interpreter  # noqa: F401  (the oracle; a test dependency, never skipped)

from support.paths import FIXTURES  # noqa: E402
from support.litert_oracle import OracleError, run_jobs, run_tflite  # noqa: E402
from msfcnn.executor import run_unfused  # noqa: E402
from msfcnn.frontends.tflite import load_tflite  # noqa: E402
from msfcnn.ir import NETWORK_INPUT  # noqa: E402
from msfcnn.ops import KernelContext  # noqa: E402

MODELS = sorted(p for d in ("models", "executor") for p in (FIXTURES / d).glob("*.tflite")
                if not p.name.startswith("unsupported_"))
NETWORKS = {"mbv2_035", "mbv1_025_vww", "resnet8", "dscnn"}
X86 = platform.machine().lower() in ("x86_64", "amd64")


def n_inputs(path) -> int:
    return 4 if path.stem in NETWORKS else 32  # small models: more inputs, so rounding ties occur


def random_inputs(graph, n: int, seed: int) -> list:
    """n seeded random inputs: arrays, or lists of arrays (one per input) for a model with several."""
    rng = np.random.default_rng(seed)
    inputs = [[random_array(graph, k, rng) for k in range(len(graph.input_tensors))] for _ in range(n)]
    return [x[0] if len(x) == 1 else x for x in inputs]


def random_array(graph, k: int, rng) -> np.ndarray:
    shape, q = graph.input_spec(k).shape, graph.input_spec(k).quant
    if graph.float_input:  # float32 model input: values across the int8 range and beyond (int16: near 0)
        return ((rng.uniform(-140, 140, shape) - q.zero_point) * q.scale).astype(np.float32)
    if graph.dtype == "float32":  # a float32 model (maybe with int8 islands: make_float_island_models.py)
        return rng.uniform(-1.5, 1.5, shape).astype(np.float32)
    if graph.uint8_input:  # a uint8 model (fixtures/make_uint8_models.py)
        return rng.integers(0, 256, size=shape, dtype=np.uint8)
    info = np.iinfo(graph.element.numpy)  # int8, or int16 (16x8 models)
    return rng.integers(info.min, info.max + 1, size=shape, dtype=graph.element.numpy)


def batched(x):
    """An input with a batch of 1 (each of them, for a model with several inputs)."""
    return [a[None] for a in x] if isinstance(x, list) else x[None]


@pytest.fixture(scope="module")
def end_to_end():
    """(graph, inputs, interpreter outputs) per fixture, from one interpreter subprocess."""
    graphs = {p: load_tflite(p) for p in MODELS}
    inputs = {p: random_inputs(graphs[p], n_inputs(p), seed=i) for i, p in enumerate(MODELS)}
    runs = run_jobs([(p, inputs[p]) for p in MODELS])
    return {p: (graphs[p], inputs[p], run.outputs) for p, run in zip(MODELS, runs)}


def agreement(ours: list[np.ndarray], theirs: list[np.ndarray]) -> tuple[float, float]:
    """(fraction of values bit-exact, largest difference in LSBs, or in float32 units)."""
    a = np.concatenate([np.asarray(y, np.float64).reshape(-1) for y in ours])
    b = np.concatenate([np.asarray(y, np.float64).reshape(-1) for y in theirs])
    assert a.shape == b.shape
    return float(np.mean(a == b)), float(np.max(np.abs(a - b)))


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_matches_interpreter(path, end_to_end, record_property):
    graph, inputs, expected = end_to_end[path]
    ours = [run_unfused(graph, batched(x)) for x in inputs]
    for y, r in zip(ours, expected):
        assert y.dtype == r.dtype and y.size == r.size
    exact, max_diff = agreement(ours, expected)
    record_property("exact_fraction", exact)
    record_property("max_abs_diff", max_diff)
    if graph.element_of(graph.output).is_float:  # float32 kernels: within a few float32 roundings
        for y, r in zip(ours, expected):
            np.testing.assert_allclose(y, r.reshape(y.shape), rtol=1e-5, atol=1e-6)
        return
    if graph.float_output:  # dequantised: 1 LSB is one output scale step
        max_diff /= graph.output_quant.scale
    assert max_diff <= 1 + 1e-6 and exact >= 0.99, f"{path.name}: {exact:.4%} exact, max diff {max_diff}"
    if X86:
        assert exact == 1.0, f"{path.name}: {exact:.4%} bit-exact, max diff {max_diff}"


def one_node_per_operator(path) -> bool:
    return path.stem in NETWORKS or path.parent.name == "executor" and not load_tflite(path).float_input


LAYERED = [p for p in MODELS if one_node_per_operator(p)]


@pytest.fixture(scope="module")
def layer_by_layer():
    graphs = {p: load_tflite(p) for p in LAYERED}
    inputs = {p: random_inputs(graphs[p], 3, seed=100 + i) for i, p in enumerate(LAYERED)}
    runs = run_jobs([(p, inputs[p]) for p in LAYERED], layers=True)
    return {p: (graphs[p], inputs[p], run) for p, run in zip(LAYERED, runs)}


@pytest.mark.parametrize("path", LAYERED, ids=lambda p: p.stem)
def test_each_layer_matches_interpreter(path, layer_by_layer):
    graph, inputs, run = layer_by_layer[path]
    assert len(run.ops) == len(graph.nodes), "these fixtures import as one node per operator"
    for x, layers in zip(inputs, run.layers):
        for index, node in enumerate(graph.nodes):
            args = [x if t == NETWORK_INPUT else layers[t].reshape(graph.shape_of(t)) for t in node.inputs]
            ctx = KernelContext(node.consts, tuple(graph.quant_of(t) for t in node.inputs), node.quant)
            ours = node.op.reference(args, ctx)
            theirs = layers[index].reshape(ours.shape)
            diff = np.abs(ours.astype(np.int32) - theirs.astype(np.int32))
            assert diff.max() <= 1, f"layer {index} ({run.ops[index]}): max diff {diff.max()}"
            if X86:
                assert not diff.any(), (f"layer {index} ({run.ops[index]}): {np.count_nonzero(diff)} of "
                                        f"{diff.size} values differ")


def test_oracle_runs_one_input_and_reports_failures():
    path = FIXTURES / "models" / "op_gap.tflite"
    x = np.zeros(load_tflite(path).input_shape, np.int8)
    assert np.array_equal(run_tflite(path, x), run_unfused(load_tflite(path), x)[None])
    with pytest.raises(OracleError, match="cannot reshape"):
        run_tflite(path, np.zeros(5, np.int8))


@pytest.mark.slow  # about 6 s of CPU: DS-CNN fused three times and in C
def test_a_one_window_average_pool_streams_as_a_tail():
    """DS-CNN's AVERAGE_POOL_2D (a 24 x 5 window over the 25 x 5 x 64 map, VALID) is a global
    pool over that window: the least plan never holds the 8000 B map it reads, and the fused
    result, in numpy and in C, is the interpreter's."""
    from support.c_build import check_c
    from msfcnn import pipeline
    from msfcnn.tensors import random_input

    path = FIXTURES / "models" / "dscnn.tflite"
    graph = pipeline.load(str(path), weights=True)
    plan = pipeline.planner(graph).min_ram()
    pool = next(b for b in plan.blocks if b.first <= 9 <= b.last)
    assert pool.first < 9 and plan.peak_ram_bytes < 25 * 5 * 64
    schedule = pipeline.lower(graph, plan)
    for seed in range(3):
        x = random_input(graph, seed)
        assert np.array_equal(pipeline.run(schedule, x).output.reshape(-1), run_tflite(path, x).reshape(-1))
    assert check_c(graph, plan.blocks, seed=1) == plan.peak_ram_bytes
