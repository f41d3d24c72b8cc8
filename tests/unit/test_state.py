"""The persistent region of a graph's state buffers (ir.StateBuffer): its layout at the arena's
start, apart from every buffer the plan reuses, counted in each block's RAM, and carried from one
invocation to the next by both executors."""

import numpy as np

from support.paths import FIXTURES
from msfcnn import pipeline
from msfcnn.executor import initial_states, run_sequence
from msfcnn.ir import Graph
from msfcnn.ir.graph import STATE_ALIGNMENT

RANK2 = str(FIXTURES / "sequence" / "svdf_rank2.tflite")


def test_state_buffers_are_aligned_one_after_the_other():
    graph = Graph("g", (1, 1, 4))
    assert graph.state_bytes == 0 and graph.state_offsets() == ()
    graph.add_state(0, "a", np.zeros(3, np.int8))
    graph.add_state(1, "b", np.zeros((2, 3), np.int16))
    graph.add_state(1, "c", np.ones(1, np.int32))
    assert graph.state_offsets() == (0, 4, 16) and graph.state_bytes == 20
    assert graph.states_of(1) == (1, 2) and graph.states_of(0) == (0,) and graph.states_of(2) == ()
    assert all(offset % STATE_ALIGNMENT == 0 for offset in graph.state_offsets())


def test_the_region_is_at_the_arena_start_and_in_every_block():
    graph = pipeline.load(RANK2)
    planner = pipeline.planner(graph)
    for plan in (planner.vanilla(), pipeline.solve(planner)):
        schedule = pipeline.lower(graph, plan)
        assert schedule.state_offsets == graph.state_offsets()
        assert all(b.ram_bytes >= graph.state_bytes for b in plan.blocks)
        assert schedule.arena_bytes == plan.peak_ram_bytes == max(schedule.block_ram)
        placed = [offset for offsets in schedule.tensor_offsets + schedule.scratch_offsets for offset in offsets.values()]
        assert placed and min(placed) >= graph.state_bytes  # no block reuses the region
        assert all(min(source, target) >= graph.state_bytes for moves in schedule.moves for source, target, _ in moves)


def test_both_executors_carry_the_state_from_call_to_call():
    graph = pipeline.load(RANK2)
    rng = np.random.default_rng(4)
    steps = [rng.integers(-2000, 2001, graph.input_shape).astype(np.int16) for _ in range(4)]
    unfused = [y[0] for y in run_sequence(graph, steps)]
    schedule = pipeline.lower(graph, pipeline.solve(pipeline.planner(graph)))
    states = initial_states(graph)
    fused = [pipeline.run(schedule, x, states=states) for x in steps]
    assert all(np.array_equal(f.output, u) for f, u in zip(fused, unfused))
    assert all(f.measured_peak_ram_bytes == schedule.arena_bytes for f in fused)
    # the same frame from the initial state gives another answer: the state changed it
    assert not np.array_equal(unfused[1], run_sequence(graph, steps[1:2])[0][0])
