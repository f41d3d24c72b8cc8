"""Build and run generated C for a plan, and compare it with the fused numpy executor."""

import tempfile
from pathlib import Path

import numpy as np

from msfcnn import executor
from msfcnn.codegen import build
from msfcnn.fused_executor import run_fused
from msfcnn.plan import Plan
from msfcnn.schedule import schedule_plan
from msfcnn.targets import get_target
from msfcnn.tensors import random_input


def check_c(graph, blocks, target="host", seed=0):
    """Generate, build and run; assert int8 bit-exactness (float within 1e-4) and that the
    arena in the object file is the predicted peak. Returns the arena size."""
    schedule = schedule_plan(graph, list(blocks))
    plan = Plan(graph.name, "exact", sum(graph.macs(i) for i in range(len(graph))), tuple(blocks))
    x = random_input(graph, seed)
    expected = run_fused(schedule, x, raw=True).output.reshape(-1)
    internal = executor.to_internal(graph, x[0])
    tgt = get_target(target)
    with tempfile.TemporaryDirectory(prefix="msfcnn-test-") as folder:
        folder = Path(folder)
        build.write_project(folder, graph, schedule, plan, tgt)
        program = build.build(folder, tgt)
        harness = build.run(program, tgt, graph, internal)
        got = harness.output
        arena = build.arena_bytes(folder, tgt)
    if graph.dtype == "int8":
        assert np.array_equal(got, expected), f"C differs from numpy on {int((got != expected).sum())} values"
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    assert arena == schedule.arena_bytes
    if tgt.embedded_harness:  # it measures the stack, and fails if the stack reached the static data
        assert harness.stack_bytes is not None and 0 < harness.stack_bytes < 4096
    return arena
