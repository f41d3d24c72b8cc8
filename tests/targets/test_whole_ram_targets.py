"""Whole-RAM plans (--count-io, the overlap scheme) on the emulated microcontrollers: the input
and output live in the arena, and the C is bit-exact with an arena of the predicted size."""

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from support.c_build import check_c
from support.fused_cases import networks, random_plan
from support.paths import FIXTURES
from msfcnn import pipeline
from msfcnn.cost import exact
from msfcnn.errors import UserError
from msfcnn.frontends.layer_list import graph_from_layer_list
from msfcnn.frontends.random_weights import with_random_weights
from msfcnn.fusion import solvers
from msfcnn.schedule.schemes import FUSED_SCHEMES


@pytest.mark.parametrize("target", ["cortex-m4", "cortex-m7"])
@pytest.mark.parametrize("name", ["mcunet-vww5", "mcunet-vww-res", str(FIXTURES / "models" / "mbv1_025_vww.tflite")])
def test_whole_ram_plans(name, target):
    """The least whole-RAM plan at F <= 1, and a plan of overlap and in-place depthwise blocks
    wherever they apply (the DSP kernels on these cores)."""
    graph = pipeline.load(name, weights=True)
    plan = pipeline.planner(graph, count_io=True).p1(1.0)
    assert "overlap" in {b.scheme for b in plan.blocks}
    assert check_c(graph, plan.blocks, target=target, count_io=True) == plan.peak_ram_bytes
    dag = exact.build_dag(graph, ("overlap", "inplace"), count_io=True)
    mixed = next(blocks for blocks in (random_plan(dag, seed) for seed in range(50))
                 if {"overlap", "inplace"} <= {b.scheme for b in blocks})
    check_c(graph, mixed, target=target, count_io=True)


@pytest.mark.parametrize("target", ["cortex-m4", "fe310"])
def test_in_place_rows_and_placed_bands_on_the_boards(target):
    """mcunet-vww5's least-RAM plan without chains (10,000 B) streams depthwise rows over dead rows
    of their input rings and writes hcache bands over consumed input: bit-exact in an arena of that size."""
    graph = pipeline.load("mcunet-vww5", weights=True)
    plan = pipeline.planner(graph, schemes=[s for s in FUSED_SCHEMES if s != "chains"]).p1(float("inf"))
    lowered = [b.lowered for b in plan.blocks]
    assert any(b.homes for b in lowered)
    assert any(b.placed_on and b.scheme == "hcache" for b in lowered)
    assert check_c(graph, plan.blocks, target=target) == plan.peak_ram_bytes


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(networks(), st.integers(0, 10_000))
def test_random_whole_ram_plans_on_the_fe310(doc, seed):
    """The FE310 harness reads its input from flash into the arena and prints the output from
    there: the arena is all the RAM the network needs besides the stack."""
    try:
        graph = with_random_weights(graph_from_layer_list(doc))
    except UserError:
        return  # shapes that do not work out
    plan = solvers.min_peak_ram(exact.build_dag(graph, count_io=True))
    assume(plan.peak_ram < 12 * 1024)  # leaves 4 KiB for stack and libc
    check_c(graph, plan.blocks, target="fe310", seed=seed, count_io=True)
