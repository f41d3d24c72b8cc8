"""The int8 TFLite importer: every fixture's graph against the interpreter's own view of the model
(op kinds, shapes, quantisation, weights), the special cases (float edges, folded RELU / shape
arithmetic / flat input, requantise), clear errors for unsupported and corrupted files, and a fuzz
test that random damage only ever produces a Graph or a UserError."""

from __future__ import annotations

import hashlib
import json
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from support.paths import FIXTURES
from msfcnn.cli import main
from msfcnn.errors import UserError
from msfcnn.frontends import load_model
from msfcnn.frontends.tflite import graph_from_tflite, load_tflite
from msfcnn.ir import NETWORK_INPUT, Graph, Quant, input_tensor

from ai_edge_litert import schema_py_generated as schema  # to edit fixtures; the oracle package
import flatbuffers

MODELS = FIXTURES / "models"
SUPPORTED = sorted(p for p in MODELS.glob("*.tflite") if not p.name.startswith("unsupported_"))

# The IR node kind each builtin operator becomes when it is not folded away.
KIND = {"CONV_2D": "conv2d", "DEPTHWISE_CONV_2D": "depthwise_conv2d", "FULLY_CONNECTED": "dense",
        "ADD": "add", "MAX_POOL_2D": "max_pool2d", "AVERAGE_POOL_2D": "avg_pool2d", "MEAN": "global_avg_pool",
        "SOFTMAX": "softmax", "RESHAPE": "reshape", "PAD": "pad", "PADV2": "pad", "RELU": "activation", "RELU6": "activation",
        "QUANTIZE": "requantize", "RESIZE_NEAREST_NEIGHBOR": "resize_nearest", "RESIZE_BILINEAR": "resize_bilinear",
        "SPACE_TO_DEPTH": "space_to_depth",
        "DEPTH_TO_SPACE": "depth_to_space",
        "CONCATENATION": "concat", "DEQUANTIZE": "dequantize", "LOGISTIC": "logistic",
        "HARD_SWISH": "hard_swish",  # (concatenations of two inputs)
        "LEAKY_RELU": "leaky_relu", "TANH": "tanh", "ELU": "elu", "PRELU": "prelu", "RELU_N1_TO_1": "activation",
        "RELU_0_TO_1": "activation", "ABS": "abs", "RSQRT": "rsqrt"}
FOLDED = {"SHAPE", "STRIDED_SLICE", "PACK"}  # shape arithmetic, computed at import


def kind_of(op: dict, tensors) -> str:
    """The IR kind of an operator: an AVERAGE_POOL_2D whose output is one pixel (a single window
    from the top left) imports as a global average pool over that window, which streams."""
    one_pixel = tuple(tensors[op["outputs"][0]]["shape"][1:3]) == (1, 1)
    if op["name"] == "AVERAGE_POOL_2D" and one_pixel and tensors[op["inputs"][0]]["dtype"] == "int8":
        return "global_avg_pool"  # (the uint8 pool, which rounds differently, stays a window op)
    if op["name"] == "MUL":  # of two activations: equal shapes, or a map by a vector per channel
        shapes = {tuple(tensors[t]["shape"]) for t in op["inputs"]}
        return "mul" if len(shapes) == 1 else "mul_broadcast"
    if op["name"] == "QUANTIZE" and tensors[op["inputs"][0]]["dtype"] == "float32":
        return "quantize"  # where a float island ends (int8 -> int8 is a requantisation)
    return KIND[op["name"]]


# Fixtures whose import deliberately differs from one node per operator (tested one by one below).
SPECIAL = {"extra_float_io", "extra_relu_foldable", "extra_flat_input", "extra_dense_keepdims",
           "op14_transpose_mean", "op14_mean_one_axis", "op14_concat", "op14_mcunet_head", "op14_reduce_max",
           "i16_chain",  # float32 edges (tests/integration/test_int16.py)
           "mi_float_io",  # float32 edges (tests/integration/test_multi_input.py)
           "fi_float_io", "fi_quantize_ties_edge",  # float32 edges (tests/integration/test_float_islands.py)
           "fi_quantize_ties",  # an ADD of a constant
           # a SPLIT's parts, each made where it is first read (tests/integration/test_split_ops.py)
           "split_shuffle", "split_v_heads", "split_i16", "u8_split", "split_slices", "split_float",
           # a channel shuffle's RESHAPE, TRANSPOSE, RESHAPE as one gather (tests/integration/test_shuffle_ops.py)
           "shuffle_unit", "shuffle_groups3", "shuffle_float", "shuffle_i16", "u8_shuffle"}

