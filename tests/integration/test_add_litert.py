"""int8 ADD against the interpreters on many random scale sets, activations and sizes.

LiteRT's optimized int8 ADD runs vector code on the blocks of 16 values of the whole tensor and
its scalar code on the last size % 16, and the two round differently on some scale sets
(ops/add_litert.py);
TFLite Micro runs the scalar code everywhere (ops/add.py). Each case is a one-ADD model written
with the fixtures' flatbuffer writer (fixtures/make_op_models.py); some cases feed every pair of
int8 values, scattered over vector and scalar positions.
"""

from __future__ import annotations

import sys
from math import prod

import numpy as np
import pytest

from support import micro_oracle
from support.litert_oracle import run_jobs
from support.paths import ROOT
from support.toolchains import require_target
from msfcnn import numerics as nx
from msfcnn import pipeline
from msfcnn.executor import run_unfused
from msfcnn.frontends import load_model
from msfcnn.ops.add import Add
from msfcnn.ops.add_const import AddConst
from msfcnn.ops.add_const_litert import AddConstLitert, AddConstLitertTail
from msfcnn.ops.add_litert import VECTOR_BLOCK, AddLitert, AddLitertTail, codes_agree
from msfcnn.planner import Planner
from msfcnn.schedule import schedule_plan

N_CASES = 48
ACTIVATIONS = {0: None, 1: "relu", 3: "relu6"}  # TFLite's fused activation codes


def fixture_writer():
    sys.path.insert(0, str(ROOT / "fixtures"))
    from make_op_models import Model
    return Model


def single_add_model(shape, qa, qb, qo, activation: int) -> bytes:
    """A model of one ADD of its two int8 inputs, of one shape (batch 1)."""
    from ai_edge_litert import schema_py_generated as schema

    m = fixture_writer()("single_add")
    a, b, out = m.act((1, *shape), *qa), m.act((1, *shape), *qb), m.act((1, *shape), *qo)
    options = schema.AddOptionsT()
    options.fusedActivationFunction = activation
    m.op("ADD", [a, b], [out], ("AddOptions", options), version=2)
    return m.build([a, b], [out])


def random_case(rng: np.random.Generator, n: int):
    """(shape, input a's quant, b's, the output's, activation code) of case n: random scales, dyadic
    ones (rounding ties), equal input scales, or an output scale so fine that the int16 the
    vector code narrows to wraps."""
    def scale():
        return float(np.float32(10 ** rng.uniform(-3, 0)))

    def zero_point():
        return int(rng.integers(-128, 128))
    qa, qb = (scale(), zero_point()), (scale(), zero_point())
    kind = n % 4
    if kind == 1:
        qa, qb = (2.0 ** -int(rng.integers(2, 9)), qa[1]), (2.0 ** -int(rng.integers(2, 9)), qb[1])
        qo = (2.0 ** -int(rng.integers(2, 9)), zero_point())
    elif kind == 2:
        qb = (qa[0], qb[1])
        qo = (scale(), zero_point())
    else:
        finest = -2.5 if kind == 3 else -1.5
        qo = (float(np.float32(max(qa[0], qb[0]) * 10 ** rng.uniform(finest, 0.7))), zero_point())
    shape = tuple(int(d) for d in rng.integers(1, 12, 3))
    if n % 3 == 0:
        shape = (shape[0], shape[1], 16)  # a multiple of 16 values: vector code only
    if n % 8 == 7:
        shape = (97, 97, 7) if n % 16 == 7 else (64, 64, 16)  # room for every pair of values
    return shape, qa, qb, qo, int(rng.choice(list(ACTIVATIONS)))


def case_inputs(rng: np.random.Generator, shape) -> list[list[np.ndarray]]:
    """Two random input pairs, or every pair of int8 values in a random order (repeated to fill)."""
    size = prod(shape)
    if size < 1 << 16:
        return [[rng.integers(-128, 128, (1, *shape), dtype=np.int8) for _ in range(2)] for _ in range(2)]
    values = np.arange(-128, 128, dtype=np.int8)
    pairs = np.resize(rng.permutation(1 << 16), size)
    return [[values[pairs >> 8].reshape(1, *shape), values[pairs & 255].reshape(1, *shape)]]


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    """(path, inputs, LiteRT's outputs, TFLite Micro's outputs) per case."""
    rng = np.random.default_rng(2026)
    folder = tmp_path_factory.mktemp("single_add")
    jobs = []
    for n in range(N_CASES):
        shape, qa, qb, qo, activation = random_case(rng, n)
        path = folder / f"add{n}.tflite"
        path.write_bytes(single_add_model(shape, qa, qb, qo, activation))
        jobs.append((path, case_inputs(rng, shape)))
    litert = run_jobs(jobs)
    micro = micro_oracle.run_jobs(jobs, "tflm", arena_size=1 << 20)
    return [(path, inputs, run.outputs, tflm) for (path, inputs), run, tflm in zip(jobs, litert, micro)]


