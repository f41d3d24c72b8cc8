"""TRANSPOSE_CONV (int8, 16x8, float32) and ONNX ConvTranspose on their fixtures
(`fixtures/make_dilated_models.py`): numpy bit-exact with LiteRT under the default numerics and
with TFLite Micro under `tflm` (the two differ: LiteRT's vector code rounds the first 8 of the
decoder's 12 output channels as ruy), float32 within 1e-4 of LiteRT and of onnxruntime; the C on
the host equal to numpy (slow); refused forms refused in one line naming the operator."""

from __future__ import annotations

import numpy as np
import pytest

from support import cache
from support.c_build import check_c
from support.cli import run_cli
from support.litert_oracle import run_jobs as litert_jobs
from support.micro_oracle import run_jobs as micro_jobs
from support.paths import FIXTURES
from msfcnn import pipeline
from msfcnn.tensors import random_input
from msfcnn.errors import UserError
from msfcnn.executor import run_unfused
from msfcnn.fusion import solvers

OPS = FIXTURES / "ops"


def random_inputs(graph, count: int, seed: int = 5) -> list[np.ndarray]:
    """`count` seeded inputs in the model's layout, without the batch."""
    return [random_input(graph, seed + k)[0] for k in range(count)]


def mismatches(graph, inputs, expected) -> int:
    return sum(int((run_unfused(graph, x[None]).reshape(-1) != np.asarray(want).reshape(-1)).sum())
               for x, want in zip(inputs, expected))


@pytest.mark.parametrize("name", ["transpose_conv_int8", "transpose_conv_i16"])
def test_quantised_matches_both_runtimes(name):
    path = OPS / f"{name}.tflite"
    graphs = {n: pipeline.load(str(path), numerics=n) for n in ("litert", "tflm")}
    assert [node.op.describe() for node in graphs["litert"].nodes] == ["transpose_conv 3x3/2 8", "transpose_conv 2x2/2 12"]
    inputs = random_inputs(graphs["litert"], 6)
    expected = {"litert": litert_jobs([(path, inputs)])[0].outputs,
                "tflm": micro_jobs([(path, inputs)], "tflm", arena_size=256 * 1024)[0]}
    for numerics, graph in graphs.items():
        assert mismatches(graph, inputs, expected[numerics]) == 0, numerics
    runtimes_differ = sum(int((np.asarray(a) != np.asarray(b)).sum()) for a, b in zip(*expected.values()))
    assert (runtimes_differ > 0) == (name == "transpose_conv_int8")  # 16x8: one rounding in both


def test_float_matches_litert():
    path = OPS / "transpose_conv_f32.tflite"
    graph = pipeline.load(str(path))
    inputs = random_inputs(graph, 2)
    for x, want in zip(inputs, litert_jobs([(path, inputs)])[0].outputs):
        want = np.asarray(want).reshape(-1)
        np.testing.assert_allclose(run_unfused(graph, x[None]).reshape(-1), want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


def test_onnx_conv_transpose_matches_onnxruntime():
    import onnxruntime as ort

    path = OPS / "conv_transpose.onnx"
    graph = pipeline.load(str(path))
    assert [(node.op.describe(), node.shape) for node in graph.nodes] == [
        ("transpose_conv 3x3/2 6", (10, 10, 6)), ("transpose_conv 2x2/2 3", (20, 20, 3))]
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for seed in (0, 1):
        x = np.random.default_rng(seed).standard_normal((1, 4, 5, 5)).astype(np.float32)
        want = session.run(None, {"input": x})[0]
        np.testing.assert_allclose(run_unfused(graph, x), want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


@pytest.mark.slow
@pytest.mark.parametrize("name, numerics", [("transpose_conv_int8.tflite", "litert"), ("transpose_conv_int8.tflite", "tflm"),
                                            ("transpose_conv_i16.tflite", "litert"), ("transpose_conv_f32.tflite", "litert"),
                                            ("conv_transpose.onnx", "litert")])
def test_c_on_the_host_equals_numpy(name, numerics):
    graph = pipeline.load(str(OPS / name), numerics=numerics)
    check_c(graph, solvers.min_peak_ram(cache.dag(graph)).blocks, seed=4)


def test_too_many_reaching_taps_is_refused_in_one_line(capsys):
    path = OPS / "unsupported_transpose_conv_taps_int8.tflite"
    code, out, err = run_cli(capsys, "plan", str(path))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "operator 0 (TRANSPOSE_CONV): transpose_conv: kernel 9x9 at stride 1x1 reaches an output pixel with 81 " \
           "taps; at most 64 are supported" in err


@pytest.mark.parametrize("attrs, message", [
    ({"dilations": [2, 2]}, "node 0 (ConvTranspose): dilations [2, 2] are not supported"),
    ({"group": 2}, "node 0 (ConvTranspose): group 2 is not supported: only group 1"),
    ({"auto_pad": "SAME_UPPER"}, "node 0 (ConvTranspose): auto_pad and output_shape are not supported"),
])
def test_onnx_forms_refused_in_one_line_naming_the_operator(tmp_path, attrs, message):
    from onnx import TensorProto, helper, numpy_helper, save

    weights = numpy_helper.from_array(np.ones((4, 2, 3, 3), np.float32), "w")
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 5, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 11, 11])], [weights])
    path = tmp_path / "m.onnx"
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    with pytest.raises(UserError) as err:
        pipeline.load(str(path))
    assert message in str(err.value) and "\n" not in str(err.value)
