"""Predictions are calibrated or not given (docs/latency.md): where a target's latency model has no
costs for one of a network's kernels, `plan --target`, `fit` and `pareto` give no predicted time,
rank by MACs instead and say so (`latency_complete: false` and the kernels missing); elsewhere no
kernel is predicted to run in 0 instructions."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from msfcnn import latency, pipeline
from msfcnn.cost import get_cost_model
from msfcnn.errors import UserError
from support.cli import run_cli
from support.toolchains import require_target

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "models"
# Every calibrated target costs every kernel (tests/unit/test_latency_coverage.py), so the tests
# of an incomplete model use xtensa-lx106's without its 16x8 dense and MEAN costs (`incomplete`),
# as it was before they were calibrated, on a model that runs both.
INCOMPLETE = str(FIXTURES / "i16_chain.tflite")
MISSING = ["dense_s16", "mean_s16"]
DROPPED = ("dense_s16", "mean_s16", "mean_s16_accumulate", "mean_s16_finish")


@pytest.fixture
def incomplete(tmp_path, monkeypatch):
    """xtensa-lx106's latency model without the DROPPED families' coefficients, loaded in its place."""
    doc = json.loads(latency.model.coefficients_path("xtensa-lx106").read_text())
    doc["coefficients"] = {k: v for k, v in doc["coefficients"].items() if k.split(":")[0] not in DROPPED}
    path = tmp_path / "xtensa-lx106.json"
    path.write_text(json.dumps(doc))
    stored = latency.model.coefficients_path
    monkeypatch.setattr(latency.model, "coefficients_path", lambda t: path if t == "xtensa-lx106" else stored(t))
COMPLETE = str(FIXTURES / "op_dw_k3_s1_same_mult2.tflite")  # TFLite Micro's micro_speech kernel


def _zero_cost_kernels(model, graph) -> list[int]:
    """The ops with a C kernel whose unfused block the model predicts to take 0 instructions."""
    counter = model.counter(graph)
    return [b.first for b in get_cost_model("exact").vanilla_blocks(graph)
            if graph.nodes[b.first].op.c_kernel is not None and counter.block(b.lowered) <= 0]


@pytest.mark.slow
@pytest.mark.parametrize("target", latency.calibrated_targets())
def test_a_complete_latency_model_costs_every_kernel_of_every_model(target):
    """Over every built-in model, model fixture and layer-list op: a model that `uncovered` calls
    complete predicts no kernel at 0 instructions, so no plan is ranked on a zero-cost block."""
    from test_latency_coverage import models
    model = latency.load(target)
    zero = {name: _zero_cost_kernels(model, graph) for name, graph in models().items() if not model.uncovered(graph)}
    assert {name: ops for name, ops in zero.items() if ops} == {}


def test_a_family_whose_coefficients_are_all_zero_has_no_costs():
    """A fit that never saw a family's samples leaves its coefficients 0: that family is uncovered."""
    graph = pipeline.load(COMPLETE, weights=True)
    fitted = latency.load("cortex-m4")
    assert fitted.uncovered(graph) == [] and _zero_cost_kernels(fitted, graph) == []
    family = "depthwise_multiplier"
    assert fitted.has_costs(family)
    zeroed = replace(fitted, coefficients={k: (0.0 if k.startswith(family + ":") else v)
                                           for k, v in fitted.coefficients.items()})
    assert zeroed.uncovered(graph) == [family] and _zero_cost_kernels(zeroed, graph) == [0]


def test_an_incomplete_model_ranks_by_macs_and_predicts_nothing(incomplete):
    """With kernels missing, min-latency is min-mac, the time front is the MAC front, no plan has
    a predicted time and each names the kernels missing; a time cap cannot be checked."""
    graph = pipeline.load(INCOMPLETE, weights=True)
    timed = pipeline.planner(graph, "exact", latency=latency.load("xtensa-lx106"))
    untimed = pipeline.planner(graph, "exact")
    assert not timed.latency_complete and timed.uncovered == tuple(MISSING)
    fastest = timed.solve(objective="min-latency")
    assert fastest.macs == untimed.solve(objective="min-mac").macs
    front = timed.pareto(weight="instructions")
    assert [(p.peak_ram_bytes, p.macs) for p in front] == [(p.peak_ram_bytes, p.macs) for p in untimed.pareto()]
    for plan in [fastest, *front]:
        doc = plan.to_dict()
        assert doc["latency_complete"] is False and doc["latency_missing"] == MISSING
        assert doc["predicted_instructions"] is None and all("predicted_instructions" not in b for b in doc["blocks"])
    with pytest.raises(UserError, match="--max-latency cannot be checked.*dense_s16, mean_s16"):
        timed.solve(max_latency=10**9)


def test_a_complete_model_ranks_by_time():
    graph = pipeline.load(COMPLETE, weights=True)
    plan = pipeline.planner(graph, "exact", latency=latency.load("cortex-m4")).solve(objective="min-latency")
    doc = plan.to_dict()
    assert doc["latency_complete"] is True and doc["latency_missing"] == []
    assert doc["predicted_instructions"] > 0 and all(b["predicted_instructions"] > 0 for b in doc["blocks"])


def test_plan_and_pareto_say_they_rank_by_macs(capsys, incomplete):
    code, out, err = run_cli(capsys, "plan", INCOMPLETE, "--target", "xtensa-lx106", "--objective", "min-latency")
    assert code == 0 and "not given, the latency model has no costs for dense_s16, mean_s16" in out
    assert "ranked by MACs instead" in out and "ranked by MACs instead" in err
    code, out, _ = run_cli(capsys, "pareto", INCOMPLETE, "--target", "xtensa-lx106", "--axis", "latency", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["axis"] == "macs" and all(p["latency_complete"] is False for p in doc["front"])


@pytest.mark.slow  # bounds the stack: compiles the C for the board's target twice
@pytest.mark.parametrize("model,board,complete", [(INCOMPLETE, "esp8266-nodemcu", False),
                                                  (COMPLETE, "nucleo-f412zg", True)])
def test_fit_says_whether_it_ranked_by_time(model, board, complete, capsys, incomplete):
    from msfcnn.boards import BOARDS
    require_target(BOARDS[board].target)
    code, out, _ = run_cli(capsys, "fit", model, "--board", board, "--json")
    doc = json.loads(out)
    assert code == 0 and doc["latency_complete"] is complete and doc["plan"]["latency_complete"] is complete
    assert doc["ranked_by"] == ("instructions" if complete else "macs")
    assert doc["latency_missing"] == ([] if complete else MISSING)
    assert (doc["predicted_instructions"] is not None) is complete
    code, out, _ = run_cli(capsys, "fit", model, "--board", board)
    assert ("fastest fitting plan by MACs" in out) is not complete


def test_verify_predicts_nothing_where_a_kernel_has_no_costs(capsys, incomplete):
    """verify gives no predicted instructions (whole or per block) on a target whose latency model
    lacks a kernel of the network, and names the kernels on stderr; with every cost, it predicts."""
    from msfcnn.cli import _predicted_blocks
    graph = pipeline.load(INCOMPLETE, weights=True)
    schedule = pipeline.lower(graph, pipeline.planner(graph).solve())
    assert _predicted_blocks("xtensa-lx106", graph, schedule) is None
    warning = capsys.readouterr().err
    assert warning.count("\n") == 1 and all(name in warning for name in MISSING), warning
    predicted = _predicted_blocks("cortex-m4", graph, schedule)
    assert len(predicted) == len(schedule.blocks) and sum(predicted) > 0
    assert capsys.readouterr().err == ""
