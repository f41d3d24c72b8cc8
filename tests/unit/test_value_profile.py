"""The latency model's value profile on the cores without an FPU (latency/values.py,
ops/soft_float.py): float_math.h's exp reductions and the products that read a 0, each against a
brute-force count of its own, and only on the targets whose core has no FPU."""

import math
import struct
from collections import Counter

import numpy as np
import pytest

from msfcnn import latency, pipeline
from msfcnn.ir import Graph
from msfcnn.latency.features import BlockCounter
from msfcnn.latency.model import schedule_features
from msfcnn.latency.values import value_profile
from msfcnn.ops import soft_float
from msfcnn.ops.gru import Gru
from msfcnn.ops.lstm import Lstm
from msfcnn.ops.rnn import Rnn
from msfcnn.targets import TARGETS


def _f32(v: float) -> float:
    """v rounded to float32 (to nearest even), in Python's own floats."""
    return struct.unpack("f", struct.pack("f", v))[0]


def _n_is_zero(x: float) -> bool:
    """float_math.h's n, one value at a time: x * LOG2E + ROUND - ROUND, each rounded to float32."""
    x = min(max(x, _f32(-87.33)), _f32(88.37))
    shifted = _f32(_f32(x * _f32(1.44269504)) + 12582912.0)
    return _f32(shifted - 12582912.0) == 0.0


def test_exp_reductions_are_counted_as_the_c_rounds_n():
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.normal(0, 0.4, 4000), rng.normal(0, 5, 1000), [0.0, -0.0, 0.3465, 0.3467, 90.0, -90.0]])
    x = x.astype(np.float32)
    assert soft_float.reduced(x) == sum(not _n_is_zero(float(v)) for v in x)
    assert soft_float.logistic_reduced(x) == sum(not _n_is_zero(-float(v)) for v in x)
    assert soft_float.tanh_reduced(x) == sum(not _n_is_zero(-2.0 * abs(float(v))) for v in x)
    # away from the rounding's edge, n is 0 exactly where |x| / ln 2 rounds to 0
    away = x[np.abs(np.abs(x) - math.log(2) / 2) > 1e-3]
    assert soft_float.reduced(away) == np.count_nonzero(np.abs(away) > math.log(2) / 2)


def _consts(rng, gates, units, features, scale=0.5):
    draw = lambda *s: rng.normal(0, scale, (gates, *s)).astype(np.float32)  # noqa: E731
    return {"input_weights": draw(units, features), "recurrent_weights": draw(units, units),
            "input_bias": draw(units), "recurrent_bias": draw(units)}


def _cell_graph(op, consts, steps, features):
    graph = Graph("cell", (1, steps, features), dtype="float32")
    t = graph.append(op, (-1,), consts)
    return graph, t


def _gate_sums_f64(w, x_seq, h_seq, gates):
    """Each step's gate sums in float64 from the weights (W x + Wb + R h + Rb)."""
    return [[w["input_weights"][g].astype(float) @ x + w["input_bias"][g] + w["recurrent_weights"][g].astype(float) @ h
             + w["recurrent_bias"][g] for g in range(gates)] for x, h in zip(x_seq, h_seq)]


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_an_rnn_counts_its_reductions_and_the_zeros_its_relu_state_leaves(activation):
    rng = np.random.default_rng(5)
    steps, features, units = 9, 3, 6
    op = Rnn(units, activation=activation)
    consts = _consts(rng, 1, units, features)
    graph, t = _cell_graph(op, consts, steps, features)
    x = rng.normal(0, 1, (1, steps, features)).astype(np.float32)
    counts = value_profile(graph, x)[t]
    hs = op.reference([x[0]], graph.kernel_context(t))
    before = np.vstack([np.zeros(units), hs[:-1]])  # h as each step reads it
    sums = np.array(_gate_sums_f64(consts, x[0].astype(float), before.astype(float), 1))[:, 0]
    edge = np.abs(np.abs(sums) - math.log(2) / 4) < 1e-4  # where float32 rounding may decide
    if activation == "tanh":
        assert abs(counts["expm1_reduced"] - np.count_nonzero(np.abs(sums) > math.log(2) / 4)) <= np.count_nonzero(edge)
    else:
        assert "expm1_reduced" not in counts
    # the later steps' recurrent products read h: those of a value other than 0, less half
    nonzero = sum(units * np.count_nonzero(h) for h in hs[:-1])
    assert counts["state_nonzero_excess"] == nonzero - units * units * (steps - 1) / 2
    assert counts["input_nonzero_excess"] == units * (np.count_nonzero(x) - x.size / 2)


