"""The float32 ONNX importer: structure, weights, numbers against onnxruntime, and bad files."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest

from support.paths import FIXTURES
from msfcnn.errors import UserError
from msfcnn.frontends import load_model
from msfcnn.ir import Graph
from msfcnn.ops import Window

import onnx
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from msfcnn.frontends.onnx import load_onnx  # noqa: E402

MODELS = FIXTURES / "models"
ONNX_FILES = sorted(MODELS.glob("onnx_*.onnx"))

# (op kind, fused activation) of every node, per fixture (ReLU/ReLU6, BN, bias adds folded away).
C, CR, CR6, DW6, ADD, ADDR = (("conv2d", None), ("conv2d", "relu"), ("conv2d", "relu6"),
                              ("depthwise_conv2d", "relu6"), ("add", None), ("add", "relu"))
GAP, DENSE, RESHAPE = ("global_avg_pool", None), ("dense", None), ("reshape", None)
EXPECTED_OPS = {
    "onnx_avgpool": [("avg_pool2d", None)],
    "onnx_avgpool_pad": [("avg_pool2d", None)],
    "onnx_avgpool_include_pad": [("avg_pool2d", None)],
    "onnx_maxpool": [("max_pool2d", None)],
    "onnx_conv_bn_relu": [CR],
    "onnx_dwconv_relu6": [DW6],
    "onnx_dw_mult2_relu6": [DW6, C],
    "onnx_residual_add": [CR, C, ADDR],
    "onnx_gap_linear": [CR, GAP, DENSE],
    "onnx_reducemean_linear": [CR, GAP, DENSE],
    "onnx_matmul": [CR, GAP, DENSE],
    "onnx_dynbatch": [CR, GAP, DENSE],
    "onnx_reshape_linear": [CR, ("max_pool2d", None), RESHAPE, DENSE],
    "onnx_flatten_mlp": [CR, RESHAPE, ("dense", "relu"), DENSE, ("softmax", None)],
    "onnx_bn_pool_relu_pad": [("depthwise_conv2d", None), C, ("max_pool2d", "relu"), ("pad", None), C],
    "onnx_same_even_kernel": [CR, C],
    "onnx_resnet8": [CR, CR, C, ADDR, CR, C, C, ADDR, CR, C, C, ADDR, ("avg_pool2d", None), RESHAPE, DENSE],
    "onnx_mbv3_tiny": [C, ("hard_sigmoid", None), ("mul", None), C, ("hard_sigmoid", None), ("mul", None),
                       ("depthwise_conv2d", None), ("hard_sigmoid", None), ("mul", None), GAP, CR, C,
                       ("hard_sigmoid", None), ("mul_broadcast", None), C, ADD, C, ("logistic", None),
                       ("depthwise_conv2d", "relu"), C, C, ("concat", None), ("mul_const", None), ("add_const", None),
                       GAP, DENSE],
    "onnx_mbv2_tiny": [CR6, CR6, DW6, C, ADD, CR6, DW6, C, CR6, DW6, C, ADD, CR6, DW6, C, CR6, DW6, C, ADD,
                       CR6, GAP, DENSE],
    "onnx_activations": [C, ("float_unary", None), C, ("float_unary", None), C, ("prelu", None), C,
                         ("float_unary", None), C, ("prelu", None)],
    # Squeeze of H then W: one reshape to (C,); Unsqueeze twice: one back to (1, 1, C)
    "onnx_sub_max_min": [C, C, ("maximum", None), ("sub", None), ("minimum_const", None), ("sub_const", None),
                         ("maximum_const", None), ("sub", None), GAP, RESHAPE, DENSE, RESHAPE],
    # each part of the Split made where it is first read: the branch's before the concatenated one
    "onnx_channel_split": [CR, ("channel_slice", None), CR, ("channel_slice", None), ("concat", None),
                           ("channel_slice", None), C],
    # Reshape, Transpose, Reshape: one gather
    "onnx_channel_shuffle": [CR, ("channel_gather", None), C],
    "onnx_tcn_conv1xk": [CR, CR, CR, GAP, DENSE],
}


def ops_of(graph: Graph) -> list[tuple[str, str | None]]:
    return [(node.op.kind, getattr(node.op, "activation", None)) for node in graph.nodes]


def onnx_output_dims(path: Path) -> list[int | None]:
    """The declared output shape; None for symbolic dimensions."""
    dims = onnx.load(str(path)).graph.output[0].type.tensor_type.shape.dim
    return [d.dim_value if d.HasField("dim_value") else None for d in dims]


def ir_to_onnx_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    return (1, shape[2], shape[0], shape[1]) if len(shape) == 3 else (1, *shape)


def test_every_fixture_has_expectations():
    assert ONNX_FILES, "no onnx_*.onnx fixtures"
    assert {p.stem for p in ONNX_FILES} >= set(EXPECTED_OPS)


@pytest.mark.parametrize("path", ONNX_FILES, ids=lambda p: p.stem)
def test_fixture_structure(path):
    graph = load_model(str(path))  # through the registered .onnx loader
    assert graph.layout == "NCHW" and graph.input_quant is None and graph.dtype == "float32"
    dims = onnx.load(str(path)).graph.input[0].type.tensor_type.shape.dim
    _, c, h, w = (d.dim_value for d in dims)
    assert graph.input_shape == (h, w, c)
    if path.stem in EXPECTED_OPS:
        assert ops_of(graph) == EXPECTED_OPS[path.stem]
    declared = onnx_output_dims(path)
    got = ir_to_onnx_shape(graph.nodes[-1].shape)
    assert len(got) == len(declared) and all(d in (None, g) for g, d in zip(got, declared))
    for node in graph.nodes:
        assert node.quant is None
        for role, array in node.consts.items():
            assert role in ("weights", "bias", "operand", "alpha") and array.dtype == np.float32
        if node.op.kind == "conv2d":
            assert node.consts["weights"].shape == (node.op.filters, *node.op.win.kernel, graph.shape_of(node.inputs[0])[2])
        if node.op.kind == "depthwise_conv2d":
            assert node.consts["weights"].shape == (1, *node.op.win.kernel, node.shape[2])
        if node.op.kind == "dense":
            in_features = int(np.prod(graph.shape_of(node.inputs[0])))
            assert node.consts["weights"].shape == (node.op.units, in_features)


def test_fixture_windows():
    pool = load_onnx(MODELS / "onnx_maxpool.onnx").nodes[0]
    assert pool.op.win == Window((3, 3), (2, 2), (1, 1, 1, 1)) and pool.shape == (6, 6, 4)
    include = load_onnx(MODELS / "onnx_avgpool_include_pad.onnx").nodes[0].op
    exclude = load_onnx(MODELS / "onnx_avgpool_pad.onnx").nodes[0].op
    assert include.count_include_pad and not exclude.count_include_pad
    conv = load_onnx(MODELS / "onnx_same_even_kernel.onnx").nodes[0].op
    assert conv.win == Window((4, 4), (1, 1), (1, 1, 2, 2))
    dw = load_onnx(MODELS / "onnx_dw_mult2_relu6.onnx").nodes[0].op
    assert dw.depth_multiplier == 2 and dw.win == Window((3, 3), (2, 2), (1, 1, 1, 1))
    pad = load_onnx(MODELS / "onnx_bn_pool_relu_pad.onnx").nodes[3].op
    assert pad.pads == (0, 1, 1, 2)  # ZeroPad2d((left 1, right 2, top 0, bottom 1))


def test_batch_norm_is_folded_exactly():
    model = onnx.load(str(MODELS / "onnx_conv_bn_relu.onnx"))
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    conv, bn = (n for n in model.graph.node if n.op_type in ("Conv", "BatchNormalization"))
    w, b = (init[name].astype(np.float64) for name in conv.input[1:3])
    gamma, beta, mean, var = (init[name].astype(np.float64) for name in bn.input[1:5])
    eps = next(a.f for a in bn.attribute if a.name == "epsilon")
    scale = gamma / np.sqrt(var + eps)
    node = load_onnx(MODELS / "onnx_conv_bn_relu.onnx").nodes[0]
    want_w = (w * scale[:, None, None, None]).astype(np.float32).transpose(0, 2, 3, 1)
    assert np.array_equal(node.consts["weights"], want_w)
    assert np.array_equal(node.consts["bias"], ((b - mean) * scale + beta).astype(np.float32))


def test_flatten_permutes_dense_columns():
    """The IR flattens (H, W, C); ONNX flattened (C, H, W): the Gemm columns follow."""
    model = onnx.load(str(MODELS / "onnx_flatten_mlp.onnx"))
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    gemm = next(n for n in model.graph.node if n.op_type == "Gemm")
    w_onnx = init[gemm.input[1]]  # (16, C*H*W) with transB=1
    graph = load_onnx(MODELS / "onnx_flatten_mlp.onnx")
    h, w, c = graph.nodes[0].shape
    dense = graph.nodes[2].consts["weights"]
    assert np.array_equal(dense.reshape(16, h, w, c), w_onnx.reshape(16, c, h, w).transpose(0, 2, 3, 1))


# ---- numbers against onnxruntime ----


def run_both(path: Path, seed: int = 0):
    import onnxruntime as ort
    from msfcnn import executor
    graph = load_onnx(path)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal((1, c, h, w)).astype(np.float32)
          for h, w, c in (graph.shape_of(t) for t in graph.input_tensors)]
    want = session.run(None, {info.name: x for info, x in zip(session.get_inputs(), xs)})[0]
    got = executor.run_unfused(graph, xs[0] if len(xs) == 1 else xs)
    return got, want


def assert_close(got, want):
    assert got.shape == want.shape and got.dtype == np.float32
    scale = max(float(np.abs(want).max()), 1e-6)
    diff = float(np.abs(got - want).max())
    assert diff <= 1e-4 * scale, f"max abs diff {diff:.3g} vs onnxruntime (largest output {scale:.3g})"


@pytest.mark.parametrize("path", ONNX_FILES, ids=lambda p: p.stem)
def test_fixture_matches_onnxruntime(path):
    for seed in (0, 1):
        assert_close(*run_both(path, seed))


# ---- small models built with onnx.helper ----


def make_model(tmp_path, nodes, input_shape, output_shape, initializers=(), opset=13, name="m.onnx",
               inputs=None, outputs=None, domains=()):
    graph = helper.make_graph(
        nodes, "g",
        inputs or [helper.make_tensor_value_info("x", TensorProto.FLOAT, input_shape)],
        outputs or [helper.make_tensor_value_info("y", TensorProto.FLOAT, output_shape)],
        [numpy_helper.from_array(np.asarray(a), n) for n, a in initializers])
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(domain, 1) for domain in domains]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    if not domains:  # (inference knows no custom domain)
        model = onnx.shape_inference.infer_shapes(model)  # fills in the output shapes left as None
    onnx.checker.check_model(model)
    path = tmp_path / name
    onnx.save(model, str(path))
    return path


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("auto_pad, stride, pads", [
    ("SAME_UPPER", 2, (1, 1, 2, 2)),  # 9 -> 5 rows with a 4x4 kernel: 3 rows of padding, 2 at the end
    ("SAME_LOWER", 2, (2, 2, 1, 1)),
    ("SAME_UPPER", 1, (1, 1, 2, 2)),
    ("VALID", 1, (0, 0, 0, 0)),
])
def test_auto_pad(tmp_path, auto_pad, stride, pads):
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], auto_pad=auto_pad, strides=[stride, stride]),
             helper.make_node("MaxPool", ["c"], ["y"], kernel_shape=[2, 2], auto_pad=auto_pad)]
    path = make_model(tmp_path, nodes, [1, 3, 9, 9], None, [("w", rand(5, 3, 4, 4))])
    graph = load_onnx(path)
    assert graph.nodes[0].op.win == Window((4, 4), (stride, stride), pads)
    assert_close(*run_both(path))


def test_global_max_pool_is_a_whole_map_max_pool(tmp_path):
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("GlobalMaxPool", ["c"], ["y"])]
    path = make_model(tmp_path, nodes, [1, 3, 7, 5], None, [("w", rand(4, 3, 3, 3))])
    graph = load_onnx(path)
    assert graph.nodes[1].op.win == Window((7, 5)) and graph.nodes[1].shape == (1, 1, 4)
    for seed in (0, 1):
        assert_close(*run_both(path, seed))


def test_clip_as_attributes_in_opset_10(tmp_path):
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Clip", ["c"], ["y"], min=0.0, max=6.0)]
    path = make_model(tmp_path, nodes, [1, 2, 6, 6], [1, 4, 6, 6], [("w", rand(4, 2, 3, 3) * 3), ("b", rand(4))],
                      opset=10)
    assert ops_of(load_onnx(path)) == [CR6]
    assert_close(*run_both(path))


def test_reduce_mean_axes_input_in_opset_18_and_gemm_options(tmp_path):
    nodes = [helper.make_node("ReduceMean", ["x", "axes"], ["m"], keepdims=0),
             helper.make_node("Gemm", ["m", "w", "c"], ["g"], alpha=0.5, beta=2.0),
             helper.make_node("Relu", ["g"], ["y"])]
    path = make_model(tmp_path, nodes, [1, 6, 5, 7], [1, 3],
                      [("axes", np.array([-1, -2], np.int64)), ("w", rand(6, 3)), ("c", rand(1, 3))], opset=18)
    graph = load_onnx(path)
    assert ops_of(graph) == [GAP, ("dense", "relu")] and graph.nodes[0].shape == (6,)
    assert_close(*run_both(path))


def test_relu_with_other_readers_is_not_fused(tmp_path):
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Add", ["r", "c"], ["y"])]
    path = make_model(tmp_path, nodes, [1, 3, 5, 5], [1, 3, 5, 5], [("w", rand(3, 3, 1, 1))])
    assert ops_of(load_onnx(path)) == [C, ("activation", "relu"), ADD]
    assert_close(*run_both(path))


def test_activations_on_the_input_and_after_pools(tmp_path):
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Clip", ["r", "lo", "hi"], ["r6"]),
             helper.make_node("MaxPool", ["r6"], ["p"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["p"], ["y"])]
    path = make_model(tmp_path, nodes, [1, 3, 7, 6], None, [("lo", np.float32(0)), ("hi", np.float32(6))])
    assert ops_of(load_onnx(path)) == [("activation", "relu6"), ("max_pool2d", "relu")]
    assert_close(*run_both(path))


def test_identity_dropout_and_repeated_relu_are_dropped(tmp_path):
    nodes = [helper.make_node("Identity", ["x"], ["i"]),
             helper.make_node("Conv", ["i", "w"], ["c"]),
             helper.make_node("Clip", ["c", "lo", "hi"], ["r6"]),
             helper.make_node("Relu", ["r6"], ["r"]),
             helper.make_node("Dropout", ["r"], ["y"])]
    path = make_model(tmp_path, nodes, [1, 3, 5, 5], [1, 2, 5, 5],
                      [("w", rand(2, 3, 1, 1)), ("lo", np.float32(0)), ("hi", np.float32(6))])
    assert ops_of(load_onnx(path)) == [CR6]


def test_mobilenetv3_operators(tmp_path):
    """HardSwish, Sigmoid, HardSigmoid, MUL and ADD of constants (one value, one per channel),
    squeeze-and-excite (a map times a (1, C, 1, 1) tensor), MUL of two maps, and CONCAT of three
    maps along the channels: the IR ops, and the numbers against onnxruntime."""
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("HardSwish", ["c1"], ["h"]),
             helper.make_node("GlobalAveragePool", ["h"], ["g"]),
             helper.make_node("Conv", ["g", "w2", "b2"], ["s1"]),
             helper.make_node("Relu", ["s1"], ["s2"]),
             helper.make_node("Conv", ["s2", "w3", "b3"], ["s3"]),
             helper.make_node("HardSigmoid", ["s3"], ["s4"], alpha=1 / 6),
             helper.make_node("Mul", ["h", "s4"], ["se"]),
             helper.make_node("Sigmoid", ["se"], ["sg"]),
             helper.make_node("Mul", ["sg", "se"], ["m"]),
             helper.make_node("Mul", ["scale", "m"], ["ms"]),
             helper.make_node("Add", ["ms", "shift"], ["a"]),
             helper.make_node("Relu", ["a"], ["ar"]),
             helper.make_node("MaxPool", ["ar"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Add", ["p", "half"], ["q"]),
             helper.make_node("Concat", ["q", "q", "p"], ["y"], axis=1)]
    path = make_model(tmp_path, nodes, [1, 3, 8, 6], None,
                      [("w1", rand(8, 3, 3, 3)), ("w2", rand(2, 8, 1, 1, seed=1)), ("b2", rand(2, seed=2)),
                       ("w3", rand(8, 2, 1, 1, seed=3)), ("b3", rand(8, seed=4)), ("scale", rand(1, 8, 1, 1, seed=5)),
                       ("shift", rand(8, 1, 1, seed=6)), ("half", np.float32(0.5))], opset=14)
    graph = load_onnx(path)
    assert [n.op.kind for n in graph.nodes] == [
        "conv2d", "hard_swish", "global_avg_pool", "conv2d", "conv2d", "hard_sigmoid", "mul_broadcast", "logistic",
        "mul", "mul_const", "add_const", "max_pool2d", "add_const", "concat", "concat"]
    assert graph.nodes[10].op.activation == "relu" and graph.shape_of(len(graph) - 1) == (4, 3, 24)
    for seed in (0, 1):
        assert_close(*run_both(path, seed))


def test_dynamic_batch_is_taken_as_one(tmp_path):
    path = make_model(tmp_path, [helper.make_node("Relu", ["x"], ["y"])], ["N", 2, 3, 3], ["N", 2, 3, 3])
    assert load_onnx(path).input_shape == (3, 3, 2)


# ---- errors: one line, UserError, never a traceback ----


BAD = {
    "softsign": ([helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Softsign", ["c"], ["y"])],
                 "node 1 (Softsign): unsupported ONNX op 'Softsign'"),
    "prelu by a row": ([helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("PRelu", ["c", "row"], ["y"])],
                       "a constant of shape [1, 1, 5, 1] is not one slope or one per channel of"),
    "concat along H": ([helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Concat", ["c", "c"], ["y"], axis=2)],
                       "Concat along axis 2 is not supported"),
    "mul by a row": ([helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Mul", ["c", "row"], ["y"])],
                     "a constant of shape [1, 1, 5, 1] is not one value or one per channel of"),
    "grouped conv": ([helper.make_node("Conv", ["x", "wg"], ["y"], group=2)], "grouped convolution (group 2"),
    "clip 0..1": ([helper.make_node("Conv", ["x", "w"], ["c"]),
                   helper.make_node("Clip", ["c", "lo", "one"], ["y"])], "Clip(0, 1) is not supported"),
    "dilated pool": ([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], dilations=[2, 2])],
                     "dilations [2, 2] are not supported on a pool"),
    "weights as input": ([helper.make_node("Conv", ["x", "x"], ["y"])], "must be a constant"),
    "ceil mode": ([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)],
                  "ceil_mode"),
    "spatial reshape": ([helper.make_node("Reshape", ["x", "shape"], ["y"])], "reshape [1, 4, 5, 5] -> [1, 4, 25, 1]"),
}


@pytest.mark.parametrize("case", BAD)
def test_unsupported_graphs(tmp_path, case):
    nodes, message = BAD[case]
    consts = [("w", rand(3, 4, 1, 1)), ("wg", rand(4, 2, 1, 1)), ("lo", np.float32(0)), ("one", np.float32(1)),
              ("row", rand(1, 1, 5, 1)),
              ("shape", np.array([1, 4, 25, 1], np.int64))]
    used = {name for node in nodes for name in node.input}
    path = make_model(tmp_path, nodes, [1, 4, 5, 5], None, [(n, a) for n, a in consts if n in used])
    with pytest.raises(UserError, match=None) as err:
        load_onnx(path)
    text = str(err.value)
    assert message in text and str(path) in text and "\n" not in text


def test_custom_domain_op(tmp_path):
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Gelu", ["c"], ["y"], domain="com.example")]
    path = make_model(tmp_path, nodes, [1, 4, 5, 5], [1, 3, 5, 5], [("w", rand(3, 4, 1, 1))], domains=["com.example"])
    with pytest.raises(UserError, match=r"node 1 \(Gelu\): unsupported ONNX op 'com.example.Gelu'"):
        load_onnx(path)


def test_every_unsupported_op_is_named_before_converting(tmp_path):
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]),
             helper.make_node("Flatten", ["c"], ["f"]),
             helper.make_node("Unsqueeze", ["f", "axes"], ["s"]),
             helper.make_node("Softplus", ["s"], ["h"]),
             helper.make_node("Softsign", ["h"], ["y"])]
    path = make_model(tmp_path, nodes, [1, 3, 1, 1], None,
                      [("w", rand(8, 3, 1, 1)), ("axes", np.array([0], np.int64))])
    with pytest.raises(UserError, match=r"node 3 \(Softplus\): unsupported ONNX op 'Softplus'; also 'Softsign' \(node 4\)"):
        load_onnx(path)
    nodes[2:] = [helper.make_node("Neg", ["f"], ["s"]), helper.make_node("Relu", ["s"], ["y"])]
    path = make_model(tmp_path, nodes, [1, 3, 1, 1], None, [("w", rand(8, 3, 1, 1))])
    with pytest.raises(UserError, match=r"node 2 \(Neg\): unsupported ONNX op 'Neg' on an activation"):
        load_onnx(path)


@pytest.mark.parametrize("shape, message", [
    ([2, 3, 4, 4], "batch size 2"),
    ([1, 3, "H", 4], "dynamic dimension 'H'"),
    ([1, 48], "rank 2"),
])
def test_unsupported_inputs(tmp_path, shape, message):
    path = make_model(tmp_path, [helper.make_node("Relu", ["x"], ["y"])], shape, None)
    with pytest.raises(UserError, match=message):
        load_onnx(path)


@pytest.mark.parametrize("opset, split", [(11, "attribute"), (13, "input"), (18, "num_outputs")])
def test_split_forms_and_a_second_reader(tmp_path, opset, split):
    """Split's sizes as an attribute (opset 11), an input (13) or equal parts (18's num_outputs);
    the parts are made where they are read, and a Relu that also reads the split tensor is not
    fused into its Conv (the parts still to be made read the Conv's output)."""
    attrs = {"axis": 1, "split": [2, 2]} if split == "attribute" else {"axis": -3}
    inputs = ["c", "sizes"] if split == "input" else ["c"]
    if split == "num_outputs":
        attrs["num_outputs"] = 2
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]),
             helper.make_node("Split", inputs, ["a", "b"], **attrs),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Concat", ["b", "r", "a"], ["y"], axis=1)]
    init = [("w", rand(4, 3, 1, 1))] + ([("sizes", np.array([2, 2], np.int64))] if split == "input" else [])
    path = make_model(tmp_path, nodes, [1, 3, 5, 5], [1, 8, 5, 5], init, opset=opset)
    graph = load_onnx(path)
    assert ops_of(graph) == [C, ("activation", "relu"), ("channel_slice", None), ("channel_slice", None),
                             ("concat", None), ("concat", None)]
    assert [(n.op.begin, n.op.channels) for n in graph.nodes[2:4]] == [(2, 2), (0, 2)]
    assert_close(*run_both(path))


