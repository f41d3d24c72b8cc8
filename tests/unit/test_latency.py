"""The latency model's counts: hand-checked loop counts, every kernel call of a block enumerated
exactly as the fused executor makes them, and the solvers' time objective against brute force."""

from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.brute_force import all_paths, peak
from support.paths import FIXTURES
from support.fused_cases import networks, op_networks, random_plan
from msfcnn import fused_executor, latency, pipeline
from msfcnn.cost import exact
from msfcnn.errors import UserError
from msfcnn.frontends.layer_list import graph_from_layer_list
from msfcnn.frontends.random_weights import with_random_weights
from msfcnn.fusion import solvers
from msfcnn.fusion.dag import Block, FusionDAG
from msfcnn.latency.features import BlockCounter, _Profile
from msfcnn.ops import CCall
from msfcnn.planner import Planner
from msfcnn.schedule import loop_kinds, schedule_plan
from msfcnn.schedule.lowered import Chains, Channels, Stream, Whole


def test_window_profile_counts_in_bounds_taps():
    # 3 taps, stride 1, pad 1 over 4 positions: the border windows lose one tap each.
    profile = _Profile.of(3, 1, 1, 4, 4)
    assert list(profile.inside) == [2, 3, 3, 2]
    assert profile.sums(0, 4) == (10, 2) and profile.sums(1, 3) == (6, 2)
    # 3 taps, stride 2, SAME on 5 inputs (pads 1 and 1): outputs 0..2 read [-1,1], [1,3], [3,5]
    assert list(_Profile.of(3, 2, 1, 5, 3).inside) == [2, 3, 2]


def _graph(layers, shape):
    return with_random_weights(graph_from_layer_list({"input": list(shape), "layers": layers}))


def test_dsp_convolution_counts_by_hand():
    """conv_pairs on three pixels of a 1x1 convolution, 8 inputs to 18 outputs: one pair and one odd
    pixel; blocks of 16 and 2 channels; one chunk of 8 values, two quads, no tail."""
    graph = _graph([{"op": "conv2d", "filters": 18, "kernel": 1}], (1, 3, 8))
    f = BlockCounter(graph, dsp=True).call(0, 0, 1, 0, 3)
    assert f["conv_direct:pair"] == 1 and f["conv_direct:single"] == 1
    assert f["conv_direct:pair_channels"] == 8 + 1  # channel pairs of the two blocks
    assert f["conv_direct:pair_quad2"] == 9  # each runs two quads in one iteration
    assert f["conv_direct:pair_quad1"] == 0 and f["conv_direct:pair_tail"] == 0
    assert f["conv_direct:single_four"] == 4 and f["conv_direct:single_rest"] == 2
    assert f["conv_direct:lane_quad"] == 3 * 2  # every pixel's two quads, extended once (one chunk)
    requantised = {name.split(":")[1]: n for name, n in f.items() if ":requant_" in name}
    assert sorted(requantised.values()) == [18, 18] and f["conv_direct:output"] == 3 * 18
    assert {name.rsplit("_", 1)[0] if name.endswith("full") else name for name in requantised} <= {
        "requant_pair_ruy", "requant_single_ruy", "requant_pair_ruy", "requant_single_ruy",
        "requant_pair_general", "requant_single_general"}


def test_a_one_row_window_counts_its_line_pixels():
    """A 1 x k convolution (Conv1D along W) counts its calls and pixels apart (line_*, fitted by
    calibrate_latency.py --lines), the paired DSP loop its odd pixel too; a k x k or k x 1 window
    counts none, so the predictions of models without 1 x k windows do not move."""
    graph = _graph([{"op": "conv2d", "filters": 8, "kernel": [1, 3], "padding": "same"},
                    {"op": "conv2d", "filters": 8, "kernel": [1, 3], "dilation": [1, 2], "padding": "same"},
                    {"op": "conv2d", "filters": 8, "kernel": [3, 1], "padding": "same"},
                    {"op": "conv2d", "filters": 8, "kernel": 3, "padding": "same"}], (1, 5, 4))
    dsp, portable = BlockCounter(graph, dsp=True), BlockCounter(graph, dsp=False)
    # the DSP gather takes a patch in one piece where the 1 x 3 window lies wholly inside the 5
    # columns (SAME pads one column either side): the window of column c covers c - 1 .. c + 1
    whole = sum(1 for c in range(5) if c - 1 >= 0 and c + 1 < 5)
    assert {k: v for k, v in dsp.call(0, 0, 1, 0, 5).items() if ":line_" in k} == {
        "conv_gather:line_call": 1, "conv_gather:line_pixel": 5, "conv_gather:line_single": 1,
        "conv_gather:line_gather_fast": whole}
    assert {k: v for k, v in dsp.call(1, 0, 1, 1, 3).items() if ":line_" in k} == {
        "conv_dilated:line_call": 1, "conv_dilated:line_pixel": 2}
    assert {k: v for k, v in portable.call(0, 0, 1, 0, 4).items() if ":line_" in k} == {
        "conv:line_call": 1, "conv:line_pixel": 4}
    for counter in (dsp, portable):
        assert not any(":line_" in k for t in (2, 3) for k in counter.call(t, 0, 1, 0, 5))


def test_a_dequantize_counts_its_values_of_a_zero_point_not_0():
    """DEQUANTIZE's values count as output_offset where its input's zero point is not 0: the
    conversion then multiplies and subtracts a non-zero float for it, soft float's long path
    (fi_float_head's island starts at zero point 4); with the zero point 0 they do not."""
    from msfcnn.ir.graph import Quant

    graph = pipeline.load(str(FIXTURES / "models" / "fi_float_head.tflite"), weights=True)
    t = next(t for t, node in enumerate(graph.nodes) if node.op.kind == "dequantize")
    h, w, c = graph.shape_of(t)
    u = graph.nodes[t].inputs[0]
    assert graph.quant_of(u).zero_point == 4
    f = BlockCounter(graph, dsp=False).call(t, 0, h, 0, w)
    assert f["dequantize:output_offset"] == f["dequantize:output"] == h * w * c
    graph.nodes[u] = replace(graph.nodes[u], quant=Quant(graph.quant_of(u).scale, 0))
    assert BlockCounter(graph, dsp=False).call(t, 0, h, 0, w)["dequantize:output_offset"] == 0


def test_a_float_convolution_counts_the_products_of_an_input_without_zeros():
    """value_dense: a float convolution's products of an input that holds no zeros (the network's
    input, a convolution's without a ReLU), not of one a MUL of a constant or a depthwise layer
    passed a ReLU's zeros on to, which counts as value_signed only (soft float multiplies and adds
    a 0 by a short path). An int8 convolution never counts them."""
    from msfcnn.latency import calibration

    layers = [{"op": "conv2d", "filters": 4, "kernel": 1},
              {"op": "conv2d", "filters": 4, "kernel": 1, "act": "relu"},
              {"op": "mul", "const": "scalar"},
              {"op": "conv2d", "filters": 3, "kernel": 1},
              {"op": "conv2d", "filters": 2, "kernel": 1}]
    doc = {"name": "dense", "input": [1, 5, 3], "layers": layers}
    for dtype, dense, signed in (("float32", [5 * 3 * 4, 5 * 4 * 4, 0, 0, 5 * 3 * 2], [60, 80, 0, 60, 30]),
                                 ("int8", [0] * 5, [0] * 5)):
        graph = calibration.graph_of(doc, dtype)
        counter = BlockCounter(graph, dsp=False)
        counts = [counter.call(t, 0, 1, 0, 5) for t in range(len(layers))]
        assert [sum(v for k, v in f.items() if k.endswith(":value_dense")) for f in counts] == dense
        assert [sum(v for k, v in f.items() if k.endswith(":value_signed")) for f in counts] == signed


def test_a_float_convolution_counts_the_products_of_an_input_no_relu_made():
    """A float convolution's multiply-accumulates count as value_signed too unless a ReLU (or
    ReLU6) made its input, through a PAD or a max pool: about half of a rectified map is 0, whose
    soft-float products take the library's short path (calibrate_latency.py --remeasure conv_f32
    fits the difference). An int8 convolution never counts them."""
    from msfcnn.latency import calibration

    layers = [{"op": "conv2d", "filters": 4, "kernel": [1, 3], "padding": "same", "act": "relu"},
              {"op": "pad", "pads": [0, 2, 0, 0]},
              {"op": "conv2d", "filters": 4, "kernel": [1, 3], "padding": "valid"},
              {"op": "conv2d", "filters": 4, "kernel": 1, "act": "relu6"},
              {"op": "max_pool2d", "kernel": [1, 2], "padding": "same"},
              {"op": "conv2d", "filters": 2, "kernel": 1}]
    doc = {"name": "rectified", "input": [1, 6, 3], "layers": layers}
    # (the first window's edge pixels have 2 of 3 taps in bounds: 16 taps of 3 values, 4 filters)
    for dtype, signed in (("float32", [16 * 3 * 4, 0, 0, 6 * 4 * 4, 0, 0]), ("int8", [0] * 6)):
        graph = calibration.graph_of(doc, dtype)
        counter = BlockCounter(graph, dsp=False)
        counts = [counter.call(t, 0, 1, 0, graph.shape_of(t)[1]) for t in range(len(layers))]
        assert [sum(v for k, v in f.items() if k.endswith(":value_signed")) for f in counts] == signed


def test_a_float_element_wise_kernel_counts_the_values_of_an_input_with_negative_values():
    """Tanh, LOGISTIC, ADD and MUL in float32 count `output_signed` (Tanh: `output_tanh_signed`)
    for each value they compute from an input that has negative values, and none from a map a
    ReLU made, through Tanh, Elu and LeakyRelu (which keep 0 at 0 and every sign): soft float's
    exp, add and multiply of a 0 take the library's short paths. Checked against the values the
    numpy executor computes for each op's first input."""
    from msfcnn.executor import initial_states, input_tensor, internal_inputs, with_states
    from msfcnn.ir import Graph
    from msfcnn.latency import calibration
    from msfcnn.ops.float_unary import FloatUnary
    from msfcnn.tensors import random_input

    def with_float_tanh(doc):  # (a layer list's TANH is the table op; ONNX's and Keras' float one is this)
        graph = graph_from_layer_list(doc)
        out = Graph(graph.name, graph.input_shape)
        for node in graph.nodes:
            out.append(FloatUnary("tanh") if node.op.kind == "tanh" else node.op, node.inputs, node.consts)
        return out

    layers = [{"op": "conv2d", "filters": 4, "kernel": 1, "act": "relu"},
              {"op": "tanh"},
              {"op": "logistic"},
              {"op": "conv2d", "filters": 4, "kernel": 1},
              {"op": "tanh"},
              {"op": "mul", "from": 2},
              {"op": "add", "from": 1},
              {"op": "logistic"}]
    doc = {"name": "signs", "input": [1, 4, 3], "layers": layers}
    graph = calibration.graph_of(doc, "float32", with_float_tanh)
    states = initial_states(graph)
    values = {input_tensor(0): internal_inputs(graph, random_input(graph, 0))[0][0]}
    counter = BlockCounter(graph, dsp=False)
    for t, node in enumerate(graph.nodes):
        values[t] = node.op.reference([values[u] for u in node.inputs], with_states(graph, t, states))
        if node.op.kind == "conv2d":
            continue
        f = counter.call(t, 0, 1, 0, 4)
        signed = sum(v for k, v in f.items() if k.endswith("_signed"))
        assert signed == (values[t].size if (values[node.inputs[0]] < 0).any() else 0), (t, node.op.kind)
    kernels = [t for t, node in enumerate(graph.nodes) if node.op.kind != "conv2d"]
    assert [t for t in kernels if any(k.endswith("_signed") for k in counter.call(t, 0, 1, 0, 4))] == [4, 5, 6, 7]


def test_a_float_logistic_counts_the_values_no_relu_made():
    """A float LOGISTIC counts its outputs as output_signed too unless a ReLU made its input: soft
    float's exp of a 0 takes the short path (esp32c3 measured about 1,300 to 1,400 instructions a
    value on rectified maps, 2,000 on signed ones). int8's table lookup never counts them."""
    from msfcnn.latency import calibration

    doc = {"name": "logistic", "input": [2, 3, 4],
           "layers": [{"op": "conv2d", "filters": 4, "kernel": 1, "act": "relu"}, {"op": "logistic"},
                      {"op": "conv2d", "filters": 5, "kernel": 1}, {"op": "logistic"}]}
    for dtype, signed in (("float32", [0, 5 * 2]), ("int8", [0, 0])):
        counter = BlockCounter(calibration.graph_of(doc, dtype), dsp=False)
        counts = [counter.call(t, 0, 1, 0, 2) for t in (1, 3)]  # a row of 2 pixels
        assert [f.get(f"logistic{'_f32' if dtype == 'float32' else ''}:output_signed", 0) for f in counts] == signed
        assert [f[k] for f in counts for k in f if k.endswith(":output")] == [4 * 2, 5 * 2]


