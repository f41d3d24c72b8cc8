"""The TFLite interpreter as a test oracle, run in a subprocess.

The interpreter's kernels abort the whole process on some bad inputs, so it never runs inside the
test process. One subprocess serves a list of jobs (a model and its inputs): the interpreter
(builtin kernels, no default delegates, i.e. `BUILTIN_WITHOUT_DEFAULT_DELEGATES`, one thread; see
docs/numerics.md) is created once per model, and each input is set, invoked and its output
collected. With `layers=True` the output of every operator is collected too (the interpreter then
keeps all intermediate tensors).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

_SCRIPT = r"""
import json, sys
import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType

for job in json.load(open(sys.argv[1])):
    interpreter = Interpreter(model_path=job["model"], num_threads=1,
                              experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
                              experimental_preserve_all_tensors=job["layers"])
    interpreter.allocate_tensors()
    ins = interpreter.get_input_details()
    outs = interpreter.get_output_details()
    out = outs[0]
    ops = interpreter._get_ops_details() if job["layers"] else []
    results = {}
    with np.load(job["inputs"]) as inputs:
        for key in [k for k in inputs.files if "@" not in k]:
            # Any shape holding the input's elements: a batch of 1 is added, (1, 1, N) flattened.
            # A model's input k > 0 is under "key@k".
            for k, inp in enumerate(ins):
                x = inputs[key + (f"@{k}" if k else "")]
                interpreter.set_tensor(inp["index"], x.reshape(inp["shape"]).astype(inp["dtype"]))
            interpreter.invoke()
            results[key] = interpreter.get_tensor(out["index"])
            for k, other in enumerate(outs[1:], 1):  # a model with several outputs: the others too
                results[f"{key}#{k}"] = interpreter.get_tensor(other["index"])
            for op in ops:
                results[f"{key}/{op['index']}"] = interpreter.get_tensor(op["outputs"][0])
    np.savez(job["outputs"], **results)
    with open(job["outputs"] + ".ops.json", "w") as f:
        json.dump([op["op_name"] for op in ops], f)
"""


class OracleError(RuntimeError):
    pass


@dataclass
class Run:
    """The interpreter's answers for one model: `outputs[i]` for input i (the model's own output
    shape, batch included; its first output), `all_outputs[i]` every output in the model's order;
    with layers, `layers[i][k]` is operator k's output and `ops[k]` its name."""

    outputs: list[np.ndarray]
    ops: list[str] = field(default_factory=list)
    layers: list[list[np.ndarray]] = field(default_factory=list)
    all_outputs: list[list[np.ndarray]] = field(default_factory=list)


def run_jobs(jobs: list[tuple[Path, list[np.ndarray]]], layers: bool = False, timeout: float = 600) -> list[Run]:
    """Run every (model, inputs) job in one interpreter subprocess."""
    with tempfile.TemporaryDirectory() as tmp:
        manifest = run_script(_SCRIPT, jobs, Path(tmp), timeout, "the interpreter", layers=layers)
        return [_collect(job, len(inputs)) for job, (_, inputs) in zip(manifest, jobs)]


def run_script(script: str, jobs: list[tuple[Path, list[np.ndarray]]], tmp: Path, timeout: float, what: str,
               **fields) -> list[dict]:
    """Save each job's inputs in `tmp` (keys x00000, x00001, ...; an input that is a list of arrays,
    for a model with several inputs, saves array k > 0 under x00000@k) and run `script` on the list of
    jobs ({"model", "inputs", "outputs"} and `fields`) in a subprocess; returns that list, whose
    "outputs" are the .npz files the script wrote."""
    manifest = []
    for n, (model, inputs) in enumerate(jobs):
        inputs_path = tmp / f"in{n}.npz"
        arrays = {}
        for i, x in enumerate(inputs):
            for k, array in enumerate(x if isinstance(x, (list, tuple)) else [x]):
                arrays[f"x{i:05d}" + (f"@{k}" if k else "")] = array
        np.savez(inputs_path, **arrays)
        manifest.append({"model": str(model), "inputs": str(inputs_path), "outputs": str(tmp / f"out{n}.npz"),
                         **fields})
    manifest_path = tmp / "jobs.json"
    manifest_path.write_text(json.dumps(manifest))
    proc = subprocess.run([sys.executable, "-c", script, str(manifest_path)],
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise OracleError(f"{what} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return manifest


def _collect(job: dict, n_inputs: int) -> Run:
    ops = json.loads(Path(job["outputs"] + ".ops.json").read_text())
    with np.load(job["outputs"]) as results:
        return Run(outputs=[results[f"x{i:05d}"] for i in range(n_inputs)], ops=ops,
                   layers=[[results[f"x{i:05d}/{k}"] for k in range(len(ops))] for i in range(n_inputs)],
                   all_outputs=every_output(results, n_inputs))


def every_output(results, n_inputs: int) -> list[list[np.ndarray]]:
    """Per input, every output of the model in its order, from a script's results: the first under
    the input's key ("x00000"), output k under "x00000#k"."""
    n_outputs = 1 + sum(1 for key in results.files if key.startswith("x00000#"))
    return [[results[f"x{i:05d}" + (f"#{k}" if k else "")] for k in range(n_outputs)] for i in range(n_inputs)]


def run_tflite(model: Path, x: np.ndarray) -> np.ndarray:
    """The interpreter's output for one input of one model."""
    return run_jobs([(model, [x])])[0].outputs[0]