def test_a_relu_rnn_prices_its_zeros_only_where_a_relu_made_its_state():
    rng = np.random.default_rng(6)
    steps, features, units = 7, 2, 5
    for activation in ("relu", "tanh"):
        op = Rnn(units, activation=activation)
        graph, t = _cell_graph(op, _consts(rng, 1, units, features), steps, features)
        x = rng.normal(0, 1, (1, steps, features)).astype(np.float32)
        profile = value_profile(graph, x)
        f = BlockCounter(graph, dsp=False, values=profile).call(t, 0, 1, 0, 1)
        expected = profile[t]["state_nonzero_excess"] if activation == "relu" else 0
        assert f["rnn_f32:value_nonzero_excess"] == expected


def test_an_lstm_counts_the_reductions_of_its_gates_and_its_cell():
    rng = np.random.default_rng(8)
    steps, features, units = 6, 3, 5
    op = Lstm(units)
    w = {"input_weights": rng.normal(0, 0.3, (4, units, features)).astype(np.float32),
         "recurrent_weights": rng.normal(0, 0.3, (4, units, units)).astype(np.float32),
         "bias": rng.normal(0, 0.3, (4, units)).astype(np.float32)}
    graph = Graph("lstm", (1, steps, features), dtype="float32")
    t = graph.append(op, (-1,), w)
    x = rng.normal(0, 1, (1, steps, features)).astype(np.float32)
    counts = value_profile(graph, x)[t]
    # float64 brute force of the cell, from the weights
    h, c = np.zeros(units), np.zeros(units)
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    logistic_args, tanh_args = [], []
    for step in x[0].astype(float):
        pre = [w["input_weights"][g] @ step + w["recurrent_weights"][g] @ h + w["bias"][g] for g in range(4)]
        logistic_args += [pre[0], pre[1], pre[3]]
        c = sig(pre[1]) * c + sig(pre[0]) * np.tanh(pre[2])
        tanh_args += [pre[2], c]
        h = sig(pre[3]) * np.tanh(c)
    logistic_args, tanh_args = np.concatenate(logistic_args), np.concatenate(tanh_args)
    edge = lambda a, bound: np.count_nonzero(np.abs(np.abs(a) - bound) < 1e-4)  # noqa: E731
    assert abs(counts["exp_reduced"] - np.count_nonzero(np.abs(logistic_args) > math.log(2) / 2)) \
        <= edge(logistic_args, math.log(2) / 2)
    assert abs(counts["expm1_reduced"] - np.count_nonzero(np.abs(tanh_args) > math.log(2) / 4)) \
        <= edge(tanh_args, math.log(2) / 4)


def test_a_gru_counts_two_logistics_and_a_tanh_a_unit_step():
    rng = np.random.default_rng(9)
    steps, features, units = 4, 2, 3
    op = Gru(units)
    graph, t = _cell_graph(op, _consts(rng, 3, units, features), steps, features)
    big = np.full((1, steps, features), 40.0, np.float32)  # every gate sum far from 0
    counts = value_profile(graph, big)[t]
    assert counts["exp_reduced"] == 2 * steps * units
    assert counts["expm1_reduced"] <= steps * units


def _float_cell_fixture():
    return pipeline.load("tests/fixtures/sequence/onnx_rnn_relu_batch_first_2.onnx", weights=True)


def test_the_value_counts_are_made_only_where_the_core_has_no_fpu():
    """Cores with an FPU get no value counts; cores without one get them, and only
    xtensa-lx106's fit prices them: on cortex-m0plus, esp32c3 and fe310 they cost 0."""
    graph = _float_cell_fixture()
    assert {name for name, target in TARGETS.items() if not target.fpu} == \
        {"cortex-m0plus", "fe310", "esp32c3", "xtensa-lx106"}
    for target in latency.calibrated_targets():
        model = latency.load(target)
        plan = pipeline.planner(graph, latency=model).min_ram()
        schedule = pipeline.lower(graph, plan)
        profiled = sum(schedule_features(schedule, BlockCounter(graph, model.dsp, mve=model.mve,
                                                                values=value_profile(graph, 0))), Counter())
        plain = sum(schedule_features(schedule, BlockCounter(graph, model.dsp, mve=model.mve)), Counter())
        valued = {k for k, v in profiled.items() if v and k not in plain}
        assert valued and all(k.endswith(("_reduced", "_nonzero_excess", "_nonzero")) for k in valued)
        used = sum(model.counter(graph).schedule(schedule))
        assert model.soft_float == (target in ("cortex-m0plus", "fe310", "esp32c3", "xtensa-lx106"))
        if target != "xtensa-lx106":
            assert used == pytest.approx(model.predict(plain))
        else:
            assert used == pytest.approx(model.predict(profiled)) and used != pytest.approx(model.predict(plain))


