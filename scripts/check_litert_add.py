"""Sweep: msfcnn's int8 ADD (default litert numerics) against the LiteRT interpreter on random
scale sets, end to end (load the model, run the numpy executor), and count the values checked.

    PYTHONPATH=src python scripts/check_litert_add.py [--sets 300] [--seed 2]

Each scale set (half log-uniform scales, half round decimals such as 0.05, which often part the
interpreter's vector and scalar codes) gets a one-ADD model of two maps fed every pair of int8
values (65536 to 66560 values, so both whole blocks of 16 and a tail), and a one-ADD model of a
constant (one value or one per channel) on a random map. Prints the values checked, the
mismatches and which op each model imported as (ops/add_litert.py, ops/add_const_litert.py).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
from make_op_models import Model  # noqa: E402

from msfcnn.executor import run_unfused  # noqa: E402
from msfcnn.frontends import load_model  # noqa: E402

ROUND_SCALES = (0.02, 0.025, 0.03, 0.04, 0.05, 0.06, 0.08)


def interpreter(model: bytes, inputs: list[np.ndarray]) -> np.ndarray:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    it = Interpreter(model_content=model, num_threads=1,
                     experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    it.allocate_tensors()
    for detail, x in zip(it.get_input_details(), inputs):
        it.set_tensor(detail["index"], x)
    it.invoke()
    return it.get_tensor(it.get_output_details()[0]["index"])


def ours(model: bytes, inputs: list[np.ndarray]) -> tuple[np.ndarray, str]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "add.tflite"
        path.write_bytes(model)
        graph = load_model(str(path))
    return run_unfused(graph, inputs if len(inputs) > 1 else inputs[0]), type(graph.nodes[0].op).__name__


def two_maps(shape, qa, qb, qo, activation: int) -> bytes:
    from ai_edge_litert import schema_py_generated as schema

    m = Model("sweep_add")
    a, b, out = (m.act((1, *shape), *q) for q in (qa, qb, qo))
    options = schema.AddOptionsT()
    options.fusedActivationFunction = activation
    m.op("ADD", [a, b], [out], ("AddOptions", options), version=2)
    return m.build([a, b], [out])


def map_and_constant(shape, qx, operand, qc, qo, activation: int) -> bytes:
    m = Model("sweep_add_const")
    x = m.act((1, *shape), *qx)
    y = m.binary_const("ADD", x, (1, *shape), operand, qc[0], qc[1], qo[0], qo[1], activation=activation)
    return m.build([x], [y])


def every_pair(rng, shape) -> list[np.ndarray]:
    values = np.arange(-128, 128, dtype=np.int8)
    pairs = np.resize(rng.permutation(1 << 16), int(np.prod(shape)))
    return [values[pairs >> 8].reshape(1, *shape), values[pairs & 255].reshape(1, *shape)]


def check(stats: Counter, what: str, model: bytes, inputs: list[np.ndarray]) -> None:
    want = interpreter(model, inputs)
    got, kind = ours(model, inputs)
    stats[f"{what} values"] += want.size
    stats[f"{what} mismatches"] += int(np.count_nonzero(got.reshape(-1) != want.reshape(-1)))
    stats[kind] += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=300)
    parser.add_argument("--seed", type=int, default=2)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    stats: Counter = Counter()
    for n in range(args.sets):
        def scale():
            return float(rng.choice(ROUND_SCALES)) if n % 2 else float(np.float32(10 ** rng.uniform(-3, 0)))
        qa, qb, qo = ((scale(), int(rng.integers(-128, 128))) for _ in range(3))
        activation = int(rng.choice([0, 1, 3]))  # none, RELU, RELU6
        channels = int(rng.choice([1, 3, 7, 16]))
        shape = (-(-65536 // (65 * channels)), 65, channels)  # 65 columns: a tail of 16 for most
        check(stats, "two maps", two_maps(shape, qa, qb, qo, activation), every_pair(rng, shape))
        shape = (int(rng.integers(1, 30)), int(rng.integers(1, 9)), int(rng.integers(1, 70)))
        operand = rng.integers(-128, 128, shape[2] if n % 3 else 1)
        x = rng.integers(-128, 128, (1, *shape), dtype=np.int8)
        check(stats, "constant", map_and_constant(shape, qa, operand, qb, qo, activation), [x])
    print(dict(sorted(stats.items())))


if __name__ == "__main__":
    main()
