"""Polynomial-time solvers over the fusion DAG; none of them enumerates paths.

Cuts are numbered in topological order and every block goes forward, so one sweep over the cuts
solves a shortest-path (sum of MACs) or bottleneck (max of RAM) problem in O(E). The constrained
problems search over the O(E) distinct RAM values of the blocks:

- min_peak_ram: bottleneck path; ties broken by fewer MACs (then fewer MACs on slow schemes).
- min_macs:     shortest path; ties broken by less peak RAM.
- p1:           least peak RAM such that MACs <= max_macs (ties: fewer MACs).
- p2:           least MACs such that peak RAM < max_ram, strictly (ties: less RAM).
- pareto_front: every non-dominated (peak RAM, MACs) pair, by a label-setting sweep. A front
                has at most one point per distinct block RAM, so it is polynomial in size.

Every solver sums one additive weight of the blocks, `weight`: "macs" (the paper's compute), or
"instructions" (the latency model's predicted instructions on a target, `Block.instructions`);
"fewer MACs" below reads "less of the weight" then.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

import numpy as np

from .dag import Block, FusionDAG


@dataclass(frozen=True)
class Path:
    blocks: tuple[Block, ...]

    @property
    def peak_ram(self) -> int:
        return max(b.ram_bytes for b in self.blocks)

    @property
    def macs(self) -> int:
        return sum(b.macs for b in self.blocks)

    def total(self, weight: str) -> int:
        return sum(getattr(b, weight) for b in self.blocks)


def _shortest(dag: FusionDAG, incoming, ram_limit: float, weight: str = "macs") -> tuple[float, Path | None]:
    """Least-MAC path using only blocks with ram <= ram_limit. Among paths of equal MACs it takes
    the one that runs the fewest MACs on slower schemes (Block.time_rank), then, block by block,
    the one with less RAM (min_macs ties lean to less RAM). Under weight="instructions" the time
    is the weight itself: the rank is not used."""
    ranked = weight == "macs"
    inf = (math.inf, math.inf)
    dist = [inf] * (dag.n_ops + 1)
    via: list[Block | None] = [None] * (dag.n_ops + 1)
    dist[0] = (0, 0)
    for v in range(1, dag.n_ops + 1):
        best, best_block = inf, None
        for b in incoming[v]:
            if b.ram_bytes <= ram_limit:
                total, slow = dist[b.src]
                w = getattr(b, weight)
                d = (total + w, slow + w * b.time_rank if ranked else 0)
                if d < best or (d == best and best_block is not None and b.ram_bytes < best_block.ram_bytes):
                    best, best_block = d, b
        dist[v], via[v] = best, best_block
    return dist[-1][0], _trace(via, dag.n_ops) if dist[-1][0] < math.inf else None


def _trace(via: list[Block | None], end: int) -> Path:
    blocks = []
    v = end
    while v > 0:
        block = via[v]
        blocks.append(block)
        v = block.src
    return Path(tuple(reversed(blocks)))


def _bottleneck(dag: FusionDAG, incoming) -> float:
    """Least achievable peak RAM over all complete paths."""
    peak = [math.inf] * (dag.n_ops + 1)
    peak[0] = -math.inf
    for v in range(1, dag.n_ops + 1):
        peak[v] = min((max(peak[b.src], b.ram_bytes) for b in incoming[v]), default=math.inf)
    return peak[-1]


def _ram_values(dag: FusionDAG) -> list[int]:
    return sorted({b.ram_bytes for b in dag.blocks})


def _least_threshold(dag: FusionDAG, incoming, values: list[int], ok, weight: str = "macs") -> int | None:
    """Index of the least RAM threshold T in values for which ok(min MACs under T) holds (monotone)."""
    lo, hi = 0, len(values)
    while lo < hi:
        mid = (lo + hi) // 2
        macs = _shortest(dag, incoming, values[mid], weight)[0]
        if macs < math.inf and ok(macs):
            hi = mid
        else:
            lo = mid + 1
    return lo if lo < len(values) else None


def min_peak_ram(dag: FusionDAG, weight: str = "macs") -> Path | None:
    incoming = dag.by_destination()
    peak = _bottleneck(dag, incoming)
    return None if peak == math.inf else _shortest(dag, incoming, peak, weight)[1]


def p1(dag: FusionDAG, max_macs: float, weight: str = "macs") -> Path | None:
    """Least peak RAM subject to MACs <= max_macs."""
    incoming = dag.by_destination()
    values = _ram_values(dag)
    index = _least_threshold(dag, incoming, values, lambda macs: macs <= max_macs, weight)
    return None if index is None else _shortest(dag, incoming, values[index], weight)[1]


def p2(dag: FusionDAG, max_ram: float, weight: str = "macs") -> Path | None:
    """Least MACs subject to peak RAM < max_ram (strict, as the reference)."""
    incoming = dag.by_destination()
    values = _ram_values(dag)
    values = values[:bisect.bisect_left(values, max_ram)]
    if not values:
        return None
    best = _shortest(dag, incoming, values[-1], weight)[0]
    if best == math.inf:
        return None
    index = _least_threshold(dag, incoming, values, lambda macs: macs <= best, weight)
    return _shortest(dag, incoming, values[index], weight)[1]


def min_macs(dag: FusionDAG, weight: str = "macs") -> Path | None:
    return p2(dag, math.inf, weight)


def pareto_front(dag: FusionDAG, weight: str = "macs") -> list[Path]:
    """All non-dominated (peak RAM, MACs) plans, sorted by RAM ascending (MACs descending).

    Label setting: each cut keeps its non-dominated (peak, macs) labels as numpy arrays with a
    back-pointer (block, label index at the block's source cut); a cut's labels are the filtered
    union of its incoming blocks applied to their sources' labels.
    """
    n = dag.n_ops
    incoming = dag.by_destination()
    empty = np.zeros(0, dtype=np.int64)
    ram: list[np.ndarray] = [np.array([np.iinfo(np.int64).min])] + [empty] * n
    mac: list[np.ndarray] = [np.zeros(1, dtype=np.int64)] + [empty] * n
    back_block: list[np.ndarray] = [empty] * (n + 1)
    back_label: list[np.ndarray] = [empty] * (n + 1)
    blocks_by_id = dag.blocks
    block_id = {id(b): i for i, b in enumerate(blocks_by_id)}
    for v in range(1, n + 1):
        parts = [(b, ram[b.src], mac[b.src]) for b in incoming[v] if len(ram[b.src])]
        if not parts:
            continue
        cand_ram = np.concatenate([np.maximum(r, b.ram_bytes) for b, r, _ in parts])
        cand_mac = np.concatenate([m + getattr(b, weight) for b, _, m in parts])
        cand_block = np.concatenate([np.full(len(r), block_id[id(b)]) for b, r, _ in parts])
        cand_label = np.concatenate([np.arange(len(r)) for _, r, _ in parts])
        order = np.lexsort((cand_mac, cand_ram))
        sorted_mac = cand_mac[order]
        running_min = np.minimum.accumulate(sorted_mac)
        keep = np.ones(len(order), dtype=bool)
        keep[1:] = sorted_mac[1:] < running_min[:-1]
        chosen = order[keep]
        ram[v], mac[v] = cand_ram[chosen], cand_mac[chosen]
        back_block[v], back_label[v] = cand_block[chosen], cand_label[chosen]
    front = []
    for label in range(len(ram[n])):
        blocks, v, j = [], n, label
        while v > 0:
            block = blocks_by_id[back_block[v][j]]
            blocks.append(block)
            v, j = block.src, back_label[v][j]
        front.append(Path(tuple(reversed(blocks))))
    return front
