"""What kernels/float_math.h (the kernels' own exp, tanh and logistic) changes on an FPU core: the
instructions of the float32 LSTM, GRU and RNN fixtures' least-RAM plans, and how much onnx_gru's
count depends on its weights (each initializer scaled by 0.3 to 10: larger pre-activations send
the C library's expf and tanhf down other paths), measured on QEMU.

    python benchmarks/float_math.py --label after [--target cortex-m4]
    PYTHONPATH=<main's src> python benchmarks/float_math.py --label before

Run it once with each version of the kernels: --label names the rows it writes; the rows of the
other label stay in --out (benchmarks/results/float_math.json). Prints the table of both.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from latency_coverage import FIXTURES, Runner, load
import msfcnn

SEQUENCE = FIXTURES.parent / "sequence"
FLOAT_RECURRENT = re.compile(r"^onnx_(gru|lstm|rnn|conv1d_gru)|^(gru|lstm|convlstm).*float32")
SCALES = (0.3, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0)
SPREAD_MODEL = "onnx_gru.onnx"


def fixtures() -> list[Path]:
    return sorted(p for p in SEQUENCE.iterdir() if p.suffix in (".onnx", ".tflite") and FLOAT_RECURRENT.search(p.name)
                  and "refused" not in p.name)


def scaled(model: Path, factor: float, folder: Path) -> Path:
    """The ONNX model with every float initializer (weights, recurrent weights, biases) times factor."""
    proto = onnx.load(str(model))
    for init in proto.graph.initializer:
        values = numpy_helper.to_array(init)
        if values.dtype == np.float32:
            init.CopyFrom(numpy_helper.from_array((values * np.float32(factor)).astype(np.float32), init.name))
    path = folder / f"{model.stem}_x{factor:g}.onnx"
    onnx.save(proto, str(path))
    return path


def measure(runner: Runner, path: Path) -> int | None:
    graph = load(str(path))
    if graph is None:
        return None
    plan, schedule = runner.plan(graph)
    blocks = runner.measure(graph, plan, schedule)
    return None if blocks is None else sum(blocks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--label", required=True, help="before or after (which kernels msfcnn holds)")
    parser.add_argument("--target", default="cortex-m4")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "float_math.json")
    args = parser.parse_args()
    print(f"msfcnn from {Path(msfcnn.__file__).parent}", file=sys.stderr)
    rows = []
    with tempfile.TemporaryDirectory(prefix="msfcnn-float-math-") as tmp:
        runner = Runner(args.target, Path(tmp))
        for path in fixtures():
            count = measure(runner, path)
            print(f"{path.name}: {count}", file=sys.stderr)
            if count is not None:
                rows.append({"kind": "fixture", "model": path.name, "target": args.target, "label": args.label,
                             "instructions": count})
        for factor in SCALES:
            count = measure(runner, scaled(SEQUENCE / SPREAD_MODEL, factor, Path(tmp)))
            print(f"{SPREAD_MODEL} x{factor:g}: {count}", file=sys.stderr)
            rows.append({"kind": "scaled", "model": SPREAD_MODEL, "scale": factor, "target": args.target,
                         "label": args.label, "instructions": count})
    stored = json.loads(args.out.read_text())["rows"] if args.out.exists() else []
    rows += [r for r in stored if (r["label"], r["target"]) != (args.label, args.target)]
    report(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    ordered = sorted(rows, key=lambda r: (r["target"], r["kind"], r["model"], r.get("scale", 0), r["label"]))
    args.out.write_text(json.dumps({"summary": summary(rows), "rows": ordered}, indent=1) + "\n")


def summary(rows: list[dict]) -> dict:
    """Per target and label: the spread (max - min) / min of the scaled model's counts."""
    out = {}
    for target in sorted({r["target"] for r in rows}):
        for label in sorted({r["label"] for r in rows}):
            counts = [r["instructions"] for r in rows if r["kind"] == "scaled" and (r["target"], r["label"]) == (target, label)]
            if counts:
                out[f"{target} {label}"] = {"scaled_min": min(counts), "scaled_max": max(counts),
                                            "spread": (max(counts) - min(counts)) / min(counts)}
    return out


def report(rows: list[dict]) -> None:
    by = {(r["target"], r["kind"], r["model"], r.get("scale"), r["label"]): r["instructions"] for r in rows}
    print(f"{'target':11s} {'model':38s} {'before':>11s} {'after':>11s} {'change':>8s}")
    for target, kind, model, scale in sorted({k[:4] for k in by}, key=lambda k: (k[0], k[1], k[2], k[3] or 0)):
        before, after = by.get((target, kind, model, scale, "before")), by.get((target, kind, model, scale, "after"))
        name = model if scale is None else f"{model} x{scale:g}"
        change = f"{after / before - 1:+8.1%}" if before and after else ""
        print(f"{target:11s} {name:38s} {before or '-':>11} {after or '-':>11} {change}")
    for key, s in summary(rows).items():
        print(f"{key}: {SPREAD_MODEL} over x{SCALES[0]:g}..x{SCALES[-1]:g}: {s['scaled_min']:,} to "
              f"{s['scaled_max']:,} instructions (spread {s['spread']:.2%})")


if __name__ == "__main__":
    main()