# Runs in a subprocess (the interpreter's kernels can abort the process): for each model, the
# interpreter's operators and tensors, with a digest of every constant operand.
_DESCRIBE = r"""
import hashlib, json, sys
import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType

def describe(path):
    it = Interpreter(model_path=path,
                     experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    it.allocate_tensors()
    tensors = {}
    for t in it.get_tensor_details():
        q = t["quantization_parameters"]
        tensors[t["index"]] = {"shape": [int(d) for d in t["shape"]], "dtype": np.dtype(t["dtype"]).name,
                               "scales": [float(s) for s in q["scales"]],
                               "zero_points": [int(z) for z in q["zero_points"]],
                               "axis": int(q["quantized_dimension"])}
    ops = []
    for o in it._get_ops_details():
        ops.append({"name": o["op_name"], "inputs": [int(i) for i in o["inputs"]],
                    "outputs": [int(i) for i in o["outputs"]]})
        if o["op_name"] in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"):
            for i in (int(i) for i in o["inputs"][1:] if i >= 0):
                value = np.ascontiguousarray(it.get_tensor(i))
                tensors[i]["sha"] = hashlib.sha256(value.tobytes()).hexdigest()
    return {"inputs": [int(d["index"]) for d in it.get_input_details()],
            "outputs": [int(d["index"]) for d in it.get_output_details()], "ops": ops, "tensors": tensors}

print(json.dumps({p: describe(p) for p in sys.argv[1:]}))
"""


