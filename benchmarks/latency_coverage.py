"""The latency model's coverage: which kernels each model runs that a target has no coefficients
for, and how far off the prediction of each .tflite fixture's least-RAM plan is on one target.

    python benchmarks/latency_coverage.py [--target cortex-m4] [--fixtures GLOB] [--reuse [--remeasure FAMILY,...]]

For every .tflite and .onnx fixture (tests/fixtures/models) and built-in model, on every
calibrated target: the families `LatencyModel.uncovered` names (kernels whose calls cost 0). For
every .tflite fixture on --target: its least-RAM plan (as `msfcnn verify MODEL --target T`
chooses it) runs on QEMU with its instructions counted, against the model's prediction. With
--reuse, a plan measured before (same fixture, target and plan, in --out) is not run again: only
its prediction is computed anew, which is what a new fit changes; --remeasure names kernel families
changed since (scripts/calibrate_latency.py --remeasure): plans that run them are run again. Prints a table and writes
benchmarks/results/latency_coverage.json (--out).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
from pathlib import Path

from msfcnn import latency, pipeline
from msfcnn.codegen import build as c_build
from msfcnn.codegen.build import DoesNotFit
from msfcnn.errors import UserError
from msfcnn.frontends import builtin_names
from msfcnn.targets import get_target
from msfcnn.tensors import random_input

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "models"


def models() -> list[str]:
    """Every built-in model and model fixture (those the frontends refuse are left out later)."""
    return [*builtin_names(), *(str(p) for p in sorted(FIXTURES.glob("*.tflite"))),
            *(str(p) for p in sorted(FIXTURES.glob("*.onnx"))),
            *(str(p) for p in sorted((FIXTURES.parent / "ops").glob("*.tflite")))]


def load(model: str):
    """The model's graph with its weights, or None when a frontend refuses it (the unsupported_*
    fixtures)."""
    try:
        return pipeline.load(model, weights=True)
    except UserError:
        return None


def uncovered(graphs: dict, targets: list[str]) -> dict:
    """model -> target -> the families without coefficients it runs."""
    fitted = {t: latency.load(t) for t in targets}
    return {name: {t: fitted[t].uncovered(graph) for t in targets} for name, graph in graphs.items()}


class Runner:
    """Runs least-RAM plans on one target, linking one kernel library built once."""

    def __init__(self, target_name: str, folder: Path):
        self.target, self.folder, self.lib = get_target(target_name), folder, None
        self.model = latency.load(target_name)

    def plan(self, graph):
        planner = pipeline.planner(graph, latency=self.model)
        plan = planner.min_ram()
        return plan, pipeline.lower(graph, plan)

    def measure(self, graph, plan, schedule) -> list[int] | None:
        """Instructions per block, or None when the plan does not fit the target's RAM."""
        if self.lib is None:
            lib = self.folder / "lib"
            pipeline.write_c(lib, graph, schedule, plan, self.target)
            self.lib = c_build.build_kernel_library(lib, self.target)
        try:
            check = pipeline.verify(graph, plan, schedule, random_input(graph, 0), self.target, kernel_lib=self.lib,
                                    count_instructions=True)
        except DoesNotFit:
            return None
        except UserError as err:  # a model whose instructions cannot be counted (several outputs)
            print(f"{graph.name}: not counted: {err}", file=sys.stderr)
            return None
        if not check.passed:
            raise SystemExit(f"{graph.name}: the C does not match numpy")
        return list(check.block_instructions)

    def predict(self, graph, schedule) -> float:
        return sum(self.model.counter(graph).schedule(schedule))


def _without_predictions(plan_key: str) -> dict:
    """A plan as --reuse compares it: its blocks, not the instructions a fit predicts for them."""
    plan = json.loads(plan_key)
    plan.pop("predicted_instructions", None)
    plan["blocks"] = [{k: v for k, v in block.items() if k != "predicted_instructions"} for block in plan["blocks"]]
    return plan


def plan_digest(plan_key: str) -> str:
    """A short digest of a plan as --reuse compares it (_without_predictions), for result files
    too large with whole plans (sequence_latency.py)."""
    return hashlib.sha256(json.dumps(_without_predictions(plan_key), sort_keys=True).encode()).hexdigest()[:16]


