"""TFLite models with float islands (`fixtures/make_float_island_models.py`, fi_*.tflite): int8
ops, DEQUANTIZE, float32 ops, QUANTIZE, int8 ops again; a float32 tail; a float32 model; a float32
model with an int8 island.

DEQUANTIZE and QUANTIZE nodes are bit-exact with the LiteRT interpreter layer by layer (vector and
scalar code included); end to end, the int8 values after a float island equal the interpreter's
(LiteRT's, and TFLite Micro's under `--numerics tflm`) except where a float32 value lies on a
rounding boundary, which float kernels summing in another order may put on the other side: the
tolerance is 1 LSB on at most 1% of the values (measured with benchmarks/float_islands.py: 2 of 315,000
QUANTIZE values off LiteRT's, 1 of 87,500 int8 outputs off TFLite Micro's; docs/numerics.md). float32 outputs agree within a few float32 roundings, except after such an
int8 value, where they may move by about one step of it. Fused plans (the least RAM one, which fuses
across the conversions, and random ones) give the unfused executor's int8 bytes and their arena
is the predicted one, as in C on the host."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import litert_oracle, micro_oracle
from support.c_build import check_c, kernel_library
from support.islands import INT_FLIP_FRACTION, assert_within_island_bound
from support.toolchains import require_target
from support.fused_cases import networks, random_plan
from support.marks import split_examples
from support.paths import FIXTURES
from msfcnn import numerics as nx
from msfcnn import pipeline
from msfcnn.cost import exact
from msfcnn.fusion import solvers
from msfcnn.frontends.layer_list import graph_from_layer_list
from msfcnn.frontends.random_weights import with_random_weights
from msfcnn.ir import NETWORK_INPUT, Graph
from msfcnn.ops import DepthwiseConv2D
from msfcnn.ops.conversion import Conversion
from msfcnn.ops.dequantize import Dequantize
from msfcnn.ops.quantize import Quantize
from msfcnn.plan import Plan
from msfcnn.schedule import schedule_plan
from msfcnn.tensors import random_input

MODELS = sorted((FIXTURES / "models").glob("fi_*.tflite"))
MIXED = [p for p in MODELS if p.stem != "fi_float32_model" and "ties" not in p.stem]  # islands among other ops
FLOAT_RTOL, FLOAT_ATOL = 1e-5, 1e-6  # float32 outputs: a few roundings of values up to about 1


def inputs_for(graph, n: int, seed: int = 0) -> list[np.ndarray]:
    """int8 over the whole range, or float32 across the input QUANTIZE's range and a bit beyond."""
    rng = np.random.default_rng(seed)
    shape = graph.declared_input_shape
    if graph.dtype == "float32" or graph.float_input:
        return [rng.uniform(-1.5, 1.5, shape).astype(np.float32) for _ in range(n)]
    return [rng.integers(-128, 128, shape).astype(np.int8) for _ in range(n)]


@functools.cache
def oracle_cases(numerics: str, paths: tuple, n: int, seed: int) -> dict:
    """inputs_for(graph, n, seed) of each model and the interpreter's outputs on them (LiteRT's or
    TFLite Micro's): one subprocess for all the models."""
    jobs = [(p, inputs_for(pipeline.load(str(p)), n, seed)) for p in paths]
    outputs = (micro_oracle.run_jobs(jobs, "tflm") if numerics == nx.TFLM
               else [run.outputs for run in litert_oracle.run_jobs(jobs)])
    return {p: (inputs, out) for (p, inputs), out in zip(jobs, outputs)}


def oracle(path, inputs, numerics: str) -> list[np.ndarray]:
    if numerics == nx.TFLM:
        return micro_oracle.run_jobs([(path, inputs)], "tflm")[0]
    return litert_oracle.run_jobs([(path, inputs)])[0].outputs