def test_litert_numerics_follow_the_interpreter_on_every_value(cases, record_property):
    checked = scalar_differs = 0
    kinds = set()
    for path, inputs, expected, _ in cases:
        graph = load_model(str(path))
        op = graph.nodes[0].op
        size = prod(graph.nodes[0].shape)
        kinds.add(type(op))
        if codes_agree(op.activation, graph.kernel_context(0)):
            assert type(op) is Add  # the calibrated, element-wise kernel
        else:
            assert type(op) is (AddLitert if size % VECTOR_BLOCK == 0 else AddLitertTail)
        for x, want in zip(inputs, expected):
            ours = run_unfused(graph, x)
            np.testing.assert_array_equal(ours.reshape(-1), want.reshape(-1), err_msg=f"{path.name}")
            scalar = Add(op.activation).reference([a[0] for a in x], graph.kernel_context(0))
            scalar_differs += int(np.count_nonzero(scalar.reshape(-1) != want.reshape(-1)))
            checked += want.size
    record_property("values_checked", checked)
    record_property("values_where_the_scalar_code_differs", scalar_differs)
    assert kinds == {Add, AddLitert, AddLitertTail}  # each was drawn
    assert checked > 250_000 and scalar_differs > 0  # the cases tell the two codes apart


def test_tflm_numerics_follow_tflite_micro_on_every_value(cases):
    for path, inputs, _, expected in cases:
        graph = load_model(str(path), numerics=nx.TFLM)
        assert type(graph.nodes[0].op) is Add
        for x, want in zip(inputs, expected):
            np.testing.assert_array_equal(run_unfused(graph, x).reshape(-1), np.asarray(want).reshape(-1),
                                          err_msg=f"{path.name}")


# ---- ADD of a constant (one value, or one per channel) -------------------------------------------

ROUND_SCALES = (0.02, 0.025, 0.03, 0.04, 0.05, 0.06, 0.08)  # often part LiteRT's two codes


def const_add_model(shape, qx, operand: np.ndarray, qc, qo, activation: int) -> bytes:
    m = fixture_writer()("const_add")
    x = m.act((1, *shape), *qx)
    y = m.binary_const("ADD", x, (1, *shape), operand, qc[0], qc[1], qo[0], qo[1], activation=activation)
    return m.build([x], [y])


@pytest.fixture(scope="module")
def const_cases(tmp_path_factory):
    """(path, inputs, LiteRT's outputs, TFLite Micro's outputs) per case: 80 ADDs of a constant."""
    rng = np.random.default_rng(7)
    folder = tmp_path_factory.mktemp("const_add")
    jobs = []
    for n in range(80):
        shape = tuple(int(d) for d in rng.integers(1, 10, 2)) + (int(rng.integers(1, 41)),)
        operand = rng.integers(-128, 128, shape[2] if n % 2 else 1)
        qx, qc, qo = ((float(rng.choice(ROUND_SCALES)), int(rng.integers(-20, 21))) for _ in range(3))
        if n % 8 == 0:  # one value, to a map whose size is not a multiple of 8, scales that part the codes
            shape, operand, (qx, qc, qo) = (5, 7, 9), operand[:1], ((0.05, 4), (0.06, -9), (0.08, 2))
        path = folder / f"add_const{n}.tflite"
        path.write_bytes(const_add_model(shape, qx, operand, qc, qo, int(rng.choice(list(ACTIVATIONS)))))
        jobs.append((path, [rng.integers(-128, 128, (1, *shape), dtype=np.int8) for _ in range(3)]))
    litert = run_jobs(jobs)
    micro = micro_oracle.run_jobs(jobs, "tflm", arena_size=1 << 20)
    return [(path, inputs, run.outputs, tflm) for (path, inputs), run, tflm in zip(jobs, litert, micro)]


def test_add_of_a_constant_follows_each_interpreter(const_cases, record_property):
    kinds, checked, scalar_differs = set(), 0, 0
    for path, inputs, litert, micro in const_cases:
        graph, graph_tflm = load_model(str(path)), load_model(str(path), numerics=nx.TFLM)
        kinds.add(type(graph.nodes[0].op))
        assert type(graph_tflm.nodes[0].op) is AddConst
        n, differs = _follows_each_interpreter(path.name, graph, graph_tflm, inputs, litert, micro)
        checked, scalar_differs = checked + n, scalar_differs + differs
    record_property("values_checked", checked)
    record_property("values_where_the_scalar_code_differs", scalar_differs)
    assert kinds == {AddConst, AddConstLitert, AddConstLitertTail} and scalar_differs > 0


