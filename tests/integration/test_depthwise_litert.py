"""int8 DEPTHWISE_CONV_2D against the interpreters on random shapes, kernels, strides, padding,
depth multipliers and scales.

LiteRT's optimized int8 depthwise kernel requantises the first out_c // 8 x 8 output channels of
each pixel with vector code (ruy's rounding, halves up) and the others with TFLite's scalar code
(halves away from zero); TFLite Micro runs the scalar code on every channel
(ops/depthwise_conv2d_litert.py). Each case is a one-op model written with the fixtures' flatbuffer
writer (fixtures/make_binop_models.py). The generated C of the variant is checked on the
bin_dw_conv1d fixture (tests/integration/test_binops.py).
"""

from __future__ import annotations

import sys
from dataclasses import replace

import numpy as np
import pytest

from support import micro_oracle
from support.c_build import check_c
from support.litert_oracle import run_jobs
from support.paths import FIXTURES, ROOT
from msfcnn import numerics as nx, pipeline
from msfcnn.codegen.emit import generate
from msfcnn.cost import exact
from msfcnn.executor import run_unfused
from msfcnn.frontends import load_model
from msfcnn.fused_executor import run_fused
from msfcnn.ir.graph import with_numerics
from msfcnn.ops.depthwise_conv2d import DepthwiseConv2D
from msfcnn.ops.depthwise_conv2d_litert import DepthwiseConv2DLitert, vector_channels
from msfcnn.plan import Plan
from msfcnn.schedule import schedule_plan
from msfcnn.tensors import random_input

N_CASES = 24
KERNELS = ((1, 3), (3, 1), (3, 3), (5, 5))


def one_depthwise_model(name: str, shape, kernel, multiplier: int, stride: int, padding: str, out_q) -> bytes:
    sys.path.insert(0, str(ROOT / "fixtures"))
    from make_binop_models import Model, conv

    m = Model(name)
    x = m.act((1, *shape), 0.02, -3)
    y = conv(m, x, kernel, 0, out_q, (stride, stride), padding, depthwise=True, depth_multiplier=multiplier)
    return m.build([x], [y])


def random_case(rng: np.random.Generator, n: int):
    """(input shape, kernel, depth multiplier, stride, padding, output quant) of case n: channel
    counts below, at and around multiples of 8, one-row maps (Keras' DepthwiseConv1D) and others."""
    channels = int(rng.choice([4, 7, 8, 12, 16, 17, 20, 40]))
    kernel = KERNELS[n % len(KERNELS)]
    h = kernel[0] + int(rng.integers(0, 6)) if kernel[0] > 1 or n % 2 else 1
    shape = (h, kernel[1] + int(rng.integers(3, 20)), channels)
    multiplier = (1, 1, 2, 1, 1, 3)[n % 6]  # 3: the split at 8 falls inside an input channel's outputs
    out_q = (float(np.float32(rng.choice([0.008, 0.012, 0.02, 0.05]))), int(rng.integers(-10, 11)))
    return shape, kernel, multiplier, int(rng.choice([1, 2])), str(rng.choice(["SAME", "VALID"])), out_q


def write_case(folder, rng: np.random.Generator, n: int):
    """Case n's model, written into `folder`, and three random inputs for it."""
    shape, *rest = random_case(rng, n)
    path = folder / f"dw{n}.tflite"
    path.write_bytes(one_depthwise_model(path.stem, shape, *rest))
    return path, [rng.integers(-128, 128, (1, *shape), dtype=np.int8) for _ in range(3)]


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    """(path, inputs, LiteRT's outputs, TFLite Micro's outputs) per case."""
    rng, folder = np.random.default_rng(2027), tmp_path_factory.mktemp("single_depthwise")
    jobs = [write_case(folder, rng, n) for n in range(N_CASES)]
    litert, micro = run_jobs(jobs), micro_oracle.run_jobs(jobs, "tflm", arena_size=1 << 20)
    return [(path, inputs, run.outputs, tflm) for (path, inputs), run, tflm in zip(jobs, litert, micro)]


def plain_ops(graph):
    """`graph` with each LiteRT depthwise convolution back to the plain op (double rounding)."""
    graph.nodes = [node if type(node.op) is not DepthwiseConv2DLitert else
                   replace(node, op=DepthwiseConv2D(node.op.win, node.op.depth_multiplier, node.op.activation))
                   for node in graph.nodes]
    return graph


