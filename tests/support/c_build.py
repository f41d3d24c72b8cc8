"""Build and run generated C for a plan, and compare it with the fused numpy executor."""

import numpy as np

from msfcnn import pipeline
from msfcnn.plan import Plan
from msfcnn.schedule import schedule_plan
from msfcnn.targets import get_target
from msfcnn.tensors import random_input


def check_c(graph, blocks, target="host", seed=0, count_io=False):
    """Generate, build and run; assert int8 bit-exactness (float within 1e-4) and that the
    arena in the object file is the predicted peak (with the network input and output in it
    when `count_io`). Returns the arena size."""
    schedule = schedule_plan(graph, list(blocks), count_io)
    plan = Plan(graph.name, "exact", sum(graph.macs(i) for i in range(len(graph))), tuple(blocks), io_counted=count_io)
    tgt = get_target(target)
    check = pipeline.verify(graph, plan, schedule, random_input(graph, seed), tgt)
    if graph.dtype == "int8":
        assert check.bit_exact, f"C differs from numpy on {int((check.output != check.expected).sum())} values"
    else:
        np.testing.assert_allclose(check.output, check.expected, rtol=1e-4, atol=1e-5)
    assert check.arena_bytes == schedule.arena_bytes
    if tgt.embedded_harness:  # it measures the stack, and fails if the stack reached the static data
        assert check.stack_bytes is not None and 0 < check.stack_bytes < 4096
    return check.arena_bytes
