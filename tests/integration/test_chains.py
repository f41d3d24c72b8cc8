"""The `chains` scheme: rows stream through conv -> depthwise -> 1x1 chains made pixel by pixel, the
first op recomputed for every depthwise tap, only the chains' inputs kept in rings of rows."""

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.c_build import check_c
from support.input_stream import chain, edges
from msfcnn import pipeline
from msfcnn.cost import exact
from msfcnn.fusion import solvers
from msfcnn.fusion.dag import Block
from msfcnn.ir import NETWORK_INPUT
from msfcnn.latency.features import BlockCounter
from msfcnn.schedule import Liveness, lower_block, schedule_plan
from msfcnn.schedule.lowered import Chains
from msfcnn.schedule.schemes.chains import reads_every_row
from msfcnn.tensors import random_input


def two_chains(tmp_path, channels=12, h=14, w=11):
    """conv 3x3/2 -> dw 3x3 -> conv 1x1, then conv 1x1 -> dw 5x5/2 -> conv 1x1 (mcunet-320kb's first
    six ops, small), loaded as a file so that LiteRT's depthwise splits `channels` into its vector
    part and (12) a scalar tail."""
    path = tmp_path / "two_chains.json"
    path.write_text(json.dumps({"name": "two_chains", "input": [h, w, 3], "layers": [
        {"op": "conv2d", "filters": channels, "kernel": 3, "stride": 2, "padding": "same", "act": "relu6"},
        {"op": "depthwise_conv2d", "kernel": 3, "stride": 1, "padding": "same", "act": "relu6"},
        {"op": "conv2d", "filters": 5, "kernel": 1, "stride": 1, "padding": 0},
        {"op": "conv2d", "filters": channels, "kernel": 1, "stride": 1, "padding": 0, "act": "relu6"},
        {"op": "depthwise_conv2d", "kernel": 5, "stride": 2, "padding": "same", "act": "relu6"},
        {"op": "conv2d", "filters": 6, "kernel": 1, "stride": 1, "padding": 0}]}))
    return pipeline.load(str(path), weights=True)


def run_blocks(graph, blocks, input_stream, seed=0):
    x = random_input(graph, seed)
    run = pipeline.run(schedule_plan(graph, blocks, input_stream=input_stream), x)
    return run, pipeline.run_reference(graph, x)


def test_one_chain_by_hand():
    """chain(): input 12x7x3, conv 3x3/2 8 (TF same: pad 0 above, 1 below) -> 6x4x8, dw 3x3 same,
    conv 1x1 4 -> 6x4x4. Output row i reads dw rows [i-1, i+2) of op 0's 6, which read input rows
    [2(i-1), 2(i+1)+3) of 12: 5, 7, 7, 7, 6, 4 rows, so a ring of 7 input rows (7 x 7 x 3 = 147 B)
    beside the 96-byte output. Op 0 runs once per in-bounds tap: (2+3+3+3+3+2) rows x (2+3+3+2)
    columns = 160 of its 24 pixels, 216 MACs each; the depthwise and the 1x1 once (1728, 768)."""
    graph = chain()
    live = Liveness(graph, input_stream=True)
    block = lower_block(graph, live, 0, 2, "chains")
    assert isinstance(block.loops, Chains) and block.loops.source and block.reads == ()
    assert block.rings == {NETWORK_INPUT: 7} and [s.nbytes for s in block.scratch] == [147]
    assert live.block_ram(block) == 147 + 96
    assert block.macs == 160 * 216 + 1728 + 768 == 37056
    assert block.recompute == (160 / 24, 1.0, 1.0)
    order = block.loops.order
    assert order[:6] == ((-1, 0), (-1, 1), (-1, 2), (-1, 3), (-1, 4), (0, 0))  # rows 0-4 before output row 0
    assert [i for k, i in order if k == -1] == list(range(12)) and [i for k, i in order if k == 0] == list(range(6))
    # without --input-stream the input is the caller's: nothing but the output
    whole = lower_block(graph, Liveness(graph), 0, 2, "chains")
    assert whole.rings == {} and whole.reads == (NETWORK_INPUT,) and Liveness(graph).block_ram(whole) == 96
    blocks = edges(graph, live, [(0, 2, "chains", 1), (3, 3, "single", 1), (4, 4, "single", 1)])
    run, expected = run_blocks(graph, blocks, True)
    assert np.array_equal(run.output, expected) and run.input_rows == tuple(range(12))
    assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes == max(b.ram_bytes for b in blocks)
    assert run.macs - sum(graph.macs(t) for t in (3, 4)) == block.macs and run.recompute[0] == 160 / 24