def test_litert_numerics_follow_the_interpreter_on_every_value(cases, record_property):
    checked = plain_differs = 0
    kinds = set()
    for path, inputs, expected, _ in cases:
        graph = load_model(str(path))
        op, out_c = graph.nodes[0].op, graph.nodes[0].shape[-1]
        kinds.add(type(op))
        assert type(op) is (DepthwiseConv2DLitert if vector_channels(out_c) else DepthwiseConv2D)
        plain = plain_ops(load_model(str(path)))
        for x, want in zip(inputs, expected):
            np.testing.assert_array_equal(run_unfused(graph, x).reshape(-1), want.reshape(-1), err_msg=path.name)
            plain_differs += int(np.count_nonzero(run_unfused(plain, x).reshape(-1) != want.reshape(-1)))
            checked += want.size
    record_property("values_checked", checked)
    record_property("values_where_the_plain_op_differs", plain_differs)
    assert kinds == {DepthwiseConv2D, DepthwiseConv2DLitert}
    assert checked > 40_000 and plain_differs > 20  # the cases tell the two roundings apart


def test_tflm_numerics_follow_tflite_micro_on_every_value(cases):
    """TFLite Micro requantises every channel with TFLite's scalar code: the plain op."""
    mismatches = {}
    for path, inputs, _, expected in cases:
        graph = load_model(str(path), numerics=nx.TFLM)
        assert type(graph.nodes[0].op) is DepthwiseConv2D
        ours = np.concatenate([run_unfused(graph, x).reshape(-1) for x in inputs])
        mismatches[path.name] = int(np.count_nonzero(ours != np.concatenate([np.ravel(w) for w in expected])))
    assert not any(mismatches.values()), mismatches


def test_litert_then_tflm_numerics_give_the_plain_op():
    """A graph loaded under LiteRT's numerics and set to TFLite Micro's goes back to the plain op."""
    graph = load_model(str(FIXTURES / "models" / "bin_dw_conv1d.tflite"))
    assert {type(n.op) for n in graph.nodes if n.op.kind == "depthwise_conv2d"} == {DepthwiseConv2DLitert}
    kinds = {type(n.op) for n in with_numerics(graph, nx.TFLM).nodes if n.op.kind == "depthwise_conv2d"}
    assert kinds == {DepthwiseConv2D}


def test_conv1d_fixture_tells_the_roundings_apart():
    """The C kernel's check (test_binops on bin_dw_conv1d) means something: on its inputs the
    plain op would differ from the interpreter."""
    path = FIXTURES / "models" / "bin_dw_conv1d.tflite"
    graph = load_model(str(path))
    xs = [random_input(graph, seed) for seed in range(8)]
    want = run_jobs([(path, xs)])[0].outputs
    plain = plain_ops(load_model(str(path)))
    differs = sum(int(np.count_nonzero(run_unfused(plain, x).reshape(-1) != np.asarray(w).reshape(-1)))
                  for x, w in zip(xs, want))
    assert differs > 0


IN_PLACE = {(2, 2), (3, 3), (0, 3)}  # bin_dw_conv1d's `inplace` blocks: ops 2 and 3, and ops 0-3 fused


@pytest.mark.parametrize("spans", [((0, 0), (1, 1), (2, 2), (3, 3), (4, 4)), ((0, 3), (4, 4))],
                         ids=["one_op_in_place", "fused_in_place"])
def test_c_written_over_its_own_input(spans):
    """The `inplace` scheme's blocks (a layer a channel at a time over its input, and a fused
    stream written over its input rows) run msf_depthwise_conv2d_litert_inplace_s8 and the regular
    kernel on the vector channels and the others in turn: bit-exact with numpy, in the predicted
    arena. (Under the least-RAM plan, test_binops checks the others.)"""
    graph = pipeline.load(str(FIXTURES / "models" / "bin_dw_conv1d.tflite"))
    dag = exact.build_dag(graph, complete=True)

    def block(first, last):
        scheme = "inplace" if (first, last) in IN_PLACE else "single"
        return next(b for b in dag.blocks if (b.first, b.last, b.scheme) == (first, last, scheme))
    blocks = [block(*span) for span in spans]
    schedule = schedule_plan(graph, blocks)
    model_c = generate(graph, schedule, Plan(graph.name, "exact", 0, tuple(blocks)))["model.c"]
    assert ("msf_depthwise_conv2d_litert_inplace_s8(" in model_c) == ((2, 2) in spans)
    xs = [random_input(graph, seed) for seed in range(4)]
    for x, want in zip(xs, run_jobs([(FIXTURES / "models" / "bin_dw_conv1d.tflite", xs)])[0].outputs):
        np.testing.assert_array_equal(run_fused(schedule, x).output.reshape(-1), np.asarray(want).reshape(-1))
    check_c(graph, blocks, seed=3)