def runs_families(graph, schedule, dsp: bool, changed) -> bool:
    """Whether a plan runs a kernel of the `changed` families (its measurement is then stale)."""
    from msfcnn.latency.features import BlockCounter
    from msfcnn.latency.model import schedule_features
    return any(v and name.split(":")[0] in changed
               for f in schedule_features(schedule, BlockCounter(graph, dsp)) for name, v in f.items())


def errors(graphs: dict, runner: Runner, earlier: dict, families: dict, changed=(), onnx=False) -> list[dict]:
    """Measured against predicted instructions of each model's least-RAM plan (.tflite models,
    and with `onnx` the .onnx ones too)."""
    rows = []
    for name, graph in graphs.items():
        if not (name.endswith(".tflite") or onnx and name.endswith(".onnx")):
            continue
        plan, schedule = runner.plan(graph)
        key = json.dumps(plan.to_dict(), sort_keys=True)
        before = earlier.get(name)
        stored = before and (before.get("plan_digest") or plan_digest(before["plan_key"]))
        same = before and stored == plan_digest(key) and not runs_families(graph, schedule, runner.model.dsp, changed)
        blocks = before["blocks"] if same else runner.measure(graph, plan, schedule)
        if blocks is None:
            continue
        measured, predicted = sum(blocks), runner.predict(graph, schedule)
        row = {"fixture": Path(name).stem, "model": name, "target": runner.target.name, "plan_key": key,
               "blocks": blocks, "measured": measured, "predicted": round(predicted),
               "error": predicted / measured - 1 if measured else 0.0,
               "uncovered": families[name][runner.target.name]}
        print(f"{row['fixture']:28s} {measured:11d} {row['predicted']:11d} {row['error']:+8.2%}  "
              f"{' '.join(row['uncovered'])}", file=sys.stderr)
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="cortex-m4", help="the target the .tflite fixtures run on")
    parser.add_argument("--fixtures", default="", help="only the models whose file name matches this regular expression")
    parser.add_argument("--reuse", action="store_true", help="reuse the measurements of --out for unchanged plans")
    parser.add_argument("--remeasure", default="", metavar="FAMILY[,FAMILY]",
                        help="with --reuse: run again the plans that run these kernel families (changed since)")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "latency_coverage.json")
    args = parser.parse_args()
    graphs = {m: g for m in models() if re.search(args.fixtures, Path(m).name) and (g := load(m)) is not None}
    targets = latency.calibrated_targets()
    families = uncovered(graphs, targets)
    earlier = {}
    if args.reuse and args.out.exists():
        earlier = {r["model"].split("/")[-1]: r for r in json.loads(args.out.read_text())["rows"]
                   if r["target"] == args.target}
        earlier = {m: earlier[Path(m).name] for m in graphs if Path(m).name in earlier}
    with tempfile.TemporaryDirectory(prefix="msfcnn-coverage-") as tmp:
        rows = errors(graphs, Runner(args.target, Path(tmp)), earlier, families,
                      tuple(f for f in args.remeasure.split(",") if f))
    print(f"{'fixture':28s} {'measured':>11s} {'predicted':>11s} {'error':>8s}  uncovered families")
    for r in rows:
        print(f"{r['fixture']:28s} {r['measured']:11d} {r['predicted']:11d} {r['error']:+8.2%}  {' '.join(r['uncovered'])}")
    worst = max((abs(r["error"]) for r in rows), default=0.0)
    over = [r["fixture"] for r in rows if abs(r["error"]) > 0.05]
    mean = sum(abs(r["error"]) for r in rows) / len(rows) if rows else 0.0
    print(f"worst |error| on {args.target}: {worst:.2%} over {len(rows)} fixtures, mean {mean:.2%}; "
          f"{len(rows) - len(over)} within 5 %, {len(over)} over: {' '.join(over)}")
    missing = sorted({(t, f) for per in families.values() for t, fams in per.items() for f in fams})
    print(f"\nfamilies without coefficients ({len(missing)} target x family):")
    for t in targets:
        print(f"  {t}: {' '.join(f for target, f in missing if target == t) or '-'}")
    for r in rows:
        r["model"] = Path(r["model"]).name
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"target": args.target, "worst_abs_error": worst, "mean_abs_error": mean,
                                    "over_5_percent": over,
                                    "uncovered": {Path(m).name: per for m, per in families.items()},
                                    "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
