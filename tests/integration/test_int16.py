"""16x8 models: int16 activations (zero point 0), int8 per-channel weights, int64 biases
(`fixtures/make_int16_models.py`, tests/fixtures/models/i16_*.tflite).

Each operator layer by layer on the LiteRT interpreter's own inputs; fused plans (the least RAM and
random ones) bit-exact with the LiteRT interpreter, and under `--numerics tflm` with TFLite Micro;
the generated C on the host bit-exact with numpy under both numerics; the cost model and the arena
count two bytes a value; clear errors for what 16x8 support leaves out. (The end-to-end unfused
runs against both interpreters are in test_executor_litert.py and test_numerics_tflm.py, which
read every fixture.)"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
from hypothesis import strategies as st

from support import litert_oracle, micro_oracle
from support.c_build import check_c, kernel_library
from support.cli import run_cli
from support.edge_conversions import edge_conversions
from support.fused_cases import networks, random_plan
from support.marks import split_examples
from support.paths import FIXTURES
from support.toolchains import require_target
from msfcnn import numerics as nx
from msfcnn import pipeline
from msfcnn.cost import exact
from msfcnn.errors import UserError
from msfcnn.executor import run_unfused
from msfcnn.frontends.layer_list import graph_from_layer_list
from msfcnn.frontends.random_weights import with_random_weights
from msfcnn.fused_executor import run_fused
from msfcnn.ir import Quant
from msfcnn.tensors import random_input
from msfcnn.fusion import solvers
from msfcnn.ir import NETWORK_INPUT
from msfcnn.schedule import schedule_plan

MODELS = sorted((FIXTURES / "models").glob("i16_*.tflite"))
EDGES = ("QUANTIZE", "DEQUANTIZE")  # a float32 model's edges: the caller's conversions, not nodes


def inputs_for(graph, n: int, seed: int = 0) -> list[np.ndarray]:
    """Seeded inputs over the whole int16 range; for a float32 input, values halfway between two
    int16 steps across that range and beyond (QUANTIZE's vector and scalar code round those ties
    differently, and some saturate)."""
    rng = np.random.default_rng(seed)
    if graph.float_input:
        steps = rng.integers(-34000, 34000, graph.input_shape) + 0.5
        return [(steps * graph.input_quant.scale).astype(np.float32) for _ in range(n)]
    return [rng.integers(-32768, 32768, size=graph.input_shape, dtype=np.int16) for _ in range(n)]


@functools.cache
def _layer_runs() -> dict:
    """Each model's interpreter run, every layer's output kept, on inputs_for(graph, 6): one
    LiteRT subprocess for all models."""
    jobs = [(p, inputs_for(pipeline.load(str(p)), 6)) for p in MODELS]
    return {p: (inputs, run) for (p, inputs), run in zip(jobs, litert_oracle.run_jobs(jobs, layers=True))}


def test_fixtures_cover_the_16x8_operators():
    ops = set()
    for _, run in _layer_runs().values():
        ops.update(run.ops)
    assert ops == {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "AVERAGE_POOL_2D", "MAX_POOL_2D",
                   "MEAN", "SOFTMAX", "RESHAPE", "QUANTIZE", "DEQUANTIZE", "LEAKY_RELU", "PRELU"}


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_each_layer_matches_the_interpreter(path):
    graph = pipeline.load(str(path))
    assert graph.dtype == "int16" and graph.element.nbytes == 2
    inputs, run = _layer_runs()[path]
    layer_of = [k for k, name in enumerate(run.ops) if name not in EDGES]
    assert len(layer_of) == len(graph.nodes)
    for x, layers in zip(inputs, run.layers):
        if graph.float_input:
            x = layers[0]  # the interpreter's QUANTIZE
        for index, node in enumerate(graph.nodes):
            args = [np.asarray(x).reshape(graph.input_shape) if t == NETWORK_INPUT
                    else layers[layer_of[t]].reshape(graph.shape_of(t)) for t in node.inputs]
            ours = node.op.reference(args, graph.kernel_context(index))
            theirs = layers[layer_of[index]].reshape(ours.shape)
            assert ours.dtype == np.int16
            np.testing.assert_array_equal(ours, theirs, err_msg=f"layer {index} ({node.op.kind})")


@functools.cache
def _fused_case_outputs(numerics: str) -> dict:
    """Each model's inputs_for(graph, 4, seed=1) and the interpreter's outputs on them (LiteRT's,
    or TFLite Micro's): one subprocess for all models."""
    jobs = [(p, inputs_for(pipeline.load(str(p)), 4, seed=1)) for p in MODELS]
    outputs = (micro_oracle.run_jobs(jobs, "tflm") if numerics == "tflm"
               else [run.outputs for run in litert_oracle.run_jobs(jobs)])
    return {p: (inputs, out) for (p, inputs), out in zip(jobs, outputs)}


def _oracle(path, inputs, numerics: str) -> list[np.ndarray]:
    if numerics == "tflm":
        return micro_oracle.run_jobs([(path, inputs)], "tflm")[0]
    return litert_oracle.run_jobs([(path, inputs)])[0].outputs


@pytest.mark.parametrize("numerics", ["litert", "tflm"])
@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_fused_plans_match_the_interpreter(path, numerics):
    """The least-RAM plan and two random plans, run by the fused executor, give the interpreter's
    bytes (LiteRT's, or TFLite Micro's under tflm numerics)."""
    graph = pipeline.load(str(path), numerics=numerics)
    inputs, expected = _fused_case_outputs(numerics)[path]
    dag = exact.build_dag(graph)
    for blocks in (solvers.min_peak_ram(dag).blocks, random_plan(dag, 1), random_plan(dag, 2)):
        schedule = schedule_plan(graph, list(blocks))
        for x, want in zip(inputs, expected):
            got = pipeline.run(schedule, x).output
            np.testing.assert_array_equal(np.asarray(got).reshape(-1), np.asarray(want).reshape(-1))


# The C under tflm numerics differs only where a kernel's params do (FULLY_CONNECTED's rounding,
# SOFTMAX's tables): checked on the models that have one.
C_CASES = [(p, "litert") for p in MODELS] + [(p, "tflm") for p in MODELS
                                             if p.stem in ("i16_fc", "i16_chain", "i16_softmax_pixels")]


@pytest.mark.parametrize("path,numerics", C_CASES, ids=lambda v: getattr(v, "stem", v))
def test_c_on_the_host_is_bit_exact(path, numerics):
    """The generated C (the least-RAM plan and a random one) equals the fused executor on int16
    inputs over the whole range, and its arena is the predicted peak."""
    graph = pipeline.load(str(path), numerics=numerics)
    dag = exact.build_dag(graph)
    check_c(graph, solvers.min_peak_ram(dag).blocks, seed=0)
    check_c(graph, random_plan(dag, 3), seed=3)


def test_softmax_tables_are_each_interpreters_own():
    """LiteRT fills SOFTMAX's reciprocal table in double, TFLite Micro in float32: two entries
    differ. On rows whose sums meet those entries (found with our kernels), each numerics gives
    its interpreter's bytes, the two differ, and the C agrees."""
    from msfcnn.ops.softmax import _softmax_int16, int16_input_multiplier

    path = FIXTURES / "models" / "i16_softmax_pixels.tflite"
    graph, graph_tflm = pipeline.load(str(path)), pipeline.load(str(path), numerics="tflm")
    multiplier = int16_input_multiplier(graph.input_quant.scale, 1.0)
    rng = np.random.default_rng(0)
    rows = rng.integers(-12000, 0, (20000, 10)).astype(np.int16)
    rows = rows[np.any(_softmax_int16(rows, multiplier, "litert") != _softmax_int16(rows, multiplier, "tflm"), axis=1)]
    assert len(rows) >= 30
    x = rows[:30].reshape(graph.input_shape)
    litert, tflm = _oracle(path, [x], "litert")[0], _oracle(path, [x], "tflm")[0]
    assert np.count_nonzero(litert != tflm) >= 10
    for g, want in ((graph, litert), (graph_tflm, tflm)):
        np.testing.assert_array_equal(run_unfused(g, x).reshape(-1), want.reshape(-1))
        plan = pipeline.planner(g).min_ram()
        schedule, target = pipeline.lower(g, plan), require_target("host")
        check = pipeline.verify(g, plan, schedule, x, target, kernel_lib=kernel_library(g, schedule, plan, target))
        assert check.bit_exact and np.array_equal(check.output.reshape(-1), want.reshape(-1))


def test_depthwise_written_over_its_own_input():
    """With the network input in the arena, the first depthwise of i16_dw runs in place, a channel
    at a time (the `inplace` scheme, msf_depthwise_conv2d_inplace_s16): the fused executor gives
    the interpreter's bytes and the C is bit-exact, in an arena of the predicted size."""
    path = FIXTURES / "models" / "i16_dw.tflite"
    graph = pipeline.load(str(path))
    dag = exact.build_dag(graph, count_io=True, complete=True)
    blocks = [next(b for b in dag.blocks if b.scheme == "inplace" and b.first == 0),
              next(b for b in dag.blocks if (b.first, b.last, b.scheme) == (1, 1, "single"))]
    schedule = schedule_plan(graph, blocks, count_io=True)
    inputs = inputs_for(graph, 3, seed=5)
    for x, want in zip(inputs, _oracle(path, inputs, "litert")):
        np.testing.assert_array_equal(pipeline.run(schedule, x).output.reshape(-1), np.asarray(want).reshape(-1))
    check_c(graph, blocks, seed=4, count_io=True)


@pytest.mark.parametrize("name", ["i16_chain", "i16_add", "i16_mean"])
def test_candidate_blocks_take_two_bytes_a_value(name):
    """The cost model, the arena and the accumulators count the element size: read as int8, the
    same graph has the same candidate blocks, each with exactly half the RAM (int16 values and
    int64 accumulators against int8 values and int32 accumulators). (TFLite Micro's numerics:
    LiteRT's int16 ADD of a size not a multiple of 16, as in i16_add, is never cut into regions.)"""
    graph = pipeline.load(str(FIXTURES / "models" / f"{name}.tflite"), numerics=nx.TFLM)
    as_int8 = dataclasses.replace(graph, dtype="int8")
    ram = {(b.first, b.last, b.scheme, b.rows): b.ram_bytes for b in exact.build_dag(graph).blocks}
    ram8 = {(b.first, b.last, b.scheme, b.rows): b.ram_bytes for b in exact.build_dag(as_int8).blocks}
    assert ram.keys() == ram8.keys() and len(ram) > 5
    assert all(ram[k] == 2 * ram8[k] for k in ram)


@pytest.mark.parametrize("fixture,message", [
    ("unsupported_i16_logistic", "operator 1 (LOGISTIC) has int16 activations: 16x8 models support only ABS, ADD, "),
    ("unsupported_i16_softmax", "operator 1 (SOFTMAX): an int16 SOFTMAX must have the output scale 1/32768"),
    ("unsupported_i16_int32_bias", "operator 0 (CONV_2D): expected an int64 bias of 4, got int32"),
])
def test_what_16x8_support_leaves_out_is_a_clear_error(capsys, fixture, message):
    code, out, err = run_cli(capsys, "plan", str(FIXTURES / "models" / f"{fixture}.tflite"))
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1


def test_the_paper_cost_model_is_refused(capsys):
    """Its formulas count a byte a value; the exact cost model counts two for int16."""
    code, out, err = run_cli(capsys, "plan", str(FIXTURES / "models" / "i16_conv.tflite"), "--cost-model", "paper")
    assert code == 2 and out == "" and "the paper cost model counts one byte a value" in err


def _edited(tensor_edit) -> bytes:
    """i16_conv with `tensor_edit(tensor)` applied to its first conv's output tensor."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as schema

    model = schema.ModelT.InitFromPackedBuf((FIXTURES / "models" / "i16_conv.tflite").read_bytes(), 0)
    sub = model.subgraphs[0]
    tensor_edit(sub.tensors[sub.operators[0].outputs[0]], schema)
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def test_mixed_types_and_zero_points_are_refused():
    from msfcnn.errors import UserError
    from msfcnn.frontends.tflite import graph_from_tflite

    def to_int8(tensor, schema):
        tensor.type = schema.TensorType.INT8

    def zero_point_3(tensor, schema):
        tensor.quantization.zeroPoint = [3]

    with pytest.raises(UserError, match=r"tensor \d+ is int8 in a model whose input is int16: activations of mixed"):
        graph_from_tflite(_edited(to_int8))
    with pytest.raises(UserError, match=r"int16 tensor \d+ has zero point 3: 16x8 activations are symmetric"):
        graph_from_tflite(_edited(zero_point_3))


@pytest.mark.parametrize("defines", [(), ("MSF_QUANTIZE_WITHOUT_DOUBLE",)])
def test_c_edge_conversions_match_numerics(tmp_path, defines):
    """The edge conversions, with double and without it (as cortex-m4, cortex-m33 and xtensa-lx106
    build them: float and integer arithmetic, kernels/numerics.c), give numerics' bytes."""
    for got, want in edge_conversions(tmp_path, defines):
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def as_16x8(graph):
    """A random-weight int8 graph made 16x8: every activation scale / 256 with zero point 0 (so
    that values span the int16 range), SOFTMAX outputs at 1/32768, int64 biases."""
    def widened(quant):
        return Quant(quant.scale / 256, 0)

    nodes = []
    for node in graph.nodes:
        quant = Quant(1 / 32768, 0) if node.op.kind == "softmax" else widened(node.quant)
        consts = {role: v.astype(np.int64) if role == "bias" else v for role, v in node.consts.items()}
        nodes.append(dataclasses.replace(node, quant=quant, consts=consts))
    return dataclasses.replace(graph, nodes=nodes, input_quant=widened(graph.input_quant), dtype="int16")


def check_random_16x8_network(doc, seed):
    """Random layer lists (residual blocks, pools, dense and softmax heads) made 16x8: a random
    plan and the least-RAM one compute the unfused network's int16 values in an arena of exactly
    the predicted size."""
    try:
        graph = as_16x8(with_random_weights(graph_from_layer_list(doc)))
    except UserError:
        return  # a layer list whose shapes do not work out
    dag = exact.build_dag(graph)
    x = random_input(graph, seed)
    expected = run_unfused(graph, x)
    assert expected.dtype == np.int16
    for blocks in (random_plan(dag, seed), solvers.min_peak_ram(dag).blocks):
        schedule = schedule_plan(graph, list(blocks))
        run = run_fused(schedule, x)
        np.testing.assert_array_equal(run.output, expected)
        assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes == schedule.arena_bytes



# 25 random networks in all (about 0.2 s of CPU each): 5 in the fast tier, 20 in the slow.
test_random_16x8_networks_fuse_exactly, test_more_random_16x8_networks_fuse_exactly = split_examples(
    check_random_16x8_network, 5, 20, networks(), st.integers(0, 10_000))


def test_a_random_16x8_network_in_c():
    """One random 16x8 network with every kind of layer, its least-RAM plan and a random one in C."""
    doc = {"name": "mixed16", "input": [11, 9, 3], "layers": [
        {"op": "conv2d", "filters": 8, "kernel": 3, "stride": 1, "padding": "same", "act": "relu6"},
        {"op": "depthwise_conv2d", "kernel": 3, "stride": 2, "padding": 1, "act": "relu"},
        {"op": "conv2d", "filters": 8, "kernel": 1, "stride": 1, "padding": 0},
        {"op": "depthwise_conv2d", "kernel": 5, "stride": 1, "padding": "same"},
        {"op": "conv2d", "filters": 8, "kernel": 1, "stride": 1, "padding": 0},
        {"op": "add", "from": 2}, {"op": "max_pool2d", "kernel": 2, "stride": 1, "padding": "valid"},
        {"op": "avg_pool2d", "kernel": 3, "stride": 2, "padding": "same"}, {"op": "global_avg_pool"},
        {"op": "dense", "units": 6}, {"op": "softmax"}]}
    graph = as_16x8(with_random_weights(graph_from_layer_list(doc)))
    dag = exact.build_dag(graph)
    check_c(graph, solvers.min_peak_ram(dag).blocks, seed=1)
    check_c(graph, random_plan(dag, 7), seed=2)
