"""Plans before and after a refactor: peak RAM, MACs and predicted instructions per model x question.

    python benchmarks/plan_stability.py [--out FILE] [--baseline OLD.json]

Each row is one `msfcnn plan MODEL ... --json` (run as a subprocess, so the package on PYTHONPATH is
the one measured): the built-in models and the MLPerf Tiny and MCUNet-style fixtures, under four
questions: least RAM, F <= 1.2, the whole RAM (`--count-io --max-overhead 1.0`) and the fastest
plan on cortex-m4 under 64 kB. With --baseline (this script's JSON from an older tree), each row is
compared with the old one: peak RAM and MACs must be the same or lower, predicted instructions
within 1 %. It exits 1 when a row got worse.

To compare two trees: `PYTHONPATH=OLD/src python benchmarks/plan_stability.py --out old.json`, then
`python benchmarks/plan_stability.py --baseline old.json`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "models"
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


def plan_row(model: str, question: str, flags: list[str]) -> dict:
    command = [sys.executable, "-m", "msfcnn", "-q", "plan", model, *flags, "--json"]
    done = subprocess.run(command, capture_output=True, text=True)
    row = {"model": Path(model).name, "question": question}
    if done.returncode != 0:
        return {**row, "error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"}
    plan = json.loads(done.stdout)
    return {**row, "peak_ram_bytes": plan["peak_ram_bytes"], "macs": plan["macs"],
            "predicted_instructions": plan.get("predicted_instructions")}


def worse(row: dict, old: dict) -> list[str]:
    """What got worse in `row` against the baseline's `old` (empty: same or better)."""
    if "error" in row or "error" in old:
        return [] if row.get("error") == old.get("error") else [f"error {old.get('error')!r} -> {row.get('error')!r}"]
    found = [f"{key} {old[key]} -> {row[key]}" for key in ("peak_ram_bytes", "macs") if row[key] > old[key]]
    before, after = old["predicted_instructions"], row["predicted_instructions"]
    if before and after and abs(after / before - 1) > LATENCY_TOLERANCE:
        found.append(f"predicted instructions {before} -> {after} ({after / before - 1:+.2%})")
    return found


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
            verdict = "" if old is None else ("; ".join(worse(row, old)) or "same or better")
            regressions += bool(old is not None and verdict != "same or better")
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