def test_a_region_call_counts_its_share_of_the_values_so_a_stream_adds_up_to_the_whole():
    """A float LOGISTIC's exp reductions, per call of a region: its values' share of the whole
    op's (a rate), so that a row stream's calls add up to the whole map's count and a patch that
    computes a row twice counts it twice."""
    from msfcnn.latency.calibration import graph_of
    graph = graph_of({"name": "rate", "input": [6, 5, 3], "layers": [{"op": "logistic"}]}, "float32")
    x = np.random.default_rng(2).normal(0, 0.5, (1, 6, 5, 3)).astype(np.float32)
    profile = value_profile(graph, x)
    whole = profile[0]["exp_reduced"]
    assert whole == soft_float.logistic_reduced(x)
    counter = BlockCounter(graph, dsp=False, values=profile)
    rows = [counter.call(0, r, r + 1, 0, 5)["logistic_f32:exp_reduced"] for r in range(6)]
    assert sum(rows) == pytest.approx(whole)
    assert counter.call(0, 0, 6, 0, 5)["logistic_f32:exp_reduced"] == pytest.approx(whole)
    assert counter.call(0, 0, 3, 0, 5)["logistic_f32:exp_reduced"] == pytest.approx(whole / 2)


def test_a_float_softmax_counts_the_exps_away_from_their_rows_max():
    from msfcnn.latency.calibration import graph_of
    graph = graph_of({"name": "rows", "input": [2, 3, 6], "layers": [{"op": "softmax"}]}, "float32")
    x = np.random.default_rng(4).normal(0, 0.6, (1, 2, 3, 6)).astype(np.float32)
    rows = x.reshape(-1, 6)
    expected = sum(not _n_is_zero(float(np.float32(v - row.max())) * 1.0) for row in rows for v in row)
    profile = value_profile(graph, x)
    assert profile[0]["exp_reduced"] == expected
    assert BlockCounter(graph, dsp=False, values=profile).call(0, 0, 1, 0, 1)["softmax_f32:exp_reduced"] == expected


def test_a_plan_says_its_prediction_is_for_the_seeded_inputs_values_only_where_they_matter():
    """`msfcnn plan` prints that a float graph's prediction on a core without an FPU is for the
    seeded input's values; not on a core with one, nor for an int8 graph on the soft-float core."""
    from msfcnn.report import plan_table
    float_graph = _float_cell_fixture()
    int8_graph = pipeline.load("tests/fixtures/sequence/lstm_residual_int8.tflite", weights=True)
    note = "soft float (no FPU)"
    for graph, target, shown in ((float_graph, "xtensa-lx106", True), (float_graph, "cortex-m4", False),
                                 (int8_graph, "xtensa-lx106", False)):
        plan = pipeline.planner(graph, latency=latency.load(target)).min_ram()
        assert (note in plan_table(plan, graph)) == shown


@pytest.mark.parametrize("kernel, strides, pads, dilations", [
    ((1, 3), (1, 1), (0, 0, 0, 0), (1, 1)), ((3, 3), (2, 2), (1, 1, 1, 1), (1, 1)),
    ((1, 3), (1, 1), (0, 4, 0, 0), (1, 2)), ((2, 3), (1, 2), (1, 2, 0, 1), (2, 3))])
def test_a_convolution_counts_the_products_that_read_a_zero_as_a_loop_over_its_taps(kernel, strides, pads, dilations):
    """zero_products against every output pixel's taps walked one by one, those in the padding
    skipped as the kernels skip them."""
    from msfcnn.ops.base import Window
    from msfcnn.ops.conv2d import zero_products
    win = Window(kernel, strides, pads, dilations)
    rng = np.random.default_rng(5)
    x = rng.normal(size=(5, 9, 3)).astype(np.float32) * (rng.uniform(size=(5, 9, 3)) > 0.4)
    ho, wo = win.output_hw(5, 9)
    zeros = taps = 0
    for oy in range(ho):
        for ox in range(wo):
            for i in range(kernel[0]):
                for j in range(kernel[1]):
                    y = oy * strides[0] - pads[0] + i * dilations[0]
                    xx = ox * strides[1] - pads[1] + j * dilations[1]
                    if 0 <= y < 5 and 0 <= xx < 9:
                        taps += 3
                        zeros += int(np.count_nonzero(x[y, xx] == 0))
    assert zero_products(x, win) == (zeros, taps)


def test_a_float_convolution_prices_each_product_from_the_dense_price_less_its_zeros():
    """dilated_tcn_f32: its first convolution reads a PAD of the input (dense: value_dense counted
    by the op), whose fill is 12 of its 384 products a channel, 96 of 3,072 in all; the later two
    read PADs of ReLU outputs, all their 6,144 products counted dense, less those on a 0 (the
    profile's zeros, as the C reads them: the same numpy reference the C is verified against)."""
    from support.paths import FIXTURES
    from msfcnn.latency.features import _Op
    graph = pipeline.load(str(FIXTURES / "ops" / "dilated_tcn_f32.tflite"))
    profile = value_profile(graph, 0)
    ops = [_Op(graph, t, False, values=profile.get(t)).values for t in (1, 3, 5)]
    assert [v.get("value_dense") for v in ops] == [None, 6144, 6144]
    assert ops[0]["value_dense_zero"] == 96
    assert [v["value_dense_zero"] for v in ops[1:]] == [6144 - profile[t]["value_nonzero"] for t in (3, 5)]
