"""Channel slices: TFLite SPLIT, SPLIT_V, SLICE and STRIDED_SLICE along the channels, on the
fixtures of `fixtures/make_split_models.py` (a ShuffleNet-style split and concatenation, a head cut
into parts that are model outputs; int8, uint8, 16x8 and float32), and ONNX Split and Slice
(`onnx_channel_split`, from `fixtures/make_extra_onnx.py`):

- every output of the numpy executor, unfused and under fused plans (least RAM and random ones),
  bit-exact with the LiteRT interpreter (a float32 model within float32 rounding), and with
  TFLite Micro under `--numerics tflm` (not uint8, which TFLite Micro has no kernels for); the
  fused runs touch the predicted arena; the ONNX model within float32 rounding of onnxruntime;
- the generated C on the host bit-exact with numpy (its arena the predicted one);
- slices along H (TFLite, ONNX) and a part quantised differently from its input refused in one line.
"""
from __future__ import annotations

import numpy as np
import pytest

from support import cache
from support.c_build import check_c
from support.cli import run_cli
from support.fused_cases import random_plan
from support.interpreter_cases import (check_c_least_ram_and_random, check_fused_and_c, check_unfused_and_fused,
                                      fuses_an_op_of)
from support.paths import FIXTURES
from msfcnn.executor import run_unfused_outputs
from msfcnn.fused_executor import run_fused
from msfcnn.fusion import solvers
from msfcnn.ops.channel_slice import ChannelSlice
from msfcnn.schedule import schedule_plan
from msfcnn.tensors import random_input

MODELS = FIXTURES / "models"
SPLITS = {name: MODELS / f"{name}.tflite" for name in ("split_shuffle", "split_v_heads", "split_slices", "u8_split",
                                                        "split_i16", "split_float")}
CASES = [(name, "litert") for name in SPLITS] + [(name, "tflm") for name in SPLITS if name != "u8_split"]
SEEDS = range(3)


def test_the_fixtures_import_as_channel_slices():
    """Each TFLite slicing operator becomes channel slices of the right channels (SPLIT: one per
    part, all reading the split tensor), each made just before its first reader (the branch's conv
    before the part that goes straight to the concatenation), in the model's element type."""
    slices = {name: [(n.op.begin, n.op.channels, n.inputs) for n in cache.model(str(path)).nodes
                     if isinstance(n.op, ChannelSlice)] for name, path in SPLITS.items()}
    assert slices == {"split_shuffle": [(4, 4, (0,)), (0, 4, (0,))], "u8_split": [(4, 4, (0,)), (0, 4, (0,))],
                      "split_v_heads": [(3, 5, (0,)), (0, 3, (0,)), (8, 2, (0,))],
                      "split_slices": [(2, 5, (0,)), (3, 5, (0,))], "split_i16": [(0, 5, (0,)), (5, 3, (0,))],
                      "split_float": [(5, 3, (0,)), (0, 5, (0,))]}
    assert cache.model(str(SPLITS["split_i16"])).dtype == "int16"
    assert cache.model(str(SPLITS["split_float"])).dtype == "float32"
    heads = cache.model(str(SPLITS["split_v_heads"]))
    assert [heads.shape_of(t) for t in heads.output_tensors] == [(6, 6, 4), (6, 6, 3), (6, 6, 2)]


def _fuses_a_slice(graph, blocks) -> bool:
    return fuses_an_op_of(graph, blocks, ChannelSlice)


@pytest.mark.parametrize("name, numerics", CASES, ids=[f"{n}-{m}" for n, m in CASES])
def test_every_output_matches_the_interpreter_unfused_and_fused(name, numerics):
    check_unfused_and_fused(SPLITS[name], numerics, ChannelSlice, SEEDS,
                            batch=tuple(SPLITS[n] for n, m in CASES if m == numerics))


@pytest.mark.parametrize("name", SPLITS)
def test_c_on_the_host_is_bit_exact(name):
    check_c_least_ram_and_random(SPLITS[name])


@pytest.mark.parametrize("name, message", [
    ("unsupported_split_rows", "operator 1 (SLICE): slice [[0, 1], [1, 4], [0, 5], [0, 4]] of a tensor of shape "
                               "1x6x5x4: only slices of the channels (the last axis) are supported"),
    ("unsupported_split_requantized", "operator 1 (SPLIT): output tensor 5 is quantised differently from the "
                                      "input: the slice copies values"),
])
def test_refused_slices_are_one_line(capsys, name, message):
    code, _, err = run_cli(capsys, "plan", str(MODELS / f"{name}.tflite"))
    assert code == 2 and message in err and err.count("\n") == 1


ONNX_SPLIT = MODELS / "onnx_channel_split.onnx"


