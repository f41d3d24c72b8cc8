"""Streamed input (--input-stream): a block that streams from op 0 pulls the network input's rows
from the caller, in order and once each, into a ring of the rows it still needs; the plan counts
that ring, the numpy executor and the C run it, and the output is the whole-input network's."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.c_build import check_c
from support.fused_cases import networks, random_plan
from support.input_stream import chain, edges
from msfcnn import pipeline
from msfcnn.cost import exact
from msfcnn.errors import UserError
from msfcnn.frontends.layer_list import graph_from_layer_list
from msfcnn.frontends.random_weights import with_random_weights
from msfcnn.fusion import solvers
from msfcnn.ir import NETWORK_INPUT
from msfcnn.schedule import Liveness, lower_block, schedule_plan
from msfcnn.tensors import random_input


def graph_macs(graph):
    return sum(graph.macs(i) for i in range(len(graph)))


def run_streamed(graph, blocks, seed=0):
    x = random_input(graph, seed)
    run = pipeline.run(schedule_plan(graph, blocks, input_stream=True), x)
    return run, pipeline.run_reference(graph, x)


@pytest.mark.parametrize("scheme, rows", [("linebuffer", 1), ("inplace", 1), ("hcache", 1), ("hcache", 2)])
def test_a_stream_from_op_0_holds_only_the_input_rows_it_still_needs(scheme, rows):
    """conv 3x3/2 (TF same on 12 rows: no top padding) reads input rows 2i..2i+2: a row stream
    keeps 3 of them, a column stream the rows of its widest band; each row is read once, in order."""
    graph = chain()
    live = Liveness(graph, input_stream=True)
    streamed = lower_block(graph, live, 0, 2, scheme, rows)
    without_input = lower_block(graph, Liveness(graph), 0, 2, scheme, rows)  # the input the caller's
    kept = streamed.rings[NETWORK_INPUT]
    band = max(hi - lo for lo, hi in (s[NETWORK_INPUT] for s in streamed.loops.sweeps))
    assert kept == (3 if scheme != "hcache" else band) < 12
    assert NETWORK_INPUT not in streamed.reads
    assert live.block_ram(streamed) == Liveness(graph).block_ram(without_input) + kept * 7 * 3
    blocks = edges(graph, live, [(0, 2, scheme, rows), (3, 3, "single", 1), (4, 4, "single", 1)])
    run, expected = run_streamed(graph, blocks)
    assert np.array_equal(run.output, expected)
    assert run.input_rows == tuple(range(12))  # every row once, top to bottom
    assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes == max(b.ram_bytes for b in blocks)


def test_a_block_that_cannot_pull_rows_in_order_reads_the_input_whole_from_the_arena():
    """An unfused first op reads the whole input: under --input-stream it is in the arena, counted,
    as --count-io counts it, and read from the caller before the first block."""
    graph = chain()
    live = Liveness(graph, input_stream=True)
    single = lower_block(graph, live, 0, 0, "single")
    assert live.block_ram(single) == Liveness(graph, count_io=True).block_ram(single)
    blocks = edges(graph, live, [(i, i, "single", 1) for i in range(len(graph))])
    schedule = schedule_plan(graph, blocks, input_stream=True)
    assert schedule.input_offset is not None
    run, expected = run_streamed(graph, blocks)
    assert np.array_equal(run.output, expected) and run.input_rows == ()


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(networks(), st.integers(0, 10_000))
def test_random_streamed_plans_equal_the_whole_input_network(doc, seed):
    """Random networks x random plans over every candidate block: the fused run with the input
    pulled row by row gives the unfused network's output, pulls each row at most once and in
    order (all of them, when a block pulls any), in an arena of the predicted size."""
    try:
        graph = with_random_weights(graph_from_layer_list(doc))
    except UserError:
        return  # shapes that do not work out
    dag = exact.build_dag(graph, complete=True, input_stream=True)
    # the blocks the build leaves out as beaten are beaten with a streamed input too
    pruned = exact.build_dag(graph, input_stream=True)
    for cap in (1.0, float("inf")):
        assert solvers.p1(pruned, cap * graph_macs(graph)).peak_ram == solvers.p1(dag, cap * graph_macs(graph)).peak_ram
    blocks = random_plan(dag, seed)
    run, expected = run_streamed(graph, blocks, seed)
    assert np.array_equal(run.output, expected)
    pulled = any(getattr(b.lowered.loops, "source", False) for b in blocks)
    assert run.input_rows == (tuple(range(graph.input_shape[0])) if pulled else ())
    assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes == max(b.ram_bytes for b in blocks)


def test_the_least_ram_plan_streams_and_saves_the_image():
    graph = chain(24, 20, 3)
    streamed = pipeline.planner(graph, input_stream=True).p1(float("inf"))
    whole = pipeline.planner(graph, count_io=True).p1(float("inf"))
    schedule = pipeline.lower(graph, streamed)
    assert streamed.input_streamed and schedule.blocks[0].loops.source
    assert streamed.peak_ram_bytes < whole.peak_ram_bytes
    assert schedule.arena_bytes == streamed.peak_ram_bytes


@pytest.mark.parametrize("scheme, rows", [("inplace", 1), ("hcache", 2)])
def test_the_c_pulls_the_rows_and_matches_numpy(scheme, rows):
    graph = chain()
    live = Liveness(graph, input_stream=True)
    blocks = edges(graph, live, [(0, 2, scheme, rows), (3, 3, "single", 1), (4, 4, "single", 1)])
    assert check_c(graph, blocks, input_stream=True) == max(b.ram_bytes for b in blocks)


def test_input_stream_needs_the_exact_cost_model():
    with pytest.raises(UserError, match="--input-stream needs the exact cost model"):
        pipeline.planner(chain(), "paper", input_stream=True)
