"""Fused execution: every plan computes exactly what the unfused network computes, and the arena
it really touches is the RAM the plan predicted, to the byte."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support import cache
from support.paths import FIXTURES
from support.fused_cases import networks, op_networks, random_plan
from support.marks import slow_fixtures
from msfcnn.cost import exact
from msfcnn.frontends import builtin_names
from msfcnn.frontends.layer_list import graph_from_layer_list
from msfcnn.frontends.random_weights import with_random_weights
from msfcnn.fusion import solvers
from msfcnn.errors import UserError
from msfcnn.schedule import schedule_plan


def check_plan(graph, blocks, seed=0):
    schedule = schedule_plan(graph, blocks)
    run = cache.fused_run(graph, blocks, seed)
    expected = cache.unfused_output(graph, seed)
    if not graph.element_of(graph.output).is_float:  # int8 (after a float island too: see docs/numerics.md)
        assert np.array_equal(run.output, expected), "fused result differs from the unfused network"
    else:
        np.testing.assert_allclose(run.output, expected, rtol=1e-4, atol=1e-5)
    assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes == schedule.arena_bytes
    # The MACs the plan predicts (recomputation included) are the MACs the executor performed,
    # and each streamed op was recomputed as often as the lowering says.
    assert run.macs == sum(b.macs for b in blocks)
    for block in schedule.blocks:
        assert len(block.recompute) == block.last - block.first + 1
        for t, factor in zip(range(block.first, block.last + 1), block.recompute):
            assert run.recompute.get(t, 1.0) == pytest.approx(factor, rel=1e-12), (block.scheme, t)
    # The layout packs every block's live bytes without holes: the arena is the largest block.
    assert schedule.arena_bytes == max(b.ram_bytes for b in blocks)


@pytest.mark.slow
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(networks(), st.integers(0, 10_000))
def test_random_networks_and_random_plans(doc, seed):
    try:
        graph = with_random_weights(graph_from_layer_list(doc))
    except UserError:
        return  # a layer list whose shapes do not work out; the loader's errors are tested elsewhere
    dag = exact.build_dag(graph)
    check_plan(graph, random_plan(dag, seed), seed)
    check_plan(graph, list(solvers.min_peak_ram(dag).blocks), seed)


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_networks(), st.integers(0, 10_000))
def test_random_networks_of_other_operators_and_random_plans(doc, seed):
    """Element-wise maps, two-input MUL and CONCATENATION, PAD, squeeze-and-excite, one-axis MEAN
    and TRANSPOSE among convolutions: fused as their patterns allow, exactly the unfused result."""
    try:
        graph = with_random_weights(graph_from_layer_list(doc))
    except UserError:
        return  # a concatenation of two tensors whose quantisation TFLite fixes differently
    dag = exact.build_dag(graph)
    check_plan(graph, random_plan(dag, seed), seed)
    check_plan(graph, list(solvers.min_peak_ram(dag).blocks), seed)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(builtin_names()))
def test_builtin_models_least_ram_and_random_plans(name):
    graph = cache.model(name, weights=True)
    dag = cache.dag(graph)
    check_plan(graph, list(solvers.min_peak_ram(dag).blocks))
    for seed in range(2):
        check_plan(graph, random_plan(dag, seed), seed)


FIXTURE_MODELS = sorted(p for p in (FIXTURES / "models").glob("*") if p.suffix in (".tflite", ".onnx")
                        and not p.name.startswith("unsupported_"))


# The two largest fixtures take seconds in the fused executor, so here they are slow; the fast tier
# still runs them fused (resnet8 in test_python_api.py's run, mbv1_025_vww in test_codegen.py's C).
LARGE_FIXTURES = {"mbv1_025_vww.tflite", "resnet8.tflite"}


@pytest.mark.parametrize("path", slow_fixtures(FIXTURE_MODELS, fast={p.name for p in FIXTURE_MODELS} - LARGE_FIXTURES),
                         ids=lambda p: p.name)
def test_fixture_models(path):
    graph = cache.model(str(path))
    dag = cache.dag(graph)
    check_plan(graph, list(solvers.min_peak_ram(dag).blocks))
    check_plan(graph, random_plan(dag, 1), 1)