def test_onnx_split_and_slice_match_onnxruntime_and_the_c():
    """PyTorch's torch.split and a channel slice (ONNX Split, Slice) import as channel slices; the
    numpy executor, unfused and fused, within float32 rounding of onnxruntime, and the float32 C
    within verify's tolerance of numpy."""
    import onnxruntime as ort

    graph = cache.model(str(ONNX_SPLIT))
    assert [(n.op.begin, n.op.channels) for n in graph.nodes if isinstance(n.op, ChannelSlice)] == [(3, 5), (0, 3),
                                                                                                    (1, 4)]
    session = ort.InferenceSession(str(ONNX_SPLIT), providers=["CPUExecutionProvider"])
    dag = cache.dag(graph)
    schedule = schedule_plan(graph, solvers.min_peak_ram(dag).blocks)
    for seed in SEEDS:
        x = random_input(graph, seed)
        want = session.run(None, {"input": x})[0]
        for got in (run_unfused_outputs(graph, x)[0], run_fused(schedule, x).outputs[0]):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    check_c(graph, solvers.min_peak_ram(dag).blocks)
    check_c(graph, random_plan(dag, 2), seed=2)


@pytest.mark.parametrize("edit, message", [
    ("split_axis", "node 3 (Split '/Split'): Split along axis 2 is not supported: only along the channels (axis 1)"),
    ("slice_axis", "node 11 (Slice '/Slice'): Slice of axes [2] of a tensor of shape [1, 6, 7, 6]: only slices of the "
                   "channels (axis 1) are supported"),
])
def test_onnx_slices_of_other_axes_are_refused(tmp_path, capsys, edit, message):
    import onnx

    model = onnx.load(str(ONNX_SPLIT))
    nodes = model.graph.node
    if edit == "split_axis":
        split = next(n for n in nodes if n.op_type == "Split")
        next(a for a in split.attribute if a.name == "axis").i = 2
    else:
        axes = next(n for n in nodes if n.op_type == "Slice").input[3]
        constant = next(n for n in nodes if axes in n.output)
        constant.attribute[0].t.CopyFrom(onnx.numpy_helper.from_array(np.array([2], np.int64)))
    path = tmp_path / f"{edit}.onnx"
    onnx.save(model, str(path))
    code, _, err = run_cli(capsys, "plan", str(path))
    assert code == 2 and message in err and err.count("\n") == 1


SHUFFLE_UNIT = {"name": "shuffle_unit", "input": [9, 8, 6], "layers": [
    {"op": "conv2d", "filters": 8, "kernel": 3, "padding": "same", "act": "relu"},
    {"op": "channel_slice", "channels": 3},
    {"op": "channel_slice", "begin": 3, "channels": 5, "from": 0},
    {"op": "depthwise_conv2d", "kernel": 3, "padding": "same"},
    {"op": "conv2d", "filters": 5, "kernel": 1, "act": "relu"},
    {"op": "concat", "from": 1},
    {"op": "channel_slice", "begin": 2, "channels": 6},
    {"op": "conv2d", "filters": 4, "kernel": 3, "stride": 2}]}


def test_layer_list_channel_slices_fused_and_in_c():
    """The layer list's channel_slice (a ShuffleNet unit) with random weights: the fused executor
    equal to the unfused one under the least-RAM plan, which fuses the slices, and the C bit-exact
    under it and a random plan."""
    from msfcnn.frontends.layer_list import graph_from_layer_list
    from msfcnn.frontends.random_weights import with_random_weights

    graph = with_random_weights(graph_from_layer_list(SHUFFLE_UNIT))
    assert [(n.op.begin, n.op.channels, n.inputs) for n in graph.nodes if isinstance(n.op, ChannelSlice)] == [
        (0, 3, (0,)), (3, 5, (0,)), (2, 6, (5,))]
    dag = cache.dag(graph)
    blocks = solvers.min_peak_ram(dag).blocks
    assert _fuses_a_slice(graph, blocks)
    check_fused_and_c(graph, blocks, SEEDS)


@pytest.mark.parametrize("layer, message", [
    ({"op": "channel_slice", "begin": 6, "channels": 3}, "layer 1 (channel_slice): channels [6, 9) of a tensor of "
                                                         "shape [4, 4, 8]: beyond its last axis"),
    ({"op": "channel_slice", "begin": -1, "channels": 3}, "layer 1 (channel_slice): 'begin' must be a non-negative "
                                                          "integer, got -1"),
])
def test_layer_list_bad_slices_are_refused(layer, message):
    from msfcnn.errors import UserError
    from msfcnn.frontends.layer_list import graph_from_layer_list

    with pytest.raises(UserError) as err:
        graph_from_layer_list({"input": [4, 4, 3], "layers": [{"op": "conv2d", "filters": 8, "kernel": 1}, layer]})
    assert str(err.value) == message
