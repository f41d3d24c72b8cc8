"""Models with several inputs on emulated microcontrollers: the C (through msfcnn_invoke_inputs)
gives the LiteRT interpreter's output on Cortex-M4 and on the FE310 (whose harness keeps the
inputs, one after the other, in flash), with instructions counted in msfcnn_invoke_inputs, and
linked as a board with the planned stack bound."""

from __future__ import annotations

import numpy as np
import pytest

from support.litert_oracle import run_jobs
from support.paths import FIXTURES
from support.toolchains import require_target
from msfcnn import pipeline
from msfcnn.boards import BOARDS
from msfcnn.codegen.stack import footprint
from msfcnn.tensors import random_input


@pytest.mark.slow
@pytest.mark.parametrize("name, target_name, count_io", [
    ("mi_conditioned", "cortex-m4", False),
    ("mi_late_concat", "cortex-m4", True),
    ("mi_late_concat", "fe310", False),
])
def test_c_gives_the_interpreters_output(name, target_name, count_io):
    target = require_target(target_name)
    path = FIXTURES / "models" / f"{name}.tflite"
    graph = pipeline.load(str(path))
    plan = pipeline.solve(pipeline.planner(graph, count_io=count_io), "optimal", "min-ram")
    schedule = pipeline.lower(graph, plan)
    inputs = [random_input(graph, seed) for seed in (21, 22)]
    for x, want in zip(inputs, run_jobs([(path, inputs)])[0].outputs):
        check = pipeline.verify(graph, plan, schedule, x, target, count_instructions=True)
        assert check.bit_exact and check.arena_bytes == schedule.arena_bytes
        np.testing.assert_array_equal(np.asarray(check.output).reshape(-1), np.asarray(want).reshape(-1))
        assert check.instructions == sum(check.block_instructions) > 0


@pytest.mark.slow
def test_linked_as_a_board_the_stack_stays_within_its_bound():
    board = BOARDS["nucleo-f412zg"]
    target = require_target(board.target)
    graph = pipeline.load(str(FIXTURES / "models" / "mi_conditioned.tflite"))
    plan = pipeline.solve(pipeline.planner(graph), "optimal", "min-ram")
    schedule = pipeline.lower(graph, plan)
    bound = footprint(graph, schedule, plan, target)
    assert "msfcnn_invoke_inputs" in bound.path[0]
    linked = target.for_board(board.name, board.ram_bytes, bound.stack_bytes, True)
    check = pipeline.verify(graph, plan, schedule, random_input(graph, 23), linked)
    assert check.bit_exact and 0 < check.stack_bytes <= bound.stack_bytes
