"""Print a fingerprint of every edge of the exact cost model's fusion DAG, for regression checks
of speed work on `cost.exact.build_dag`: the output must stay byte-identical.

For every built-in model, every TFLite/ONNX fixture in tests/fixtures/models that loads, and a
synthetic 50-layer chain (benchmarks/pareto_scaling.py), with and without count_io, one line per
edge in DAG order: first, last, scheme, rows, ram_bytes, macs, time rank, and the lowering's
placed_on, homes, rings, scratch buffers, reads, alias and recompute factors.

    python scripts/dag_fingerprint.py > before.txt    # full listing
    python scripts/dag_fingerprint.py --digest        # one sha256 per model and configuration
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--digest", action="store_true", help="one sha256 per model and configuration")
    args = parser.parse_args()
    total = hashlib.sha256()
    for name, graph in graphs():
        for count_io in (False, True):
            lines = [edge_line(b) for b in build_dag(graph, count_io=count_io).blocks]
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
