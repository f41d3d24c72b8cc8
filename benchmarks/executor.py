"""Inference time of the numpy reference executor (`run_unfused`) on the int8 network fixtures.

The target is MobileNetV2-0.35 at 144x144 (`tests/fixtures/models/mbv2_035.tflite`) under 0.5 s
per inference. For context it also times the TFLite interpreter (builtin kernels, one thread) on
the same inputs when ai-edge-litert is installed, and breaks the MobileNetV2 time down by op kind.

    python benchmarks/executor.py [--repeats 20]

OpenBLAS runs single-threaded here unless OPENBLAS_NUM_THREADS is set: the executor's GEMMs are
small, and on a busy 2-core machine OpenBLAS's spinning worker threads made the median ~5x slower
(118 ms instead of 18 ms for MobileNetV2) while gaining nothing on an idle one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads OpenBLAS

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from msfcnn.executor import run_unfused  # noqa: E402
from msfcnn.frontends.tflite import load_tflite  # noqa: E402
from msfcnn.ir import NETWORK_INPUT  # noqa: E402
from msfcnn.ops import KernelContext  # noqa: E402

MODELS = ROOT / "tests" / "fixtures" / "models"
NETWORKS = ["mbv2_035", "mbv1_025_vww", "resnet8", "dscnn"]
TARGET = "mbv2_035"
TARGET_SECONDS = 0.5


def time_runs(fn, repeats: int) -> list[float]:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def interpreter_runner(path: Path, x: np.ndarray):
    try:
        from ai_edge_litert.interpreter import Interpreter, OpResolverType
    except ImportError:
        return None
    interpreter = Interpreter(model_path=str(path), num_threads=1,
                              experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    interpreter.allocate_tensors()
    detail = interpreter.get_input_details()[0]
    interpreter.set_tensor(detail["index"], x.reshape(detail["shape"]))
    return interpreter.invoke


def breakdown(graph, x: np.ndarray, repeats: int) -> dict[str, float]:
    """Median milliseconds per op kind over `repeats` layer-by-layer runs."""
    per_kind: dict[str, list[float]] = defaultdict(list)
    for _ in range(repeats):
        values = {NETWORK_INPUT: x}
        totals: dict[str, float] = defaultdict(float)
        for index, node in enumerate(graph.nodes):
            ctx = KernelContext(node.consts, tuple(graph.quant_of(t) for t in node.inputs), node.quant)
            start = time.perf_counter()
            values[index] = node.op.reference([values[t] for t in node.inputs], ctx)
            totals[node.op.kind] += time.perf_counter() - start
        for kind, seconds in totals.items():
            per_kind[kind].append(seconds)
    return {kind: round(statistics.median(s) * 1000, 2) for kind, s in per_kind.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--json", default=str(Path(__file__).parent / "results" / "executor.json"))
    args = parser.parse_args()

    rows = []
    print(f"{'model':14s} {'input':>11s} {'MMACs':>7s} {'import ms':>10s} {'numpy median ms':>16s} {'best ms':>8s} "
          f"{'interpreter ms':>15s}")
    for name in NETWORKS:
        path = MODELS / f"{name}.tflite"
        imports = time_runs(lambda: load_tflite(path), args.repeats)
        graph = load_tflite(path)
        x = np.random.default_rng(0).integers(-128, 128, size=graph.input_shape, dtype=np.int8)
        ours = time_runs(lambda: run_unfused(graph, x), args.repeats)
        invoke = interpreter_runner(path, x)
        theirs = time_runs(invoke, args.repeats) if invoke else None
        row = {"model": name, "input": list(graph.input_shape),
               "macs": sum(graph.macs(i) for i in range(len(graph))),
               "import_median_ms": round(statistics.median(imports) * 1000, 2),
               "median_ms": round(statistics.median(ours) * 1000, 2), "best_ms": round(min(ours) * 1000, 2),
               "interpreter_median_ms": round(statistics.median(theirs) * 1000, 2) if theirs else None}
        rows.append(row)
        print(f"{name:14s} {'x'.join(map(str, graph.input_shape)):>11s} {row['macs'] / 1e6:7.1f} "
              f"{row['import_median_ms']:10.1f} "
              f"{row['median_ms']:16.1f} {row['best_ms']:8.1f} "
              f"{row['interpreter_median_ms'] if theirs else float('nan'):15.2f}")

    graph = load_tflite(MODELS / f"{TARGET}.tflite")
    x = np.random.default_rng(0).integers(-128, 128, size=graph.input_shape, dtype=np.int8)
    kinds = breakdown(graph, x, args.repeats)
    print(f"\n{TARGET} by op kind (median ms): " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    target = next(r for r in rows if r["model"] == TARGET)
    met = target["median_ms"] / 1000 < TARGET_SECONDS
    print(f"target: {TARGET} under {TARGET_SECONDS} s per inference: {'met' if met else 'MISSED'} "
          f"({target['median_ms']} ms median)")
    result = {"repeats": args.repeats, "openblas_threads": os.environ["OPENBLAS_NUM_THREADS"], "models": rows,
              "breakdown_ms": {TARGET: kinds},
              "target": {"model": TARGET, "seconds": TARGET_SECONDS, "met": met}}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
