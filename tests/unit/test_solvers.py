"""Every solver against brute force over all paths of small DAGs (random weights and random chains)."""

import math

from support.brute_force import all_paths, front, macs, peak
from hypothesis import given, settings
from hypothesis import strategies as st

from msfcnn.cost.paper import build_dag
from msfcnn.frontends.layer_list import graph_from_layer_list
from msfcnn.fusion import solvers
from msfcnn.fusion.dag import Block, FusionDAG
from msfcnn.errors import UserError


@st.composite
def random_dags(draw):
    """Multigraphs over 1..7 ops with small weights (many ties); some have no complete path."""
    n = draw(st.integers(1, 7))
    blocks = []
    for first in range(n):
        for last in range(first, n):
            for _ in range(draw(st.integers(0, 2))):
                blocks.append(Block(first, last, "single" if first == last else "hcache",
                                    draw(st.integers(1, 40)), draw(st.integers(1, 40))))
    return FusionDAG(n, tuple(blocks))


def check_all_solvers(dag: FusionDAG, caps_f, caps_ram):
    paths = all_paths(dag)
    if not paths:
        assert solvers.min_peak_ram(dag) is None
        assert solvers.min_macs(dag) is None
        assert solvers.pareto_front(dag) == []
        return
    least_peak = min(peak(p) for p in paths)
    got = solvers.min_peak_ram(dag)
    assert got.peak_ram == least_peak
    assert got.macs == min(macs(p) for p in paths if peak(p) == least_peak)

    least_macs = min(macs(p) for p in paths)
    got = solvers.min_macs(dag)
    assert got.macs == least_macs
    assert got.peak_ram == min(peak(p) for p in paths if macs(p) == least_macs)

    for cap in caps_f:
        ok = [p for p in paths if macs(p) <= cap]
        got = solvers.p1(dag, cap)
        if not ok:
            assert got is None
            continue
        best = min(peak(p) for p in ok)
        assert (got.peak_ram, got.macs) == (best, min(macs(p) for p in ok if peak(p) == best))
        assert got.macs <= cap

    for cap in caps_ram:
        ok = [p for p in paths if peak(p) < cap]
        got = solvers.p2(dag, cap)
        if not ok:
            assert got is None
            continue
        best = min(macs(p) for p in ok)
        assert (got.macs, got.peak_ram) == (best, min(peak(p) for p in ok if macs(p) == best))

    points = solvers.pareto_front(dag)
    assert {(p.peak_ram, p.macs) for p in points} == front(paths)
    assert [p.peak_ram for p in points] == sorted(p.peak_ram for p in points)
    for p in points:  # each returned plan is a real complete path
        assert p.blocks[0].src == 0 and p.blocks[-1].dst == dag.target
        assert all(a.dst == b.src for a, b in zip(p.blocks, p.blocks[1:]))


@settings(max_examples=300, deadline=None)
@given(random_dags(), st.lists(st.integers(0, 300), max_size=4), st.lists(st.integers(0, 50), max_size=4))
def test_solvers_match_brute_force_on_random_dags(dag, caps_f, caps_ram):
    check_all_solvers(dag, caps_f + [math.inf], caps_ram + [math.inf])


@st.composite
def random_chains(draw):
    h, w = draw(st.integers(6, 40)), draw(st.integers(6, 40))
    layers = []
    for _ in range(draw(st.integers(1, 7))):
        k = draw(st.integers(1, 7))
        layer = {"op": draw(st.sampled_from(["conv2d", "depthwise_conv2d", "max_pool2d", "avg_pool2d"])),
                 "kernel": k, "stride": draw(st.integers(1, 2)), "padding": draw(st.integers(0, k // 2))}
        if layer["op"] == "conv2d":
            layer["filters"] = draw(st.integers(1, 16))
        layers.append(layer)
    return {"name": "random", "input": [h, w, draw(st.integers(1, 8))], "layers": layers}


@settings(max_examples=200, deadline=None)
@given(random_chains(), st.lists(st.floats(1.0, 3.0), max_size=3), st.lists(st.integers(1, 20000), max_size=3))
def test_solvers_match_brute_force_on_paper_cost_dags(chain, overheads, rams):
    try:
        graph = graph_from_layer_list(chain)
    except UserError:
        return  # a kernel larger than its input: rejected at load, tested elsewhere
    dag = build_dag(graph)
    vanilla = sum(graph.macs(i) for i in range(len(graph)))
    check_all_solvers(dag, [f * vanilla for f in overheads] + [math.inf], rams + [math.inf])


def test_heuristic_is_best_single_first_block():
    """The heuristic is the least-RAM path whose only fused block starts at op 0 (brute force)."""
    from msfcnn.frontends import load_model
    from msfcnn.planner import Planner
    planner = Planner(load_model("mcunet-vww5"), "paper")
    restricted = planner.dag.restricted(lambda b: b.first == 0 or b.scheme == "single")
    paths = all_paths(restricted)
    # One path per candidate length of the first block (long blocks outgrow their input).
    assert len(paths) == sum(1 for b in planner.dag.blocks if b.first == 0)
    assert planner.heuristic().peak_ram_bytes == min(peak(p) for p in paths)


def test_advice_to_fit_names_options_that_work():
    """Advice for a plan that must shrink to `cap` bytes: --max-ram alone when the other caps
    allow it, with a --max-overhead that allows it otherwise, and 'no plan fits' (never a cap
    below the least RAM reachable) when nothing does; the options given, followed, give a plan."""
    import re
    from msfcnn.frontends import load_model
    from msfcnn.planner import Planner
    planner = Planner(load_model("mcunet-vww5"), "paper")
    least, within = planner.least_ram(), planner.least_ram(1.1)
    assert least < within
    advice = planner.advice_to_fit("optimal", 1.1, within)
    assert re.search(rf"pass --max-ram {within}$", advice)
    advice = planner.advice_to_fit("optimal", 1.1, least)
    overhead = float(re.search(rf"pass --max-ram {least} --max-overhead ([0-9.]+)$", advice).group(1))
    assert planner.solve("optimal", "min-ram", overhead, least).peak_ram_bytes <= least
    advice = planner.advice_to_fit("optimal", None, least - 1)
    assert "no plan fits" in advice and f"the least RAM reachable is {least} B" in advice and "--max-ram" not in advice