def _follows_each_interpreter(name, graph, graph_tflm, inputs, litert, micro) -> tuple[int, int]:
    """Assert that each input's output equals LiteRT's under `graph` and TFLite Micro's under
    `graph_tflm`; (values checked, values where TFLite Micro's scalar code differs from LiteRT)."""
    checked = scalar_differs = 0
    for x, want, want_tflm in zip(inputs, litert, micro):
        np.testing.assert_array_equal(run_unfused(graph, x).reshape(-1), want.reshape(-1), err_msg=name)
        ours_tflm = run_unfused(graph_tflm, x).reshape(-1)
        np.testing.assert_array_equal(ours_tflm, np.asarray(want_tflm).reshape(-1), err_msg=name)
        scalar_differs += int(np.count_nonzero(ours_tflm != want.reshape(-1)))
        checked += want.size
    return checked, scalar_differs


# ---- int16 ADD (16x8 models: zero points 0, general scales) ----------------------------------------

def single_add16_model(shape, scales, activation: int) -> bytes:
    """A model of one int16 ADD of its two inputs, as the converter writes a 16x8 ADD."""
    sys.path.insert(0, str(ROOT / "fixtures"))
    from make_int16_models import act16, add16

    m = fixture_writer()("single_add16")
    a, b = act16(m, (1, *shape), scales[0]), act16(m, (1, *shape), scales[1])
    out = add16(m, a, b, scales[2], activation)
    return m.build([a, b], [out])


@pytest.fixture(scope="module")
def cases16(tmp_path_factory):
    """(path, inputs, LiteRT's outputs, TFLite Micro's outputs) per int16 case: random scales (some
    that often tie), sizes with and without a scalar tail, int16 values over the whole range."""
    rng = np.random.default_rng(16)
    folder = tmp_path_factory.mktemp("single_add16")
    jobs = []
    for n in range(12):
        scales = [float(np.float32(10 ** rng.uniform(-4.5, -2.5))) for _ in range(3)]
        if n % 3 == 0:  # a scale of 1/3000 against 1/4096: LiteRT's two codes round some ties apart
            scales = [1 / 3000, 1 / 4096, 1 / 1500]
        shape = (64, 64, 16) if n % 2 else (61, 53, 5)  # all vector code; a tail of scalar code
        path = folder / f"add16_{n}.tflite"
        path.write_bytes(single_add16_model(shape, scales, int(rng.choice(list(ACTIVATIONS)))))
        jobs.append((path, [[rng.integers(-32768, 32768, (1, *shape), dtype=np.int16) for _ in range(2)]]))
    litert = run_jobs(jobs)
    micro = micro_oracle.run_jobs(jobs, "tflm", arena_size=1 << 21)
    return [(path, inputs, run.outputs, tflm) for (path, inputs), run, tflm in zip(jobs, litert, micro)]


def test_int16_add_follows_each_interpreter(cases16, record_property):
    """LiteRT's int16 ADD runs blocks of 16 values of vector code too: TFLite's scalar code differs
    on some ties, which AddLitert reproduces; TFLite Micro's is the scalar code everywhere."""
    checked = scalar_differs = 0
    for path, inputs, litert, micro in cases16:
        graph, graph_tflm = load_model(str(path)), load_model(str(path), numerics=nx.TFLM)
        size = prod(graph.nodes[0].shape)
        assert type(graph.nodes[0].op) is (AddLitert if size % VECTOR_BLOCK == 0 else AddLitertTail)
        assert type(graph_tflm.nodes[0].op) is Add
        n, differs = _follows_each_interpreter(path.name, graph, graph_tflm, inputs, litert, micro)
        checked, scalar_differs = checked + n, scalar_differs + differs
    record_property("values_checked", checked)
    record_property("values_where_the_scalar_code_differs", scalar_differs)
    assert scalar_differs > 0  # the cases tell the two codes apart


# Input pairs at a tie of LiteRT's scales below, which its vector and scalar codes round apart.
TIES = [(32767, -10240), (-19118, 2560)]


@pytest.mark.parametrize("shape", [(8, 6, 16), (7, 5, 3)], ids=["vector", "tail"])
def test_int16_litert_add_in_c_matches_the_interpreter(shape, tmp_path):
    """The C of LiteRT's int16 ADD (add_litert_s16.c) gives LiteRT's values, ties included, in
    vector positions and (in a size that is not a multiple of 16) in the scalar tail."""
    path = tmp_path / "add16.tflite"
    path.write_bytes(single_add16_model(shape, [1 / 3000, 1 / 4096, 1 / 1500], 1))
    graph = load_model(str(path))
    rng = np.random.default_rng(5)
    a, b = (rng.integers(-32768, 32768, (1, *shape), dtype=np.int16) for _ in range(2))
    for k, (va, vb) in enumerate(TIES):  # at the first values and at the last ones
        a.reshape(-1)[[k, -1 - k]], b.reshape(-1)[[k, -1 - k]] = va, vb
    want = run_jobs([(path, [[a, b]])])[0].outputs[0]
    plan = Planner(graph, "exact").min_ram()
    schedule = schedule_plan(graph, list(plan.blocks), False)
    check = pipeline.verify(graph, plan, schedule, [a, b], require_target("host"))
    np.testing.assert_array_equal(check.output.reshape(-1), want.reshape(-1))
    assert check.bit_exact and check.arena_bytes == schedule.arena_bytes
