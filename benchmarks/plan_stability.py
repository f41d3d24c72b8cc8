"""Plans before and after a change: peak RAM, MACs and predicted instructions per model x question.

    python benchmarks/plan_stability.py [--out FILE] [--baseline OLD.json]

Each row is one `msfcnn plan MODEL ... --json` (run as a subprocess, so the package on PYTHONPATH is
the one measured): the built-in models and the MLPerf Tiny and MCUNet-style fixtures, under four
questions: least RAM, F <= 1.2, the whole RAM (`--count-io --max-overhead 1.0`) and the fastest
plan on cortex-m4 under 64 kB. Each row keeps its plan.

With --baseline (this script's JSON from an older tree), each row is compared with the old one by
what its question asks for:
- least RAM and the P1 questions: less peak RAM, or the same peak RAM and no more MACs.
- the fastest plan: the old plan is predicted again with this tree's latency model (an older tree's
  predictions came from other coefficients), and the new plan's prediction must be at most 1 %
  above it, within the same RAM cap.
It exits 1 when a row got worse.

To compare two trees: `PYTHONPATH=OLD/src python benchmarks/plan_stability.py --out old.json`, then
`python benchmarks/plan_stability.py --baseline old.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

FIXTURES = Path("tests") / "fixtures" / "models"  # from the repository's root
BUILT_IN = ["mbv2-w0.35", "mcunet-vww5", "mcunet-320kb", "mobilenetv2-0.35", "mcunet-vww-res"]
# MLPerf Tiny (ResNet-8, DS-CNN, MobileNetV1 VWW) and MCUNet-style heads among the fixtures.
FIXTURE_MODELS = ["resnet8.tflite", "dscnn.tflite", "mbv1_025_vww.tflite", "mbv2_035.tflite",
                  "op14_mcunet_head.tflite", "onnx_resnet8.onnx", "onnx_mbv2_tiny.onnx", "onnx_mbv3_tiny.onnx"]
QUESTIONS = {
    "least RAM": [],
    "F<=1.2": ["--max-overhead", "1.2"],
    "count-io F<=1.0": ["--count-io", "--max-overhead", "1.0"],
    "cortex-m4 min-latency <=64kB": ["--target", "cortex-m4", "--objective", "min-latency", "--max-ram", "64kB"],
}
LATENCY_TOLERANCE = 0.01


# Predicts a saved plan with the latency model of the tree this script runs from (argv: model, plan
# file, target); run as a subprocess so that the measured tree's package stays the one on PYTHONPATH.
REPREDICT = """
import sys
from msfcnn import api
from msfcnn.latency.model import load
from msfcnn.pipeline import load_plan
from msfcnn.schedule import schedule_plan
model, plan_file, target = sys.argv[1:]
graph = api.load(model)
plan = load_plan(plan_file, graph)
schedule = schedule_plan(graph, list(plan.blocks), plan.io_counted, plan.input_streamed)
print(round(sum(load(target).counter(graph).schedule(schedule))))
"""
ROOT = Path(__file__).resolve().parent.parent
THIS_TREE = ROOT / "src"


def plan_row(model: str, question: str, flags: list[str]) -> dict:
    command = [sys.executable, "-m", "msfcnn", "-q", "plan", model, *flags, "--json"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    row = {"model": Path(model).name, "path": model, "question": question}
    if done.returncode != 0:
        return {**row, "error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"}
    plan = json.loads(done.stdout)
    return {**row, "peak_ram_bytes": plan["peak_ram_bytes"], "macs": plan["macs"],
            "predicted_instructions": plan.get("predicted_instructions"), "target": plan.get("target"),
            "plan": plan}


def predicted_here(old: dict) -> int:
    """The baseline row's plan, predicted by this tree's latency model on the row's target."""
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(old["plan"], f)
        f.flush()
        done = subprocess.run([sys.executable, "-c", REPREDICT, old["path"], f.name, old["target"]],
                              capture_output=True, text=True, cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(THIS_TREE)})
    if done.returncode != 0:
        raise SystemExit(f"cannot predict the baseline plan of {old['model']}: {done.stderr.strip()[-300:]}")
    return int(done.stdout)


def worse(row: dict, old: dict) -> list[str]:
    """What got worse in `row` against the baseline's `old` (empty: same or better)."""
    if "error" in row or "error" in old:
        return [] if row.get("error") == old.get("error") else [f"error {old.get('error')!r} -> {row.get('error')!r}"]
    if row["predicted_instructions"] is None:  # least RAM, then MACs
        before, after = (old["peak_ram_bytes"], old["macs"]), (row["peak_ram_bytes"], row["macs"])
        return [] if after <= before else [f"(peak RAM, MACs) {before} -> {after}"]
    before, after = old["predicted_here"], row["predicted_instructions"]
    return [] if after <= before * (1 + LATENCY_TOLERANCE) else [
        f"predicted instructions {before} (old plan, this model) -> {after} ({after / before - 1:+.2%})"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "plan_stability.json")
    parser.add_argument("--baseline", type=Path, help="this script's JSON from an older tree, to compare with")
    args = parser.parse_args()
    baseline = {}
    if args.baseline:
        baseline = {(r["model"], r["question"]): r for r in json.loads(args.baseline.read_text())["rows"]}
    models = BUILT_IN + [str(FIXTURES / name) for name in FIXTURE_MODELS]
    rows, regressions = [], 0
    print(f"{'model':22s} {'question':30s} {'peak RAM B':>11s} {'MACs':>11s} {'predicted':>12s}  vs baseline")
    for model in models:
        for question, flags in QUESTIONS.items():
            row = plan_row(model, question, flags)
            rows.append(row)
            old = baseline.get((row["model"], question))
            if old is not None and row.get("predicted_instructions") is not None and "error" not in old:
                old["predicted_here"] = row["old_plan_predicted_here"] = predicted_here(old)
            problems = [] if old is None else worse(row, old)
            regressions += bool(problems)
            verdict = "" if old is None else "; ".join(problems) or "same or better"
            if "predicted_here" in (old or {}):
                verdict += f" (old plan: {old['predicted_here']})"
            if "error" in row:
                print(f"{row['model']:22s} {question:30s} {row['error']}  {verdict}")
                continue
            predicted = row["predicted_instructions"]
            print(f"{row['model']:22s} {question:30s} {row['peak_ram_bytes']:11d} {row['macs']:11d} "
                  f"{predicted if predicted is not None else '-':>12}  {verdict}")
    if baseline:
        print(f"{len(rows) - regressions} of {len(rows)} rows the same or better than {args.baseline}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"rows": rows, "regressions": regressions}, indent=1) + "\n")
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main())
