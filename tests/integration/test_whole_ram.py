"""Whole-RAM plans: the network input and output as arena buffers (--count-io), and outputs
written over the input rows already consumed (the `overlap` scheme), exact to the byte in the
cost model, the numpy executor and the generated C."""

import numpy as np
import pytest
from hypothesis import strategies as st

from support.c_build import check_c
from support.fused_cases import networks, random_plan
from support.marks import split_examples
from msfcnn import pipeline
from msfcnn.cost import exact
from msfcnn.errors import UserError
from msfcnn.frontends.layer_list import graph_from_layer_list
from msfcnn.frontends.random_weights import with_random_weights
from msfcnn.fusion import solvers
from msfcnn.fusion.dag import Block
from msfcnn.ir import NETWORK_INPUT
from msfcnn.schedule import Liveness, lower_block, schedule_plan
from msfcnn.tensors import random_input


def pointwise(h, w, k, n):
    return with_random_weights(graph_from_layer_list({"name": "pw", "input": [h, w, k], "layers": [
        {"op": "conv2d", "filters": n, "kernel": 1, "stride": 1, "padding": 0}]}))


@pytest.mark.parametrize("k, n", [(8, 4), (8, 12), (6, 6)])
def test_a_1x1_conv_over_its_own_input_needs_one_row_more_than_the_larger_map(k, n):
    """Rows stream in order and row y reads only input row y, so the output may run up to one row
    behind the input: max(input + one output row, output + one input row) bytes, not their sum."""
    h, w = 6, 5
    graph = pointwise(h, w, k, n)
    live = Liveness(graph, count_io=True)
    block = lower_block(graph, live, 0, 0, "overlap")
    size_in, size_out, row_in, row_out = h * w * k, h * w * n, w * k, w * n
    assert block.placed_on[0] == NETWORK_INPUT
    assert live.block_ram(block) == max(size_in + row_out, size_out + row_in) < size_in + size_out
    x = random_input(graph, 1)
    edge = Block(0, 0, block.scheme, live.block_ram(block), block.macs, 1, block)
    run = pipeline.run(schedule_plan(graph, [edge], count_io=True), x)
    assert np.array_equal(run.output, pipeline.run_reference(graph, x))
    assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes == live.block_ram(block)


@pytest.mark.parametrize("stride, padding", [(1, "same"), (2, "same"), (2, "valid")])
def test_an_in_place_depthwise_needs_its_input_and_one_channel_plane(stride, padding):
    h, w, c = 9, 7, 6
    graph = with_random_weights(graph_from_layer_list({"name": "dw", "input": [h, w, c], "layers": [
        {"op": "conv2d", "filters": c, "kernel": 1, "stride": 1, "padding": 0},
        {"op": "depthwise_conv2d", "kernel": 3, "stride": stride, "padding": padding, "act": "relu6"},
        {"op": "global_avg_pool"}]}))
    out_h, out_w, _ = graph.shape_of(1)
    live = Liveness(graph)
    block = lower_block(graph, live, 1, 1, "inplace")
    assert live.block_ram(block) == h * w * c + out_h * out_w  # not input + output
    plan = [Block(b.first, b.last, b.scheme, live.block_ram(b), b.macs, 1, b)
            for b in (lower_block(graph, live, 0, 0, "single"), block, lower_block(graph, live, 2, 2, "single"))]
    x = random_input(graph, 2)
    run = pipeline.run(schedule_plan(graph, plan), x)
    assert np.array_equal(run.output, pipeline.run_reference(graph, x))
    assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes == max(b.ram_bytes for b in plan)
    check_c(graph, plan, seed=2)
    check_c(graph, plan, target="host-sanitize", seed=2)


@pytest.mark.parametrize("scheme", ["hcache", "recompute"])
def test_a_fused_block_writes_its_output_over_the_input_rows_earlier_bands_consumed(scheme):
    """conv 1x1 then depthwise 3x3 stride 2 over 8 rows (TF `same`: no top padding): band r of
    output rows reads input rows 2r.. and writes output rows ..r+1, so with 16 B input rows and
    8 B output rows the output may start at min over r of (2r * 16 - (r + 1) * 8) = -8 B, and the
    two take 8 + 128 B instead of 128 + 32."""
    graph = with_random_weights(graph_from_layer_list({"name": "band", "input": [8, 4, 4], "layers": [
        {"op": "conv2d", "filters": 4, "kernel": 1, "stride": 1, "padding": 0},
        {"op": "depthwise_conv2d", "kernel": 3, "stride": 2, "padding": "same"}]}))
    live = Liveness(graph, count_io=True)
    block = lower_block(graph, live, 0, 1, scheme, rows=1)
    assert block.placed_on == (NETWORK_INPUT, -8)
    assert live.block_ram(block) == 8 + 128 + block.scratch_bytes
    edge = Block(0, 1, scheme, live.block_ram(block), block.macs, 1, block)
    check_io_plan(graph, [edge], seed=4)
    check_c(graph, [edge], seed=4, count_io=True)