def assert_agrees(graph, ours: list[np.ndarray], theirs: list[np.ndarray], record_property=None) -> None:
    """int8 outputs: within the island bound (support.islands); float32
    outputs (a float tail, or a float-edged model's dequantised output) within rounding."""
    a = np.concatenate([np.asarray(y).reshape(-1) for y in ours])
    b = np.concatenate([np.asarray(y).reshape(-1) for y in theirs])
    assert a.dtype == b.dtype and a.shape == b.shape
    if np.issubdtype(a.dtype, np.floating):
        # an int8 value 1 LSB off before a DEQUANTIZE (or a float-edged output) moves the float32
        # values after it by up to about one step of that int8 tensor (LOGISTIC and SOFTMAX shrink it)
        step = max([graph.output_quant.scale] if graph.float_output else [0.0])
        step = max([step] + [graph.quant_of(n.inputs[0]).scale for n in graph.nodes if n.op.kind == "dequantize"])
        np.testing.assert_allclose(a, b, rtol=FLOAT_RTOL, atol=FLOAT_ATOL + step)
        off = np.abs(a.astype(np.float64) - b) > FLOAT_ATOL + FLOAT_RTOL * np.abs(b)
        assert off.mean() <= INT_FLIP_FRACTION, f"{off.sum()} of {off.size} values off"
    else:
        assert_within_island_bound(a, b)
        off = a != b
    if record_property:
        record_property("values_off", int(off.sum()))
        record_property("values", int(off.size))


def test_fixtures_import_as_float_islands():
    graphs = {p.stem: pipeline.load(str(p)) for p in MODELS}
    kinds = {name: [(n.op.kind, g.dtype_of(i)) for i, n in enumerate(g.nodes)] for name, g in graphs.items()}
    assert kinds["fi_conv_island"] == [("conv2d", "int8"), ("dequantize", "float32"), ("conv2d", "float32"),
                                       ("add", "float32"), ("logistic", "float32"), ("quantize", "int8"),
                                       ("conv2d", "int8")]
    assert kinds["fi_float_head"] == [("conv2d", "int8"), ("dequantize", "float32"), ("global_avg_pool", "float32"),
                                      ("dense", "float32"), ("softmax", "float32")]
    assert kinds["fi_int8_island"] == [("conv2d", "float32"), ("quantize", "int8"), ("conv2d", "int8"),
                                       ("dequantize", "float32"), ("logistic", "float32")]
    assert graphs["fi_float32_model"].dtype == "float32" and not graphs["fi_float32_model"].mixed
    graph = graphs["fi_float_io"]
    assert graph.float_input and graph.float_output and graph.dtype == "int8" and graph.mixed
    head = graphs["fi_float_head"]
    # the tensors' own sizes: 9 x 7 x 11 int8 values, then float32 ones
    assert head.nbytes(0) == 9 * 7 * 11 and head.nbytes(1) == 9 * 7 * 11 * 4 and head.alignment == 4
    assert head.arena_bytes(0) == 696  # 693 rounded up to a multiple of 4
    assert pipeline.load(str(FIXTURES / "models" / "extra_float32.tflite")).dtype == "float32"


@pytest.mark.parametrize("path", ["fi_conv_island", "fi_float_head", "fi_int8_island"])
def test_each_layer_matches_the_interpreter(path):
    """Every node on the interpreter's own inputs to it: DEQUANTIZE, QUANTIZE and the int8 nodes
    bit-exact, float32 nodes within rounding."""
    path = FIXTURES / "models" / f"{path}.tflite"
    graph = pipeline.load(str(path))
    inputs = inputs_for(graph, 6, seed=5)
    run = litert_oracle.run_jobs([(path, inputs)], layers=True)[0]
    assert len(run.ops) == len(graph.nodes)
    for x, layers in zip(inputs, run.layers):
        for index, node in enumerate(graph.nodes):
            args = [np.asarray(x).reshape(graph.input_shape) if t == NETWORK_INPUT
                    else layers[t].reshape(graph.shape_of(t)) for t in node.inputs]
            ours = node.op.reference(args, graph.kernel_context(index))
            theirs = layers[index].reshape(ours.shape)
            assert ours.dtype == theirs.dtype == graph.element_of(index).numpy
            if isinstance(node.op, Conversion) or not graph.element_of(index).is_float:
                np.testing.assert_array_equal(ours, theirs, err_msg=f"layer {index} ({node.op.kind})")
            else:
                np.testing.assert_allclose(ours, theirs, rtol=FLOAT_RTOL, atol=FLOAT_ATOL)


