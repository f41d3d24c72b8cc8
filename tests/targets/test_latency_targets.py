"""The stored latency models against the boards they model: predictions within 3 % of the
instructions measured on QEMU, and the two RISC-V targets that share coefficients counting the
same instructions."""

import numpy as np
import pytest

from msfcnn import latency, pipeline
from support.toolchains import require_target

TOLERANCE = 0.03  # the goal for every built-in model and plan (benchmarks/latency_model.py)


def _measured_and_predicted(model: str, target_name: str, overhead: float):
    target = require_target(target_name)
    graph = pipeline.load(model, weights=True)
    plan = pipeline.planner(graph).p1(overhead)
    schedule = pipeline.lower(graph, plan)
    x = np.random.default_rng(1).integers(-128, 128, size=graph.input_shape).astype(np.int8)
    check = pipeline.verify(graph, plan, schedule, x, target, count_instructions=True)
    assert check.passed
    predicted = latency.load(target_name).counter(graph).schedule(schedule)
    return check, predicted


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m7", "cortex-m55", "fe310", "xtensa-lx106"])
def test_stored_coefficients_predict_within_tolerance(target):
    check, predicted = _measured_and_predicted("mcunet-vww5", target, 1.2)
    assert abs(sum(predicted) / check.instructions - 1) <= TOLERANCE
    assert len(predicted) == len(check.block_instructions)


def test_fe310_counts_as_esp32c3():
    """fe310 borrows esp32c3's coefficients (calibrated_on): both run the same instructions."""
    fe310, _ = _measured_and_predicted("mcunet-vww5", "fe310", 1.2)
    esp32c3, _ = _measured_and_predicted("mcunet-vww5", "esp32c3", 1.2)
    assert fe310.block_instructions == esp32c3.block_instructions
    assert latency.load("fe310").coefficients == latency.load("esp32c3").coefficients


@pytest.mark.parametrize("name", ["rows_dense_float32.tflite", "onnx_conv1d_stride.onnx", "onnx_conv1d_tcn_valid.onnx"])
def test_float_convolutions_of_sequences_predict_within_tolerance(name):
    """Float 1 x k and 1x1 convolutions called a pixel at a time (a row stream, a dense layer over
    a sequence's rows, a stride-2 Conv1D) on cortex-m4, least-RAM plan: each output channel's own
    pass over the window's runs is counted (run_channel), and a one-pixel 1x1 call's cost is fitted
    on one-pixel calls too (calibrate_latency.py --remeasure conv_1x1_f32 --refit)."""
    from msfcnn.tensors import random_input
    from support.paths import FIXTURES

    target = require_target("cortex-m4")
    graph = pipeline.load(str(FIXTURES / "sequence" / name), weights=True)
    model = latency.load("cortex-m4")
    plan = pipeline.planner(graph, latency=model).min_ram()
    schedule = pipeline.lower(graph, plan)
    check = pipeline.verify(graph, plan, schedule, random_input(graph, 0), target, count_instructions=True)
    assert check.passed
    assert abs(sum(model.counter(graph).schedule(schedule)) / check.instructions - 1) <= TOLERANCE
