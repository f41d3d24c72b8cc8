"""README.md and docs/numerics.md say first where bit-exactness holds and what LiteRT's default
XNNPACK delegate does instead; the figure they give is what the interpreter does today."""

import re
from pathlib import Path

import numpy as np
import pytest

import msfcnn
from msfcnn.tensors import random_input
from support import litert_oracle

ROOT = Path(__file__).resolve().parent.parent.parent
RESNET8 = ROOT / "tests" / "fixtures" / "models" / "resnet8.tflite"
SEEDS = 8  # "over 8 seeded random inputs"
ONE_LINE = ("Interpreter(model_path=path, experimental_op_resolver_type="
            "OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)")

# The interpreter as a user creates it first: no resolver given, so XNNPACK runs the graph.
_DEFAULT = r"""
import json, sys
import numpy as np
from ai_edge_litert.interpreter import Interpreter
for job in json.load(open(sys.argv[1])):
    interpreter = Interpreter(model_path=job["model"])
    interpreter.allocate_tensors()
    inp, out = interpreter.get_input_details()[0], interpreter.get_output_details()[0]
    results = {}
    with np.load(job["inputs"]) as inputs:
        for key in inputs.files:
            interpreter.set_tensor(inp["index"], inputs[key].reshape(inp["shape"]))
            interpreter.invoke()
            results[key] = interpreter.get_tensor(out["index"])
    np.savez(job["outputs"], **results)
"""


@pytest.mark.parametrize("page", ["README.md", "docs/numerics.md"])
def test_the_first_lines_say_where_bit_exactness_holds(page):
    head = " ".join((ROOT / page).read_text().splitlines()[:20])
    for words in ("BUILTIN_WITHOUT_DEFAULT_DELEGATES", "TFLite Micro", "XNNPACK", "float32 scales", ONE_LINE):
        assert words in head, (page, words)


@pytest.mark.slow
def test_xnnpack_differs_by_the_figure_the_docs_give_and_the_builtin_kernels_do_not(tmp_path):
    graph = msfcnn.load(str(RESNET8))
    xs = [random_input(graph, seed) for seed in range(SEEDS)]
    ours = [msfcnn.run(graph, x=x).output for x in xs]
    builtin = litert_oracle.run_jobs([(RESNET8, xs)])[0].outputs
    manifest = litert_oracle.run_script(_DEFAULT, [(RESNET8, xs)], tmp_path, 300, "the default interpreter")
    with np.load(manifest[0]["outputs"]) as results:
        xnnpack = [results[f"x{i:05d}"] for i in range(SEEDS)]

    def worst(theirs):
        return max(int(np.abs(a.astype(int) - b.reshape(a.shape).astype(int)).max()) for a, b in zip(theirs, ours))

    stated = {int(re.search(r"up to (\d+)\s+on\s+resnet8", (ROOT / page).read_text()).group(1))
              for page in ("README.md", "docs/numerics.md")}
    assert worst(builtin) == 0 and stated == {worst(xnnpack)}
