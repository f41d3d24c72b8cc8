"""Channel shuffles: ShuffleNet's RESHAPE (H, W, C) -> (H, W, g, C/g), TRANSPOSE of the last two
axes, RESHAPE back (5-D tensors with the batch), on the fixtures of
`fixtures/make_shuffle_models.py` (a ShuffleNet v2 unit, int8 and float32; two shuffles of 3 and 4
groups; a 16x8 and a uint8 shuffle), imported as one channel gather:

- the gather's index table is the shuffle's permutation;
- every output of the numpy executor, unfused and under fused plans (least RAM and random ones),
  bit-exact with the LiteRT interpreter (a float32 model within float32 rounding) and with TFLite
  Micro under `--numerics tflm` (but uint8); the fused runs touch the predicted arena, and the least-RAM plan
  fuses the gather;
- the generated C on the host bit-exact with numpy (its arena the predicted one);
- a RESHAPE / TRANSPOSE that moves H or W as well, which is no permutation of the channels,
  refused in one line.
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
from msfcnn.fusion import solvers
from msfcnn.ops.channel_gather import ChannelGather

MODELS = FIXTURES / "models"
SHUFFLES = {name: MODELS / f"{name}.tflite" for name in ("shuffle_unit", "shuffle_groups3", "shuffle_float", "shuffle_i16",
                                                          "u8_shuffle")}
# TFLite Micro has no uint8 kernels
CASES = [(name, "litert") for name in SHUFFLES] + [(name, "tflm") for name in SHUFFLES if name != "u8_shuffle"]
SEEDS = range(3)


def _gathers(graph) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    return [(n.op.indices, n.inputs) for n in graph.nodes if isinstance(n.op, ChannelGather)]


def test_a_shuffle_imports_as_one_channel_gather():
    """Each RESHAPE, TRANSPOSE, RESHAPE becomes one gather node (no reshape or transpose node) whose
    output channel k is input channel (k % g) * (C / g) + k // g."""
    unit, groups3 = (cache.model(str(SHUFFLES[name])) for name in ("shuffle_unit", "shuffle_groups3"))
    assert _gathers(unit) == [((0, 4, 1, 5, 2, 6, 3, 7), (4,))]
    assert _gathers(groups3) == [((0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11), (0,)),
                                 ((0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11), (2,))]
    assert _gathers(cache.model(str(SHUFFLES["shuffle_i16"]))) == [((0, 2, 4, 6, 1, 3, 5, 7), (0,))]
    assert cache.model(str(SHUFFLES["shuffle_i16"])).dtype == "int16"
    for graph in (cache.model(str(path)) for path in SHUFFLES.values()):
        assert {n.op.kind for n in graph.nodes} <= {"conv2d", "channel_slice", "concat", "channel_gather",
                                                    "depthwise_conv2d"}


@pytest.mark.parametrize("name, numerics", CASES, ids=[f"{n}-{m}" for n, m in CASES])
def test_every_output_matches_the_interpreter_unfused_and_fused(name, numerics):
    check_unfused_and_fused(SHUFFLES[name], numerics, ChannelGather, SEEDS,
                            batch=tuple(SHUFFLES[n] for n, m in CASES if m == numerics))
    graph = cache.model(str(SHUFFLES[name]))
    assert fuses_an_op_of(graph, solvers.min_peak_ram(cache.dag(graph)).blocks, ChannelGather)


@pytest.mark.parametrize("name", SHUFFLES)
def test_c_on_the_host_is_bit_exact(name):
    check_c_least_ram_and_random(SHUFFLES[name])


def test_a_transpose_of_rows_too_is_refused_in_one_line(capsys):
    code, _, err = run_cli(capsys, "plan", str(MODELS / "unsupported_shuffle_rows.tflite"))
    assert code == 2 and err.count("\n") == 1
    assert ("operator 3 (RESHAPE): tensor 6 (6x6x4x2) is a transposed map that only a MEAN may read (a channel "
            "shuffle's TRANSPOSE may move only the channel axes)") in err


def test_latency_costs_the_gather(capsys):
    """The gather is calibrated (scripts/calibrate_latency.py --cover): no warning of a kernel without costs."""
    code, _, err = run_cli(capsys, "plan", str(SHUFFLES["shuffle_groups3"]), "--target", "cortex-m4")
    assert code == 0
    assert "latency model has no costs" not in err


ONNX_SHUFFLE = MODELS / "onnx_channel_shuffle.onnx"