@pytest.fixture(scope="module")
def oracle() -> dict[str, dict]:
    proc = subprocess.run([sys.executable, "-c", _DESCRIBE, *map(str, SUPPORTED)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    described = json.loads(proc.stdout.splitlines()[-1])
    for info in described.values():
        info["tensors"] = {int(k): v for k, v in info["tensors"].items()}
    return {str(p): described[str(p)] for p in SUPPORTED}


def _quant(tensor: dict) -> Quant | None:
    if tensor["dtype"] == "float32":  # a float island's tensor, or a float32 model's
        return None
    assert tensor["dtype"] in ("int8", "uint8", "int16") and len(tensor["scales"]) == 1, tensor  # int16: 16x8
    shift = 128 if tensor["dtype"] == "uint8" else 0  # uint8 tensors are held as int8 (q - 128)
    return Quant(tensor["scales"][0], tensor["zero_points"][0] - shift)


def _fmap(shape: list[int]) -> tuple[int, ...]:
    assert shape[0] == 1
    return tuple(shape[1:])


def _sha(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def test_fixtures_are_present():
    names = {p.stem for p in SUPPORTED}
    assert {"mbv2_035", "resnet8", "dscnn", "mbv1_025_vww", "op_flatten_dense_dynbatch"} <= names
    assert len(SUPPORTED) >= 40


@pytest.mark.parametrize("path", [p for p in SUPPORTED if p.stem not in SPECIAL and not p.stem.startswith("bin_")],
                         ids=lambda p: p.stem)  # bin_*: SQUEEZE / EXPAND_DIMS folded, SUB's operands ordered
def test_graph_matches_interpreter(path, oracle):
    """One node per (unfolded) operator, in order, reading the same tensors, with the
    interpreter's shapes, quantisation, weights, biases and per-channel weight scales."""
    info, graph = oracle[str(path)], load_tflite(path)
    tensors = info["tensors"]
    ins, outs = info["inputs"], info["outputs"]
    for k, inp in enumerate(ins):  # every model input, in the model's order
        spec = graph.input_spec(k)
        assert spec.shape == (1,) * (4 - len(tensors[inp]["shape"])) + _fmap(tensors[inp]["shape"])
        assert spec.quant == _quant(tensors[inp])
    assert len(graph.input_tensors) == len(ins)
    assert not graph.float_input and not graph.float_output

    ops = [op for op in info["ops"] if op["name"] not in FOLDED]
    assert [node.op.kind for node in graph.nodes] == [kind_of(op, tensors) for op in ops]
    node_of = {inp: input_tensor(k) for k, inp in enumerate(ins)}
    for index, (op, node) in enumerate(zip(ops, graph.nodes)):
        result = tensors[op["outputs"][0]]
        assert node.shape == _fmap(result["shape"]), (index, op["name"])
        assert node.quant == _quant(result)
        reads = [node_of[t] for t in op["inputs"] if t in node_of]
        if op["name"] == "ADD":  # the IR puts the main path (the later tensor) first
            reads.sort(reverse=True)
        assert node.inputs == tuple(reads), (index, op["name"])
        node_of[op["outputs"][0]] = index
        if op["name"] in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"):
            _check_consts(node, op, tensors)
    # every model output, in the model's order; the last node's is one of them
    assert graph.output_tensors == tuple(node_of[out] for out in outs)
    assert graph.output == len(graph.nodes) - 1 and graph.output in graph.output_tensors
    assert [graph.quant_of(t) for t in graph.output_tensors] == [_quant(tensors[out]) for out in outs]


def _check_consts(node, op, tensors):
    weights, bias = tensors[op["inputs"][1]], tensors[op["inputs"][2]]
    assert list(node.consts["weights"].shape) == weights["shape"]
    if weights["dtype"] == "uint8":  # held as the exact w - zero point
        zero_point = weights["zero_points"][0]
        assert node.op.weight_zero_point == zero_point - 128
        assert _sha((node.consts["weights"] + zero_point).astype(np.uint8)) == weights["sha"]
    else:
        assert node.consts["weights"].dtype.name == weights["dtype"] and _sha(node.consts["weights"]) == weights["sha"]
    assert node.consts["bias"].dtype.name == bias["dtype"] and _sha(node.consts["bias"]) == bias["sha"]
    if weights["dtype"] == "float32":  # a float32 operator: no quantisation
        assert "weight_scales" not in node.consts
        return
    channel_axis = 3 if op["name"] == "DEPTHWISE_CONV_2D" else 0
    assert weights["axis"] == channel_axis or len(weights["scales"]) == 1
    scales = np.broadcast_to(np.float32(weights["scales"]), (weights["shape"][channel_axis],))
    np.testing.assert_array_equal(node.consts["weight_scales"], scales)


def _kinds(graph: Graph) -> list[tuple[str, str | None]]:
    return [(node.op.kind, getattr(node.op, "activation", None)) for node in graph.nodes]


def test_networks_import_as_expected():
    counts = {}
    for name in ("mbv2_035", "resnet8", "dscnn", "mbv1_025_vww"):
        graph = load_tflite(MODELS / f"{name}.tflite")
        counts[name] = {kind: sum(n.op.kind == kind for n in graph.nodes) for kind in {n.op.kind for n in graph.nodes}}
    assert counts["mbv2_035"] == {"conv2d": 35, "depthwise_conv2d": 17, "add": 10, "global_avg_pool": 1,
                                  "dense": 1, "softmax": 1}
    # Their one-window average pools (8x8 over 8x8, 24x5 over 25x5) import as streamable pools.
    assert counts["resnet8"] == {"conv2d": 9, "add": 3, "global_avg_pool": 1, "dense": 1, "softmax": 1}
    assert counts["dscnn"] == {"conv2d": 5, "depthwise_conv2d": 4, "global_avg_pool": 1, "dense": 1, "softmax": 1}
    pool = load_tflite(MODELS / "dscnn.tflite").nodes[9].op
    assert (pool.pool, pool.extent, pool.keepdims) == (True, (24, 5), True)
    assert load_tflite(MODELS / "dscnn.tflite").input_shape == (49, 10, 1)
    mbv2 = load_tflite(MODELS / "mbv2_035.tflite")
    assert mbv2.input_shape == (144, 144, 3) and mbv2.nodes[-1].shape == (1000,)
    assert mbv2.nodes[-1].quant == Quant(1 / 256, -128)  # TFLite's int8 softmax output


def test_windows_and_activations():
    conv = load_tflite(MODELS / "op_conv_k5_s2_same_relu.tflite").nodes[0].op
    assert (conv.filters, conv.activation, conv.win.kernel, conv.win.strides) == (8, "relu", (5, 5), (2, 2))
    assert conv.win.pads == (2, 2, 2, 2)
    conv = load_tflite(MODELS / "op_conv_k3_s2_same.tflite").nodes[0].op
    assert conv.win.pads == (0, 0, 1, 1)  # TensorFlow SAME on 12x12: the odd padding row goes last
    dw = load_tflite(MODELS / "op_dw_k3_s1_same_mult2.tflite").nodes[0].op
    assert (dw.depth_multiplier, dw.win.pads) == (2, (1, 1, 1, 1))
    pad = load_tflite(MODELS / "op_pad.tflite").nodes[0].op
    assert pad.pads == (1, 0, 2, 1)  # ZeroPadding2D(((1, 2), (0, 1))) as (top, left, bottom, right)
    assert _kinds(load_tflite(MODELS / "extra_pool_relu.tflite")) == [("max_pool2d", "relu"),
                                                                      ("avg_pool2d", "relu6")]
    assert load_tflite(MODELS / "op_gap_keepdims.tflite").nodes[0].op.keepdims
    assert not load_tflite(MODELS / "op_gap.tflite").nodes[0].op.keepdims


def test_vector_input_becomes_a_rank3_feature_map():
    graph = load_tflite(MODELS / "op_dense_relu.tflite")
    assert graph.input_shape == (1, 1, 32) and _kinds(graph) == [("dense", "relu")]


def test_flatten_shape_arithmetic_is_folded():
    static, dynamic = (load_tflite(MODELS / f"op_flatten_dense_{b}.tflite") for b in ("b1", "dynbatch"))
    for graph in (static, dynamic):
        assert [(n.op.kind, n.shape) for n in graph.nodes] == [("reshape", (144,)), ("dense", (10,))]


def test_float_edges_are_recorded_not_planned():
    graph = load_tflite(MODELS / "extra_float_io.tflite")
    assert graph.float_input and graph.float_output and graph.dtype == "int8"
    assert _kinds(graph) == [("conv2d", "relu"), ("max_pool2d", None), ("global_avg_pool", None),
                             ("dense", None), ("softmax", None)]
    assert graph.input_quant is not None and graph.output_quant == Quant(1 / 256, -128)


def test_standalone_relu_folds_only_when_exact():
    folded = load_tflite(MODELS / "extra_relu_foldable.tflite")  # same quantisation, one reader
    assert _kinds(folded) == [("conv2d", "relu")]
    on_input = load_tflite(MODELS / "extra_relu_input.tflite")  # nothing to fold into
    assert _kinds(on_input) == [("activation", "relu"), ("conv2d", None)]
    two_readers = load_tflite(MODELS / "extra_relu_two_readers.tflite")  # the ADD reads the conv too
    assert _kinds(two_readers) == [("conv2d", None), ("activation", "relu"), ("add", None)]
    assert two_readers.nodes[2].inputs == (1, 0)


def test_int8_quantize_becomes_requantize():
    graph = load_tflite(MODELS / "extra_requantize.tflite")
    assert _kinds(graph) == [("conv2d", None), ("requantize", None)]
    assert graph.nodes[1].quant != graph.nodes[0].quant and graph.nodes[1].quant.zero_point == 5


def test_flat_input_reshape_becomes_the_input_shape():
    graph = load_tflite(MODELS / "extra_flat_input.tflite")
    assert graph.input_shape == (49, 10, 1)
    assert _kinds(graph) == [("conv2d", "relu"), ("global_avg_pool", None), ("dense", None)]
    # An image input keeps its shape: its RESHAPE stays a node.
    assert [n.op.kind for n in load_tflite(MODELS / "op_reshape.tflite").nodes] == ["reshape", "conv2d"]


def test_dense_keeping_dims_gets_its_shape_back():
    graph = load_tflite(MODELS / "extra_dense_keepdims.tflite")
    assert [(n.op.kind, n.shape) for n in graph.nodes] == [("global_avg_pool", (1, 1, 8)), ("dense", (5,)),
                                                           ("reshape", (1, 1, 5))]


def test_registered_for_tflite_files():
    assert len(load_model(str(MODELS / "resnet8.tflite")).nodes) == 15


def test_concatenation_of_three_is_a_chain_of_two():
    graph = load_tflite(MODELS / "op14_concat.tflite")
    assert [n.op.kind for n in graph.nodes] == ["conv2d", "conv2d", "concat", "concat", "conv2d"]
    assert [n.inputs for n in graph.nodes[2:4]] == [(1, NETWORK_INPUT), (2, 0)]
    assert graph.nodes[3].shape == (6, 5, 16)


def test_transpose_folds_into_the_means_after_it():
    """MCUNet's head: TRANSPOSE to NCHW, then MEAN over W and over H: the transpose disappears,
    each MEAN is a mean over one axis of the NHWC map (its own rounding), and the (1, C) result a
    reshape of the last one."""
    graph = load_tflite(MODELS / "op14_transpose_mean.tflite")
    assert [(n.op.describe(), n.shape) for n in graph.nodes] == [
        ("conv 3x3/1 24", (6, 5, 24)), ("mean over W", (6, 1, 24)), ("mean over H", (1, 1, 24)),
        ("reshape", (24,))]
    graph = load_tflite(MODELS / "op14_mcunet_head.tflite")  # the dense reads the mean's bytes as they are
    assert [n.op.describe() for n in graph.nodes] == ["conv 3x3/1 16", "mean over W", "mean over H", "dense 5",
                                                      "softmax"]
    graph = load_tflite(MODELS / "op14_mean_one_axis.tflite")  # (1, 20) -> (20, 1): one reshape of the (1, 1, 20)
    assert [n.op.kind for n in graph.nodes] == ["axis_mean", "axis_mean", "reshape"]
    assert [n.shape for n in graph.nodes] == [(7, 1, 20), (1, 1, 20), (20, 1)]


# ---- errors -----------------------------------------------------------------------------------


UNSUPPORTED = {
    "unsupported_log_softmax": r"unsupported_log_softmax.tflite: unsupported operator LOG_SOFTMAX at operator "
                               r"index 1 \(supported: ABS, ADD, AVERAGE_POOL_2D, CONCATENATION, CONV_2D, DEPTHWISE_CONV_2D, ",
    "unsupported_fi_hybrid_dense": "operator 0 \\(FULLY_CONNECTED\\): a float32 input needs rank-2 float32 weights, "
                                   "got int8 4x12 \\(hybrid",
    "unsupported_concat_scales": "operator 1 \\(CONCATENATION\\): inputs quantised differently from the output",
    "unsupported_mul_broadcast_rows": "operator 1 \\(MUL\\): MUL of 4x4x3 and 1x4x3: only equal shapes, a constant",
    "unsupported_max_scales": "operator 1 \\(MAXIMUM\\): inputs and output quantised differently",
    "unsupported_squeeze_channels": "operator 0 \\(SQUEEZE\\): squeeze dimensions \\[3\\] of 1x1x4x3: only axes of size 1",
    "unsupported_shuffle_rows": "operator 3 \\(RESHAPE\\): tensor 6 \\(6x6x4x2\\) is a transposed map that only a MEAN may "
                                "read \\(a channel shuffle's TRANSPOSE may move only the channel axes\\)",
}


@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_unsupported_models_are_rejected_clearly(name):
    with pytest.raises(UserError, match=UNSUPPORTED[name]):
        load_tflite(MODELS / f"{name}.tflite")


def test_cli_reports_unsupported_model(capsys):
    code = main(["plan", str(MODELS / "unsupported_log_softmax.tflite")])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith("msfcnn: error: ") and "unsupported operator LOG_SOFTMAX" in err and err.count("\n") == 1


def test_not_tflite_and_truncated_files(tmp_path):
    data = (MODELS / "op_add_residual.tflite").read_bytes()
    cases = {"empty": b"", "text": b"hello world, not a model", "onnx": (MODELS / "onnx_maxpool.onnx").read_bytes(),
             "header only": data[:8], "half": data[: len(data) // 2], "all but one byte": data[:-1]}
    for label, content in cases.items():
        path = tmp_path / f"{label}.tflite"
        path.write_bytes(content)
        with pytest.raises(UserError) as err:
            load_tflite(path)
        message = str(err.value)
        assert message.startswith(str(path)) and "\n" not in message, label
        assert ("not a TFLite model" if label in ("empty", "text", "onnx") else "TFLite") in message, label


def _edited(name: str, edit) -> bytes:
    """A fixture changed through the flatbuffer object API."""
    model = schema.ModelT.InitFromPackedBuf((MODELS / name).read_bytes(), 0)
    edit(model, model.subgraphs[0])
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def _conv_op(model, sub):
    return next(op for op in sub.operators
                if model.operatorCodes[op.opcodeIndex].builtinCode == schema.BuiltinOperator.CONV_2D)


def _set_activation_per_channel(model, sub):
    q = sub.tensors[sub.outputs[0]].quantization
    q.scale, q.zeroPoint, q.quantizedDimension = [q.scale[0]] * 8, [q.zeroPoint[0]] * 8, 3


def _set_uint8_input(model, sub):
    sub.tensors[sub.inputs[0]].type = schema.TensorType.UINT8


def _drop_output_quantisation(model, sub):
    sub.tensors[sub.outputs[0]].quantization = None


def _batch_of_two(model, sub):
    tensor = sub.tensors[sub.inputs[0]]
    tensor.shape = [2, *tensor.shape[1:]]


def _weights_buffer_out_of_range(model, sub):
    sub.tensors[_conv_op(model, sub).inputs[1]].buffer = 10_000


def _weights_zero_point(model, sub):
    q = sub.tensors[_conv_op(model, sub).inputs[1]].quantization
    q.zeroPoint = [3] * len(q.zeroPoint)


def _weights_not_constant(model, sub):
    sub.tensors[_conv_op(model, sub).inputs[1]].buffer = 0


def _tanh_activation(model, sub):
    _conv_op(model, sub).builtinOptions.fusedActivationFunction = schema.ActivationFunctionType.TANH


def _declared_shape_disagrees(model, sub):
    tensor = sub.tensors[sub.outputs[0]]
    tensor.shape = [1, tensor.shape[1] + 1, *tensor.shape[2:]]


def _two_outputs(model, sub):
    sub.outputs = [sub.outputs[0], sub.inputs[0]]


def _custom_op(model, sub):
    code = model.operatorCodes[_conv_op(model, sub).opcodeIndex]
    code.builtinCode = code.deprecatedBuiltinCode = schema.BuiltinOperator.CUSTOM
    code.customCode = b"MyConv"


EDITS = {
    _set_activation_per_channel: "quantised per channel; only per-tensor activation",
    _set_uint8_input: "uint8 tensor 0 has a bad quantisation: scale [0-9.]+, zero point -64",
    _drop_output_quantisation: "has no quantisation parameters",
    _batch_of_two: "batch size 2 \\(tensor 0\\): only batch 1",
    _weights_buffer_out_of_range: "refers to buffer 10000 of",
    _weights_zero_point: "non-zero zero points",
    _weights_not_constant: "the weights \\(tensor \\d+\\) must be a constant",
    _tanh_activation: "fused activation TANH is not supported",
    _declared_shape_disagrees: "is declared 13x12x8 but computes to 12x12x8",
    _two_outputs: "output tensor \\d+ is the model's input",
    _custom_op: "unsupported operator CUSTOM \\(MyConv\\) at operator index 0",
}


@pytest.mark.parametrize("edit", list(EDITS), ids=lambda f: f.__name__.strip("_"))
def test_invalid_models_are_rejected_clearly(edit):
    with pytest.raises(UserError, match=EDITS[edit]) as err:
        graph_from_tflite(_edited("op_conv_k3_s1_same_relu6.tflite", edit))
    assert "\n" not in str(err.value)


def _op_of(model, sub, name: str):
    code = getattr(schema.BuiltinOperator, name)
    return next(op for op in sub.operators if model.operatorCodes[op.opcodeIndex].builtinCode == code)


def _tanh_output_scale(model, sub):
    sub.tensors[_op_of(model, sub, "TANH").outputs[0]].quantization.scale = [1 / 64]


def _leaky_relu_negative_alpha(model, sub):
    _op_of(model, sub, "LEAKY_RELU").builtinOptions.alpha = -0.5


def _prelu_alpha_per_row(model, sub):
    alpha = sub.tensors[_op_of(model, sub, "PRELU").inputs[1]]
    model.buffers[alpha.buffer].data = list(model.buffers[alpha.buffer].data)[:7]
    alpha.shape = [7, 1]


ACTIVATION_EDITS = {
    ("act_tanh.tflite", _tanh_output_scale): r"operator 1 \(TANH\): output scale 0.015625 and zero point 0: an int8 "
                                             r"TANH's output has scale 1/128",
    ("act_leaky_relu.tflite", _leaky_relu_negative_alpha): r"operator 1 \(LEAKY_RELU\): alpha -0.5: only a finite "
                                                          r"alpha >= 0",
    ("act_prelu.tflite", _prelu_alpha_per_row): r"operator 1 \(PRELU\): alpha is int8 7x1: only a constant of the "
                                                r"input's type \(int8 with int16 activations\) with one "
                                                r"value per channel \(8\)",
}


def _set_int32s(model, sub, tensor: int, values) -> None:
    model.buffers[sub.tensors[tensor].buffer].data = list(np.asarray(values, "<i4").tobytes())


def _split_along_w(model, sub):
    _set_int32s(model, sub, _op_of(model, sub, "SPLIT").inputs[0], 2)


def _split_in_three(model, sub):
    _op_of(model, sub, "SPLIT").builtinOptions.numSplits = 3


def _split_v_sizes(model, sub):
    _set_int32s(model, sub, _op_of(model, sub, "SPLIT_V").inputs[1], [3, 4, 2])


def _strided_slice_step(model, sub):
    _set_int32s(model, sub, _op_of(model, sub, "STRIDED_SLICE").inputs[3], [1, 1, 1, 2])


def _strided_slice_shrink(model, sub):
    _op_of(model, sub, "STRIDED_SLICE").builtinOptions.shrinkAxisMask = 1


SPLIT_EDITS = {
    ("split_shuffle.tflite", _split_along_w): r"operator 1 \(SPLIT\): split along axis 2 of a rank-4 tensor: only "
                                              r"along the channels \(the last axis\) is supported",
    ("split_shuffle.tflite", _split_in_three): r"operator 1 \(SPLIT\): 8 channels do not split into 3 equal parts",
    ("split_v_heads.tflite", _split_v_sizes): r"operator 1 \(SPLIT_V\): split sizes \[3, 4, 2\] do not add up to "
                                              r"the 10 channels",
    ("split_slices.tflite", _strided_slice_step): r"operator 2 \(STRIDED_SLICE\): strides \[1, 1, 1, 2\] and ellipsis "
                                                  r"/ new-axis / shrink-axis masks: only unit strides",
    ("split_slices.tflite", _strided_slice_shrink): r"operator 2 \(STRIDED_SLICE\): strides \[1, 1, 1, 1\] and "
                                                    r"ellipsis / new-axis / shrink-axis masks: only unit strides",
}

OPERATOR_EDITS = {**ACTIVATION_EDITS, **SPLIT_EDITS}


@pytest.mark.parametrize("case", OPERATOR_EDITS, ids=lambda case: case[1].__name__)
def test_operators_refuse_what_they_cannot_run(case):
    name, edit = case
    graph_from_tflite(_edited(name, lambda model, sub: None))  # the fixture itself imports
    with pytest.raises(UserError, match=OPERATOR_EDITS[case]) as err:
        graph_from_tflite(_edited(name, edit))
    assert "\n" not in str(err.value)


def test_unedited_roundtrip_still_imports():
    data = _edited("op_conv_k3_s1_same_relu6.tflite", lambda model, sub: None)
    assert _kinds(graph_from_tflite(data)) == [("conv2d", "relu6")]


# ---- fuzzing ----------------------------------------------------------------------------------


def _expand_axis(value):
    """Edit bin_conv1d's first EXPAND_DIMS (operator 0) to expand at `value` (an int32 vector)."""
    def edit(model, sub):
        axis = sub.tensors[sub.operators[0].inputs[1]]
        axis.shape = [len(value)]
        model.buffers[axis.buffer].data = list(np.array(value, "<i4").tobytes())
    return edit


def _squeeze_the_batch(model, sub):
    sub.operators[2].builtinOptions.squeezeDims = [0, 1]


@pytest.mark.parametrize("edit, message", [
    (_expand_axis([0]), "operator 0 \\(EXPAND_DIMS\\): EXPAND_DIMS before the batch dimension is not supported"),
    (_expand_axis([1, 2]), "operator 0 \\(EXPAND_DIMS\\): expected one int32 axis of a rank-3 tensor, got \\[1, 2\\]"),
    (_expand_axis([5]), "expected one int32 axis of a rank-3 tensor, got \\[5\\]"),
    (_expand_axis([2]), "operator 0 \\(EXPAND_DIMS\\): output tensor \\d+ is declared 1x1x40x3 but computes to 1x40x1x3"),
    (_squeeze_the_batch, "operator 2 \\(SQUEEZE\\): squeeze dimensions \\[0, 1\\] of 1x1x40x8: only axes of size 1 other"),
], ids=["before-batch", "two-axes", "out-of-range", "declared", "batch"])
def test_bad_squeeze_and_expand_dims_are_rejected_clearly(edit, message):
    with pytest.raises(UserError, match=message):
        graph_from_tflite(_edited("bin_conv1d.tflite", edit))


def test_padding_a_sequence_s_channels_is_rejected_clearly():
    def pad_channels(model, sub):
        paddings = sub.tensors[sub.operators[0].inputs[1]]
        model.buffers[paddings.buffer].data = list(np.array([[0, 0], [2, 0], [0, 1]], "<i4").tobytes())
        sub.tensors[sub.operators[0].outputs[0]].shape = [1, 22, 5]

    with pytest.raises(UserError, match="operator 0 \\(PAD\\): only non-negative padding of the steps is supported, "
                                        "got \\[\\[0, 0\\], \\[2, 0\\], \\[0, 1\\]\\]"):
        graph_from_tflite(_edited("bin_conv1d_causal.tflite", pad_channels))


FUZZ_FIXTURES = ["op_conv_k3_s2_same.tflite", "op_dw_k3_s1_same_mult2.tflite", "op_add_residual.tflite",
                 "op_flatten_dense_dynbatch.tflite", "op_pad_conv.tflite", "op_dense_softmax.tflite",
                 "op_gap_keepdims.tflite", "extra_float_io.tflite", "extra_relu_two_readers.tflite",
                 "dscnn.tflite", "bin_conv1d_residual.tflite", "bin_sub_ties.tflite"]
INTERESTING_WORDS = [0, 1, 2, 3, 4, 7, 8, 0x7F, 0x80, 0xFF, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF]


class _Hang(Exception):
    pass


def _mutate(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    if len(buf) < 80:  # already cut short (mutations get applied twice): just cut again
        return bytes(buf[: rng.randrange(len(buf) + 1)])
    # Mostly damage what follows the 8-byte header, so that the parser is exercised, not just the
    # identifier check.
    start = 0 if rng.random() < 0.05 else 8
    kind = rng.randrange(5)
    if kind == 0:  # truncate
        return bytes(buf[: rng.randrange(len(buf))])
    if kind == 1:  # flip a few bytes
        for _ in range(rng.randint(1, 8)):
            buf[rng.randrange(start, len(buf))] = rng.randrange(256)
    elif kind == 2:  # an offset, length or index word replaced by an edge value
        at = rng.randrange(start, len(buf) - 4) & ~3
        word = rng.choice(INTERESTING_WORDS + [len(buf), len(buf) - at, rng.getrandbits(32)])
        buf[at:at + 4] = word.to_bytes(4, "little")
    elif kind == 3:  # copy a chunk over another place
        size = rng.randint(1, 64)
        src, dst = rng.randrange(len(buf) - size), rng.randrange(start, len(buf) - size)
        buf[dst:dst + size] = buf[src:src + size]
    else:  # delete or insert bytes, shifting everything after
        at = rng.randrange(start, len(buf))
        if rng.random() < 0.5:
            del buf[at:at + rng.randint(1, 16)]
        else:
            buf[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    return bytes(buf)


def _on_alarm(signum, frame):
    raise _Hang()


FUZZ_ITERATIONS = 8000


@pytest.mark.slow
def test_fuzz_mutated_files_give_a_graph_or_a_user_error():
    """Seeded random damage to the fixtures: load either returns a Graph or raises a one-line
    UserError; anything else (another exception, more than 2 s for one file) fails."""
    rng = random.Random(20250214)
    originals = [(name, (MODELS / name).read_bytes()) for name in FUZZ_FIXTURES]
    outcomes = {"graph": 0, "error": 0}
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    started = time.perf_counter()
    try:
        for iteration in range(FUZZ_ITERATIONS):
            name, data = rng.choice(originals)
            mutated = _mutate(rng, data)
            signal.setitimer(signal.ITIMER_REAL, 2.0)
            try:
                graph = graph_from_tflite(mutated, name)
                assert isinstance(graph, Graph) and graph.nodes
                outcomes["graph"] += 1
            except UserError as err:
                assert str(err) and "\n" not in str(err), str(err)
                outcomes["error"] += 1
            except _Hang:
                pytest.fail(f"iteration {iteration} ({name}): took over 2 s")
            except Exception as err:  # noqa: BLE001 - the point of the test
                digest = hashlib.sha256(mutated).hexdigest()[:12]
                pytest.fail(f"iteration {iteration} ({name}, mutated sha {digest}): "
                            f"{type(err).__name__}: {err}")
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, previous)
    elapsed = time.perf_counter() - started
    assert outcomes["error"] > FUZZ_ITERATIONS // 4 and outcomes["graph"] > FUZZ_ITERATIONS // 40, outcomes
    print(f"fuzz: {FUZZ_ITERATIONS} mutations in {elapsed:.1f} s: {outcomes}")


# ---- element types: declared by the ops, asked by the importer -------------------------------------


def test_every_converter_names_the_ops_it_makes_and_every_op_declares_its_element_types():
    from msfcnn.frontends import operators
    from msfcnn.frontends.tflite import CONVERTERS
    from msfcnn.ops import ELEMENTS, op_facts

    assert set(operators.TFLITE) == set(CONVERTERS)
    facts = op_facts()
    assert len(facts) > 40 and all(f.elements and set(f.elements) <= set(ELEMENTS) for f in facts)
    made = {cls for classes in operators.TFLITE.values() for cls in classes}
    assert {f.name for f in facts} >= {cls.__name__ for cls in made}


def test_what_each_element_type_reaches_follows_the_ops_declarations():
    from msfcnn.frontends.tflite import converted

    assert {"CONV_2D", "ADD", "SOFTMAX", "SPLIT", "SHAPE"} <= converted("int16")
    assert not {"LOGISTIC", "MUL", "CONCATENATION"} & converted("int16")  # no int16 kernels
    assert "MUL" in converted("float32") and "MUL" not in converted("uint8")
    assert "TANH" in converted("uint8") and "ELU" not in converted("float32")  # Elu: an int8 table only
    assert {"TANH", "SUB", "PACK", "UNPACK"} <= converted("float32")  # float32 GRUs (libm tanhf)


@pytest.mark.parametrize("fixture,message", [
    ("unsupported_i16_logistic", "(LOGISTIC) has int16 activations: 16x8 models support only ABS, ADD, "),
    ("unsupported_i16_logistic", "(msfcnn's logistic op has no int16 kernel)"),
    ("unsupported_u8_mul", "MUL on uint8 tensors is not supported (uint8 models may use ADD, "),
    ("unsupported_u8_mul", "; msfcnn's mul, mul_broadcast and mul_const ops have no uint8 kernel)"),
])
def test_an_operator_without_a_kernel_for_its_element_type_is_refused_in_one_line(fixture, message):
    with pytest.raises(UserError) as err:
        load_tflite(MODELS / f"{fixture}.tflite")
    assert message in str(err.value) and "\n" not in str(err.value)


def test_the_operator_tables_load_without_the_model_readers():
    """`msfcnn ops` lists them without importing the flatbuffer classes or onnx."""
    code = ("import sys; from msfcnn.frontends import operators; from msfcnn.ops import op_facts; op_facts(); "
            "assert not {'tflite', 'onnx', 'msfcnn.frontends.tflite'} & set(sys.modules), sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_every_format_table_lists_its_converters_and_the_kinds_they_make():
    from msfcnn.frontends import layer_list, onnx, operators, tflite

    converters = {"tflite": tflite.CONVERTERS, "onnx": onnx.CONVERTERS, "layer_list": layer_list.CONVERTERS}
    assert {name: set(table) for name, table in operators.FORMATS.items()} == \
        {name: set(table) for name, table in converters.items()}
    kinds = operators.kinds_by_name(operators.TFLITE)
    assert kinds["ADD"] == ("add", "add_const") and kinds["SHAPE"] == ()
    assert operators.kinds_by_name(operators.LAYER_LIST)["channel_shuffle"] == ("channel_gather",)
