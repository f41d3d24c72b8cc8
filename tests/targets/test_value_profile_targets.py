"""The latency model's value profile against QEMU's instruction counts on xtensa-lx106, whose core
has no FPU: the same network measured on two inputs that differ only in their values (so only the
soft-float paths differ), against the difference the profile predicts (latency/values.py)."""

from __future__ import annotations

import numpy as np
import pytest

from support.paths import FIXTURES
from support.toolchains import require_target
from msfcnn import latency, pipeline
from msfcnn.latency.calibration import graph_of
from msfcnn.latency.features import BlockCounter
from msfcnn.latency.model import schedule_features
from msfcnn.latency.values import value_profile

TARGET = "xtensa-lx106"


def _measured_and_predicted(graph, inputs):
    target, model = require_target(TARGET), latency.load(TARGET)
    plan = pipeline.planner(graph, latency=model).min_ram()
    schedule = pipeline.lower(graph, plan)
    pairs = []
    for x in inputs:
        check = pipeline.verify(graph, plan, schedule, x, target, count_instructions=True)
        assert check.passed
        features = schedule_features(schedule, BlockCounter(graph, model.dsp, values=value_profile(graph, x)))
        pairs.append((sum(check.block_instructions), sum(model.predict(f) for f in features)))
    return pairs


@pytest.mark.slow
def test_a_float_logistic_costs_what_its_exp_reductions_add():
    """|x| just below ln 2 / 2 (n = 0: the short paths) and just above (n = +-1)."""
    graph = graph_of({"name": "pair", "input": [1, 48, 2], "layers": [{"op": "logistic"}]}, "float32")
    rng = np.random.default_rng(7)
    signs = rng.choice([-1, 1], (1, 1, 48, 2))
    short, long = [(rng.uniform(lo, hi, (1, 1, 48, 2)) * signs).astype(np.float32) for lo, hi in ((0.2, 0.34), (0.36, 0.5))]
    assert value_profile(graph, short)[0]["exp_reduced"] == 0 and value_profile(graph, long)[0]["exp_reduced"] == 96
    (m_short, p_short), (m_long, p_long) = _measured_and_predicted(graph, [short, long])
    assert m_long - m_short == pytest.approx(p_long - p_short, rel=0.05)
    assert p_short == pytest.approx(m_short, rel=0.03) and p_long == pytest.approx(m_long, rel=0.03)


@pytest.mark.slow
def test_an_rnn_on_a_scaled_input_costs_what_its_reductions_and_zeros_change():
    """onnx_rnn_relu_batch_first_2 and onnx_rnn on their seeded input and on it scaled by 1/50,
    where the sums come nearer 0: the measured difference is the predicted one."""
    from msfcnn.tensors import random_input
    for name in ("onnx_rnn", "onnx_rnn_relu_batch_first_2"):
        graph = pipeline.load(str(FIXTURES / "sequence" / f"{name}.onnx"))
        x = random_input(graph, 0)
        (m0, p0), (m1, p1) = _measured_and_predicted(graph, [x, (x / 50).astype(np.float32)])
        assert p0 == pytest.approx(m0, rel=0.03) and p1 == pytest.approx(m1, rel=0.03)
        assert abs((p1 - p0) - (m1 - m0)) <= 0.25 * abs(m1 - m0) + 0.005 * m0


@pytest.mark.slow
def test_a_float_convolution_costs_what_the_zeros_of_its_dense_input_save():
    """A 1 x 3 convolution of a signed map without zeros and of the same map with every other
    channel 0 (half its products read a 0): the measured difference is what `value_dense_zero`
    prices (soft float's short paths for a product and a sum with 0)."""
    graph = graph_of({"name": "pair", "input": [1, 32, 8], "layers": [
        {"op": "conv2d", "filters": 8, "kernel": [1, 3], "stride": 1, "padding": "valid"}]}, "float32")
    rng = np.random.default_rng(3)
    x = (rng.uniform(0.5, 1.5, (1, 1, 32, 8)) * rng.choice([-1, 1], (1, 1, 32, 8))).astype(np.float32)
    half = x.copy()
    half[..., ::2] = 0
    assert value_profile(graph, half)[0]["value_nonzero"] == 30 * 3 * 4 * 8
    (m_dense, p_dense), (m_half, p_half) = _measured_and_predicted(graph, [x, half])
    assert m_dense - m_half == pytest.approx(p_dense - p_half, rel=0.03)
    assert p_dense == pytest.approx(m_dense, rel=0.03) and p_half == pytest.approx(m_half, rel=0.03)
