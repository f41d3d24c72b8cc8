"""Generated C built as a library: small models compiled from saved plans under a prefix, and
their programs' outputs checked against the numpy executor."""

import json
import subprocess

import numpy as np

from msfcnn import pipeline
from msfcnn.cli import main
from msfcnn.executor import to_internal
from msfcnn.tensors import random_input

ALPHA = {"name": "alpha", "input": [12, 10, 3], "layers": [
    {"op": "conv2d", "filters": 4, "kernel": 3, "stride": 2, "padding": "same", "act": "relu6"},
    {"op": "depthwise_conv2d", "kernel": 3, "stride": 1, "padding": 1, "act": "relu6"},
    {"op": "conv2d", "filters": 4, "kernel": 1, "stride": 1, "padding": 0},
    {"op": "add", "from": 0},
    {"op": "global_avg_pool"}, {"op": "dense", "units": 3}, {"op": "softmax"}]}
BETA = {"name": "beta", "input": [9, 9, 2], "layers": [
    {"op": "conv2d", "filters": 6, "kernel": 3, "stride": 1, "padding": 1, "act": "relu"},
    {"op": "max_pool2d", "kernel": 2, "stride": 2},
    {"op": "conv2d", "filters": 5, "kernel": 3, "stride": 1, "padding": "same"}]}


def run(*command, cwd=None):
    done = subprocess.run([str(c) for c in command], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(map(str, command))}:\n{done.stdout}{done.stderr}"
    return done.stdout


def compile_saved(tmp_path, doc, prefix, plan_options=("--max-overhead", "1.3"), target="host"):
    """The layer list as a model file, its plan saved by `msfcnn plan -o`, and the C compiled
    from that saved plan for `target` into tmp_path/<name>; returns the graph, plan and folder."""
    model = tmp_path / f"{doc['name']}.json"
    model.write_text(json.dumps(doc))
    plan_file = tmp_path / f"{doc['name']}-plan.json"
    assert main(["plan", str(model), *plan_options, "-o", str(plan_file)]) == 0
    folder = tmp_path / doc["name"]
    assert main(["compile", str(model), "--plan", str(plan_file), "--prefix", prefix, "--target", target,
                 "-o", str(folder)]) == 0
    graph = pipeline.load(str(model), weights=True)
    return graph, pipeline.load_plan(str(plan_file), graph), folder


def check_outputs(program, networks, tmp_path, command=None):
    """Run `program IN OUT [IN OUT ...]` (one pair per network, in order; `command(program, *paths)`
    gives the command line, e.g. a target's under QEMU) on seeded inputs: each output equal to the
    numpy executor's, byte for byte."""
    paths, expected = [], {}
    for prefix, (graph, plan, _) in networks.items():
        x = random_input(graph, 5)
        internal = to_internal(graph, x[0] if x.ndim == len(graph.input_shape) + 1 else x)
        (tmp_path / f"{prefix}.in").write_bytes(np.ascontiguousarray(internal).tobytes())
        (tmp_path / f"{prefix}.out").unlink(missing_ok=True)
        paths += [tmp_path / f"{prefix}.in", tmp_path / f"{prefix}.out"]
        expected[prefix] = pipeline.run(pipeline.lower(graph, plan), x, raw=True).output.reshape(-1)
    run(*(command or (lambda *a: a))(program, *paths))
    for prefix, (graph, _, _) in networks.items():
        got = np.frombuffer((tmp_path / f"{prefix}.out").read_bytes(), dtype=graph.element.numpy)
        assert got.size == expected[prefix].size and np.array_equal(got, expected[prefix]), prefix


def cmake(source, build, *options):
    run("cmake", "-S", source, "-B", build, "-DCMAKE_BUILD_TYPE=Release", *options)
    run("cmake", "--build", build, "-j2")
