"""TFLite Micro and LiteRT's reference kernels as test oracles for `--numerics tflm`, run in a
subprocess (as `litert_oracle`, whose interpreter kernels can abort the process).

Two interpreters run each (model, inputs) job:

- "tflm": TFLite Micro's own interpreter (the `tflite-micro` package, `tflite_micro.runtime`),
  which runs TFLM's reference kernels, as a microcontroller build without CMSIS-NN does;
- "ref": LiteRT's interpreter with the `BUILTIN_REF` op resolver (TFLite's reference kernels).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from .litert_oracle import OracleError, every_output, run_script  # noqa: F401  (OracleError: raised by run_jobs)

ORACLES = ("tflm", "ref")

_SCRIPT = r"""
import json, sys
import numpy as np

def tflm(path, arena_size):
    from tflite_micro import runtime
    from ai_edge_litert.interpreter import Interpreter
    n_outputs = len(Interpreter(model_path=path).get_output_details())  # only to count them
    n_inputs = len(Interpreter(model_path=path).get_input_details())
    interpreter = runtime.Interpreter.from_file(path, arena_size=arena_size)
    details = [interpreter.get_input_details(k) for k in range(n_inputs)]
    def run(xs):
        for k, (x, d) in enumerate(zip(xs, details)):
            interpreter.set_input(x.reshape(d["shape"]).astype(d["dtype"]), k)
        interpreter.invoke()
        return [np.array(interpreter.get_output(k)) for k in range(n_outputs)]
    return run

def ref(path, arena_size):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    interpreter = Interpreter(model_path=path, num_threads=1,
                              experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    interpreter.allocate_tensors()
    ins = interpreter.get_input_details()
    outs = interpreter.get_output_details()
    def run(xs):
        for x, inp in zip(xs, ins):
            interpreter.set_tensor(inp["index"], x.reshape(inp["shape"]).astype(inp["dtype"]))
        interpreter.invoke()
        return [interpreter.get_tensor(out["index"]) for out in outs]
    return run

for job in json.load(open(sys.argv[1])):
    run = {"tflm": tflm, "ref": ref}[job["oracle"]](job["model"], job["arena_size"])
    with np.load(job["inputs"]) as inputs:
        # every output: the first under the input's key, output k under "key#k"
        # a model's input k > 0 is under "key@k"
        keys = [key for key in inputs.files if "@" not in key]
        xs = {key: [inputs[key]] + [inputs[f"{key}@{k}"] for k in range(1, 1 + sum(f.startswith(key + "@") for f in inputs.files))]
              for key in keys}
        results = {key + (f"#{k}" if k else ""): y for key in keys for k, y in enumerate(run(xs[key]))}
    np.savez(job["outputs"], **results)
"""


def run_jobs(jobs: list[tuple[Path, list[np.ndarray]]], oracle: str, timeout: float = 600,
             all_outputs: bool = False, arena_size: int | None = None) -> list[list]:
    """Each job's outputs (the model's own output shape; its first output) under one oracle, "tflm"
    or "ref"; with `all_outputs`, the list of every output (in the model's order) per input.
    `arena_size`: TFLite Micro's arena in bytes (its default follows the model file's size, too
    small for a model of large tensors and no weights)."""
    if oracle not in ORACLES:
        raise ValueError(f"unknown oracle {oracle!r}")
    with tempfile.TemporaryDirectory() as tmp:
        manifest = run_script(_SCRIPT, jobs, Path(tmp), timeout, f"the {oracle} interpreter", oracle=oracle,
                              arena_size=arena_size)
        outputs = []
        for job, (_, inputs) in zip(manifest, jobs):
            with np.load(job["outputs"]) as results:
                everything = every_output(results, len(inputs))
                outputs.append(everything if all_outputs else [ys[0] for ys in everything])
        return outputs
