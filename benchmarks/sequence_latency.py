"""The latency model on the sequence fixtures: each fixture's least-RAM plan (as `msfcnn verify
MODEL --target T --instructions` chooses it) run on QEMU with its instructions counted, against the
model's prediction, on every calibrated target the plan fits.

    python benchmarks/sequence_latency.py [--targets cortex-m4,esp32c3] [--fixtures REGEX] [--reuse [--remeasure FAMILIES]]

Every calibrated target by default (src/msfcnn/latency/coefficients/), cortex-m0plus and cortex-m55 too.

The fixtures: the GRU, LSTM, RNN and SVDF models of tests/fixtures/sequence (.tflite and .onnx, the
refused ones left out), the dilated TCNs of tests/fixtures/ops and the Conv1D and TCN models of
tests/fixtures/models. With --reuse, a plan measured before (same fixture, target and plan, in
--out) is not run again: only its prediction is computed anew, which is what a new fit changes.
With --remeasure, a plan that runs one of those kernel families is run again (the kernels changed).
Prints a table per target and writes benchmarks/results/sequence_latency.json (--out): every row,
and per target the worst and mean |error|.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

from latency_coverage import FIXTURES, Runner, errors, load, plan_digest, uncovered
from msfcnn import latency

ONE_ROW_MODELS = re.compile(r"conv1d|tcn|conv1xk")


def sequence_models() -> list[str]:
    """The sequence fixtures a frontend imports (the lstm_refused_* ones are refused)."""
    sequence = sorted(p for p in (FIXTURES.parent / "sequence").iterdir()
                      if p.suffix in (".tflite", ".onnx") and "refused" not in p.name)
    windows = sorted(p for p in (FIXTURES.parent / "ops").glob("dilated_tcn*.tflite"))
    lines = sorted(p for p in FIXTURES.iterdir() if p.suffix in (".tflite", ".onnx") and ONE_ROW_MODELS.search(p.name))
    return [str(p) for p in (*sequence, *windows, *lines)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", default=",".join(latency.calibrated_targets()),
                        help="comma-separated targets to run on (default: every calibrated target)")
    parser.add_argument("--fixtures", default="", help="only the models whose file name matches this regular expression")
    parser.add_argument("--reuse", action="store_true", help="reuse the measurements of --out for unchanged plans")
    parser.add_argument("--remeasure", default="", metavar="FAMILY[,FAMILY]",
                        help="with --reuse: run again the plans that run these kernel families (changed since)")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "sequence_latency.json")
    args = parser.parse_args()
    graphs = {m: g for m in sequence_models() if re.search(args.fixtures, Path(m).name) and (g := load(m)) is not None}
    targets = [t for t in args.targets.split(",") if t]
    families = uncovered(graphs, latency.calibrated_targets())
    stored = json.loads(args.out.read_text())["rows"] if args.out.exists() else []
    rows = []
    for target in targets:
        earlier = {}
        if args.reuse:
            by_name = {r["model"]: r for r in stored if r["target"] == target}
            earlier = {m: by_name[Path(m).name] for m in graphs if Path(m).name in by_name}
        print(f"--- {target}", file=sys.stderr)
        with tempfile.TemporaryDirectory(prefix="msfcnn-sequence-") as tmp:
            rows += errors(graphs, Runner(target, Path(tmp)), earlier, families,
                           tuple(f for f in args.remeasure.split(",") if f), onnx=True)
    for r in rows:
        r["model"] = Path(r["model"]).name
        if "plan_key" in r:  # (whole plans of GRU stacks would make megabytes)
            r["plan_digest"] = plan_digest(r.pop("plan_key"))
    # rows of targets (or fixtures) not run this time stay as they were
    ran = {(r["target"], r["model"]) for r in rows}
    rows += [r for r in stored if (r["target"], r["model"]) not in ran
             and not (r["target"] in targets and re.search(args.fixtures, r["model"]))]
    summary = {}
    for target in sorted({r["target"] for r in rows}):
        errs = [abs(r["error"]) for r in rows if r["target"] == target]
        over = sorted(r["fixture"] for r in rows if r["target"] == target and abs(r["error"]) > 0.03)
        summary[target] = {"fixtures": len(errs), "worst_abs_error": max(errs), "mean_abs_error": sum(errs) / len(errs),
                           "over_3_percent": over}
    print(f"{'target':13s} {'fixture':32s} {'measured':>11s} {'predicted':>11s} {'error':>8s}")
    for r in sorted(rows, key=lambda r: (r["target"], r["fixture"])):
        print(f"{r['target']:13s} {r['fixture']:32s} {r['measured']:11d} {r['predicted']:11d} {r['error']:+8.2%}")
    for target, s in summary.items():
        print(f"{target}: worst |error| {s['worst_abs_error']:.2%} over {s['fixtures']} fixtures, mean "
              f"{s['mean_abs_error']:.2%}; over 3 %: {' '.join(s['over_3_percent']) or '-'}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    ordered = sorted(rows, key=lambda r: (r["target"], r["model"]))
    args.out.write_text(json.dumps({"summary": summary}, indent=1)[:-2] + ',\n "rows": [\n'
                        + ",\n".join(json.dumps(r) for r in ordered) + "\n ]\n}\n")  # a row a line


if __name__ == "__main__":
    main()