def test_two_chains_keep_the_first_chains_output_in_a_ring(tmp_path):
    """The second chain's output row j reads rows [2j - 2, 2j + 3) of the first chain's output
    (dw 5x5/2 over a 1x1): a ring of 5 rows of 6 x 5 values; its 1x1 first op runs 25 times a pixel."""
    graph = two_chains(tmp_path)
    live = Liveness(graph, input_stream=True)
    block = lower_block(graph, live, 0, 5, "chains")
    assert block.rings[2] == 5 and block.scratch_named("ring2").nbytes == 5 * 6 * 5
    assert live.block_ram(block) == sum(s.nbytes for s in block.scratch) + graph.nbytes(5)
    blocks = edges(graph, live, [(0, 5, "chains", 1)])
    run, expected = run_blocks(graph, blocks, True)
    assert np.array_equal(run.output, expected) and run.input_rows == tuple(range(14))
    assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes == blocks[0].ram_bytes
    parts = graph.nodes[1].op.tap_parts("p1", 12)
    assert parts == (("&p1.vector", 0), ("&p1.tail", 8))  # LiteRT's vector channels, then its scalar tail
    assert check_c(graph, blocks, input_stream=True) == blocks[0].ram_bytes
    whole = edges(graph, Liveness(graph), [(0, 2, "chains", 1), (3, 5, "chains", 1)])  # op 2 whole in the arena
    assert check_c(graph, whole) == max(b.ram_bytes for b in whole)


def test_the_latency_counts_every_first_op_call_and_tap():
    """The counter's first-op calls are one per output pixel and in-bounds kernel row (6 x 4 pixels,
    16 x 4 kernel rows), each over the row's in-bounds columns; the taps are 160."""
    graph = chain()
    block = lower_block(graph, Liveness(graph, input_stream=True), 0, 2, "chains")
    f = BlockCounter(graph, dsp=False).block(block)
    family = BlockCounter(graph, dsp=False).op(0).family
    assert f[f"{family}:call"] == 16 * 4 and f[f"{family}:pixel"] == 160
    assert f["chain:tap"] == 160 and f["chain:tap_channel"] == 160 * 8 and f["chain:pixel"] == 24
    assert f["chain:step"] == 12 + 6 and f["memmove:call"] == 12


@st.composite
def chain_networks(draw):
    """One or two chains (a conv kxk/s or 1x1, a depthwise kxk/s, a 1x1 conv) on a small input."""
    h, w, c = draw(st.integers(5, 16)), draw(st.integers(5, 16)), draw(st.integers(1, 4))
    layers = []
    for _ in range(draw(st.integers(1, 2))):
        k, width = draw(st.sampled_from([1, 3])), draw(st.integers(1, 10))
        layers += [{"op": "conv2d", "filters": width, "kernel": k, "stride": draw(st.integers(1, 2)) if k > 1 else 1,
                    "padding": draw(st.sampled_from(["same", "valid"])) if k > 1 else 0, "act": "relu6"},
                   {"op": "depthwise_conv2d", "kernel": draw(st.sampled_from([3, 5, 7])),
                    "stride": draw(st.integers(1, 2)), "padding": "same", "act": "relu"},
                   {"op": "conv2d", "filters": draw(st.integers(1, 6)), "kernel": 1, "stride": 1, "padding": 0}]
    return {"name": "chains", "input": [h, w, c], "layers": layers}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(chain_networks(), st.booleans(), st.integers(0, 1000))
def test_random_chains_run_bit_exact_in_the_predicted_arena(tmp_path, doc, streamed, seed):
    """Random chains: the DAG the build prunes gives the complete DAG's least RAM (brute force over
    every candidate, the chains blocks among them) at every cap; the plan of chains blocks alone
    runs bit-exact, each input row pulled once in order, in an arena of the predicted size."""
    path = tmp_path / f"chains{seed}.json"
    path.write_text(json.dumps(doc))
    try:
        graph = pipeline.load(str(path), weights=True)
    except Exception:  # noqa: BLE001 - shapes that do not work out
        return
    live = Liveness(graph, input_stream=streamed)
    complete = exact.build_dag(graph, complete=True, input_stream=streamed)
    pruned = exact.build_dag(graph, input_stream=streamed)
    total = sum(graph.macs(i) for i in range(len(graph)))
    for cap in (1.0, 4.0, float("inf")):
        assert solvers.p1(pruned, cap * total).peak_ram == solvers.p1(complete, cap * total).peak_ram
    block = lower_block(graph, live, 0, len(graph) - 1, "chains")
    if not all(reads_every_row(graph, start) for start in range(3, len(graph), 3)):
        assert block is None  # a chain would make rows the next one never reads: not offered
        return
    assert block is not None
    blocks = [Block(0, len(graph) - 1, "chains", live.block_ram(block), block.macs, 1, block)]
    run, expected = run_blocks(graph, blocks, streamed, seed)
    assert np.array_equal(run.output, expected)
    assert run.input_rows == (tuple(range(graph.input_shape[0])) if streamed else ())
    assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes == blocks[0].ram_bytes
    assert run.macs == block.macs


def test_a_pattern_that_is_no_chain_is_refused():
    graph = chain()
    live = Liveness(graph)
    assert lower_block(graph, live, 0, 1, "chains") is None  # not three ops
    assert lower_block(graph, live, 1, 3, "chains") is None  # a depthwise first, a pool last


@pytest.mark.qemu
def test_mcunet_chains_on_cortex_m4(tmp_path):
    graph = two_chains(tmp_path, channels=16, h=24, w=20)
    live = Liveness(graph, input_stream=True)
    blocks = edges(graph, live, [(0, 5, "chains", 1)])
    assert check_c(graph, blocks, target="cortex-m4", input_stream=True) == blocks[0].ram_bytes
