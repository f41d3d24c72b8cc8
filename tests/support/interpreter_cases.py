"""Every output of a TFLite fixture against an interpreter (LiteRT, or TFLite Micro under
`--numerics tflm`): the numpy executor unfused and under fused plans (the least-RAM plan, which
must fuse the op under test, and random ones), the fused runs in their predicted arena."""
from __future__ import annotations

import functools

import numpy as np

from support import cache
from support.c_build import check_c
from support.fused_cases import random_plan
from support.litert_oracle import run_jobs as litert_jobs
from support.micro_oracle import run_jobs as micro_jobs
from msfcnn import pipeline
from msfcnn.executor import run_unfused_outputs
from msfcnn.fused_executor import run_fused
from msfcnn.fusion import solvers
from msfcnn.schedule import schedule_plan
from msfcnn.tensors import random_input


def fuses_an_op_of(graph, blocks, op_type) -> bool:
    """Whether a block of several ops holds an op of `op_type`."""
    return any(b.first < b.last and any(isinstance(graph.nodes[t].op, op_type) for t in range(b.first, b.last + 1))
               for b in blocks)


def assert_outputs_equal(got, ref, graph) -> None:
    """Bit-exact, but for a float32 model: its convs sum in another order than the interpreter's."""
    if graph.dtype == "float32":
        np.testing.assert_allclose(got, np.asarray(ref), rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, np.asarray(ref))


def _interpreter_jobs(numerics, jobs) -> list[list[list[np.ndarray]]]:
    if numerics == "litert":
        return [run.all_outputs for run in litert_jobs(jobs)]
    return micro_jobs(jobs, "tflm", all_outputs=True)


@functools.cache
def _seeded_cases(numerics: str, paths: tuple, seeds: tuple) -> dict:
    """Each model's inputs (one per seed) and every interpreter output on them: one subprocess."""
    jobs = [(path, [random_input(pipeline.load(str(path), numerics=numerics), seed) for seed in seeds])
            for path in paths]
    return {path: (inputs, outputs) for (path, inputs), outputs in zip(jobs, _interpreter_jobs(numerics, jobs))}


def check_unfused_and_fused(path, numerics: str, op_type, seeds=range(3), fuses: bool = True,
                            batch: tuple = ()) -> None:
    """The fixture's outputs on seeded inputs, unfused and under the least-RAM plan and random
    plans (of which one fuses an op of `op_type`, or none with `fuses` False), equal to the
    interpreter's; the arena the predicted one. `batch`: the paths of the module's cases under
    `numerics`, whose interpreter runs are then made at once, on the first call."""
    graph = pipeline.load(str(path), numerics=numerics)
    inputs, expected = _seeded_cases(numerics, tuple(batch) or (path,), tuple(seeds))[path]
    dag = cache.dag(graph)
    least = solvers.min_peak_ram(dag).blocks
    plans = [least] + [random_plan(dag, seed) for seed in seeds]
    assert any(fuses_an_op_of(graph, blocks, op_type) for blocks in plans) == fuses
    for x, want in zip(inputs, expected, strict=True):
        for got, ref in zip(run_unfused_outputs(graph, x), want, strict=True):
            assert_outputs_equal(got, ref, graph)
        for blocks in plans:
            run = run_fused(schedule_plan(graph, blocks), x)
            for got, ref in zip(run.outputs, want, strict=True):
                assert_outputs_equal(got, ref, graph)
            assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes




def check_c_least_ram_and_random(path, random_seed: int = 4) -> None:
    """The generated C on the host bit-exact with numpy under the least-RAM plan and a random one."""
    graph = cache.model(str(path))
    dag = cache.dag(graph)
    check_c(graph, solvers.min_peak_ram(dag).blocks, seed=0)
    check_c(graph, random_plan(dag, random_seed), seed=random_seed)


def check_fused_and_c(graph, blocks, seeds=range(3), random_seed: int = 3) -> None:
    """A graph without an interpreter (random weights): the fused run under `blocks` equal to the
    unfused one, and the C bit-exact under `blocks` and a random plan."""
    for seed in seeds:
        x = random_input(graph, seed)
        np.testing.assert_array_equal(run_fused(schedule_plan(graph, list(blocks)), x).output,
                                      run_unfused_outputs(graph, x)[0])
    check_c(graph, blocks)
    check_c(graph, random_plan(cache.dag(graph), random_seed), seed=random_seed)
