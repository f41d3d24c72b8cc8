"""How often msfcnn's results on models with float islands (tests/fixtures/models/fi_*.tflite)
differ from the interpreters', and its generated C from its numpy executor.

float32 kernels sum in their own order, so a float32 value may differ from the interpreter's in
its last bits; after a QUANTIZE, an int8 value then differs by 1 where the float32 one lay on a
rounding boundary. This counts, per fixture, the output values (int8, or float32) that differ:

- the numpy executor against LiteRT (`litert` numerics) and TFLite Micro (`tflm`), on N inputs,
  and the int8 values of its QUANTIZE nodes against LiteRT's;
- the generated C on the host (the least-RAM plan, fused across the conversions) against the
  numpy executor, on C_INPUTS inputs.

    python benchmarks/float_islands.py [--inputs 500]     # writes benchmarks/results/float_islands.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

from msfcnn import pipeline  # noqa: E402
from msfcnn.codegen import build as c_build  # noqa: E402
from msfcnn.executor import to_internal  # noqa: E402
from msfcnn.targets import TARGETS  # noqa: E402
from support import litert_oracle, micro_oracle  # noqa: E402

MODELS = sorted((ROOT / "tests" / "fixtures" / "models").glob("fi_*.tflite"))
C_INPUTS = 30


def inputs_for(graph, n: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    shape = graph.declared_input_shape
    if graph.dtype == "float32" or graph.float_input:
        return [rng.uniform(-1.5, 1.5, shape).astype(np.float32) for _ in range(n)]
    return [rng.integers(-128, 128, shape).astype(np.int8) for _ in range(n)]


def differences(ours, theirs) -> dict:
    a = np.concatenate([np.asarray(y).reshape(-1) for y in ours]).astype(np.float64)
    b = np.concatenate([np.asarray(y).reshape(-1) for y in theirs]).astype(np.float64)
    off = a != b
    return {"values": int(a.size), "differ": int(off.sum()), "max_abs_diff": float(np.abs(a - b).max(initial=0))}


def quantize_flips(path, graph, inputs) -> dict:
    """int8 values of the QUANTIZE nodes (where a float island ends) that differ from LiteRT's,
    each model computed on its own from the input (numpy executor against the interpreter's
    intermediate tensors)."""
    nodes = [i for i, node in enumerate(graph.nodes) if node.op.kind == "quantize"]
    if not nodes:
        return {}
    run = litert_oracle.run_jobs([(path, inputs)], layers=True)[0]
    edge = 1 if graph.float_input else 0  # the input's QUANTIZE is the interpreter's operator 0
    values = differ = 0
    for x, layers in zip(inputs, run.layers):
        ours = _node_values(graph, x)
        for i in nodes:
            theirs = layers[i + edge].reshape(ours[i].shape)
            values += ours[i].size
            differ += int(np.count_nonzero(ours[i] != theirs))
    return {"values": values, "differ": differ}


def _node_values(graph, x) -> dict:
    from msfcnn.ir import NETWORK_INPUT
    values = {NETWORK_INPUT: to_internal(graph, x[0])}
    for i, node in enumerate(graph.nodes):
        values[i] = node.op.reference([values[t] for t in node.inputs], graph.kernel_context(i))
    return values


def c_against_numpy(graph, inputs) -> dict:
    """The least-RAM plan's C on the host, input by input, against the fused numpy executor."""
    plan = pipeline.planner(graph).min_ram()
    schedule = pipeline.lower(graph, plan)
    target = TARGETS["host"]
    with tempfile.TemporaryDirectory() as folder:
        pipeline.write_c(Path(folder), graph, schedule, plan, target)
        program = c_build.build(Path(folder), target)
        got = [c_build.run(program, target, graph, to_internal(graph, x[0])).output for x in inputs]
    expected = [np.concatenate([y.reshape(-1) for y in pipeline.run(schedule, x, raw=True).outputs]) for x in inputs]
    return {"plan": [f"{b.first}-{b.last} {b.scheme}" for b in plan.blocks], **differences(got, expected)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=500)
    args = parser.parse_args()
    results = {}
    for i, path in enumerate(MODELS):
        row = {}
        for numerics in ("litert", "tflm"):
            graph = pipeline.load(str(path), numerics=numerics)
            inputs = inputs_for(graph, args.inputs, seed=1000 + i)
            theirs = (micro_oracle.run_jobs([(path, inputs)], "tflm")[0] if numerics == "tflm"
                      else litert_oracle.run_jobs([(path, inputs)])[0].outputs)
            ours = [pipeline.run_reference(graph, x) for x in inputs]
            row[f"numpy_vs_{numerics}"] = differences(ours, theirs)
            if numerics == "litert":
                row["quantize_nodes_vs_litert"] = quantize_flips(path, graph, inputs)
        graph = pipeline.load(str(path))
        row["c_host_vs_numpy"] = c_against_numpy(graph, inputs_for(graph, C_INPUTS, seed=2000 + i))
        row["output"] = graph.dtype_of(graph.output) if not graph.float_output else "float32 (dequantised int8)"
        results[path.stem] = row
        print(path.stem, json.dumps(row))
    out = ROOT / "benchmarks" / "results" / "float_islands.json"
    out.write_text(json.dumps({"inputs": args.inputs, "c_inputs": C_INPUTS, "models": results}, indent=1) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