def test_slice_of_channels_with_negative_bounds(tmp_path):
    """Slice (opset 13) of channels [-5, big) on axis -3, and one whose axes are all whole (no node)."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]),
             helper.make_node("Slice", ["c", "starts", "ends", "axes"], ["s"]),
             helper.make_node("Slice", ["s", "zero", "big", "two"], ["y"])]
    init = [("w", rand(7, 3, 1, 1)), ("starts", np.array([-5], np.int64)), ("ends", np.array([1 << 40], np.int64)),
            ("axes", np.array([-3], np.int64)), ("zero", np.array([0], np.int64)), ("big", np.array([99], np.int64)),
            ("two", np.array([2], np.int64))]
    path = make_model(tmp_path, nodes, [1, 3, 4, 6], [1, 5, 4, 6], init)
    graph = load_onnx(path)
    assert ops_of(graph) == [C, ("channel_slice", None)]
    assert (graph.nodes[1].op.begin, graph.nodes[1].op.channels) == (2, 5)
    assert_close(*run_both(path))


def test_two_outputs(tmp_path):
    """Several outputs import in the file's order, one of them the last layer's; an output that is
    the input itself is refused."""
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("z", "y")]
    nodes = [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Relu", ["x"], ["z"])]
    graph = load_onnx(make_model(tmp_path, nodes, [1, 3, 4, 4], None, outputs=outputs))
    assert graph.output_tensors == (1, 0) and graph.output == 1
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 3, 4, 4]) for n in ("y", "x")]
    path = make_model(tmp_path, nodes[:1], [1, 3, 4, 4], None, outputs=outputs)
    with pytest.raises(UserError, match="a model output is its input"):
        load_onnx(path)


def test_missing_onnx_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)  # makes `import onnx` raise ImportError
    with pytest.raises(UserError, match=r"pip install 'msfcnn\[onnx\]'"):
        load_onnx(MODELS / "onnx_maxpool.onnx")


SMALL = MODELS / "onnx_residual_add.onnx"


@pytest.mark.parametrize("data", [b"", b"not an onnx model\n", bytes(range(256)) * 4], ids=["empty", "text", "bytes"])
def test_garbage_files(tmp_path, data):
    path = tmp_path / "bad.onnx"
    path.write_bytes(data)
    with pytest.raises(UserError) as err:
        load_onnx(path)
    assert "\n" not in str(err.value)


def test_truncated_files(tmp_path):
    data = SMALL.read_bytes()
    path = tmp_path / "cut.onnx"
    for length in range(0, len(data), max(len(data) // 97, 1)):
        path.write_bytes(data[:length])
        with pytest.raises(UserError) as err:
            load_onnx(path)
        assert "\n" not in str(err.value)


def test_random_mutations_give_user_error_or_graph(tmp_path):
    """~1000 seeded byte mutations: a Graph or a one-line UserError, never another exception."""
    rng = random.Random(20251121)
    sources = [MODELS / f"{name}.onnx" for name in ("onnx_residual_add", "onnx_flatten_mlp",
                                                   "onnx_bn_pool_relu_pad", "onnx_matmul")]
    blobs = [p.read_bytes() for p in sources]
    path = tmp_path / "mutant.onnx"
    outcomes = {"graph": 0, "error": 0}
    for trial in range(1000):
        data = bytearray(blobs[trial % len(blobs)])
        for _ in range(rng.choice((1, 1, 2, 4, 16))):
            position = rng.randrange(len(data))
            kind = rng.random()
            if kind < 0.6:
                data[position] = rng.randrange(256)
            elif kind < 0.8:
                data[position] ^= 1 << rng.randrange(8)
            elif kind < 0.9:
                del data[position:position + rng.randrange(1, 8)]
            else:
                data[position:position] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4)))
        path.write_bytes(bytes(data))
        try:
            assert isinstance(load_onnx(path), Graph)
            outcomes["graph"] += 1
        except UserError as err:
            assert "\n" not in str(err)
            outcomes["error"] += 1
    assert outcomes["graph"] > 0 and outcomes["error"] > 0


def test_cli_reports_a_bad_onnx_file(tmp_path, capsys):
    from msfcnn.cli import main
    path = tmp_path / "bad.onnx"
    path.write_bytes(SMALL.read_bytes()[:100])
    assert main(["plan", str(path)]) == 2
    err = capsys.readouterr().err
    assert "bad.onnx" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_every_onnx_converter_names_the_float32_ops_it_makes():
    from msfcnn.frontends import operators
    from msfcnn.frontends.onnx import CONVERTERS

    assert set(operators.ONNX) == set(CONVERTERS)
    assert all(cls.supports("float32") for classes in operators.ONNX.values() for cls in classes)
