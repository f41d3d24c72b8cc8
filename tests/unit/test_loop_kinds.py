"""The loop kinds registry (schedule.loop_kinds): every kind of loop nest a lowered block runs has a
walker, emitter data, a latency counter and a cost floor, and a kind without one of them stops
its consumer with an error that names the kind and the role, never a silent default (before,
the latency model costed an unknown kind at zero)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import get_args

import numpy as np
import pytest

from msfcnn import fused_executor
from msfcnn.codegen import emit
from msfcnn.cost import exact
from msfcnn.frontends.layer_list import graph_from_layer_list
from msfcnn.frontends.random_weights import with_random_weights
from msfcnn.fusion.dag import Block
from msfcnn.latency import features
from msfcnn.plan import Plan
from msfcnn.schedule import Liveness, loop_kinds, schedule_plan
from msfcnn.schedule import schemes as registry
from msfcnn.schedule.lowered import Channels, Loops, Patches, Stream, Whole

CONSUMERS = (fused_executor, emit, features, exact)  # imported: every role's handlers are registered


def test_every_loop_kind_has_all_four_roles():
    assert {Whole, Stream, Patches, Channels} <= set(loop_kinds.kinds())
    assert set(get_args(Loops)) == set(loop_kinds.kinds())  # LoweredBlock.loops' type names them all
    assert loop_kinds.missing() == []
    for kind in loop_kinds.kinds():
        for role in loop_kinds.ROLES:
            assert callable(loop_kinds.handler(role, kind)), (kind, role)


def test_every_role_names_the_module_that_registers_it():
    assert {module.__name__ for module in CONSUMERS} == set(loop_kinds.CONSUMERS.values())
    assert set(loop_kinds.CONSUMERS) == set(loop_kinds.ROLES)


def test_an_undeclared_kind_or_a_second_handler_fails(monkeypatch):
    monkeypatch.setattr(loop_kinds, "_KINDS", dict(loop_kinds._KINDS))

    class NotAKind:
        pass

    with pytest.raises(loop_kinds.MissingHandler, match="NotAKind is not a registered loop kind"):
        loop_kinds.handler(loop_kinds.LATENCY, NotAKind())
    with pytest.raises(TypeError, match="NotAKind is not a loop kind"):
        loop_kinds.handles(loop_kinds.WALKER, NotAKind)(lambda *a: None)
    with pytest.raises(TypeError, match="Whole has two walker handlers"):
        loop_kinds.handles(loop_kinds.WALKER, Whole)(lambda *a: None)
    with pytest.raises(ValueError, match="unknown loop kind role"):
        loop_kinds.handles("printer", Whole)
    with pytest.raises(TypeError, match="declared twice"):
        loop_kinds.loop_kind(Whole)


@dataclass(frozen=True)
class Dummy:
    """A new loop kind: one op on whole tensors, as `Whole`, but registered on its own."""


@pytest.fixture
def dummy_without(monkeypatch, request):
    """Declares `Dummy` with `Whole`'s handlers for every role but `request.param`, and makes the
    unfused scheme lower every op into a `Dummy` block; the registry is restored afterwards."""
    monkeypatch.setattr(loop_kinds, "_KINDS", dict(loop_kinds._KINDS))
    loop_kinds.loop_kind(Dummy)
    for role in loop_kinds.ROLES:
        if role != request.param:
            loop_kinds.handles(role, Dummy)(loop_kinds.handler(role, Whole))
    single = type(registry.SINGLE)
    lower = single.lower
    monkeypatch.setattr(single, "lower", lambda self, *args: replace(lower(self, *args), loops=Dummy()))
    return request.param


def _graph():
    layers = [{"op": "conv2d", "filters": 4, "kernel": 3, "padding": "same"},
              {"op": "conv2d", "filters": 3, "kernel": 1}]
    return with_random_weights(graph_from_layer_list({"input": [6, 5, 2], "layers": layers}))


def _run_each_consumer(graph) -> list[str]:
    """Every consumer on the graph's unfused plan, whose blocks are `Dummy` ones: the roles whose
    consumer raised MissingHandler (naming `Dummy` and that role), and checks of the others."""
    failed = []

    def attempt(role, run):
        try:
            return run()
        except loop_kinds.MissingHandler as error:
            assert f"loop kind Dummy has no {role} handler" in str(error)
            failed.append(role)

    blocks = attempt(loop_kinds.FLOOR, lambda: exact.vanilla_blocks(graph))
    if blocks is None:  # the cost model refused: the others are shown the lowering directly
        live = Liveness(graph)
        blocks = [Block(i, i, "single", 0, 0, 1, registry.SINGLE.lower(graph, live, i, i, 1, {}))
                  for i in range(len(graph))]
    schedule = schedule_plan(graph, blocks)
    assert all(type(b.loops) is Dummy for b in schedule.blocks)
    x = np.random.default_rng(0).integers(-128, 128, graph.input_shape).astype(np.int8)
    run = attempt(loop_kinds.WALKER, lambda: fused_executor.run_fused(schedule, x))
    if run is not None:
        assert run.macs == sum(graph.macs(t) for t in range(len(graph)))
    files = attempt(loop_kinds.EMITTER, lambda: emit.generate(graph, schedule, Plan(graph.name, "exact", 0, tuple(blocks))))
    if files is not None:
        assert "msf_conv2d" in files["model.c"]
    counts = attempt(loop_kinds.LATENCY, lambda: [features.BlockCounter(graph, dsp=True).block(b) for b in schedule.blocks])
    if counts is not None:
        assert all(sum(f.values()) > 1 for f in counts)  # the kernel's loops, not just the block's call
    return failed


@pytest.mark.parametrize("dummy_without", loop_kinds.ROLES, indirect=True)
def test_a_kind_without_a_role_fails_loudly_in_that_roles_consumer(dummy_without):
    """Each consumer, met with a kind it has no handler for, raises naming the kind and the role;
    the consumers that have one run the new kind like any other."""
    assert _run_each_consumer(_graph()) == [dummy_without]


def test_a_scheme_declaring_a_floor_its_loop_kind_does_not_respect_is_refused(monkeypatch):
    """The cost model assumes a scheme's floor of blocks it does not lower: a lowered block whose
    loop kind does not respect that floor stops the build."""
    monkeypatch.setattr(type(registry.SCHEMES["recompute"]), "floor", "rows")
    graph = _graph()
    with pytest.raises(AssertionError, match="scheme recompute declares the 'rows' floor"):
        exact.build_dag(graph, schemes=("recompute",), complete=True)


def test_scheme_facts_are_class_attributes():
    assert {name: (s.floor, s.growing) for name, s in registry.SCHEMES.items()} == {
        "single": (None, ()), "inplace": ("homes", ()), "linebuffer": ("rows", ()), "overlap": ("rows", ()),
        "hcache": ("patches", (0,)), "recompute": ("patches", (0, 1)), "timescan": (None, ()),
        "chains": (None, ())}
    with pytest.raises(TypeError, match="unknown floor 'bands'"):
        type("Bad", (registry.Scheme,), {}, name="bad", template="single", order=99, floor="bands")
    with pytest.raises(TypeError, match="growing axes"):
        type("Bad", (registry.Scheme,), {}, name="bad", template="single", order=99, growing=(0,))
