"""The value profile of a float graph, for the cores without an FPU.

There every float32 operation is a call of the soft-float library, whose paths depend on the
values: a product or sum with a 0 returns early, float_math.h's exp skips its reduction where it
rounds x / ln 2 to 0. Each op says which of its counts depend on its values (Op.value_counts); the
profile reads them off one run of the numpy reference executor on one input: the seeded input
`tensors.random_input(graph, seed)` that `msfcnn verify` and the calibration measure (seed 0
unless a calibration row says another), or the caller's. A prediction on such a core is then for
that input's values."""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..executor import initial_states, internal_inputs, run_ops
from ..ir import Graph
from ..ops import Op
from ..targets import TARGETS
from ..tensors import random_input

Profile = dict[int, Counter]  # op index -> its whole run's value counts

_KEPT = 4
_cache: list[tuple[Graph, object, Profile]] = []  # the last graphs' profiles (planning asks many times)


def soft_float(target: str) -> bool:
    """Whether `target`'s core has no FPU: its float kernels' time depends on their values."""
    core = TARGETS.get(target)
    return core is not None and not core.fpu


def depends_on_values(graph: Graph, target: str) -> bool:
    """Whether the graph's predicted instructions on `target` depend on its input's values: a
    float kernel on a core without an FPU."""
    return soft_float(target) and any(graph.kernel_element(t).is_float for t in range(len(graph.nodes)))


def value_profile(graph: Graph, x=0) -> Profile:
    """Per op whose counts depend on its values, its whole run's counts on input `x` (an input
    array, or the seed of random_input), cached per graph object and seed."""
    key = x if isinstance(x, int) else None
    for kept_graph, kept_key, profile in _cache:
        if kept_graph is graph and key is not None and kept_key == key:
            return profile
    profile = _profile(graph, random_input(graph, x) if isinstance(x, int) else x)
    if key is not None:
        _cache[:] = [(graph, key, profile), *_cache[:_KEPT - 1]]
    return profile


def _profile(graph: Graph, x) -> Profile:
    """Runs the graph op by op (executor.run_ops), asking each op that has value counts for them
    on its inputs and output."""
    counted = {t for t, node in enumerate(graph.nodes)
               if graph.kernel_element(t).is_float and type(node.op).value_counts is not Op.value_counts}
    if not counted:
        return {}
    profile: Profile = {}

    def count(index: int, inputs, output, ctx) -> None:
        if index in counted:
            with np.errstate(all="ignore"):
                profile[index] = Counter(graph.nodes[index].op.value_counts(inputs, output, ctx))

    run_ops(graph, internal_inputs(graph, x)[0], initial_states(graph), count)
    return profile