def test_litert_adds_count_the_values_of_each_code():
    """LiteRT's int8 ADDs run three codes of different cost per value (add_litert.c,
    add_const_litert.c): the vector code, add.c's scalar code (`output_scalar`: a map's last
    size % 16 values, a constant per channel's channels past C // 16 * 16, one constant value's
    last size % 8 values) and one constant value's broadcast vector code (`output_broadcast`).
    A 2 x 3 x 5 map: 30 values, 6 pixels of 5 channels."""
    from msfcnn.latency import calibration
    from msfcnn.ops.add_const_litert import AddConstLitert, AddConstLitertTail
    from msfcnn.ops.add_litert import AddLitertTail

    doc = {"name": "adds", "input": [2, 3, 3],
           "layers": [{"op": "conv2d", "filters": 5, "kernel": 1}, {"op": "conv2d", "filters": 5, "kernel": 1},
                      {"op": "add", "from": 0}, {"op": "add", "const": "channel"}, {"op": "add", "const": "scalar"}]}
    graph = calibration.graph_of(doc, "int8")
    for t, litert in ((2, AddLitertTail), (3, AddConstLitert), (4, AddConstLitertTail)):
        node = graph.nodes[t]
        extra = () if t == 2 else (node.op.operand_scale, node.op.operand_zero_point)
        graph.nodes[t] = replace(node, op=litert(*extra, node.op.activation))
    counter = BlockCounter(graph, dsp=False)
    counts = [counter.call(t, 0, 2, 0, 3) for t in (2, 3, 4)]
    assert [(f[f"{family}:output"], f[f"{family}:output_scalar"], f[f"{family}:output_broadcast"])
            for f, family in zip(counts, ("add_litert", "add_const_litert", "add_const_litert"))] == [
        (30, 30 - 16, 0), (30, 30, 0), (30, 30 - 24, 24)]


def test_a_float_convolution_counts_its_accumulate_a_channel_at_a_time():
    """accumulate_f32 sums one output channel at a time over every run (kernels/conv2d.c): a run
    per channel and a multiply-accumulate per value and channel, where int8's loop takes four
    channels at a time (quads, then single channels). 1 x 3 VALID, 3 inputs, 6 outputs, 4 pixels:
    4 runs (a kernel row each), 4 x 6 run passes, 4 x 3 x 3 x 6 products."""
    from msfcnn.latency import calibration

    doc = {"name": "six", "input": [1, 6, 3], "layers": [{"op": "conv2d", "filters": 6, "kernel": [1, 3]}]}
    f = BlockCounter(calibration.graph_of(doc, "float32"), dsp=True).call(0, 0, 1, 0, 4)
    assert (f["conv_f32:run"], f["conv_f32:run_channel"], f["conv_f32:mac"]) == (4, 24, 216)
    assert not any(k.split(":")[1] in ("run_channels", "value_quad", "value_single") for k in f)
    g = BlockCounter(calibration.graph_of(doc, "int8"), dsp=False).call(0, 0, 1, 0, 4)
    assert (g["conv:run_channels"], g["conv:value_quad"], g["conv:value_single"]) == (4 * 3, 36, 72)
    assert not any(k.split(":")[1] in ("run_channel", "mac") for k in g)


def test_a_window_that_wraps_a_column_ring_counts_two_runs():
    """In a column stream the input keeps `ring` columns, column c at c % ring; window.c cuts a
    kernel row whose taps wrap the ring into two runs. 1 x 3 VALID on 8 columns, ring 3: the
    windows of outputs 1, 2, 4 and 5 start at columns 1, 2, 4, 5 and wrap (those of 0 and 3 do not):
    6 kernel rows, 10 runs. Without a ring, 6; int8's portable loop counts a row's run as fitted
    (a run a row) and the 4 wrapped rows' second runs apart (ring_run), each read by a pass of
    four channels (ring_run_channels)."""
    from msfcnn.latency import calibration

    doc = {"name": "ring", "input": [1, 8, 2], "layers": [{"op": "conv2d", "filters": 4, "kernel": [1, 3]}]}
    floats = BlockCounter(calibration.graph_of(doc, "float32"), dsp=False)
    assert [floats.call(0, 0, 1, 0, 6, ring)["conv_f32:run"] for ring in (0, 3)] == [6, 10]
    assert floats.call(0, 0, 1, 0, 6, 3)["conv_f32:run_channel"] == 10 * 4
    ints = BlockCounter(calibration.graph_of(doc, "int8"), dsp=False)
    assert ints.call(0, 0, 1, 0, 6, 3)["conv:run"] == 6
    assert [ints.call(0, 0, 1, 0, 6, ring)["conv:ring_run"] for ring in (0, 3)] == [0, 4]
    assert ints.call(0, 0, 1, 0, 6, 3)["conv:ring_run_channels"] == 4


def test_a_float_constant_operand_counts_its_activated_values_apart():
    """ADD, SUB and MUL of a constant in float32 count the values a fused activation is applied to
    as output_activated too (msf_apply_activation_f32's compare, fitted by calibrate_latency.py
    --vectors); without an activation, or in int8 (whose clamp every value takes), none."""
    from msfcnn.latency import calibration

    layers = [{"op": "add", "const": "scalar", "act": "relu"}, {"op": "add", "const": "channel"},
              {"op": "sub", "const": "scalar", "reversed": True, "act": "relu6"}, {"op": "mul", "const": "scalar"}]
    doc = {"name": "activated", "input": [1, 3, 4], "layers": layers}
    for dtype, activated in (("float32", [12, 0, 12, 0]), ("int8", [0, 0, 0, 0])):
        counter = BlockCounter(calibration.graph_of(doc, dtype), dsp=True)
        counts = [counter.call(t, 0, 1, 0, 3) for t in range(len(layers))]
        assert [sum(v for k, v in f.items() if k.endswith(":output_activated")) for f in counts] == activated
        assert [sum(v for k, v in f.items() if k.endswith(":output")) for f in counts] == [12] * 4


def test_tflite_micro_rounding_of_a_general_output_stage_is_counted_apart():
    """A dense layer's general output stage under TFLite Micro's numerics counts its values as
    output_general_double too (its two roundings); under LiteRT's it counts none, so no LiteRT
    model's prediction moves."""
    path = str(FIXTURES / "sequence" / "svdf_keyword.tflite")  # two dense layers, of 16 and 4 units
    for numerics in ("tflm", "litert"):
        graph = pipeline.load(path, numerics=numerics)
        counter = BlockCounter(graph, dsp=True)
        dense = [t for t in range(len(graph)) if counter.op(t).family == "dense"]
        counts = [counter._count_call(t, 0, 1, 0, 1) for t in dense]
        assert [f["dense:output_general"] for f in counts] == [16, 4]
        assert [f["dense:output_general_double"] for f in counts] == ([16, 4] if numerics == "tflm" else [0, 0])


def test_helium_convolution_counts_by_hand():
    """conv_mve on three pixels of a 1x1 convolution, 40 inputs to 70 outputs: blocks of 64 and 6
    channels; a patch of 40 values, so four channels at a time over two whole vectors and a
    predicated third (16 + 2 fours), then one by one (2 channels, three vectors each)."""
    graph = _graph([{"op": "conv2d", "filters": 70, "kernel": 1}], (1, 3, 40))
    f = BlockCounter(graph, dsp=True, mve=True).call(0, 0, 1, 0, 3)
    assert f["conv_mve_direct:block"] == 2 and f["conv_mve_direct:pixel_block"] == 3 * 2
    assert f["conv_mve_direct:weight_vector"] == 70 * 2 and f["conv_mve_direct:weight_tail"] == 70
    assert f["conv_mve_direct:stage_quad"] == 16 + 2
    assert f["conv_mve_direct:four"] == 3 * 17 and f["conv_mve_direct:four_vector"] == 3 * 17 * 2
    assert f["conv_mve_direct:four_tail"] == 3 * 17
    assert f["conv_mve_direct:rest_channel"] == 3 * 2 and f["conv_mve_direct:rest_vector"] == 3 * 2 * 3
    assert not any(name.startswith(("conv_direct", "conv_gather")) for name in f)
    # a 3x3 window over 3 channels (27 values: two vectors per channel), its patch gathered per block
    graph = _graph([{"op": "conv2d", "filters": 8, "kernel": 3, "padding": "same"}], (4, 4, 3))
    f = BlockCounter(graph, dsp=True, mve=True).call(0, 0, 4, 0, 4)
    assert f["conv_mve_gather:two_channel"] == 16 * 8
    assert f["conv_mve_gather:gather_fast_row"] == 4 * 3 and f["conv_mve_gather:gather_slow"] == 12
    # a gathered patch of more than MSF_MVE_PATCH values runs the DSP loop
    graph = _graph([{"op": "conv2d", "filters": 8, "kernel": 3, "padding": "same"}], (4, 4, 64))
    f = BlockCounter(graph, dsp=True, mve=True).call(0, 0, 4, 0, 4)
    assert f["conv_mve_gather:call"] == 1 and f["conv_gather:pair"] == 8 and "conv_mve_gather:pixel_block" not in f


def test_helium_depthwise_counts_by_hand():
    """depthwise_mve on a 3x3 SAME window over 4 x 4 pixels of 100 channels: blocks of 96 and 4
    channels (six and one vectors of sixteen, twelve and one of eight); 100 in-bounds taps of which
    the 12 clipped pixels hold 64; a 7x7 multiplier 2 window takes the DSP loop instead."""
    graph = _graph([{"op": "depthwise_conv2d", "kernel": 3, "padding": "same"}], (4, 4, 100))
    f = BlockCounter(graph, dsp=True, mve=True).call(0, 0, 4, 0, 4)
    assert f["depthwise_mve:block"] == 2 and f["depthwise_mve:constant_eight"] == 13
    assert f["depthwise_mve:pixel_block"] == 32 and f["depthwise_mve:tap_block"] == 100 * 2
    assert f["depthwise_mve:clipped_tap_block"] == 64 * 2 and f["depthwise_mve:sixteen"] == 16 * 7
    assert f["depthwise_mve:tap_sixteen"] == 100 * 7 and f["depthwise_mve:output_eight"] == 16 * 13
    graph = _graph([{"op": "depthwise_conv2d", "kernel": 7, "padding": "same", "depth_multiplier": 2}], (8, 8, 4))
    assert BlockCounter(graph, dsp=True, mve=True).op(0).family == "depthwise_multiplier"


