"""One check for sequence models: each input's output, unfused and under two fused plans (the least
peak RAM and a random one, each arena as predicted), equal to the interpreter's output (int8) or
within float32 rounding of it."""

from __future__ import annotations

import functools

import numpy as np

from msfcnn import pipeline
from msfcnn.executor import run_unfused_outputs
from msfcnn.fused_executor import run_fused
from msfcnn.fusion import solvers
from msfcnn.schedule import schedule_plan

from . import cache
from .fused_cases import random_plan


def loaded(path, numerics: str = "litert"):
    """`pipeline.load(path, numerics=numerics)` once per test process: an int8 GRU's import alone
    takes about a second (its lookup tables), and a file's interpreter, C and structure tests load
    the same models. Shared between tests: never modify the graph."""
    return _loaded(str(path), numerics)


@functools.cache
def _loaded(path: str, numerics: str):
    return pipeline.load(path, numerics=numerics)


def selected_params(request, test_name: str) -> list[dict]:
    """The parameters of each of this run's selected cases of `test_name` in the requesting module
    (after -m and -k): a module fixture can then run an interpreter once for all of them."""
    return [item.callspec.params for item in request.session.items
            if item.path == request.path and getattr(item, "originalname", None) == test_name]


def interpreter_runs(request, test_name: str, jobs_of) -> dict:
    """The interpreter's outputs for every selected case of `test_name`, each numerics' cases in one
    interpreter process (a process costs some 0.2 s of CPU). `jobs_of(params)` gives a case's key,
    numerics ("litert" or "tflm") and jobs [(model, [inputs])]; each job gets its own interpreter,
    so its states start at zero. Returns key -> the list of each job's outputs (one per input)."""
    from .litert_oracle import run_jobs as litert_jobs
    from .micro_oracle import run_jobs as micro_jobs

    cases = [jobs_of(params) for params in selected_params(request, test_name)]
    runs = {}
    for numerics in ("litert", "tflm"):
        mine = [(key, jobs) for key, n, jobs in cases if n == numerics]
        every = [job for _, jobs in mine for job in jobs]
        if not every:
            continue
        if numerics == "litert":
            outputs = iter([list(run.outputs) for run in litert_jobs(every)])
        else:
            outputs = iter([list(run) for run in micro_jobs(every, "tflm", arena_size=1 << 20)])
        runs.update({key: [next(outputs) for _ in jobs] for key, jobs in mine})
    return runs


def check_runs_against(graph, inputs, wants) -> None:
    dag = cache.dag(graph)
    plans = [solvers.min_peak_ram(dag).blocks, random_plan(dag, 1)]
    for x, want in zip(inputs, wants, strict=True):
        runs = [run_unfused_outputs(graph, x)[0]]
        for blocks in plans:
            run = run_fused(schedule_plan(graph, blocks), x)
            assert run.measured_peak_ram_bytes == run.predicted_peak_ram_bytes
            runs.append(run.output)
        for got in runs:
            want = np.asarray(want).reshape(got.shape)
            if graph.dtype == "float32":
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
            else:
                np.testing.assert_array_equal(got, want)


def check_c_of_the_least_ram_plan(graph) -> None:
    """The generated C of the graph's least-RAM plan, on the host, equal to numpy."""
    from .c_build import check_c

    check_c(graph, solvers.min_peak_ram(cache.dag(graph)).blocks, seed=3)


def refusal_line(capsys, path) -> str:
    """`msfcnn plan PATH` exits 2 with one line on stderr: that line."""
    from .cli import run_cli

    code, _, err = run_cli(capsys, "plan", str(path))
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1
    return lines[0]
