"""Session-wide caches of what many tests would otherwise recompute: the built-in and fixture
models, their fusion DAGs, and the executors' outputs for a (model, plan, input seed).

Everything returned here is shared between tests: never modify it (cached arrays are read-only).
The output caches only memoise graphs that came from `model`; any other graph (a random network
from hypothesis) is computed afresh every time, so nothing can be served for the wrong graph.
"""

from __future__ import annotations

import functools

import numpy as np

from msfcnn.cost import exact
from msfcnn.executor import run_unfused
from msfcnn.frontends import load_model
from msfcnn.fused_executor import FusedRun, run_fused
from msfcnn.fusion.dag import FusionDAG
from msfcnn.ir import Graph
from msfcnn.schedule import schedule_plan
from msfcnn.tensors import random_input

_shared: dict[int, Graph] = {}  # id -> graph, for the graphs `model` returned (kept alive here)


@functools.cache
def model(source: str, weights: bool = False) -> Graph:
    """`load_model(source, weights=weights)`: a built-in name, or a fixture's path as a string."""
    graph = load_model(source, weights=weights)
    _shared[id(graph)] = graph
    return graph


def _is_shared(graph: Graph) -> bool:
    return _shared.get(id(graph)) is graph


@functools.cache
def _dag(graph_id: int) -> FusionDAG:
    return exact.build_dag(_shared[graph_id])


def dag(graph: Graph) -> FusionDAG:
    """`msfcnn.cost.exact.build_dag(graph)`, once per shared model."""
    return _dag(id(graph)) if _is_shared(graph) else exact.build_dag(graph)


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


@functools.cache
def _unfused(graph_id: int, seed: int) -> np.ndarray:
    graph = _shared[graph_id]
    return _frozen(run_unfused(graph, random_input(graph, seed)))


def unfused_output(graph: Graph, seed: int) -> np.ndarray:
    """The unfused network's output on `random_input(graph, seed)`."""
    return _unfused(id(graph), seed) if _is_shared(graph) else run_unfused(graph, random_input(graph, seed))


@functools.cache
def _fused(graph_id: int, blocks: tuple, seed: int, raw: bool) -> FusedRun:
    graph = _shared[graph_id]
    run = run_fused(schedule_plan(graph, list(blocks)), random_input(graph, seed), raw=raw)
    _frozen(run.output)
    return run


def fused_run(graph: Graph, blocks, seed: int, raw: bool = False) -> FusedRun:
    """`run_fused` of the plan `blocks` on `random_input(graph, seed)`."""
    if _is_shared(graph):
        return _fused(id(graph), tuple(blocks), seed, raw)
    return run_fused(schedule_plan(graph, list(blocks)), random_input(graph, seed), raw=raw)
