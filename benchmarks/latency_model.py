"""The latency model against the boards: predicted vs measured instructions per model x plan x
target, the worst error, and the RAM-time fronts.

    python benchmarks/latency_model.py [--targets cortex-m4,cortex-m7,fe310] [--models ...]

Plans per model: vanilla, P1 at F <= 1.2, least RAM, and min-latency and min-MACs under a 32 kB
cap (--max-ram; 64 or 128 kB for a model that does not fit in it). Each plan's C runs on the target (QEMU) with its instructions counted exactly
(`verify --instructions`); the prediction is the target's calibrated latency model
(src/msfcnn/latency/coefficients/). A plan that does not fit the target's RAM is skipped (fe310:
16 KiB). Prints a table and writes benchmarks/results/latency_model.json (--out).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from msfcnn import latency, pipeline
from msfcnn.codegen.build import DoesNotFit
from msfcnn.errors import UserError
from msfcnn.frontends import builtin_names
from msfcnn.targets import get_target
from msfcnn.tensors import random_input

CAP = 32_000
FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "models"
# Trained int8 models among the test fixtures (MLPerf Tiny, TFLite Micro examples, MobileNets).
REAL_MODELS = [str(FIXTURES / name) for name in ("dscnn.tflite", "mbv1_025_vww.tflite", "mbv2_035.tflite",
                                                 "resnet8.tflite")]


def plans(planner, cap: int):
    yield "vanilla", planner.vanilla()
    yield "F<=1.2", planner.p1(1.2)
    yield "least RAM", planner.min_ram()
    # min-latency against min-MACs under the cap, or under twice or four times it for a model
    # that needs more (mcunet-320kb's least RAM is 37.8 kB)
    for limit in (cap, 2 * cap, 4 * cap):
        try:
            chosen = [(f"{objective} <= {limit // 1000} kB", planner.solve(objective=objective, max_ram=limit))
                      for objective in ("min-latency", "min-mac")]
        except UserError:
            continue
        yield from chosen
        break


def front(planner) -> list[dict]:
    """The (peak RAM, predicted instructions) Pareto front of the model on the planner's target."""
    return [{"peak_ram_bytes": p.peak_ram_bytes, "predicted_instructions": p.predicted_instructions,
             "macs": p.macs} for p in planner.pareto(weight="instructions")]


def measure(model: str, target_name: str, cap: int, fronts: dict) -> list[dict]:
    target = get_target(target_name)
    graph = pipeline.load(model, weights=True)
    planner = pipeline.planner(graph, latency=latency.load(target_name))
    fronts[f"{graph.name} {target_name}"] = front(planner)
    x = random_input(graph, 0)
    rows, seen = [], {}
    for name, plan in plans(planner, cap):
        key = tuple((b.first, b.last, b.scheme, b.rows) for b in plan.blocks)
        if key in seen:  # the same plan under another name: measured once
            rows.append({**seen[key], "plan": name})
            continue
        schedule = pipeline.lower(graph, plan)
        try:
            check = pipeline.verify(graph, plan, schedule, x, target, count_instructions=True)
        except DoesNotFit:
            continue
        if not check.passed:
            raise SystemExit(f"{graph.name} {name} on {target_name}: the C does not match numpy")
        row = {"model": graph.name, "target": target_name, "plan": name, "peak_ram_bytes": plan.peak_ram_bytes,
               "macs": plan.macs, "predicted": plan.predicted_instructions, "measured": check.instructions,
               "error": plan.predicted_instructions / check.instructions - 1}
        seen[key] = row
        rows.append(row)
        print(f"{graph.name:18s} {target_name:10s} {name:22s} {plan.peak_ram_bytes:8d} B {check.instructions:12d} "
              f"measured {plan.predicted_instructions:12d} predicted {row['error']:+7.2%}", file=sys.stderr)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", default="cortex-m4,cortex-m7,fe310")
    parser.add_argument("--models", default=",".join([*builtin_names(), *REAL_MODELS]))
    parser.add_argument("--max-ram", type=int, default=CAP)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "latency_model.json")
    args = parser.parse_args()
    rows, fronts = [], {}
    for target in args.targets.split(","):
        for model in args.models.split(","):
            rows += measure(model, target, args.max_ram, fronts)
    print(f"{'model':18s} {'target':10s} {'plan':22s} {'RAM B':>8s} {'measured':>12s} {'predicted':>12s} {'error':>8s}")
    for r in rows:
        print(f"{r['model']:18s} {r['target']:10s} {r['plan']:22s} {r['peak_ram_bytes']:8d} {r['measured']:12d} "
              f"{r['predicted']:12d} {r['error']:+8.2%}")
    worst = max((abs(r["error"]) for r in rows), default=0.0)
    print(f"worst |error|: {worst:.2%} over {len(rows)} model x plan x target")
    print(f"\nmeasured: min-latency vs min-MACs plan under {args.max_ram} B")
    versus = []
    for (model, target) in sorted({(r["model"], r["target"]) for r in rows}):
        pick = {r["plan"].split(" <=")[0]: r for r in rows if (r["model"], r["target"]) == (model, target)}
        if "min-latency" in pick and "min-mac" in pick:
            fast, mac = pick["min-latency"]["measured"], pick["min-mac"]["measured"]
            versus.append({"model": model, "target": target, "min_latency": fast, "min_mac": mac, "ratio": fast / mac})
            print(f"{model:18s} {target:10s} {fast:12d} vs {mac:12d}  {fast / mac:.4f}")
    print("\nRAM-time fronts (predicted): points, least RAM, fewest instructions")
    for key, points in fronts.items():
        print(f"{key:30s} {len(points):3d} points  {points[0]['peak_ram_bytes']:7d} B @ "
              f"{points[0]['predicted_instructions']:11d}  ...  {points[-1]['peak_ram_bytes']:7d} B @ "
              f"{points[-1]['predicted_instructions']:11d}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"worst_abs_error": worst, "rows": rows, "min_latency_vs_min_mac": versus,
                                    "fronts": fronts}, indent=1) + "\n")


if __name__ == "__main__":
    main()
