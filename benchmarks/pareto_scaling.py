"""How the exact Pareto front's cost grows with depth, on synthetic MobileNet-like chains.

Chains of 50, 100, 200 and 400 layers (stem conv, then repeated 1x1-expand / 3x3-depthwise /
1x1-project groups with four stride-2 stages, 160x160x3 input) under the paper cost model.
Reports the DAG size, the time to build the DAG, the time to compute the whole front, and the
growth exponent b of time ~ layers^b fitted on a log-log scale.

    python benchmarks/pareto_scaling.py [--depths 50,100,200,400]
"""

import argparse
import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from msfcnn.cost.paper import build_dag  # noqa: E402
from msfcnn.frontends.layer_list import graph_from_layer_list  # noqa: E402
from msfcnn.fusion.solvers import pareto_front  # noqa: E402


def synthetic_chain(depth: int) -> dict:
    layers = [{"op": "conv2d", "filters": 16, "kernel": 3, "stride": 2, "padding": 1}]
    groups = (depth - 1) // 3
    stride_at = {groups * k // 5 for k in range(1, 5)}
    channels = 16
    for g in range(groups):
        if g in stride_at:
            channels += 8
        layers += [{"op": "conv2d", "filters": channels * 4, "kernel": 1, "stride": 1, "padding": 0},
                   {"op": "depthwise_conv2d", "kernel": 3, "stride": 2 if g in stride_at else 1, "padding": 1},
                   {"op": "conv2d", "filters": channels, "kernel": 1, "stride": 1, "padding": 0}]
    while len(layers) < depth:
        layers.append({"op": "conv2d", "filters": channels, "kernel": 1, "stride": 1, "padding": 0})
    return {"name": f"synthetic-{depth}", "input": [160, 160, 3], "layers": layers}


def best_of(fn, repeats):
    times, value = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return min(times), value


def slope(xs, ys) -> float:
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", default="50,100,200,400")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=str(Path(__file__).parent / "results" / "pareto_scaling.json"))
    args = parser.parse_args()
    rows = []
    for depth in [int(d) for d in args.depths.split(",")]:
        graph = graph_from_layer_list(synthetic_chain(depth))
        build_s, dag = best_of(lambda: build_dag(graph), args.repeats)
        front_s, front = best_of(lambda: pareto_front(dag), args.repeats)
        rows.append({"layers": depth, "edges": len(dag.blocks), "front_points": len(front),
                     "build_dag_s": round(build_s, 4), "pareto_s": round(front_s, 4)})
    depths = [r["layers"] for r in rows]
    result = {
        "rows": rows,
        "pareto_growth_exponent": round(slope(depths, [r["pareto_s"] for r in rows]), 2),
        "build_growth_exponent": round(slope(depths, [r["build_dag_s"] for r in rows]), 2),
        "edges_growth_exponent": round(slope(depths, [r["edges"] for r in rows]), 2),
    }
    print(f"{'layers':>6s} {'edges':>7s} {'front':>6s} {'build DAG s':>12s} {'Pareto s':>9s}")
    for r in rows:
        print(f"{r['layers']:6d} {r['edges']:7d} {r['front_points']:6d} {r['build_dag_s']:12.4f} {r['pareto_s']:9.4f}")
    print(f"growth exponents (time ~ layers^b): Pareto b = {result['pareto_growth_exponent']}, "
          f"DAG build b = {result['build_growth_exponent']}, edges b = {result['edges_growth_exponent']}")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