def _executor_calls(schedule, monkeypatch) -> list[tuple]:
    """(op, r0, r1, c0, c1) of every region the fused executor computes, in order."""
    calls = []
    region = fused_executor._Stream.compute_region
    whole = fused_executor._BlockRunner.whole

    def record_region(self, t, rows, cols):
        calls.append((t, *rows, *cols))
        return region(self, t, rows, cols)

    def record_whole(self, block, scratch):
        shape = self.graph.shape_of(block.first)
        calls.append((block.first, 0, shape[0], 0, shape[1]) if len(shape) == 3 else (block.first, 0, 1, 0, 1))
        return whole(self, block, scratch)

    monkeypatch.setattr(fused_executor._Stream, "compute_region", record_region)
    monkeypatch.setitem(loop_kinds.handlers(Whole), loop_kinds.WALKER, record_whole)
    fused_executor.run_fused(schedule, np.zeros(schedule.graph.input_shape, np.int8))
    runs = len(fused_executor.SENTINELS)  # the executor runs the schedule once per sentinel byte
    assert calls[:len(calls) // runs] * runs == calls
    return calls[:len(calls) // runs]


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.one_of(networks(), op_networks()), st.integers(0, 10_000), st.booleans())
def test_block_counts_are_the_executors_kernel_calls(monkeypatch, doc, seed, dsp):
    """The kernel calls the counter enumerates from a lowered block are the ones the fused executor
    (which the generated C follows loop for loop) makes: the same regions of the same ops, so the
    same counts, for every block of a random plan of a random network."""
    try:
        graph = with_random_weights(graph_from_layer_list(doc))
    except UserError:
        return
    schedule = schedule_plan(graph, random_plan(exact.build_dag(graph), seed))
    if any(isinstance(b.loops, Channels) for b in schedule.blocks):
        return  # the in-place channel kernel is one call of its own (counted apart)
    counter = BlockCounter(graph, dsp)
    region_ops = [t for t in range(len(graph)) if graph.nodes[t].op.c_call is CCall.REGION]
    families = {counter.op(t).family for t in region_ops}
    # a call in a column stream reads its input from that stream's column ring
    ring = {t: counter.op(t).ring_of(b) if isinstance(b.loops, Stream) and b.loops.axis == 1 else 0
            for b in schedule.blocks for t in range(b.first, b.last + 1)}
    # a chains block's walker computes rows where the C makes pixels: test_chains counts those by hand
    chained = {t for b in schedule.blocks if isinstance(b.loops, Chains) for t in range(b.first, b.last + 1)}
    expected = Counter()
    with monkeypatch.context() as patch:
        for t, *region in _executor_calls(schedule, patch):
            if t in region_ops and t not in chained:
                expected.update(counter.call(t, *region, ring[t]))
    counted = Counter()
    for block in schedule.blocks:
        if not isinstance(block.loops, Chains):
            counted.update(counter.block(block))
    keep = lambda f: Counter({k: v for k, v in f.items() if k.split(":")[0] in families and v})  # noqa: E731
    assert keep(counted) == keep(expected)


@st.composite
def timed_dags(draw):
    """Small multigraphs whose blocks weigh MACs and, independently, instructions."""
    n = draw(st.integers(1, 6))
    blocks = []
    for first in range(n):
        for last in range(first, n):
            for _ in range(draw(st.integers(0, 2))):
                blocks.append(Block(first, last, "single" if first == last else "hcache", draw(st.integers(1, 40)),
                                    draw(st.integers(1, 40)), instructions=draw(st.integers(1, 60))))
    return FusionDAG(n, tuple(blocks))


def _time(path) -> int:
    return sum(b.instructions for b in path)


@settings(max_examples=300, deadline=None)
@given(timed_dags(), st.lists(st.integers(0, 300), max_size=3), st.lists(st.integers(0, 50), max_size=3))
def test_solvers_weigh_instructions_exactly(dag, time_caps, ram_caps):
    """Under weight="instructions" every solver answers for the instructions, not the MACs."""
    paths = all_paths(dag)
    if not paths:
        assert solvers.min_macs(dag, "instructions") is None
        return
    assert solvers.min_macs(dag, "instructions").total("instructions") == min(_time(p) for p in paths)
    for cap in time_caps:
        ok = [p for p in paths if _time(p) <= cap]
        got = solvers.p1(dag, cap, "instructions")
        assert (got is None) == (not ok)
        if ok:
            assert got.peak_ram == min(peak(p) for p in ok) and got.total("instructions") <= cap
    for cap in ram_caps:
        ok = [p for p in paths if peak(p) < cap]
        got = solvers.p2(dag, cap, "instructions")
        assert (got is None) == (not ok)
        if ok:
            assert got.total("instructions") == min(_time(p) for p in ok)
    points = {(peak(p), _time(p)) for p in paths}
    front = {(r, t) for r, t in points if not any(r2 <= r and t2 <= t and (r2, t2) != (r, t) for r2, t2 in points)}
    assert {(p.peak_ram, p.total("instructions")) for p in solvers.pareto_front(dag, "instructions")} == front


def test_min_latency_plans_against_brute_force():
    """On a small network with a target's latency model: the min-latency plan under each RAM cap
    is the fastest predicted complete path under it, and the (RAM, time) front is every
    non-dominated path (brute force over the DAG's paths)."""
    graph = _graph([{"op": "conv2d", "filters": 8, "kernel": 3, "stride": 2, "padding": "same"},
                    {"op": "depthwise_conv2d", "kernel": 3, "padding": "same"},
                    {"op": "conv2d", "filters": 12, "kernel": 1},
                    {"op": "max_pool2d", "kernel": 2, "stride": 2}], (16, 16, 3))
    planner = Planner(graph, "exact", latency=latency.load("cortex-m4"))
    paths = all_paths(planner.dag)
    for cap in sorted({peak(p) for p in paths}):
        plan = planner.solve(objective="min-latency", max_ram=cap)
        best = min(_time(p) for p in paths if peak(p) <= cap)
        assert sum(b.instructions for b in plan.blocks) == best and plan.peak_ram_bytes <= cap
    points = {(peak(p), _time(p)) for p in paths}
    front = {(r, t) for r, t in points if not any(r2 <= r and t2 <= t and (r2, t2) != (r, t) for r2, t2 in points)}
    got = {(p.peak_ram_bytes, sum(b.instructions for b in p.blocks)) for p in planner.pareto(weight="instructions")}
    assert got == front


def test_latency_caps_and_errors():
    graph = _graph([{"op": "conv2d", "filters": 8, "kernel": 3, "padding": "same"},
                    {"op": "depthwise_conv2d", "kernel": 3, "padding": "same"}], (12, 12, 3))
    planner = Planner(graph, "exact", latency=latency.load("cortex-m4"))
    fastest = planner.solve(objective="min-latency")
    cap = sum(b.instructions for b in fastest.blocks)
    assert sum(b.instructions for b in planner.solve(max_latency=cap).blocks) <= cap
    with pytest.raises(UserError, match=f"the fewest reachable is {cap}"):
        planner.solve(max_latency=cap - 1)
    with pytest.raises(UserError, match="need a target"):
        Planner(graph, "exact").solve(objective="min-latency")
    with pytest.raises(UserError, match="without --max-overhead"):
        planner.solve(max_latency=cap, max_overhead=1.2)


def test_every_calibrated_target_loads():
    """A stored model per target the issue names, fitted on enough blocks, with non-negative costs.
    (Whether they still predict the kernels as they are is checked on the boards themselves:
    tests/targets/test_latency_targets.py.)"""
    from test_latency_coverage import MAIN_FIT_ONLY
    targets = latency.calibrated_targets()
    assert {"cortex-m4", "cortex-m7", "fe310", "esp32c3"} <= set(targets)
    for target in targets:
        model = latency.load(target)
        assert model.target == target
        assert model.calibration["samples"] > 10 * model.calibration["features"]
        # every cost is positive but a zero product's saving (soft float's short path, pinned from
        # a QEMU pair): there the price of a product on a 0 must stay positive
        c = model.coefficients
        assert all(v >= 0 for k, v in c.items() if not k.endswith(":value_dense_zero"))
        for name in (k for k in c if k.endswith(":value_dense_zero")):
            family = name.split(":")[0]
            assert c[f"{family}:mac"] + c[f"{family}:value_dense"] + c[name] > 0
        # both element types calibrated (on DSP cores only int8 CONV_2D has loops of its own); int8
        # only on a target whose calibration so far fitted the main int8 networks only
        float32 = set() if target in MAIN_FIT_ONLY else {"conv_1x1_f32:call"}
        pointwise = "conv_mve_direct" if model.mve else "conv_direct" if model.dsp else "conv_1x1"
        assert {f"{pointwise}:call", *float32} <= set(model.coefficients)


def test_staleness_follows_the_calibrated_sources(monkeypatch):
    """A calibration vouches for the kernel sources of the families it ran and for the shared
    ones: changing one of those makes the model stale (and names it); adding a kernel, declaring
    it in the header, or changing a kernel the calibration never ran does not."""
    from msfcnn.latency import model as latency_model

    fitted = latency.load("cortex-m4")
    assert not fitted.stale and "conv2d.c" in fitted.kernel_digests
    # a kernel source whose families that calibration never ran: none once every family has coefficients
    from msfcnn.latency.model import KERNEL_SOURCE_FAMILIES
    fitted = replace(fitted, coefficients={k: v for k, v in fitted.coefficients.items() if not k.startswith("resize_nearest")},
                     kernel_digests=latency_model.calibrated_sources(
                         {k: v for k, v in fitted.coefficients.items() if not k.startswith("resize_nearest")}))
    assert "resize_nearest.c" not in fitted.kernel_digests and "resize_nearest.c" in KERNEL_SOURCE_FAMILIES
    now = latency_model.kernel_digests()
    for changed, stale in (("conv2d.c", ["conv2d.c"]), ("numerics.c", ["numerics.c"]), ("resize_nearest.c", []),
                           ("new_kernel.c", [])):
        monkeypatch.setattr(latency_model, "kernel_digests", lambda c=changed: {**now, c: "0" * 16})
        assert fitted.stale_sources == stale
    header = "#define A 1\nvoid msf_x(int);\nstatic inline int f(int v)\n{\n    return v;\n}\nint y;\n"
    code = latency_model._inline_code(header)
    assert code == latency_model._inline_code(header.replace("void msf_x(int);", "void msf_x(int);\nvoid msf_z(void);"))
    assert code != latency_model._inline_code(header.replace("return v;", "return v + 1;"))


def test_extending_a_fit_keeps_its_coefficients():
    """A fit on top of fixed coefficients (scripts/calibrate_latency.py --ops) leaves them as they
    are and recovers the new counts' costs from what they leave unexplained: blocks of a known
    kernel (3 per call, 2 per pixel) and of a new one (5 per call, 7 per output value), by hand."""
    from msfcnn.latency.calibration import Sample, fit

    fixed = latency.LatencyModel("cortex-m4", True, {"conv:call": 3.0, "conv:pixel": 2.0}, {"conv2d.c": "0" * 16})
    samples = [Sample(Counter({"conv:call": 1, "conv:pixel": p, "logistic:call": c, "logistic:output": o}),
                      3 + 2 * p + 5 * c + 7 * o, "hand")
               for p, c, o in [(10, 0, 0), (4, 1, 16), (0, 2, 5), (7, 1, 100), (1, 3, 9)]]
    model = fit(samples, "cortex-m4", True, fixed=fixed)
    assert model.coefficients["conv:call"] == 3.0 and model.coefficients["conv:pixel"] == 2.0
    assert model.coefficients["logistic:call"] == pytest.approx(5.0)
    assert model.coefficients["logistic:output"] == pytest.approx(7.0)
    assert model.calibration["extension"]["fitted"] == ["logistic:call", "logistic:output"]
    # it vouches for the kernel it fitted and keeps what the fixed fit vouched for
    assert model.kernel_digests["conv2d.c"] == "0" * 16 and "lookup.c" in model.kernel_digests


def test_op_networks_run_every_int8_kernel_with_a_source_of_its_own():
    """The calibration's op networks run each int8 kernel added after the first `--ops` fit (SUB,
    SQUARED_DIFFERENCE, MAXIMUM, MINIMUM of two maps or of a constant, PRELU), so that `--ops`
    fits a cost for every one of them; and each family they run is named with its source
    (KERNEL_SOURCE_FAMILIES), so that the fit vouches for the sources it ran."""
    from msfcnn.latency import calibration
    from msfcnn.latency.model import KERNEL_SOURCE_FAMILIES

    ran = set()
    for seed in range(1000, 1060):
        graph = calibration.graph_of(calibration.op_network(seed))
        if graph is not None:
            counter = BlockCounter(graph, True)
            ran |= {counter.op(t).family for t in range(len(graph)) if graph.nodes[t].op.c_kernel is not None}
    later = {"sub", "sub_const", "squared_difference", "squared_difference_const", "maximum", "minimum",
             "maximum_const", "minimum_const", "prelu"}
    assert later <= ran
    assert ran <= {family for families in KERNEL_SOURCE_FAMILIES.values() for family in families}


def test_a_window_that_wraps_its_column_ring_is_gathered_tap_by_tap():
    """In a column stream the input of a convolution keeps `ring` columns, column c at c % ring
    (kernels/conv2d.c, gather_patch): a whole window is copied kernel row by kernel row only when
    its columns do not wrap the ring; otherwise each kernel row is copied tap by tap. Brute force
    over every column of a 3x3 SAME convolution on 5 x 9 x 4, rings of 3 to 5 columns."""
    graph = _graph([{"op": "conv2d", "filters": 6, "kernel": 3, "padding": "same"}], (5, 9, 4))
    counter = BlockCounter(graph, dsp=True)
    for ring in (3, 4, 5):
        fast = slow = wrapped_taps = 0
        for c in range(9):
            f = counter.call(0, 0, 5, c, c + 1, ring)
            fast += f["conv_gather:gather_fast_row"] // 3
            slow += f["conv_gather:gather_slow"]
            wrapped_taps += f["conv_gather:gather_wrapped_tap"]
        expected = Counter()
        for r in range(5):
            for c in range(9):
                rows = [y for y in range(r - 1, r + 2) if 0 <= y < 5]
                cols = [x for x in range(c - 1, c + 2) if 0 <= x < 9]
                wraps = cols[0] % ring + len(cols) > ring
                expected["fast" if len(rows) == len(cols) == 3 and not wraps else "slow"] += 1
                expected["wrapped_taps"] += len(rows) * len(cols) if wraps else 0
        assert (fast, slow, wrapped_taps) == (expected["fast"], expected["slow"], expected["wrapped_taps"])
    # without a ring (a whole input) every whole window takes the fast copy
    assert counter.call(0, 0, 5, 0, 9)["conv_gather:gather_fast_row"] == 3 * 3 * 7


def test_a_clipped_window_counts_its_padding_pieces():
    """gather_patch (kernels/conv2d.c) fills a clipped window's padding piece by piece: each kernel
    row outside the input whole, and the outside taps of a row inside it. Brute force over every
    pixel of a 3x3 SAME and a 5x5 SAME convolution on 4 x 6 x 3, a pixel at a time."""
    for kernel in (3, 5):
        graph = _graph([{"op": "conv2d", "filters": 4, "kernel": kernel, "padding": "same"}], (4, 6, 3))
        counter = BlockCounter(graph, dsp=True)
        half = kernel // 2
        for r in range(4):
            for c in range(6):
                f = counter.call(0, r, r + 1, c, c + 1)
                rows = [y for y in range(r - half, r + half + 1) if 0 <= y < 4]
                cols = [x for x in range(c - half, c + half + 1) if 0 <= x < 6]
                assert f["conv_gather:gather_fill_krow"] == kernel - len(rows)
                assert f["conv_gather:gather_fill_tap"] == len(rows) * (kernel - len(cols))


def test_a_patch_in_chunks_counts_the_kernel_rows_each_pass_works_on():
    """conv_pairs (kernels/conv2d.c) gathers a patch longer than MSF_POINTWISE_CHUNK chunk by chunk,
    and each chunk's pass of gather_patch walks every kernel row but works only on those with
    values in [ch0, ch0 + m). Brute force of that test over 3x3 to 7x7 VALID convolutions of 3 to
    40 channels, one pixel, one block of channels (a lane pass per pixel)."""
    for kernel, channels in ((3, 3), (3, 11), (5, 4), (7, 3), (3, 40), (5, 7)):
        graph = _graph([{"op": "conv2d", "filters": 4, "kernel": kernel, "padding": "valid"}],
                       (kernel, kernel, channels))
        f = BlockCounter(graph, dsp=True).call(0, 0, 1, 0, 1)
        row_len, patch = kernel * channels, kernel * kernel * channels
        work = walked = 0
        for ch0 in range(0, patch, 96):
            m = min(96, patch - ch0)
            for i in range(kernel):
                walked += 1
                work += not (i * row_len >= ch0 + m or i * row_len + row_len <= ch0)
        slow = patch > 96  # one chunk: the whole window is copied in the fast path
        assert f["conv_gather:gather_slow_row"] == (walked if slow else 0)
        assert f["conv_gather:gather_work_row"] == (work if slow else 0)
        assert f["conv_gather:gather_slow_byte"] == (patch if slow else 0)


def test_a_gathered_patch_counts_the_bytes_its_copies_take_one_at_a_time():
    """msf_copy_s8 (kernels/msfcnn_common.h) copies words, then a copy's last n % 4 bytes one at a
    time (after a set-up when there are any); gather_patch (kernels/conv2d.c) copies each in-bounds kernel row's in-bounds taps, cut at
    the chunks' ends. Brute force of its copies, pixel by pixel and chunk by chunk, over SAME and
    VALID convolutions of 2 to 13 channels (one chunk and two), on the whole map and on a region."""
    cases = ((3, 1, "same", 2), (3, 2, "same", 3), (5, 2, "same", 5), (7, 2, "valid", 3), (3, 1, "same", 13),
             (5, 1, "valid", 6))
    for kernel, stride, padding, channels in cases:
        graph = _graph([{"op": "conv2d", "filters": 4, "kernel": kernel, "stride": stride, "padding": padding}],
                       (9, 10, channels))
        out_h, out_w = graph.nodes[0].shape[:2]
        top, left = graph.nodes[0].op.win.pads[:2]
        row_len, patch = kernel * channels, kernel * kernel * channels
        for r0, r1, c0, c1 in ((0, out_h, 0, out_w), (1, 2, 0, out_w // 2)):
            tails = copies = pieces = 0  # (a piece: the padding left or right of a kernel row's taps)
            for y in range(r0, r1):
                for x in range(c0, c1):
                    rows = [i for i in range(kernel) if 0 <= y * stride - top + i < 9]
                    cols = [j for j in range(kernel) if 0 <= x * stride - left + j < 10]
                    for ch0 in range(0, patch, 96):
                        end = min(ch0 + 96, patch)
                        for i in rows:
                            lo = max(i * row_len + cols[0] * channels, ch0)
                            hi = min(i * row_len + (cols[-1] + 1) * channels, end)
                            tails += (hi - lo) % 4 if hi > lo else 0
                            copies += hi > lo and (hi - lo) % 4 > 0
                            for a, b in ((0, cols[0] * channels), ((cols[-1] + 1) * channels, row_len)):
                                pieces += min(i * row_len + b, end) > max(i * row_len + a, ch0)
            f = BlockCounter(graph, dsp=True).call(0, r0, r1, c0, c1)
            assert tails > 0 and f["conv_gather:gather_tail_byte"] == tails, (kernel, stride, padding, channels)
            assert f["conv_gather:gather_tail_copy"] == copies
            assert f["conv_gather:gather_fill_piece"] == pieces


def test_a_depth_multiplier_over_a_large_window_counts_its_batches():
    """window.c gathers a window of more than MSF_MAX_RUNS (25) taps a batch at a time, again for
    every block of channels, and each batch's accumulate call runs its loop over the block's
    channels: one output pixel of a 10 x 8 VALID window, multiplier 8, on one channel."""
    graph = _graph([{"op": "depthwise_conv2d", "kernel": [10, 8], "depth_multiplier": 8}], (10, 8, 1))
    f = BlockCounter(graph, dsp=True).call(0, 0, 1, 0, 1)
    assert f["depthwise_multiplier:batched_pixel"] == 1 and f["depthwise_multiplier:batched_block"] == 1
    assert f["depthwise_multiplier:batched_gather_tap"] == 80 and f["depthwise_multiplier:batched_gather_row"] == 10
    assert f["depthwise_multiplier:batched_call"] == 3  # 4 batches of runs: 3 accumulate calls before the last
    assert f["depthwise_multiplier:batched_call_output"] == 3 * 8
    assert f["depthwise_multiplier:tap"] == 80 - (80 - 25)  # the first gather stops at a full batch


def test_a_family_refitted_on_its_unfused_blocks():
    """calibration.refit(only_alone=True) fits a family again on the blocks that run it alone (5
    per call, 47 per pixel, 9 per value, by hand), whatever the fused blocks it also runs in say,
    and keeps every other coefficient; a count of another family without a coefficient gets none."""
    from msfcnn.latency.calibration import Sample, refit

    model = latency.LatencyModel("cortex-m4", True, {"conv_direct:call": 3.0, "conv_direct:pixel": 2.0,
                                                     "logistic:call": 41.0, "logistic:pixel": 42.0,
                                                     "logistic:output": 9.07}, {})
    alone = [Sample(Counter({"block:call": 1, "logistic:call": 1, "logistic:pixel": p, "logistic:output": o}),
                    5 + 47 * p + 9 * o, "alone") for p, o in [(1, 4), (20, 20), (256, 256), (16, 480), (3, 90)]]
    fused = [Sample(Counter({"conv_direct:call": 1, "conv_direct:pixel": 9, "logistic:call": 1, "logistic:pixel": 9,
                             "logistic:output": 90, "depthwise:batched_gather_row": 4}), 5000, "fused")]
    new = refit(alone + fused, model, ("logistic",), "sweep_alone", only_alone=True)
    assert new.coefficients["logistic:call"] == pytest.approx(5.0, abs=1e-6)
    assert new.coefficients["logistic:pixel"] == pytest.approx(47.0)
    assert new.coefficients["logistic:output"] == pytest.approx(9.0)
    assert {k: v for k, v in new.coefficients.items() if not k.startswith("logistic")} == {
        "conv_direct:call": 3.0, "conv_direct:pixel": 2.0}
    assert new.calibration["sweep_alone"]["samples"] == len(alone)


@pytest.mark.parametrize("function, counted", [("tanh", True), ("elu", True), ("leaky_relu", False)])
def test_a_float_unary_counts_its_libm_calls_per_value(function, counted):
    """float_unary.c calls tanhf (Tanh) or expf (Elu, below 0) per value, tens of instructions
    more than LeakyRelu's compare and multiply: a count of their own (output_tanh, output_elu)."""
    from msfcnn.latency import calibration
    from msfcnn.ops.float_unary import FloatUnary

    graph = calibration.graph_of({"input": [2, 3, 4], "layers": [{"op": "relu"}]}, "float32")
    graph.nodes[0] = replace(graph.nodes[0], op=FloatUnary(function, 0.5))  # as an ONNX model makes it
    f = BlockCounter(graph, dsp=False).call(0, 0, 2, 0, 3)
    assert f["float_unary_f32:output"] == 24
    assert f[f"float_unary_f32:output_{function}"] == (24 if counted else 0)


@pytest.mark.parametrize("seed", [100, 101])
def test_the_dense_head_sweep_networks_stream_a_dense_tail(seed):
    """From DENSE_HEAD_SEED the sweep networks end in a dense layer over the whole map, which their
    least-RAM plan runs as a stream's tail (its accumulate per region, its finish once), int8 for
    even seeds and float32 for odd ones: the only calibration networks that run those loops."""
    from msfcnn import pipeline
    from msfcnn.latency import calibration
    from msfcnn.latency.model import schedule_features

    doc = calibration.sweep_network(seed)
    graph = calibration.graph_of(doc, doc["dtype"])
    plan = pipeline.planner(graph).min_ram()
    counts = sum((Counter(f) for f in schedule_features(pipeline.lower(graph, plan), BlockCounter(graph, True))),
                 Counter())
    family = "dense" if doc["dtype"] == "int8" else "dense_f32"
    assert counts[f"{family}_accumulate:call"] > 1 and counts[f"{family}_finish:call"] == 1


def test_a_row_measured_before_a_kernel_changed_keeps_its_other_blocks(tmp_path, monkeypatch):
    """scripts/calibrate_latency.py --remeasure: a stored row whose ADD kernel changed since it was
    measured (its "stale" families) gives the fit its other blocks only; the row records the
    digests of the ADD kernel's sources (add.c, add.h) when it is measured again."""
    import importlib.util
    import json
    from pathlib import Path

    from msfcnn import pipeline
    from msfcnn.latency import calibration

    script = Path(__file__).resolve().parents[2] / "scripts" / "calibrate_latency.py"
    spec = importlib.util.spec_from_file_location("calibrate_latency", script)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    doc = {"name": "stale_add", "input": [6, 6, 4], "layers": [
        {"op": "conv2d", "filters": 8, "kernel": 3, "padding": "same"},
        {"op": "conv2d", "filters": 8, "kernel": 1},
        {"op": "add", "from": 0}]}
    plan = pipeline.planner(calibration.graph_of(doc)).vanilla()
    row = {"seed": 0, "dtype": "int8", "doc": doc, "plan_name": "vanilla", "plan": plan.to_dict(), "count_io": False,
           "blocks": [1000 + k for k in range(len(plan.blocks))]}
    path = tmp_path / "cortex-m4.jsonl"
    for stale, kept in (([], 3), (["add"], 2)):
        path.write_text(json.dumps({**row, "stale": stale}) + "\n")
        samples = tool.load_samples(path, dsp=True)
        assert len(samples) == kept and all(not tool.runs_families(s.features, stale) for s in samples)
    assert set(tool.family_sources(("add",))) == {"add.c", "add.h"}
    assert [number for number, *_ in tool.stale_rows(path, ("add",), True)] == [0]
    assert list(tool.stale_rows(path, ("softmax",), True)) == []


def test_clamped_networks_run_the_clamped_output_stage():
    """scripts/calibrate_latency.py --clamped: its networks' ReLU convolutions clamp inside int8
    (the fast output stage "ruy", not "ruy_full" as random weights give), the only calibration rows
    whose blocks count conv_gather:output_ruy; every activation stays within the output's range."""
    import importlib.util
    from pathlib import Path

    from msfcnn.latency.features import BlockCounter, _output_stage
    from msfcnn.latency.model import schedule_features
    from msfcnn import pipeline

    script = Path(__file__).resolve().parents[2] / "scripts" / "calibrate_latency.py"
    spec = importlib.util.spec_from_file_location("calibrate_latency", script)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    stages, counted = set(), 0
    for seed in range(4):
        graph = tool.graph_of(tool.clamped_network(seed), "int8")
        stages |= {_output_stage(graph, t)[0] for t in range(len(graph))}
        assert all(-110 <= node.quant.zero_point <= 20 for node in graph.nodes)
        plan = pipeline.planner(graph).vanilla()
        counted += sum(f["conv_gather:output_ruy"] for f in schedule_features(pipeline.lower(graph, plan),
                                                                               BlockCounter(graph, True)))
    assert stages == {"ruy"} and counted > 0


def test_the_stored_few_channel_rows_are_the_generators_networks():
    """scripts/calibrate_latency.py --few-channels: a stored row is refitted from its seed, so the
    generator must still draw the networks cortex-m4's stored measurements ran, each a convolution
    on 1 to 3 input channels that the DSP cores run as a gathered patch (conv_gather)."""
    import json
    import lzma
    from pathlib import Path

    from msfcnn import pipeline
    from msfcnn.latency import calibration
    from msfcnn.latency.model import schedule_features

    stored = Path(__file__).resolve().parents[2] / "benchmarks/results/latency_measurements/cortex-m4-few.jsonl.xz"
    rows = [json.loads(line) for line in lzma.decompress(stored.read_bytes()).decode().splitlines() if line]
    docs = {row["seed"]: row["doc"] for row in rows}
    assert len(docs) == 60 and all(doc == calibration.few_channel_network(seed) for seed, doc in docs.items())
    for seed in (0, 17):
        doc = docs[seed]
        graph = calibration.graph_of(doc)
        conv = next(t for t, node in enumerate(graph.nodes) if type(node.op).__name__ == "Conv2D")
        assert 1 <= doc["input"][2] <= 3 and graph.shape_of(graph.nodes[conv].inputs[0])[2] == doc["input"][2]
        plan = pipeline.planner(graph).vanilla()
        assert sum(f["conv_gather:call"] for f in schedule_features(pipeline.lower(graph, plan),
                                                                    BlockCounter(graph, True))) > 0


def test_chain_networks_run_a_chains_block_and_their_fit_moves_only_chain_counts(tmp_path):
    """scripts/calibrate_latency.py --chains: its networks (LiteRT's depthwise convolution, as
    pipeline.load gives a model) are measured under one plan whose first block is a chains block
    with the input streamed; the fit on its rows changes only chain:* coefficients, fitted on the
    chains blocks alone."""
    import importlib.util
    import json
    from pathlib import Path

    from msfcnn.latency.model import schedule_features
    from msfcnn.ops.depthwise_conv2d_litert import DepthwiseConv2DLitert

    script = Path(__file__).resolve().parents[2] / "scripts" / "calibrate_latency.py"
    spec = importlib.util.spec_from_file_location("calibrate_latency", script)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    stored = latency.load("cortex-m4")
    rows = []
    for seed in range(3):
        doc = tool.chain_network(seed)
        graph = tool.graph_of(doc, "int8")
        assert any(isinstance(node.op, DepthwiseConv2DLitert) for node in graph.nodes)
        [(name, count_io, plan)] = tool.plans_of(graph, seed, "chains")
        assert plan.blocks[0].scheme == "chains" and plan.input_streamed
        features = schedule_features(pipeline.lower(graph, plan), BlockCounter(graph, True))
        # (made-up counts: the stored prediction plus 10 %, so that the chain counts have work to take up)
        rows.append({"seed": seed, "dtype": "int8", "doc": doc, "plan_name": name, "plan": plan.to_dict(),
                     "count_io": count_io, "blocks": [round(stored.predict(f) * 1.1) for f in features]})
    path = tmp_path / "cortex-m4-chains.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    samples = tool.load_samples(path, dsp=True)
    model = tool.fit_chains(samples, "cortex-m4")
    changed = {k for k in {*model.coefficients, *stored.coefficients}
               if model.coefficients.get(k) != stored.coefficients.get(k)}
    counted = {k for s in samples for k, v in s.features.items() if v and k.startswith("chain:")}
    assert changed and {k.split(":")[0] for k in changed} == {"chain"}
    assert set(model.calibration["chains"]["fitted"]) == counted
    assert model.calibration["chains"]["samples"] == sum(b.scheme == "chains" for row in rows
                                                         for b in tool.Plan.from_dict(row["plan"]).blocks)


def test_a_pad_counts_its_copied_pixels_and_int8_tail_bytes():
    """kernels/pad.c fills a pixel in the padding and copies the others (`inside`); on the DSP
    cores an int8 pixel's last channels % 4 move a byte at a time (`tail_value`), elsewhere none."""
    graph = _graph([{"op": "pad", "pads": [1, 2, 0, 1]}], (3, 4, 7))  # output 4 x 7: 12 of 28 copied
    dsp, portable = BlockCounter(graph, dsp=True).call(0, 0, 4, 0, 7), BlockCounter(graph, dsp=False).call(0, 0, 4, 0, 7)
    assert dsp["pad:inside"] == portable["pad:inside"] == 12 and dsp["pad:clipped"] == 28 - 12
    assert dsp["pad:tail_value"] == 28 * 3 and portable["pad:tail_value"] == 0


def test_an_int8_add_counts_the_values_whose_input_rescale_shifts():
    """add.c's int8 loop (add_gemmlowp) skips a rescale's rounding shift where the C parameters'
    shift is 0: ADD counts its values as output_shifted_input where an input's shift is negative
    (the input of the smaller scale), and none where the two scales are equal (both 0)."""
    graph = pipeline.load(str(FIXTURES / "models" / "extra_two_inputs.tflite"), weights=True)  # 8 x 8 x 4
    op, ctx = graph.nodes[0].op, graph.kernel_context(0)

    def shifts(context) -> list[int]:
        params = op.c_params(context, None, graph.shape_of(0), {})
        return [int(params.split(f".input{k}_shift = ")[1].split(",")[0]) for k in (1, 2)]

    equal = replace(ctx, input_quant=(ctx.input_quant[0], ctx.input_quant[0]))
    assert sorted(shifts(ctx)) == [-1, 0] and shifts(equal) == [0, 0]
    assert BlockCounter(graph, dsp=True).call(0, 0, 8, 0, 8)["add:output_shifted_input"] == 8 * 8 * 4
    assert op.value_path(equal) == ""


def test_a_view_of_the_callers_input_is_a_library_move():
    """A RESHAPE of the network input copies its bytes from the caller's pointer into the arena:
    a call of the C library's memmove (codegen/moves.py), 120 bytes."""
    graph = pipeline.load(str(FIXTURES / "models" / "i16_fc.tflite"), weights=True)
    schedule = pipeline.lower(graph, pipeline.planner(graph).vanilla())
    f = latency.model.schedule_features(schedule, BlockCounter(graph, dsp=True))[0]
    assert (f["memmove:call"], f["memmove:byte"]) == (1, 120)
    assert (f["memmove:library_call"], f["memmove:library_byte"]) == (1, 120)


def _block_counts(graph, plan) -> list[Counter]:
    counter = BlockCounter(graph, dsp=True)
    return [Counter(counter.block(b)) for b in pipeline.lower(graph, plan).blocks]


def test_a_time_scan_counts_no_copy_of_a_float_cells_state_to_an_output_sequence():
    """rnn.c run whole copies each step's state to its output sequence (output_copy); a time
    scan's cell step does not, and its counts leave the copies out, the rest as the whole layer's."""
    graph = pipeline.load(str(FIXTURES / "sequence" / "onnx_rnn_relu_batch_first_2.onnx"), weights=True)
    planner = pipeline.planner(graph)
    whole = _block_counts(graph, planner.vanilla())
    scan, = _block_counts(graph, planner.min_ram())
    steps = graph.input_shape[1]
    assert [f["rnn_f32:output_copy"] for f in whole] == [steps, steps]
    assert scan["rnn_f32:output_copy"] == scan["rnn_f32:output_copy_byte"] == 0
    assert scan["rnn_f32:cell"] == sum(f["rnn_f32:cell"] for f in whole)


def test_a_float_recurrent_layer_counts_the_bytes_its_state_start_zeroes():
    """rnn.c and gru.c zero h (units floats) before the first step, run whole or as a time scan's
    cell start (recurrent_cell.c): a memset of a size the compiler does not know, counted as
    zero_byte per layer, the same in both schemes."""
    for name, family in (("onnx_rnn_relu_batch_first_2.onnx", "rnn_f32"), ("onnx_gru_batch_first_2.onnx", "gru_f32")):
        graph = pipeline.load(str(FIXTURES / "sequence" / name), weights=True)
        planner = pipeline.planner(graph)
        units = [graph.shape_of(t)[-1] for t in range(len(graph)) if graph.nodes[t].op.recurrent]
        whole = _block_counts(graph, planner.vanilla())
        scan, = _block_counts(graph, planner.min_ram())
        assert [f[f"{family}:zero_byte"] for f in whole if f[f"{family}:call"]] == [4 * u for u in units]
        assert scan[f"{family}:zero_byte"] == 4 * sum(units)


def test_a_dilated_window_counts_its_copy_once_per_call():
    """conv2d.c copies a dilated window's description once per call: in a column stream of one
    output pixel a call, once per pixel; run whole, once."""
    graph = pipeline.load(str(FIXTURES / "ops" / "dilated_tcn_f32.tflite"), weights=True)
    planner = pipeline.planner(graph)
    dilated = sum(1 for n in graph.nodes if getattr(getattr(n.op, "win", None), "dilated", False))
    whole = sum(_block_counts(graph, planner.vanilla()), Counter())
    streamed = sum(_block_counts(graph, planner.min_ram()), Counter())
    assert whole["conv_f32:dilated_call"] == dilated == 2
    assert streamed["conv_f32:dilated_call"] == streamed["conv_f32:dilated_pixel"] == whole["conv_f32:dilated_pixel"]


def _tap_range_divisions(graph, t: int) -> int:
    """Brute force over kernels/dilated.c's loop for op t's whole output: each pixel's
    msf_dilated_tap_range divides once per axis for the window's end and once more for an axis
    whose window starts before the input."""
    win = graph.nodes[t].op.win
    h, w = graph.shape_of(t)[:2]
    return sum(2 + (r * win.strides[0] - win.pads[0] < 0) + (c * win.strides[1] - win.pads[1] < 0)
               for r in range(h) for c in range(w))


# __divsi3's calls from msf_window_dilated, profiled per call site on QEMU (xtensa-lx106): the vanilla
# plan's and the least-RAM plan's
DIVISIONS_MEASURED = {"ops/dilated_conv2d_f32.tflite": (1358, 7116), "ops/dilated_conv.onnx": (1150, 5700),
                      "ops/dilated_tcn_f32.tflite": (132, 256), "sequence/onnx_conv1d_tcn_causal.onnx": (264, 512)}


@pytest.mark.parametrize("path", sorted(DIVISIONS_MEASURED))
def test_a_dilated_window_counts_its_divisions(path):
    """msf_window_dilated divides by the dilation twice per call (its taps per axis) and in
    msf_dilated_tap_range per pixel: `dilated_division`, a call of support/xtensa-lx106/arith.c's
    __divsi3 (32 steps, about 334 instructions) on the LX106. Run whole, against a brute force
    over the loop (windows that start before the input divide once more); streamed, a call per
    pixel or band (recomputed pixels too), each pixel's divisions at least two. Both against the
    calls profiled on QEMU."""
    graph = pipeline.load(str(FIXTURES / path), weights=True)
    planner = pipeline.planner(graph)
    dilated = [t for t, n in enumerate(graph.nodes) if getattr(getattr(n.op, "win", None), "dilated", False)]
    for k, plan in enumerate((planner.vanilla(), planner.min_ram())):
        counts = sum(_block_counts(graph, plan), Counter())
        calls, pixels, divisions = (sum(v for name, v in counts.items() if name.endswith(f":dilated_{count}"))
                                    for count in ("call", "pixel", "division"))
        if k == 0:
            assert calls == len(dilated)
            assert divisions == 2 * calls + sum(_tap_range_divisions(graph, t) for t in dilated)
        assert divisions >= 2 * calls + 2 * pixels
        assert divisions == DIVISIONS_MEASURED[path][k]


@pytest.mark.parametrize("path, measured", [("models/bin_conv1d_reshape.tflite", 72),
                                            ("models/op_dw_k3_s2_valid_relu.tflite", 96)])
def test_a_depthwise_counts_its_channel_divisions(path, measured):
    """The portable depthwise loop (depthwise_conv2d.c's accumulate) takes eight channels at a time
    when the depth multiplier is 1, then the rest one by one, each finding its input channel as
    (oc0 + k) / m: a __divsi3 call on the LX106. A brute force over that loop (per pixel and block
    of channels, the block's channels past its eights) against `depthwise:division` and the calls
    from accumulate profiled per call site on QEMU, layer by layer."""
    graph = pipeline.load(str(FIXTURES / path), weights=True)
    counter = BlockCounter(graph, dsp=False)  # (the LX106 has no DSP extension)
    counts = sum((Counter(counter.block(b)) for b in pipeline.lower(graph, pipeline.planner(graph).vanilla()).blocks),
                 Counter())
    block = 16  # MSF_CHANNEL_BLOCK, kernels/window.h
    singles = 0
    for t, node in enumerate(graph.nodes):
        if node.op.kind == "depthwise_conv2d":
            h, w, c = graph.shape_of(t)
            blocks = [min(block, c - k) for k in range(0, c, block)]
            singles += h * w * sum(n % 8 for n in blocks)
    assert counts["depthwise:division"] == singles == measured


@pytest.mark.parametrize("name, rows, family", [("rows_softmax_int8", 64, "softmax"), ("rows_dense_int8", 20, "softmax"),
                                                 ("rows_dense_float32", 20, "softmax_f32")])
def test_a_softmax_counts_its_rows_past_the_first(name, rows, family):
    """softmax.c runs its loops and the sum's reciprocal once per row of the last axis: a SOFTMAX
    over (64, 10) logits (fixtures/make_row_models.py) counts 63 rows past the first, a classifier
    head none (its one row is in the call's cost, as every calibration network's head has it)."""
    graph = pipeline.load(str(FIXTURES / "sequence" / f"{name}.tflite"), weights=True)
    counts = sum(_block_counts(graph, pipeline.planner(graph).vanilla()), Counter())
    assert counts[f"{family}:extra_row"] == rows - 1 and counts[f"{family}:call"] == 1
    head = pipeline.load("mobilenetv2-0.35", weights=True)
    counts = sum(_block_counts(head, pipeline.planner(head).vanilla()), Counter())
    assert counts["softmax:call"] == 1 and counts["softmax:extra_row"] == 0


def test_the_in_place_depthwise_counts_its_inner_rows_and_taps():
    """kernels/depthwise_inplace.c sums an inner pixel's window row by row (row_sum over kw taps)
    unless it is 3x3: a 1 x 3 window on 8 columns (SAME) has 6 inner pixels a channel, 6 kernel
    rows and 18 taps; a 5x5 window on a 7 x 7 map 9 inner pixels, 45 rows and 225 taps; a 3x3 one
    counts none of these (its unrolled loop is counted apart)."""
    line = _graph([{"op": "depthwise_conv2d", "kernel": [1, 3], "padding": "same"}], (1, 8, 4))
    square = _graph([{"op": "depthwise_conv2d", "kernel": 5, "padding": "same"}], (7, 7, 2))
    three = _graph([{"op": "depthwise_conv2d", "kernel": 3, "padding": "same"}], (6, 6, 2))
    f, g, h = (BlockCounter(graph, dsp=True)._channels(0) for graph in (line, square, three))
    assert (f["depthwise_inplace:inner_pixel_channel"], f["depthwise_inplace:inner_krow_channel"],
            f["depthwise_inplace:inner_tap_channel"]) == (6 * 4, 6 * 4, 18 * 4)
    assert (g["depthwise_inplace:inner_pixel_channel"], g["depthwise_inplace:inner_krow_channel"],
            g["depthwise_inplace:inner_tap_channel"]) == (9 * 2, 45 * 2, 225 * 2)
    assert h["depthwise_inplace:inner_pixel_channel_3x3"] == 16 * 2 and not h["depthwise_inplace:inner_tap_channel"]


def test_a_dense_layer_run_whole_counts_a_pass_per_unit_and_pixel():
    """msf_dense_s8 walks its input pixel by pixel for each unit: a 2 x 3 map into 5 units makes
    30 passes, a vector into 5 units 5; the float kernel's fit has no such count."""
    graph = _graph([{"op": "dense", "units": 5}], (2, 3, 4))
    vector = _graph([{"op": "global_avg_pool"}, {"op": "dense", "units": 5}], (2, 3, 4))
    assert BlockCounter(graph, dsp=True).call(0, 0, 1, 0, 1)["dense:pixel_unit"] == 30
    assert BlockCounter(vector, dsp=True).call(1, 0, 1, 0, 1)["dense:pixel_unit"] == 5


@pytest.mark.parametrize("seed", [100, 101, 104])
def test_a_streamed_dense_accumulate_counts_a_location_per_pixel_and_a_pass_per_unit(seed):
    """msf_dense_accumulate_s8 locates each pixel of a streamed region, then makes a pass per unit
    over its channels: over a stream's regions every pixel of the dense layer's input map is
    located once and passed once per unit (the float accumulate's fit has no such counts)."""
    from msfcnn import pipeline
    from msfcnn.latency import calibration
    from msfcnn.latency.model import schedule_features

    doc = calibration.sweep_network(seed)
    graph = calibration.graph_of(doc, doc["dtype"])
    plan = pipeline.planner(graph).min_ram()
    counts = sum((Counter(f) for f in schedule_features(pipeline.lower(graph, plan), BlockCounter(graph, True))),
                 Counter())
    h, w, c = graph.shape_of(len(graph) - 2)
    units = graph.shape_of(len(graph) - 1)[0]
    if doc["dtype"] == "int8":
        assert counts["dense_accumulate:call"] > 1 and counts["dense_accumulate:value"] == h * w * c
        assert counts["dense_accumulate:pixel"] == h * w and counts["dense_accumulate:pixel_unit"] == h * w * units
    else:
        assert counts["dense_f32_accumulate:call"] > 1 and not counts["dense_f32_accumulate:pixel_unit"]


@pytest.mark.parametrize("kernel,stride,padding", [([5, 5], 1, "valid"), ([5, 5], 2, "same"), ([1, 1], 1, "same"),
                                                   ([4, 1], 1, "same"), ([1, 6], 2, "same")])
def test_the_depthwise_window_loop_counts_its_in_bounds_kernel_rows(kernel, stride, padding):
    """window.c's gather locates each in-bounds kernel row of a pixel's window before its taps:
    `depthwise:krow` is their number, enumerated here pixel by pixel from the padding (an int8
    depthwise of multiplier 1 on a DSP core that does not run the blocked 3 x 3 loop)."""
    graph = _graph([{"op": "depthwise_conv2d", "kernel": kernel, "stride": stride, "padding": padding}], (9, 7, 4))
    out_h, out_w = graph.shape_of(0)[:2]
    f = BlockCounter(graph, dsp=True).call(0, 0, out_h, 0, out_w)
    top = graph.nodes[0].op.win.pads[0]
    rows = sum(1 for y in range(out_h) for i in range(kernel[0]) if 0 <= y * stride - top + i < 9)
    assert f["depthwise:krow"] == rows * out_w
    assert f["depthwise:tap"] >= f["depthwise:krow"]


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m7"])
def test_the_stored_depthwise_row_sweeps_are_the_generators_networks(target):
    """The sweep networks from DEPTHWISE_ROW_SEED are refitted from their seeds (`--remeasure
    depthwise --refit`): the generator must still draw the networks stored, each a depthwise
    convolution over a 1 x 1, 1 x k or k x 1 window that the window loop runs (`depthwise:krow`)."""
    import json
    import lzma
    from pathlib import Path

    from msfcnn.latency import calibration
    from msfcnn.latency.model import schedule_features

    stored = Path(__file__).resolve().parents[2] / f"benchmarks/results/latency_measurements/{target}-sweep.jsonl.xz"
    rows = [json.loads(line) for line in lzma.decompress(stored.read_bytes()).decode().splitlines() if line]
    docs = {row["seed"]: row["doc"] for row in rows
            if calibration.DEPTHWISE_ROW_SEED <= row["seed"] < calibration.ONE_PIXEL_SEED}
    assert len(docs) == 30 and all(doc == calibration.sweep_network(seed) for seed, doc in docs.items())
    for seed, doc in docs.items():
        assert 1 in doc["layers"][0]["kernel"]
    graph = calibration.graph_of(docs[calibration.DEPTHWISE_ROW_SEED + 1])
    plan = pipeline.planner(graph).vanilla()
    assert sum(f["depthwise:krow"] for f in schedule_features(pipeline.lower(graph, plan), BlockCounter(graph, True))) > 0


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m33"])
def test_the_stored_one_pixel_sweeps_are_the_generators_networks_and_stream_a_pixel_a_call(target):
    """The sweep networks from ONE_PIXEL_SEED were measured to pin a one-pixel call's cost: the
    generator must still draw the networks stored, and their least-RAM plans must stream the
    windows and activations one pixel a call (as many calls of each op as positions it computes)."""
    import json
    import lzma
    from pathlib import Path

    from msfcnn.latency import calibration
    from msfcnn.latency.model import schedule_features

    stored = Path(__file__).resolve().parents[2] / f"benchmarks/results/latency_measurements/{target}-sweep.jsonl.xz"
    rows = [json.loads(line) for line in lzma.decompress(stored.read_bytes()).decode().splitlines() if line]
    docs = {row["seed"]: row["doc"] for row in rows
            if calibration.ONE_PIXEL_SEED <= row["seed"] < calibration.GATE_SEED}
    assert len(docs) >= 30 and all(doc == calibration.sweep_network(seed) for seed, doc in docs.items())
    streamed = 0
    for doc in docs.values():
        graph = calibration.graph_of(doc)
        plan = pipeline.planner(graph).min_ram()
        for f in schedule_features(pipeline.lower(graph, plan), BlockCounter(graph, True)):
            calls = sum(v for k, v in f.items() if k.endswith(":call") and k.split(":")[0] not in
                        ("block", "invoke", "mean_accumulate", "mean_finish"))
            if f.get("stream:position", 0) > 0:  # a call per position pulled: one pixel each
                streamed += 1
                assert calls == f["stream:position"]
    assert streamed >= 25


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m33"])
def test_the_stored_gate_sweeps_stream_several_calls_a_position(target):
    """The sweep networks from GATE_SEED (gate_network) were measured to tell a stream position's
    and a pull's costs from a call's: the generator must still draw the networks stored, ConvLSTM-
    like gate blocks whose least-RAM plans stream every layer up to the pool a column at a time
    (one output row a band, so each call computes a column of one to three rows), each op called
    once per column and band, counted from the layer list alone: a position makes a call of each
    op, 3 to 6 calls. A MUL or an ADD pulls two streamed inputs, so the pulls are not one per call
    past the first op's, as they are where each op reads one."""
    import json
    import lzma
    from pathlib import Path

    from msfcnn.latency import calibration
    from msfcnn.latency.model import schedule_features

    stored = Path(__file__).resolve().parents[2] / f"benchmarks/results/latency_measurements/{target}-sweep.jsonl.xz"
    rows = [json.loads(line) for line in lzma.decompress(stored.read_bytes()).decode().splitlines() if line]
    docs = {row["seed"]: row["doc"] for row in rows
            if calibration.GATE_SEED <= row["seed"] < calibration.POOL_SEED}
    assert len(docs) >= 30 and all(doc == calibration.gate_network(seed) == calibration.sweep_network(seed)
                                   for seed, doc in docs.items())
    two_input = 0
    for doc in docs.values():
        h, w, _ = doc["input"]
        gate_ops = len(doc["layers"]) - 2  # all but the pooled dense head
        graph = calibration.graph_of(doc)
        lowered = pipeline.lower(graph, pipeline.planner(graph).min_ram())
        block = lowered.blocks[0]
        assert (block.loops.axis, block.loops.band_rows, block.loops.end) == (1, 1, gate_ops - 1)
        f = schedule_features(lowered, BlockCounter(graph, True))[0]
        calls = sum(v for k, v in f.items() if k.endswith(":call") and k.split(":")[0] not in
                    ("block", "invoke", "mean_accumulate", "mean_finish"))
        assert calls == f["stream:position"] == gate_ops * h * w and gate_ops >= 3
        reads = sum(2 if layer["op"] in ("mul", "add") else 1 for layer in doc["layers"][1:gate_ops])
        assert f["stream:pull"] == reads * h * w
        two_input += f["stream:pull"] > f["stream:position"] - h * w
    assert two_input >= 15


def test_the_stored_elementwise_sweeps_pin_cortex_m4s_one_pixel_elementwise_calls():
    """The networks from ELEMENTWISE_SEED (elementwise_network) were measured on cortex-m4 to price a
    one-pixel element-wise call (a RELU's cost per call had been fitted over whole maps only): the
    generator must still draw the networks stored; their least-RAM plans stream element-wise
    kernels alone, of 1 to 8 channels, some positions pulling two streamed maps; and the committed
    coefficients predict the measured instructions of their streamed blocks within 3 % on average
    (1.9 %; 4.4 % before the RELU's and the MUL's costs per call were fitted with them)."""
    import json
    import lzma
    from pathlib import Path

    from msfcnn.latency import calibration
    from msfcnn.latency.model import schedule_features

    stored = Path(__file__).resolve().parents[2] / "benchmarks/results/latency_measurements/cortex-m4-elementwise.jsonl.xz"
    rows = [json.loads(line) for line in lzma.decompress(stored.read_bytes()).decode().splitlines() if line]
    assert {row["seed"] for row in rows} == set(range(calibration.ELEMENTWISE_SEED, calibration.ELEMENTWISE_SEED + 32))
    assert all(row["doc"] == calibration.elementwise_network(row["seed"]) == calibration.sweep_network(row["seed"])
               for row in rows)
    model = latency.load("cortex-m4")
    errors, widths, two_pulls = [], set(), 0
    for row in rows:
        graph = calibration.graph_of(row["doc"])
        plan = pipeline.planner(graph).min_ram()
        if row["plan_name"] != "min-ram":
            continue
        assert json.dumps(plan.to_dict(), sort_keys=True) == json.dumps(row["plan"], sort_keys=True)
        features = schedule_features(pipeline.lower(graph, plan), BlockCounter(graph, True))
        for f, measured in zip(features, row["blocks"]):
            if not f.get("stream:position"):
                continue
            families = {name.split(":")[0] for name, v in f.items() if v and name.endswith(":call")}
            assert families <= {"activation", "logistic", "hard_swish", "add", "mul", "block", "invoke",
                                "mean_accumulate", "mean_finish"}
            h, w, c = row["doc"]["input"]
            streamed = [layer for layer in row["doc"]["layers"] if layer["op"] not in ("global_avg_pool", "dense")]
            # each layer past the first pulls its previous one, an ADD or a MUL also its "from" (when streamed)
            reads = len(streamed) - 1 + sum(layer.get("from", -1) >= 0 for layer in streamed)
            assert f["stream:position"] == len(streamed) * h * w and f["stream:pull"] == reads * h * w
            widths.add(c)
            two_pulls += reads >= len(streamed)
            errors.append(abs(model.predict(f) / measured - 1))
    assert len(errors) >= 30 and len(widths) >= 6 and two_pulls >= 5
    assert sum(errors) / len(errors) < 0.03


def test_the_pool_sweeps_vary_a_windows_taps_apart_from_its_outputs():
    """The sweep networks from POOL_SEED (pool_network) pool over windows of 1 to 5 taps a side:
    unfused, an average's taps per output value (its window's in-bounds taps, which the counts
    take from the layer's geometry) take many values, where the main networks' 2 x 2 and 3 x 3
    windows of stride 2 give few, so a fit tells a tap's cost from an output's."""
    from msfcnn.latency import calibration
    from msfcnn.latency.model import schedule_features

    seeds = range(calibration.POOL_SEED, calibration.POOL_SEED + 24)
    ratios, averages = set(), 0
    for seed in seeds:
        doc = calibration.sweep_network(seed)
        assert doc == calibration.pool_network(seed)
        graph = calibration.graph_of(doc)
        lowered = pipeline.lower(graph, pipeline.planner(graph).vanilla())
        f = schedule_features(lowered, BlockCounter(graph, False))[1]
        kind = doc["layers"][1]["op"]
        kh, kw = doc["layers"][1]["kernel"]
        outputs = f[f"{kind}:output"]
        assert outputs == graph.nodes[1].shape[0] * graph.nodes[1].shape[1] * graph.nodes[1].shape[2]
        assert f[f"{kind}:tap_channel"] <= kh * kw * outputs
        if kind == "avg_pool2d":
            averages += 1
            ratios.add(round(f["avg_pool2d:tap_channel"] / outputs, 2))
    assert averages >= 15 and len(ratios) >= 8


@pytest.mark.parametrize("kind", ["gru", "gru_reset_after", "rnn", "rnn_relu"])
@pytest.mark.parametrize("rectified", [False, True])
def test_a_float_recurrent_layer_counts_the_products_that_read_a_signed_value(kind, rectified):
    """Brute force over a run of the numpy kernel: the recurrent rows' products that read a 0 of
    h are the first step's (the zero initial state), so value_signed counts the others, with the
    input rows' unless a ReLU made the input, and a ReLU RNN's h holds no negative value (those
    count as value_rectified); mac still counts them all."""
    from msfcnn.ir import Graph
    from msfcnn.ops.activation import Activation
    from msfcnn.ops.gru import Gru
    from msfcnn.ops.rnn import Rnn

    rng = np.random.default_rng(7)
    steps, features, units = 5, 3, 4
    op = Rnn(units, activation=kind[4:] or "tanh") if kind.startswith("rnn") else \
        Gru(units, linear_before_reset=kind == "gru_reset_after")
    shape = lambda *s: rng.normal(0, 0.5, (op.gates, *s)).astype(np.float32)  # noqa: E731
    consts = {"input_weights": shape(units, features), "recurrent_weights": shape(units, units),
              "input_bias": shape(units), "recurrent_bias": shape(units)}
    graph = Graph("cell", (1, steps, features), dtype="float32")
    if rectified:
        graph.append(Activation("relu"), (-1,))
    t = graph.append(op, (len(graph) - 1,), consts)
    x = rng.normal(0, 1, (1, steps, features)).astype(np.float32)
    seq = np.maximum(x, 0) if rectified else x
    hs = op.run_whole([seq], graph.kernel_context(t), np.zeros(op.workspace_bytes("float32"), np.uint8))
    # h as each step reads it: the first step's all 0; the later ones' signed, or after a ReLU
    # rectified (no negative value, some 0s)
    first, later = np.zeros(units, np.float32), hs[:-1]
    zero_reads = op.gates * units * np.count_nonzero(first == 0)
    assert (later >= 0).all() == (np.count_nonzero(later == 0) > 0) == (kind == "rnn_relu")
    inputs = op.gates * units * features * steps
    state = graph.macs(t) - inputs - zero_reads
    f = BlockCounter(graph, dsp=False).call(t, 0, 1, 0, 1)
    rectified_reads = (inputs if rectified else 0) + (state if kind == "rnn_relu" else 0)
    assert f[f"{kind[:3]}_f32:mac"] == graph.macs(t)
    assert f[f"{kind[:3]}_f32:value_signed"] == graph.macs(t) - zero_reads - rectified_reads
    assert f[f"{kind[:3]}_f32:value_rectified"] == rectified_reads


@pytest.mark.parametrize("head", ["signed", "relu", "ring", "pooled"])
def test_a_float_dense_layer_counts_the_products_that_read_a_signed_value(head):
    """The dense layer's input, run by the numpy kernels: with negative values, each product counts
    as value_signed; made by a ReLU, or its rows kept in a time ring (the rows or the initial
    zeros), it holds no negative value and about half 0s, and counts neither; pooled from such a
    map it holds no negative value and fewer 0s than the map, and counts value_pooled."""
    from msfcnn.executor import run_unfused
    from msfcnn.latency.calibration import with_random_float_weights
    from msfcnn.ops.dense import Dense
    from msfcnn.ops.time_ring import TimeRing

    layers = [{"op": "conv2d", "filters": 6, "kernel": 1, **({} if head == "signed" else {"act": "relu"})}]
    layers += [{"op": "global_avg_pool"}] if head == "pooled" else []
    graph = with_random_float_weights(graph_from_layer_list({"input": [1, 8, 3], "layers": layers}), seed=3)
    if head == "ring":
        ring = graph.append(TimeRing(1, 2), (len(graph) - 1,))
        graph.add_state(ring, "ring", TimeRing(1, 2).initial_state(graph.shape_of(0), np.float32, 0))
    x = np.random.default_rng(3).normal(0, 1, (1, 8, 3)).astype(np.float32)
    read, before = run_unfused(graph, x), run_unfused(with_random_float_weights(graph_from_layer_list(
        {"input": [1, 8, 3], "layers": layers[:1]}), seed=3), x)
    t = graph.append(Dense(5), (len(graph) - 1,), {"weights": np.ones((5, read.size), np.float32),
                                                   "bias": np.zeros(5, np.float32)})
    f = BlockCounter(graph, dsp=False).call(t, 0, 1, 0, 1)
    signed, pooled = f["dense_f32:value_signed"], f["dense_f32:value_pooled"]
    assert f["dense_f32:mac"] == read.size * 5
    assert (read < 0).any() == (signed == read.size * 5) and (signed == 0 or pooled == 0)
    if head in ("relu", "ring"):
        assert (read >= 0).all() and (read == 0).any() and signed == pooled == 0
    if head == "pooled":
        assert (read >= 0).all() and np.mean(read == 0) < np.mean(before == 0) and pooled == read.size * 5


def test_a_16x8_window_locates_each_tap_in_its_ring_per_output_channel():
    """int16.c's window loops call at_s16 once per tap and output channel, and in a stream whose
    input is a ring that index is taken modulo the ring (a library division on Armv6-M):
    ring_tap_output counts those calls, none without a ring. Brute force over bin_i16_conv1d's
    first convolution (1 x 5 SAME on 30 steps, 8 outputs) and its max pool (1 x 2, stride 2, 8
    channels), a column at a time as its column stream calls them."""
    graph = pipeline.load(str(FIXTURES / "models" / "bin_i16_conv1d.tflite"), weights=True)
    counter = BlockCounter(graph, dsp=False)

    def taps(c: int, k: int, stride: int, pad: int, width: int) -> int:
        return sum(0 <= c * stride - pad + j < width for j in range(k))

    for op, family, k, stride, pad, width, columns in ((0, "conv_s16", 5, 1, 2, 30, 30),
                                                       (1, "max_pool2d_s16", 2, 2, 0, 30, 15)):
        rings = [counter.call(op, 0, 1, c, c + 1, 6)[f"{family}:ring_tap_output"] for c in range(columns)]
        assert rings == [taps(c, k, stride, pad, width) * 8 for c in range(columns)]
        assert not counter.call(op, 0, 1, 0, columns)[f"{family}:ring_tap_output"]


def _modsi3_loop_steps(n: int, d: int) -> int:
    """The passes of the test-subtract-shift loop of libgcc's __modsi3 on the Xtensa LX106 (its
    object code, xtensa-lx106-elf-objdump of libgcc.a's _modsi3.o): nsau of the dividend and of
    the divisor, no loop unless the divisor has more leading zeros, then one pass per extra one."""
    def nsau(x: int) -> int:
        zeros = 0
        while zeros < 32 and not x & (1 << (31 - zeros)):
            zeros += 1
        return zeros

    steps, shifted = 0, d << max(nsau(d) - nsau(n), 0)
    for _ in range(max(nsau(d) - nsau(n), 0)):  # bltu, sub, srli, addi, bnez
        n -= shifted if n >= shifted else 0
        shifted >>= 1
        steps += 1
    return steps


def test_a_16x8_tap_counts_its_ring_divisions_loop_steps():
    """On the LX106 a tap's column % of the ring (msf_stored_col) is a call of libgcc's __modsi3,
    whose loop passes once per bit the column has past the ring's (4 or 5 instructions a pass):
    ring_tap_bit counts those passes per tap and output channel. Brute force over
    bin_i16_conv1d's first convolution (1 x 5 SAME on 30 steps, 8 outputs) and its max pool
    (1 x 2, stride 2), a column at a time in a ring of 6 columns."""
    graph = pipeline.load(str(FIXTURES / "models" / "bin_i16_conv1d.tflite"), weights=True)
    counter = BlockCounter(graph, dsp=False)
    for op, family, k, stride, pad, width, columns in ((0, "conv_s16", 5, 1, 2, 30, 30),
                                                       (1, "max_pool2d_s16", 2, 2, 0, 30, 15)):
        for c in range(columns):
            inputs = [c * stride - pad + j for j in range(k) if 0 <= c * stride - pad + j < width]
            got = counter.call(op, 0, 1, c, c + 1, 6)[f"{family}:ring_tap_bit"]
            assert got == 8 * sum(_modsi3_loop_steps(x, 6) for x in inputs)
        assert not counter.call(op, 0, 1, 0, columns)[f"{family}:ring_tap_bit"]


def test_a_float_tanh_counts_its_signed_inputs_apart():
    """Soft float computes tanh(0) on a short path, and a ReLU's output is about half 0: the float
    Tanh counts its values as output_tanh, and those of an input no ReLU made (rectified_input) as
    output_tanh_signed too. 4 x 4 x 3 map, a 1x1 convolution of 5 channels before each (the
    calibration script's layers: the ONNX and Keras float Tanh is float_unary)."""
    import importlib.util
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "scripts" / "calibrate_latency.py"
    spec = importlib.util.spec_from_file_location("calibrate_latency", script)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)

    def counts(act):
        conv = {"op": "conv2d", "filters": 5, "kernel": 1, **({"act": act} if act else {})}
        doc = {"name": "tanh", "input": [4, 4, 3], "layers": [conv, {"op": "float_unary", "function": "tanh"}]}
        return BlockCounter(tool.graph_of(doc, "float32"), dsp=False).call(1, 0, 4, 0, 4)

    signed, rectified = counts(None), counts("relu")
    assert signed["float_unary_f32:output_tanh"] == signed["float_unary_f32:output_tanh_signed"] == 4 * 4 * 5
    assert rectified["float_unary_f32:output_tanh"] == 4 * 4 * 5 and not rectified["float_unary_f32:output_tanh_signed"]


def test_an_element_wise_kernel_in_a_stream_divides_once_per_ringed_view_and_pixel():
    """Each element-wise kernel locates every pixel of each view with msf_at_s8, whose column is
    taken modulo the view's ring where the view is one in the stream (__aeabi_idivmod on Armv6-M).
    Measured under QEMU with a per-address count of the call sites, convlstm_cell_last_int8's
    least-RAM plan on cortex-m0plus calls it 6,848 times from its element-wise kernels (ADD 2,624,
    the lookups 1,984, MUL 1,472, DEQUANTIZE and QUANTIZE 384 each). Every view there is a ring of
    one column over columns 0..7, so each quotient is its column: libgcc's division steps through
    no bit for 0 and 1 and three for 2..7 (18 a row of 8 columns)."""
    from msfcnn.latency.model import schedule_features
    graph = pipeline.load(str(FIXTURES / "sequence" / "convlstm_cell_last_int8.tflite"), weights=True)
    model = latency.load("cortex-m0plus")
    plan = pipeline.planner(graph, latency=model).min_ram()
    features = schedule_features(pipeline.lower(graph, plan), BlockCounter(graph, model.dsp, mve=model.mve))
    views = sum(f["stream:ring_view_pixel"] for f in features)
    assert views == 2624 + 1984 + 1472 + 384 + 384
    assert sum(f["stream:ring_view_step"] for f in features) == views // 8 * sum(
        0 if c < 2 else 3 for c in range(8))


def test_a_ring_division_steps_through_more_quotient_bits_further_along_the_stream():
    """rsqrt_sweep_1 (4 rows of 64 columns) streams a RELU into a lookup through a ring of one
    column: the RELU writes it and the lookup reads it, one division a pixel each, 512 calls of
    __aeabi_idivmod as measured under QEMU on cortex-m0plus. Its quotients reach 63, whose
    division steps through 7 bits (16 and above) where the ConvLSTM cells' step through 3."""
    from msfcnn.latency.model import schedule_features
    graph = pipeline.load(str(FIXTURES / "ops" / "rsqrt_sweep_1.tflite"), weights=True)
    model = latency.load("cortex-m0plus")
    plan = pipeline.planner(graph, latency=model).min_ram()
    features = schedule_features(pipeline.lower(graph, plan), BlockCounter(graph, model.dsp, mve=model.mve))
    assert sum(f["stream:ring_view_pixel"] for f in features) == 512
    steps_a_row = sum(0 if c < 2 else 3 if c < 16 else 7 for c in range(64))
    assert sum(f["stream:ring_view_step"] for f in features) == 2 * 4 * steps_a_row


def test_fit_counts_one_pixel_takes_the_column_streams_blocks():
    """scripts/calibrate_latency.py --fit-counts --one-pixel fits on the blocks whose calls of the
    families are each of one pixel: a column stream of a one-row map calls the convolution once a
    column (the C's region i .. i + 1), the whole-map block once for every pixel."""
    import importlib.util
    from pathlib import Path

    from msfcnn.latency import calibration
    from msfcnn.latency.model import schedule_features

    script = Path(__file__).resolve().parents[2] / "scripts" / "calibrate_latency.py"
    spec = importlib.util.spec_from_file_location("calibrate_latency", script)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    doc = {"name": "one_row", "input": [1, 24, 8], "layers": [
        {"op": "conv2d", "filters": 8, "kernel": [1, 3], "padding": "valid"},
        {"op": "conv2d", "filters": 4, "kernel": [1, 3], "padding": "valid"},
        {"op": "global_avg_pool"}]}
    graph = calibration.graph_of(doc)
    planner = pipeline.planner(graph)
    family = ("conv_mve_gather",)
    for plan, streamed in ((planner.vanilla(), False), (planner.min_ram(), True)):
        blocks = schedule_features(pipeline.lower(graph, plan), BlockCounter(graph, True, mve=True))
        convs = [f for f in blocks if f.get("conv_mve_gather:call")]
        assert [tool.one_pixel(f, family) for f in convs] == [streamed] * len(convs)
        widths = sum(graph.shape_of(t)[1] for t in range(2))
        assert sum(f["conv_mve_gather:call"] for f in convs) == (widths if streamed else 2)
    assert not tool.one_pixel({"stream:position": 42}, family)  # (a block without the family's calls)


def test_fit_counts_on_the_stored_float_one_pixel_networks_gives_cortex_m0plus_conv_call(tmp_path, monkeypatch):
    """cortex-m0plus's float CONV_2D cost per call was fitted with `--fit-counts call --one-pixel
    --samples cortex-m0plus-onepix-f32.jsonl`: on those measured networks alone (float
    one_pixel_networks, each streamed one pixel a call), not on the other stored blocks whose
    product errors hold it at 0. Fitting the committed measurements again gives the stored cost,
    and the networks are still the generator's."""
    import importlib.util
    import json
    import lzma
    from pathlib import Path

    from msfcnn.latency import calibration

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("calibrate_latency", root / "scripts" / "calibrate_latency.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    text = lzma.decompress((root / "benchmarks/results/latency_measurements/cortex-m0plus-onepix-f32.jsonl.xz")
                           .read_bytes()).decode()
    assert all(json.loads(line)["doc"] == calibration.one_pixel_network(json.loads(line)["seed"])
               for line in text.splitlines() if line)
    samples = tmp_path / "cortex-m0plus-onepix-f32.jsonl"
    samples.write_text(text)
    fitted = []
    monkeypatch.setattr(tool, "stored_samples", lambda target: tool.load_samples(samples, False))
    monkeypatch.setattr(tool, "_write", lambda model, target, also: fitted.append(model))
    tool.fit_counts("cortex-m0plus", ("conv_f32",), ("call",), [], only_one_pixel=True, samples_path=samples)
    stored = latency.load("cortex-m0plus").coefficients["conv_f32:call"]
    assert stored > 100 and fitted[0].coefficients["conv_f32:call"] == pytest.approx(stored, rel=1e-6)


def _model_c_windows(text: str) -> tuple[dict[int, int], dict[int, dict[str, int]], dict[int, int]]:
    """The row rings of a row stream's views (s.v[t]: base, row and column strides, origins, row
    ring, column ring), each window op's parameters (p{t}) and the rows each op computes (s.hi[t]),
    read off a generated model.c."""
    import re
    rings = {int(t): int(ring) for t, ring in re.findall(r"s\.v\[(\d+)\] = \(msf_view\)\{ [^,]+, \d+, \d+, -?\d+, -?\d+, (\d+), \d+ \}", text)}
    params = {int(t): {k: int(v) for k, v in re.findall(r"\.(\w+) = (-?\d+)", body)}
              for t, body in re.findall(r"static const msf_\w+_params p(\d+) = \{(.*?)\};", text)}
    rows = {int(t): int(hi) for t, hi in re.findall(r"s\.hi\[(\d+)\] = (\d+);", text)}
    return rings, params, rows


def test_a_row_stream_window_counts_its_row_ring_divisions(tmp_path):
    """In a row stream the window kernels locate each in-bounds kernel row of an output pixel in
    their input's row ring, and the pixel in their output's, with a % (msf_stored_row), a call of
    libgcc's __modsi3 on the LX106: stream:ring_row counts those divisions, stream:ring_row_bit
    their loop's passes. Brute force from the generated C of bin_conv1d_reshape's least-RAM plan (a
    line buffer of a 5 x 1 and a 3 x 1 CONV_2D, a 3 x 1 DEPTHWISE_CONV_2D and a 4 x 1 average
    pool on a 24-step map, one column): its views' rings and its ops' windows read off model.c.
    (Profiled per address on QEMU, that block calls __modsi3 116 times.) The vanilla plan has none."""
    graph = pipeline.load(str(FIXTURES / "models" / "bin_conv1d_reshape.tflite"), weights=True)
    planner = pipeline.planner(graph, latency=latency.load("xtensa-lx106"))
    plan = planner.min_ram()
    schedule = pipeline.lower(graph, plan)
    pipeline.write_c(tmp_path, graph, schedule, plan)
    rings, params, rows = _model_c_windows((tmp_path / "model.c").read_text())
    divisions = steps = 0
    for t, p in params.items():
        if t not in rows:  # not in the stream
            continue
        width = graph.shape_of(t)[1]
        reads = [i * p["stride_h"] - p["pad_top"] + k for i in range(rows[t]) for k in range(p["kh"])]
        reads = [y for y in reads if 0 <= y < p["in_h"]]
        if rings.get(t - 1):  # the op's input is the previous tensor's ring (a chain)
            divisions += len(reads) * width
            steps += sum(_modsi3_loop_steps(y, rings[t - 1]) for y in reads) * width
        if rings.get(t):
            divisions += rows[t] * width
            steps += sum(_modsi3_loop_steps(i, rings[t]) for i in range(rows[t])) * width
    from msfcnn.latency.model import schedule_features
    features = schedule_features(schedule, BlockCounter(graph, dsp=False))[0]
    assert (features["stream:ring_row"], features["stream:ring_row_bit"]) == (divisions, steps) == (116, 100)
    unfused = schedule_features(pipeline.lower(graph, planner.vanilla()), BlockCounter(graph, dsp=False))
    assert not any(f["stream:ring_row"] for f in unfused)


def test_the_stored_column_sweeps_refit_xtensas_depthwise_call():
    """The networks from COLUMN_SEED (column_network: k x 1 windows on one-column maps) were
    measured on xtensa-lx106 to price a kernel call apart from a row: a whole-map run calls each
    kernel once, a row stream once a row. The generator must still draw the networks stored, on
    W = 1 maps with k x 1 windows only; and a least-squares refit of DEPTHWISE_CONV_2D's cost per
    call on their blocks (every other cost as committed, rows weighted by 1/sqrt(instructions) as
    calibration.fit) lands within 5 % of the committed one (48.5 since the channels' divisions are
    counted, `depthwise:division`; 125 before, where whole maps alone had put 35)."""
    import json
    import lzma
    from pathlib import Path

    from msfcnn.latency import calibration
    from msfcnn.latency.model import schedule_features
    from msfcnn.plan import Plan

    stored = Path(__file__).resolve().parents[2] / "benchmarks/results/latency_measurements/xtensa-lx106-columns.jsonl.xz"
    rows = [json.loads(line) for line in lzma.decompress(stored.read_bytes()).decode().splitlines() if line]
    assert {row["seed"] for row in rows} == set(range(calibration.COLUMN_SEED, calibration.COLUMN_SEED + 32))
    assert all(row["doc"] == calibration.column_network(row["seed"]) == calibration.sweep_network(row["seed"])
               for row in rows)
    assert all(row["doc"]["input"][1] == 1 and all(layer.get("kernel", [1, 1]) in (1, [1, 1]) or layer["kernel"][1] == 1
                                                   for layer in row["doc"]["layers"]) for row in rows)
    model = latency.load("xtensa-lx106")
    name = "depthwise:call"
    calls, rests, weights = [], [], []
    for row in rows:
        graph = calibration.graph_of(row["doc"])
        stored_plan = Plan.from_dict(row["plan"])
        plan = Plan(stored_plan.model, stored_plan.cost_model, stored_plan.vanilla_macs, stored_plan.blocks,
                    io_counted=row["count_io"], input_streamed=stored_plan.input_streamed)
        features = schedule_features(pipeline.lower(graph, plan), BlockCounter(graph, False))
        for f, measured in zip(features, row["blocks"]):
            if f.get(name):
                calls.append(f[name])
                rests.append(measured - model.predict(f) + model.coefficients[name] * f[name])
                weights.append(1 / measured)
    calls, rests, weights = np.array(calls, float), np.array(rests, float), np.array(weights)
    refit = float(np.sum(weights * calls * rests) / np.sum(weights * calls * calls))
    assert len(calls) >= 40 and calls.max() >= 20
    assert abs(refit / model.coefficients[name] - 1) < 0.05