@pytest.mark.parametrize("numerics", nx.NUMERICS)
@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_unfused_matches_the_interpreter(path, numerics, record_property):
    graph = pipeline.load(str(path), numerics=numerics)
    inputs, expected = oracle_cases(numerics, tuple(MODELS), 40, 1)[path]
    ours = [pipeline.run_reference(graph, x) for x in inputs]
    assert_agrees(graph, ours, expected, record_property)


def crosses_a_conversion(graph, block) -> bool:
    return any(isinstance(graph.nodes[t].op, Conversion) for t in range(block.first, block.last)) or \
        any(isinstance(graph.nodes[t].op, Conversion) for t in range(block.first + 1, block.last + 1))


@pytest.mark.parametrize("numerics", nx.NUMERICS)
@pytest.mark.parametrize("path", MIXED, ids=lambda p: p.stem)
def test_fused_plans_fuse_across_the_conversions(path, numerics):
    """The least-RAM plan and random plans: the fused executor gives the unfused one's int8 bytes
    (float32 ones within rounding), runs in the predicted arena, and agrees with the interpreter;
    the conversions are fused into blocks with the ops around them."""
    graph = pipeline.load(str(path), numerics=numerics)
    inputs, expected = oracle_cases(numerics, tuple(MIXED), 3, 2)[path]
    dag = exact.build_dag(graph)
    plans = [solvers.min_peak_ram(dag).blocks] + [random_plan(dag, seed) for seed in range(4)]
    crossing = 0
    for blocks in plans:
        schedule = schedule_plan(graph, list(blocks))
        crossing += sum(crosses_a_conversion(graph, b) for b in schedule.blocks if b.first < b.last)
        ours = []
        for x in inputs:
            run = pipeline.run(schedule, x)
            unfused = pipeline.run_reference(graph, x)
            if np.issubdtype(np.asarray(unfused).dtype, np.floating):
                np.testing.assert_allclose(run.output, unfused, rtol=FLOAT_RTOL, atol=FLOAT_ATOL)
            else:
                np.testing.assert_array_equal(run.output, unfused)
            assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes == schedule.arena_bytes
            ours.append(run.output)
        assert_agrees(graph, ours, expected)
    assert crossing > 0, "no block fused a DEQUANTIZE or QUANTIZE with its neighbours"


@pytest.mark.parametrize("path,numerics", [(p, nx.LITERT) for p in MODELS] + [(MODELS[0], nx.TFLM)],
                         ids=lambda v: getattr(v, "stem", v))
def test_c_on_the_host(path, numerics):
    """The generated C (the least-RAM plan and a random one) equals the fused executor (int8
    bytes exactly, float32 within rounding) in an arena of the predicted size."""
    graph = pipeline.load(str(path), numerics=numerics)
    dag = exact.build_dag(graph)
    check_c(graph, solvers.min_peak_ram(dag).blocks, seed=0)
    check_c(graph, random_plan(dag, 3), seed=3)


def _float_consts(graph, i: int) -> dict:
    """Node i's constants as float32 (the real values its int8 weights and int32 bias stand for)."""
    node = graph.nodes[i]
    if "weights" not in node.consts:
        return {}
    scales = np.asarray(node.consts["weight_scales"], np.float64)
    weights = node.consts["weights"].astype(np.float64)
    if isinstance(node.op, DepthwiseConv2D):  # (1, kh, kw, C_out)
        weights = weights * scales
    else:  # conv (C_out, kh, kw, C_in), dense (units, inputs)
        weights = weights * scales.reshape(-1, *[1] * (weights.ndim - 1))
    bias = node.consts["bias"] * graph.quant_of(node.inputs[0]).scale * scales
    return {"weights": weights.astype(np.float32), "bias": bias.astype(np.float32)}


