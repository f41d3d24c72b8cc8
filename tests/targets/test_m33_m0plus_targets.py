"""The Cortex-M33 and Cortex-M0+ targets (issue 27): generated C bit-exact under QEMU, with exact
instruction counts; and the premise of the cortex-m0plus target, that Armv6-M code counts the same
on mps2-an385's Cortex-M3 as on a Cortex-M0 (QEMU's microbit, 16 KiB of RAM), checked on a small
network that fits the microbit."""

import json
from dataclasses import replace

import pytest

from msfcnn import pipeline
from msfcnn.cli import main
from msfcnn.codegen import icount
from msfcnn.frontends.layer_list import graph_from_layer_list
from msfcnn.frontends.random_weights import with_random_weights
from msfcnn.tensors import random_input
from support.toolchains import require_target

NEW_CORES = ("cortex-m33", "cortex-m0plus")

# The int8 kernels real layers spend their time in, and their output stages (ruy's rounding on the
# convolutions, gemmlowp's on the depthwise ones), with the Armv6-M loops' edge cases: output
# channels not a multiple of four, padding, a 7x7 depthwise window of more taps than a batch of
# runs holds (msf_runs), small enough for the microbit's 16 KiB.
SMALL = {"name": "small", "input": [16, 16, 3], "layers": [
    {"op": "conv2d", "filters": 8, "kernel": 3, "stride": 2, "padding": 1, "act": "relu"},
    {"op": "depthwise_conv2d", "kernel": 3, "stride": 1, "padding": "same", "act": "relu6"},
    {"op": "conv2d", "filters": 10, "kernel": 1, "stride": 1, "padding": "same"},
    {"op": "depthwise_conv2d", "kernel": 7, "stride": 1, "padding": "same"},
    {"op": "conv2d", "filters": 6, "kernel": 3, "stride": 1, "padding": "same", "act": "relu"},
]}


def microbit(target):
    """cortex-m0plus linked for QEMU's microbit (nRF51822: a Cortex-M0, 256 KiB of flash at 0,
    16 KiB of RAM at 0x20000000) and run there."""
    ldflags = target.ldflags.replace("__flash_size=0x400000", "__flash_size=0x40000")
    ldflags = ldflags.replace("__ram_size=0x400000", "__ram_size=0x4000")
    command = tuple("microbit" if word == "mps2-an385" else word for word in target.command)
    return replace(target, name="cortex-m0plus-on-microbit", ldflags=ldflags, command=command)


@pytest.mark.parametrize("target", NEW_CORES)
def test_least_ram_plan_of_a_builtin_is_bit_exact_counted_and_predicted(target, capsys):
    """Bit-exact, counted block by block, and the target's latency model within 3 % of the count
    (test_latency_targets.TOLERANCE)."""
    require_target(target)
    assert main(["verify", "mcunet-vww5", "--target", target, "--instructions", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["bit_exact"] and doc["target"] == target
    blocks = [b["instructions"] for b in doc["block_instructions"]]
    assert sum(blocks) == doc["instructions"] > doc["plan"]["macs"] and all(n > 0 for n in blocks)
    assert abs(doc["predicted_instructions"] / doc["instructions"] - 1) <= 0.03


def test_armv6m_code_counts_the_same_on_a_cortex_m3_as_on_a_cortex_m0(tmp_path):
    """The same program (only its RAM and flash sizes differ) on both machines: the same output,
    bit-exact, and the same instructions, block by block."""
    target = require_target("cortex-m0plus")
    graph = with_random_weights(graph_from_layer_list(SMALL))
    plan = pipeline.planner(graph).min_ram()
    schedule = pipeline.lower(graph, plan)
    x = random_input(graph, 0)
    checks = [pipeline.verify(graph, plan, schedule, x, tgt, keep=tmp_path / tgt.name, count_instructions=True)
              for tgt in (target, microbit(target))]
    assert all(check.bit_exact for check in checks)
    assert checks[0].block_instructions == checks[1].block_instructions
    assert checks[0].instructions == checks[1].instructions > graph.macs(0)
