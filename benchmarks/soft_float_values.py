"""How much a float32 recurrent fixture's instructions depend on its values on a core without an
FPU: the least-RAM plan of each model run on QEMU with its seeded input scaled by 0 to 4, and (ONNX
models) with every float initializer scaled by 0.3 to 3. The plan, and so the model's prediction,
is the same for every run; only the compiler's soft-float add, multiply and divide take other
paths (a zero operand, a smaller exponent difference).

    python benchmarks/soft_float_values.py [--target esp32c3] [--models onnx_rnn.onnx,...]

Writes benchmarks/results/soft_float_values.json (--out): per target and model, each scale's count.
The rows of the targets not run stay as they were.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np

from float_math import scaled
from latency_coverage import FIXTURES, Runner, load
from msfcnn import pipeline
from msfcnn.codegen.build import DoesNotFit
from msfcnn.tensors import random_input

SEQUENCE = FIXTURES.parent / "sequence"
INPUT_SCALES = (0.0, 0.25, 1.0, 4.0)
WEIGHT_SCALES = (0.3, 1.0, 3.0)


def count(runner: Runner, graph, scale: float) -> tuple[int, int] | None:
    """(measured, predicted) instructions of the graph's least-RAM plan, its input times scale."""
    plan, schedule = runner.plan(graph)
    x = random_input(graph, 0) * np.float32(scale)
    try:
        check = pipeline.verify(graph, plan, schedule, x, runner.target, count_instructions=True)
    except DoesNotFit:
        return None
    if not check.passed:
        raise SystemExit(f"{graph.name} x{scale:g}: the C does not match numpy")
    return sum(check.block_instructions), round(runner.predict(graph, schedule))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", default="esp32c3")
    parser.add_argument("--models", default="onnx_rnn.onnx,lstm_stream_float32.tflite,gru_bidirectional_float32.tflite")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "soft_float_values.json")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="msfcnn-soft-float-") as tmp:
        runner = Runner(args.target, Path(tmp))
        for name in args.models.split(","):
            runs = [("input", s, load(str(SEQUENCE / name))) for s in INPUT_SCALES]
            if name.endswith(".onnx"):
                runs += [("weights", s, load(str(scaled(SEQUENCE / name, s, Path(tmp)))))
                         for s in WEIGHT_SCALES if s != 1.0]
            for kind, scale, graph in runs:
                got = count(runner, graph, scale if kind == "input" else 1.0)
                if got is None:
                    continue
                rows.append({"target": args.target, "model": name, "scaled": kind, "scale": scale,
                             "measured": got[0], "predicted": got[1], "error": got[1] / got[0] - 1})
                print(f"{name:34s} {kind:7s} x{scale:<5g} {got[0]:11d} {got[1]:11d} {got[1] / got[0] - 1:+8.2%}")
    stored = json.loads(args.out.read_text())["rows"] if args.out.exists() else []
    rows += [r for r in stored if r["target"] != args.target]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