def with_float_island(graph, start: int, stop: int):
    """A chain `graph` (int8, with weights) whose ops start..stop-1 run in float32 between a
    DEQUANTIZE and a QUANTIZE (none when stop is the end: a float32 tail)."""
    out = Graph(graph.name, graph.input_shape, input_quant=graph.input_quant)
    prev = NETWORK_INPUT
    for i, node in enumerate(graph.nodes):
        if i == start:
            prev = out.append(Dequantize(out.shape_of(prev)), (prev,))
        if i == stop:
            prev = out.append(Quantize(out.shape_of(prev)), (prev,), quant=graph.nodes[i - 1].quant)
        floating = start <= i < stop
        prev = out.append(node.op, (prev,), _float_consts(graph, i) if floating else node.consts,
                          None if floating else node.quant)
    return out


@st.composite
def island_networks(draw):
    """Random chains (layer lists: convs, depthwise convs, pools, a dense head) with random int8
    weights and a float island anywhere, or a float32 tail."""
    graph = with_random_weights(graph_from_layer_list(draw(networks(residual=False))), draw(st.integers(0, 999)))
    start = draw(st.integers(0, len(graph) - 1))
    return with_float_island(graph, start, draw(st.integers(start + 1, len(graph))))


def check_random_island_case(graph, seed):
    """Every scheme, wherever the conversions fall: the fused executor performs the plan's MACs
    and runs in the arena the cost model predicts, with every buffer at an offset its element type
    may be read from (the executor checks). Its int8 values equal the unfused one's within the
    island bound: a float32 global pool or dense tail sums the unfused kernel's terms in its order
    when the plan streams rows, but column bands and tiles visit them in another order (and float
    convolutions run numpy's BLAS in both), which can move a value on a quantisation boundary."""
    dag = exact.build_dag(graph)
    x = random_input(graph, seed)
    unfused = pipeline.run_reference(graph, x)
    for blocks in (solvers.min_peak_ram(dag).blocks, random_plan(dag, seed)):
        schedule = schedule_plan(graph, list(blocks))
        run = pipeline.run(schedule, x)
        assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes == schedule.arena_bytes
        assert run.macs == sum(b.macs for b in blocks)
        if unfused.dtype == np.int8:
            assert_within_island_bound(run.output, unfused)
        else:
            np.testing.assert_allclose(run.output, unfused, rtol=1e-4, atol=1e-5)


# 60 random cases in all (about 0.07 s of CPU each): 15 in the fast tier, 45 in the slow.
test_random_islands_under_random_plans, test_more_random_islands_under_random_plans = split_examples(
    check_random_island_case, 15, 45, island_networks(), st.integers(0, 10_000))


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(island_networks(), st.integers(0, 10_000))
def test_random_islands_in_c(graph, seed):
    check_c(graph, random_plan(exact.build_dag(graph), seed), seed=seed)


TIES = [FIXTURES / "models" / f"{name}.tflite" for name in ("fi_quantize_ties", "fi_quantize_ties_edge")]


def tie_inputs(n: int = 12) -> list[np.ndarray]:
    """float32 x whose x / 0.1 is a tie (k + 0.5) in float32 but not in double, and random ones."""
    rng = np.random.default_rng(9)
    scale = np.float32(0.1)
    ties = ((rng.integers(-1300, 1300, (n, 1, 2, 5, 3)) + 0.5) * scale).astype(np.float32)
    random = rng.uniform(-14, 14, (n, 1, 2, 5, 3)).astype(np.float32)
    return list(np.where(rng.random((n, 1, 2, 5, 3)) < 0.7, ties, random))


@pytest.mark.parametrize("numerics", nx.NUMERICS)
@pytest.mark.parametrize("path", TIES, ids=lambda p: p.stem)
def test_quantize_ties_are_each_interpreters_own(path, numerics):
    """QUANTIZE's ties: LiteRT's vector code rounds half to even, its scalar code divides in
    double and rounds half away; TFLite Micro divides in float32 and rounds half away. Inside the
    graph (a quantize node, unfused, fused and in C) and at a float32 input (the caller's
    conversion), msfcnn gives each interpreter's bytes."""
    graph = pipeline.load(str(path), numerics=numerics)
    inputs = tie_inputs()
    expected = oracle(path, inputs, numerics)
    schedule = schedule_plan(graph, list(solvers.min_peak_ram(exact.build_dag(graph)).blocks))
    for x, want in zip(inputs, expected):
        np.testing.assert_array_equal(pipeline.run_reference(graph, x).reshape(-1), want.reshape(-1))
        np.testing.assert_array_equal(pipeline.run(schedule, x).output.reshape(-1), want.reshape(-1))
    litert, micro = (oracle(path, inputs, n) for n in nx.NUMERICS)
    assert any(not np.array_equal(a, b) for a, b in zip(litert, micro)), "no tie tells the interpreters apart"
    if path.stem == "fi_quantize_ties":  # the caller converts an edge: only the node is in the C
        check_c(graph, solvers.min_peak_ram(exact.build_dag(graph)).blocks, seed=0)


