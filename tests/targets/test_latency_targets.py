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
