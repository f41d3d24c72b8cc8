"""`plan` and `fit` say what the chosen plan costs against the unfused network (MACs, and predicted
instructions where both are predicted), and point at --max-overhead when that is much more."""

import json
import sys
from pathlib import Path

import pytest

from msfcnn import latency, pipeline
from support.cli import run_cli

RESNET8 = str(Path(__file__).resolve().parent.parent / "fixtures" / "models" / "resnet8.tflite")


def test_the_least_ram_plan_says_its_mac_factor_and_the_cap_that_trades_it(capsys):
    graph = pipeline.load(RESNET8)
    plan = pipeline.planner(graph, "exact").solve()
    unfused = sum(graph.macs(i) for i in range(len(graph)))  # every op once: the unfused network
    code, out, _ = run_cli(capsys, "plan", RESNET8)
    assert code == 0 and plan.macs / unfused > 2.3
    assert f"against the unfused network: {plan.macs / unfused:.2f}x the MACs ({plan.macs} vs {unfused})" in out
    assert "--max-overhead F caps the MACs" in out
    code, out, _ = run_cli(capsys, "plan", RESNET8, "--max-overhead", "1.2")
    assert code == 0 and "x the MACs" in out and "--max-overhead F caps" not in out


@pytest.mark.slow  # fast-tier budget: about 2 to 3 s of CPU
def test_with_a_target_it_compares_predicted_instructions_too(capsys):
    graph = pipeline.load(RESNET8, weights=True)
    planner = pipeline.planner(graph, "exact", latency=latency.load("cortex-m4"))
    plan, vanilla = planner.solve(), planner.vanilla()
    code, out, _ = run_cli(capsys, "plan", RESNET8, "--target", "cortex-m4", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["predicted_instructions"] == plan.predicted_instructions
    assert doc["unfused_predicted_instructions"] == vanilla.predicted_instructions
    assert doc["instructions_vs_unfused"] == round(plan.predicted_instructions / vanilla.predicted_instructions, 4)
    code, out, _ = run_cli(capsys, "plan", RESNET8, "--target", "cortex-m4")
    assert (f"x the predicted instructions ({plan.predicted_instructions} vs {vanilla.predicted_instructions})"
            in out)


def test_the_plot_hint_covers_a_source_checkout(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    code, _, err = run_cli(capsys, "plan", RESNET8, "--timeline", str(tmp_path / "t.png"))
    assert code == 2 and "pip install 'msfcnn[plot]'" in err and "pip install -e '.[plot]'" in err