def test_quantize_rounds_by_position_in_the_whole_tensor():
    """QUANTIZE's vector code (the first (n / 8) * 8 values: half to even) and scalar code (the
    rest: half away from zero) round a tie differently, and a region of the tensor, as a fused
    block computes it, rounds each value as the whole tensor does; TFLite Micro's rounds all
    values half away."""
    from msfcnn.ir import Quant
    from msfcnn.ops import KernelContext

    shape = (3, 2, 3)  # 18 values: 16 by vector code, 2 by scalar code
    quant = Quant(0.5, 0)
    x = np.full(shape, 0.25, np.float32)  # 0.5 steps: a tie
    op = Quantize(shape)
    whole = op.reference([x], KernelContext({}, (None,), quant, nx.LITERT, "float32"))
    assert whole.reshape(-1).tolist() == [0] * 16 + [1, 1]
    rows = [op.in_region((r, r + 1), (0, 2)).reference([x[r:r + 1]], KernelContext({}, (None,), quant, nx.LITERT,
                                                                                    "float32")) for r in range(3)]
    np.testing.assert_array_equal(np.concatenate(rows), whole)
    micro = op.reference([x], KernelContext({}, (None,), quant, nx.TFLM, "float32"))
    assert micro.reshape(-1).tolist() == [1] * 18


