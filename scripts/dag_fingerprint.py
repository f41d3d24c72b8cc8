"""Print a fingerprint of every edge of the exact cost model's fusion DAG, for regression checks
of speed work on `cost.exact.build_dag`: the output must stay byte-identical.

For every built-in model, every TFLite/ONNX fixture in tests/fixtures/models that loads, and a
synthetic 50-layer chain (benchmarks/pareto_scaling.py), with and without count_io, one line per
edge in DAG order: first, last, scheme, rows, ram_bytes, macs, time rank, and the lowering's
placed_on, homes, rings, scratch buffers, reads, alias and recompute factors.

    python scripts/dag_fingerprint.py > before.txt    # full listing
    python scripts/dag_fingerprint.py --digest        # one sha256 per model and configuration

With --solvers it prints instead what every solver answers on the DAG the planner builds (the
pruned one): the plans of min-RAM, min-MACs, P1 and P2 at several caps, the whole Pareto front,
the heuristic and the paper's-space front, on the same graphs plus random chains and random
graphs with skips; pruning dominated edges must leave this output byte-identical.
"""

import argparse
import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from msfcnn.cost.exact import build_dag  # noqa: E402
from msfcnn.errors import UserError  # noqa: E402
from msfcnn.frontends import load_model  # noqa: E402
from msfcnn.frontends.layer_list import graph_from_layer_list  # noqa: E402
from msfcnn.frontends.builtin import builtin_names  # noqa: E402
from msfcnn.fusion import solvers  # noqa: E402
from msfcnn.schedule.schemes import in_paper_space, is_fused  # noqa: E402
from pareto_scaling import synthetic_chain  # noqa: E402


def edge_line(b) -> str:
    low = b.lowered
    parts = [b.first, b.last, b.scheme, b.rows, b.ram_bytes, b.macs, b.time_rank]
    if low is not None:
        parts += [low.placed_on, sorted(low.homes.items()), sorted(low.rings.items()),
                  [(s.name, s.shape, s.dtype) for s in low.scratch], low.reads, low.alias,
                  [repr(f) for f in low.recompute], type(low.loops).__name__]
    return " ".join(map(str, parts))


def graphs():
    for name in builtin_names():
        yield name, load_model(name)
    for path in sorted((ROOT / "tests" / "fixtures" / "models").iterdir()):
        if path.suffix in (".tflite", ".onnx"):
            try:
                yield path.name, load_model(str(path))
            except UserError:
                continue  # the unsupported fixtures
    yield "synthetic-50", graph_from_layer_list(synthetic_chain(50))


def random_layer_list(seed: int) -> dict:
    """A random chain of conv, depthwise and pooling layers (every fifth seed with residual adds, every
    third with a global pool and dense tail)."""
    import random
    rng = random.Random(seed)
    layers = []
    channels = rng.randint(1, 8)
    for i in range(rng.randint(2, 14)):
        k = rng.choice([1, 1, 3, 3, 5])
        op = rng.choice(["conv2d", "conv2d", "depthwise_conv2d", "max_pool2d", "avg_pool2d"])
        layer = {"op": op, "kernel": k, "stride": rng.choice([1, 1, 1, 2]), "padding": rng.randint(0, k // 2)}
        if op == "conv2d":
            channels = layer["filters"] = rng.randint(1, 16)
        if seed % 5 == 0 and op == "depthwise_conv2d" and layers:
            layer.update(stride=1, padding=k // 2)
            layers += [layer, {"op": "add", "from": len(layers) - 1}]
            continue
        layers.append(layer)
    if seed % 3 == 0:  # a tail: global pool and dense
        layers += [{"op": "global_avg_pool"}, {"op": "dense", "units": rng.randint(1, 10)}]
    return {"name": f"random-{seed}", "input": [rng.randint(6, 40), rng.randint(6, 40), channels], "layers": layers}


def random_graphs(count: int):
    for seed in range(count):
        try:
            yield f"random-{seed}", graph_from_layer_list(random_layer_list(seed))
        except UserError:
            continue


def path_line(path) -> str:
    if path is None:
        return "none"
    return f"{path.peak_ram} {path.macs} " + " ".join(f"{b.first}-{b.last}:{b.scheme}:{b.rows}" for b in path.blocks)


def solver_lines(dag, vanilla_macs: int) -> list[str]:
    lines = [f"min-ram {path_line(solvers.min_peak_ram(dag))}", f"min-macs {path_line(solvers.min_macs(dag))}"]
    front = solvers.pareto_front(dag)
    lines += [f"front {path_line(p)}" for p in front]
    for f in (0.9, 1.0, 1.05, 1.2, 1.5, 2, 3, 10):
        lines.append(f"p1 {f} {path_line(solvers.p1(dag, f * vanilla_macs))}")
    caps = sorted({c for p in front for c in (p.peak_ram, p.peak_ram + 1, p.peak_ram + 2)} | {1, 10 ** 12})
    lines += [f"p2 {cap} {path_line(solvers.p2(dag, cap))}" for cap in caps]
    heuristic = dag.restricted(lambda b: b.first == 0 or not is_fused(b))
    lines.append(f"heuristic {path_line(solvers.min_peak_ram(heuristic))}")
    lines += [f"heuristic-p1 {f} {path_line(solvers.p1(heuristic, f * vanilla_macs))}" for f in (1.0, 1.5)]
    lines += [f"paper-front {path_line(p)}" for p in solvers.pareto_front(dag.restricted(in_paper_space))]
    return lines


def print_solvers(digest: bool, randoms: int) -> None:
    from itertools import chain
    total = hashlib.sha256()
    for name, graph in chain(graphs(), random_graphs(randoms)):
        vanilla = sum(graph.macs(i) for i in range(len(graph)))
        for count_io in (False, True):
            text = "\n".join(solver_lines(build_dag(graph, count_io=count_io), vanilla)) + "\n"
            total.update(text.encode())
            if digest:
                print(f"{name} count_io={count_io} {hashlib.sha256(text.encode()).hexdigest()}")
            else:
                print(f"# {name} count_io={count_io}")
                sys.stdout.write(text)
    print(f"# total {total.hexdigest()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--digest", action="store_true", help="one sha256 per model and configuration")
    parser.add_argument("--solvers", action="store_true", help="every solver's answers instead of the edges")
    parser.add_argument("--random", type=int, default=60, help="random graphs for --solvers (default 60)")
    args = parser.parse_args()
    if args.solvers:
        print_solvers(args.digest, args.random)
        return
    total = hashlib.sha256()
    for name, graph in graphs():
        for count_io in (False, True):
            lines = [edge_line(b) for b in build_dag(graph, count_io=count_io, complete=True).blocks]
            text = "\n".join(lines) + "\n"
            total.update(text.encode())
            if args.digest:
                print(f"{name} count_io={count_io} edges={len(lines)} {hashlib.sha256(text.encode()).hexdigest()}")
            else:
                print(f"# {name} count_io={count_io} edges={len(lines)}")
                sys.stdout.write(text)
    print(f"# total {total.hexdigest()}")


if __name__ == "__main__":
    main()