def test_a_depthwise_row_in_a_line_buffer_goes_over_a_dead_row_of_its_input_ring():
    """conv 1x1, depthwise 3x3 (same), conv 1x1 over 6 x 5 x 4, rows streamed: linebuffer keeps
    a ring of 3 conv rows (60 B) and one depthwise row (20 B). When depthwise row i is computed,
    conv rows up to i + 1 are made, so row i can take the slot conv row i + 2 will take (shift 2),
    whose row i - 1 only row i itself still reads. Written one pixel to the left of it, from a gap
    of one pixel at the start of each slot: 3 slots of (5 + 1) pixels x 4 channels = 72 B."""
    graph = with_random_weights(graph_from_layer_list({"name": "rows", "input": [6, 5, 4], "layers": [
        {"op": "conv2d", "filters": 4, "kernel": 1, "stride": 1, "padding": 0},
        {"op": "depthwise_conv2d", "kernel": 3, "stride": 1, "padding": "same", "act": "relu6"},
        {"op": "conv2d", "filters": 3, "kernel": 1, "stride": 1, "padding": 0}]}))
    live = Liveness(graph)
    lines = lower_block(graph, live, 0, 2, "linebuffer")
    block = lower_block(graph, live, 0, 2, "inplace")
    assert live.block_ram(lines) == 60 + 20
    assert block.homes == {1: (0, 2)} and live.block_ram(block) == 3 * 6 * 4
    edge = Block(0, 2, "inplace", live.block_ram(block), block.macs, 1, block)
    x = random_input(graph, 5)
    run = pipeline.run(schedule_plan(graph, [edge]), x)
    assert np.array_equal(run.output, pipeline.run_reference(graph, x))
    assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes == 72
    check_c(graph, [edge], seed=5)
    check_c(graph, [edge], target="host-sanitize", seed=5)


def test_a_depthwise_row_read_by_a_window_keeps_its_own_ring():
    graph = with_random_weights(graph_from_layer_list({"name": "rows", "input": [6, 5, 4], "layers": [
        {"op": "conv2d", "filters": 4, "kernel": 1, "stride": 1, "padding": 0},
        {"op": "depthwise_conv2d", "kernel": 3, "stride": 1, "padding": "same"},
        {"op": "conv2d", "filters": 3, "kernel": 3, "stride": 1, "padding": "same"}]}))
    assert lower_block(graph, Liveness(graph), 0, 2, "inplace") is None


@pytest.mark.slow  # fast-tier budget: about 2 to 3 s of CPU
def test_the_first_block_writes_its_output_into_the_image_buffer():
    graph = pipeline.load("mcunet-vww5", weights=True)
    plan = pipeline.planner(graph, count_io=True).p1(1.0)
    first = plan.blocks[0]
    assert first.lowered.placed_on[0] == NETWORK_INPUT  # overlap, or in-place rows placed the same way
    assert first.ram_bytes < graph.nbytes(NETWORK_INPUT) + graph.nbytes(first.last)
    check_c(graph, plan.blocks, count_io=True)


def check_io_plan(graph, blocks, seed):
    schedule = schedule_plan(graph, blocks, count_io=True)
    assert schedule.input_offset is not None and schedule.output_offset is not None
    x = random_input(graph, seed)
    run = pipeline.run(schedule, x)
    expected = pipeline.run_reference(graph, x)
    assert np.array_equal(run.output, expected), "fused result differs from the unfused network"
    assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes == max(b.ram_bytes for b in blocks)
    assert run.macs == sum(b.macs for b in blocks)


def graph_of(doc):
    try:
        return with_random_weights(graph_from_layer_list(doc))
    except UserError:
        return None  # a layer list whose shapes do not work out


def check_random_io_case(doc, seed):
    graph = graph_of(doc)
    if graph is None:
        return
    dag = exact.build_dag(graph, count_io=True)
    check_io_plan(graph, random_plan(dag, seed), seed)
    check_io_plan(graph, list(solvers.min_peak_ram(dag).blocks), seed)


# 200 random cases in all (about 0.5 s of CPU each): 5 in the fast tier, 195 in the slow.
(test_random_networks_and_plans_with_the_input_and_output_in_the_arena,
 test_more_random_networks_and_plans_with_the_input_and_output_in_the_arena) = split_examples(
    check_random_io_case, 5, 195, networks(), st.integers(0, 10_000))


def check_random_c_case(doc, seed, count_io):
    graph = graph_of(doc)
    if graph is None:
        return
    dag = exact.build_dag(graph, count_io=count_io)
    check_c(graph, random_plan(dag, seed), seed=seed % 7, count_io=count_io)


# 20 random networks in C in all (a build each): 5 in the fast tier, 15 in the slow.
test_random_networks_and_plans_in_c, test_more_random_networks_and_plans_in_c = split_examples(
    check_random_c_case, 5, 15, networks(), st.integers(0, 10_000), st.booleans())