def _edited_island(edit) -> bytes:
    """fi_conv_island changed through the flatbuffer object API: `edit(model, subgraph, op)`
    with op(name) the first operator of that builtin name."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as schema

    model = schema.ModelT.InitFromPackedBuf((FIXTURES / "models" / "fi_conv_island.tflite").read_bytes(), 0)
    sub = model.subgraphs[0]

    def op(name):
        code = getattr(schema.BuiltinOperator, name)
        return next(o for o in sub.operators if model.operatorCodes[o.opcodeIndex].builtinCode == code)
    edit(schema, model, sub, op)
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def _quantize_to_int16(schema, model, sub, op):
    tensor = sub.tensors[op("QUANTIZE").outputs[0]]
    tensor.type, tensor.quantization.zeroPoint = schema.TensorType.INT16, [0]


def _float_op_declared_int8(schema, model, sub, op):
    tensor = sub.tensors[op("LOGISTIC").outputs[0]]
    tensor.type = schema.TensorType.INT8
    tensor.quantization = schema.QuantizationParametersT()
    tensor.quantization.scale, tensor.quantization.zeroPoint = [1 / 256], [-128]


def _float_op_without_kernel(schema, model, sub, op):
    code = model.operatorCodes[op("LOGISTIC").opcodeIndex]
    code.builtinCode = code.deprecatedBuiltinCode = schema.BuiltinOperator.RESIZE_NEAREST_NEIGHBOR


def _dequantize_a_constant(schema, model, sub, op):
    conv = op("CONV_2D")
    op("DEQUANTIZE").inputs = [conv.inputs[1]]  # the first conv's int8 weights


REFUSED = {
    _dequantize_a_constant: r"operator 1 \(DEQUANTIZE\): DEQUANTIZE of a constant \(the float16 or int8 weights",
    _quantize_to_int16: r"operator 5 \(QUANTIZE\): QUANTIZE of float32 to int16 inside the model: only to int8",
    _float_op_declared_int8: r"operator 4 \(LOGISTIC\): output tensor \d+ is int8 but the operator computes float32",
    _float_op_without_kernel: r"operator 4 \(RESIZE_NEAREST_NEIGHBOR\) reads float32 activations: float32 operators "
                              r"may be ADD, AVERAGE_POOL_2D, CONCATENATION, CONV_2D, ",
}


@pytest.mark.parametrize("edit", list(REFUSED), ids=lambda f: f.__name__.strip("_"))
def test_refused_forms_say_why_in_one_line(edit):
    from msfcnn.errors import UserError
    from msfcnn.frontends.tflite import graph_from_tflite

    with pytest.raises(UserError, match=REFUSED[edit]) as err:
        graph_from_tflite(_edited_island(edit))
    assert "\n" not in str(err.value)


def _pooled_island(seed: int, float_tail: bool):
    """int8 depthwise, then max pools and a global average pool in float32 (DEQUANTIZE before
    them), and the dense head in int8 after a QUANTIZE, or in float32 too."""
    doc = {"name": "pooled_island", "input": [9, 15, 6], "layers": [
        {"op": "depthwise_conv2d", "kernel": 3, "stride": 1, "padding": "same", "act": "relu"},
        {"op": "max_pool2d", "kernel": 1, "stride": 2, "padding": 0},
        {"op": "max_pool2d", "kernel": 2, "stride": 1, "padding": 0},
        {"op": "global_avg_pool"}, {"op": "dense", "units": 5}]}
    graph = with_random_weights(graph_from_layer_list(doc), seed)
    return with_float_island(graph, 1, len(graph) if float_tail else 4)


def _row_streamed_tail_plan(graph) -> list:
    """A plan whose first block runs from the input through the tail in one sweep of rows."""
    dag = exact.build_dag(graph)
    singles = {b.first: b for b in dag.blocks if b.scheme == "single"}
    for block in dag.blocks:
        if block.first == 0:
            plan = [block] + [singles[i] for i in range(block.last + 1, len(graph))]
            lowered = schedule_plan(graph, plan).blocks[0]
            if lowered.tail is not None and getattr(lowered.loops, "axis", None) == 0 and len(lowered.loops.sweeps) == 1:
                return plan
    raise AssertionError("no row-streamed block with a tail")


def _c_equals_numpy(graph, blocks) -> None:
    """The C on the host gives the numpy executor's output bit for bit (float32 too)."""
    schedule = schedule_plan(graph, list(blocks))
    plan = Plan(graph.name, "exact", sum(graph.macs(i) for i in range(len(graph))), tuple(blocks))
    host = require_target("host")
    kernels = kernel_library(graph, schedule, plan, host)  # the session's: not compiled again per run
    for seed in range(3):
        check = pipeline.verify(graph, plan, schedule, random_input(graph, seed), host, kernel_lib=kernels)
        np.testing.assert_array_equal(check.output, check.expected)


@pytest.mark.slow  # fast-tier budget: about 2 to 3 s of CPU
def test_row_streamed_float_pool_equals_unfused():
    """A plan that streams rows into a float32 global pool accumulator adds the terms in the
    unfused kernel's order, so its values equal the unfused ones bit for bit, in numpy and in C.
    (Before the float32 sums followed C's order, numpy summed in float64 and one of the random
    networks above came out 1 LSB off its unfused run.)"""
    graph = _pooled_island(7, float_tail=False)
    blocks = _row_streamed_tail_plan(graph)
    schedule = schedule_plan(graph, blocks)
    for seed in range(200):
        x = random_input(graph, seed)
        np.testing.assert_array_equal(pipeline.run(schedule, x).output, pipeline.run_reference(graph, x))
    _c_equals_numpy(graph, blocks)


def test_float_dense_sums_as_the_c_kernels():
    """numpy's float32 pool and dense sums are the C kernels' (their orders, one rounding per
    term), unfused and accumulated in a fused tail: the float32 outputs are equal bit for bit."""
    graph = _pooled_island(11, float_tail=True)
    unfused = [b for b in exact.build_dag(graph).blocks if b.scheme == "single"]
    _c_equals_numpy(graph, sorted(unfused, key=lambda b: b.first))
    _c_equals_numpy(graph, _row_streamed_tail_plan(graph))