def test_onnx_channel_shuffle_matches_onnxruntime_and_the_c():
    """PyTorch's channel shuffle (view, transpose, view: ONNX Reshape, Transpose [0, 2, 1, 3, 4],
    Reshape in NCHW) imports as one gather; the numpy executor, unfused and fused, within float32
    rounding of onnxruntime, and the float32 C within verify's tolerance of numpy."""
    import onnxruntime as ort

    from msfcnn.executor import run_unfused_outputs
    from msfcnn.fused_executor import run_fused
    from msfcnn.schedule import schedule_plan
    from msfcnn.tensors import random_input

    graph = cache.model(str(ONNX_SHUFFLE))
    assert _gathers(graph) == [((0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11), (0,))]
    assert [n.op.kind for n in graph.nodes] == ["conv2d", "channel_gather", "conv2d"]
    session = ort.InferenceSession(str(ONNX_SHUFFLE), providers=["CPUExecutionProvider"])
    dag = cache.dag(graph)
    least = solvers.min_peak_ram(dag).blocks
    assert fuses_an_op_of(graph, least, ChannelGather)
    for seed in SEEDS:
        x = random_input(graph, seed)
        want = session.run(None, {"input": x})[0]
        for got in (run_unfused_outputs(graph, x)[0], run_fused(schedule_plan(graph, least), x).outputs[0]):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    check_c(graph, least)
    check_c(graph, random_plan(dag, 2), seed=2)


@pytest.mark.parametrize("perm, message", [
    ([0, 2, 1, 4, 3], "node 4 (Transpose '/Transpose'): Transpose [0, 2, 1, 4, 3] of [1, 3, 4, 6, 5]: only the "
                      "channel axes of a channel shuffle may move (the batch, H and W stay)"),
    (None, "node 4 (Transpose '/Transpose'): Transpose of an activation is supported only in a channel shuffle "
           "(Reshape to (1, g, C/g, H, W), Transpose of the channel axes, Reshape back)"),
])
def test_onnx_transposes_that_are_no_shuffle_are_refused(tmp_path, capsys, perm, message):
    """A Transpose that moves W too, and one of a plain (1, C, H, W) map (the Reshape before it
    removed), are refused in one line."""
    import onnx

    model = onnx.load(str(ONNX_SHUFFLE))
    transpose = next(n for n in model.graph.node if n.op_type == "Transpose")
    if perm is None:
        transpose.input[0] = next(n for n in model.graph.node if n.op_type == "Relu").output[0]
    else:
        next(a for a in transpose.attribute if a.name == "perm").ints[:] = perm
    path = tmp_path / "edited.onnx"
    onnx.save(model, str(path))
    code, _, err = run_cli(capsys, "plan", str(path))
    assert code == 2 and message in err and err.count("\n") == 1


SHUFFLE_V1 = {"name": "shuffle_v1", "input": [8, 8, 6], "layers": [
    {"op": "conv2d", "filters": 12, "kernel": 1, "act": "relu"},
    {"op": "channel_shuffle", "groups": 3},
    {"op": "depthwise_conv2d", "kernel": 3, "padding": "same"},
    {"op": "space_to_depth", "block": 2},
    {"op": "conv2d", "filters": 16, "kernel": 1},
    {"op": "depth_to_space", "block": 2},
    {"op": "conv2d", "filters": 8, "kernel": 3, "padding": "same"}]}


def test_layer_list_channel_shuffle_and_block_moves_fused_and_in_c():
    """The layer list's channel_shuffle, space_to_depth and depth_to_space with random weights: the
    fused executor equal to the unfused one under the least-RAM plan, which fuses the first two,
    and the C bit-exact under it and a random plan."""
    from msfcnn.frontends.layer_list import graph_from_layer_list
    from msfcnn.frontends.random_weights import with_random_weights
    from msfcnn.ops.space_to_depth import SpaceToDepth

    graph = with_random_weights(graph_from_layer_list(SHUFFLE_V1))
    assert _gathers(graph) == [((0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11), (0,))]
    assert [graph.shape_of(t) for t in (3, 5)] == [(4, 4, 48), (8, 8, 4)]
    dag = cache.dag(graph)
    blocks = solvers.min_peak_ram(dag).blocks
    assert fuses_an_op_of(graph, blocks, ChannelGather) and fuses_an_op_of(graph, blocks, SpaceToDepth)
    check_fused_and_c(graph, blocks, SEEDS)


@pytest.mark.parametrize("layer, message", [
    ({"op": "channel_shuffle", "groups": 3}, "layer 1 (channel_shuffle): 8 channels do not split into 3 groups"),
    ({"op": "space_to_depth", "block": 3}, "layer 1 (space_to_depth): space_to_depth with block 3 of a 4x4 map: H "
                                           "and W must be multiples of it"),
    ({"op": "depth_to_space", "block": 3}, "layer 1 (depth_to_space): depth_to_space with block 3 of 8 channels: C "
                                           "must be a multiple of 9"),
])
def test_layer_list_bad_shuffles_are_refused(layer, message):
    from msfcnn.errors import UserError
    from msfcnn.frontends.layer_list import graph_from_layer_list

    with pytest.raises(UserError) as err:
        graph_from_layer_list({"input": [4, 4, 3], "layers": [{"op": "conv2d", "filters": 8, "kernel": 1}, layer]})
    assert str(err.value) == message
