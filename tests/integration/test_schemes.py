"""The scheme registry, the op facts fusion asks for, and the one pipeline every command uses."""

import json
from importlib import resources

import numpy as np
import pytest

from support.paths import FIXTURES
from support.litert_oracle import run_tflite
from msfcnn import pipeline
from msfcnn.cli import main
from msfcnn.cost import exact
from msfcnn.errors import UserError
from msfcnn.frontends.layer_list import graph_from_layer_list
from msfcnn.fusion import solvers
from msfcnn.ops import AxisWindow, Pattern
from msfcnn.plan import Plan
from msfcnn.schedule import schedule_plan
from msfcnn.schedule.schemes import FUSED_SCHEMES, SCHEMES, get_scheme
from msfcnn.schedule.streaming import needed_range
from msfcnn.tensors import random_input

PAD_CONV = FIXTURES / "models" / "op_pad_conv.tflite"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---- the registry ------------------------------------------------------------------------------

def test_registry_lists_every_scheme_with_its_template():
    assert list(SCHEMES)[0] == "single" and set(FUSED_SCHEMES) == {"inplace", "linebuffer", "overlap", "hcache", "recompute", "timescan",
                                                                  "chains"}
    templates = resources.files("msfcnn.codegen").joinpath("templates", "schemes")
    for scheme in SCHEMES.values():
        assert scheme.summary and templates.joinpath(f"{scheme.template}.c.j2").is_file()
    with pytest.raises(UserError, match="unknown fusion scheme 'nope'"):
        get_scheme("nope")


def test_cli_help_lists_the_registry_and_refuses_unknown_schemes(capsys):
    with pytest.raises(SystemExit):
        main(["plan", "--help"])
    out = capsys.readouterr().out
    assert all(name in out for name in FUSED_SCHEMES)
    code, _, err = run(capsys, "plan", "mcunet-vww5", "--schemes", "hcache,strips")
    assert code == 2 and "unknown fusion scheme(s) strips" in err and len(err.strip().splitlines()) == 1


# ---- op facts ----------------------------------------------------------------------------------

@pytest.mark.parametrize("window, lo, hi, size, expected", [
    (AxisWindow(3, 2, 1), 0, 1, 8, (0, 2, 1, 0)),  # conv 3x3/2 pad 1: row 0 reads rows -1..1
    (AxisWindow(3, 2, 1), 3, 4, 8, (5, 8, 0, 0)),
    (AxisWindow(3, 1, 1), 7, 8, 8, (6, 8, 0, 1)),  # the bottom row of a SAME conv: one padding row after
    (AxisWindow(1, 1, 2), 0, 2, 5, (0, 0, 2, 0)),  # a pad's top rows read no input at all
    (AxisWindow(1, 1, 2), 7, 9, 5, (5, 5, 0, 2)),  # ... nor its bottom rows
    (AxisWindow(1, 1, 2), 1, 4, 5, (0, 2, 1, 0)),
    (AxisWindow(), 4, 6, 9, (4, 6, 0, 0)),  # element-wise: the identity
])
def test_axis_window_span(window, lo, hi, size, expected):
    a, b, before, after = window.span(lo, hi, size)
    assert (a, b, before, after) == expected
    assert before + (b - a) + after == (hi - lo - 1) * window.stride + window.kernel


def test_pad_is_a_window_and_fuses_into_the_strided_conv_after_it(capsys):
    """A PAD before a strided conv (Keras' ZeroPadding2D) streams with it: the padded map never
    exists whole, and the fused result is the TFLite interpreter's."""
    graph = pipeline.load(str(PAD_CONV))
    assert graph.nodes[0].op.pattern is Pattern.WINDOW
    assert needed_range(graph, 0, -1, 0, 1, axis=0)[:2] == (0, 0)  # its first row is padding only
    dag = exact.build_dag(graph)
    vanilla = max(b.ram_bytes for b in exact.vanilla_blocks(graph))
    least = solvers.min_peak_ram(dag)
    assert least.blocks[0].first == 0 and least.blocks[0].last == 1 and least.peak_ram < vanilla
    x = random_input(graph, 3)
    plan = Plan(graph.name, "exact", 0, tuple(least.blocks))
    fused = pipeline.run(pipeline.lower(graph, plan), x)
    assert np.array_equal(fused.output, run_tflite(PAD_CONV, x).reshape(fused.output.shape))
    assert fused.measured_peak_ram_bytes == fused.predicted_peak_ram_bytes == least.peak_ram


# ---- the pipeline ------------------------------------------------------------------------------

def test_chosen_blocks_keep_their_lowering():
    graph = pipeline.load("mcunet-vww5")
    plan = pipeline.planner(graph).p1(1.2)
    schedule = schedule_plan(graph, list(plan.blocks))
    assert all(lowered is block.lowered for lowered, block in zip(schedule.blocks, plan.blocks))
    # A plan read back from JSON has no lowering: it is lowered again, to the same schedule.
    again = pipeline.lower(graph, Plan.from_dict(json.loads(json.dumps(plan.to_dict()))))
    assert again.arena_bytes == schedule.arena_bytes and again.tensor_offsets == schedule.tensor_offsets


def test_plan_round_trips_through_json():
    plans = pipeline.planner(pipeline.load("mbv2-w0.35"), count_io=True)
    for plan in (plans.p1(1.3), plans.p2(200_000), plans.vanilla()):
        assert plan.feasible
        back = Plan.from_dict(json.loads(json.dumps(plan.to_dict())))
        assert back == plan and back.to_dict() == plan.to_dict()


@pytest.mark.parametrize("command", ["run", "compile", "verify"])
def test_every_command_refuses_to_schedule_a_paper_plan(command, capsys, tmp_path):
    extra = ["-o", str(tmp_path / "out")] if command == "compile" else []
    code, out, err = run(capsys, command, "mbv2-w0.35", "--cost-model", "paper", "--max-overhead", "1.3", *extra)
    assert code == 2 and out == "" and "use --cost-model exact" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_recompute_bound_with_macs_for_instructions_is_each_blocks_macs():
    """pipeline.recompute_bound weighs each op by how often its block computes its outputs: with
    the ops' unfused MACs standing for their instructions, every block's share is its MACs, and
    recomputing plans have factors above 1."""
    graph = graph_from_layer_list({"name": "chain", "input": [24, 24, 3], "layers": [
        {"op": "conv2d", "filters": 8, "kernel": 3, "stride": 2, "padding": "same"},
        {"op": "depthwise_conv2d", "kernel": 3, "stride": 1, "padding": "same"},
        {"op": "conv2d", "filters": 16, "kernel": 1, "stride": 1, "padding": "same"},
        {"op": "depthwise_conv2d", "kernel": 3, "stride": 2, "padding": "same"},
        {"op": "conv2d", "filters": 8, "kernel": 1, "stride": 1, "padding": "same"}]})
    planner = pipeline.planner(graph, schemes=("recompute",))
    for plan in (planner.vanilla(), planner.min_ram()):
        schedule = pipeline.lower(graph, plan)
        assert sorted(schedule.recompute_factors) == list(range(len(graph)))
        shares = pipeline.recompute_bound(schedule, {op: graph.macs(op) for op in range(len(graph))})
        assert shares == pytest.approx([b.macs for b in plan.blocks], rel=1e-12)
    assert max(schedule.recompute_factors.values()) > 1
