"""How often a block's kernels touch each of their operands, from the latency model's loop counts:
what the placement over RAM regions weighs a buffer by (schedule/placement.py, `LoopRuns`).

The counts are the portable build's (`features.BlockCounter`, no DSP or Helium loops), summed per
op: a loop's body runs once per value or pixel it handles. The loops named `output` (and its
stages, `output_*`) write the op's output; the others read its inputs. What the block does
besides its kernels (a stream's walk and pulls, a tail's accumulate) is its own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..ir import Graph
from ..schedule import LoweredBlock
from ..schedule.placement import LoopRuns
from .features import BlockCounter

READ, WRITE = "read", "write"


class _PerOp(BlockCounter):
    """A block's counts with each kernel call's (a region's, a whole op's, a tail's vector op's, an
    in-place depthwise map's) summed under (op, READ) and (op, WRITE)."""

    def __init__(self, graph: Graph):
        super().__init__(graph, dsp=False)

    def _count_call(self, t: int, r0: int, r1: int, c0: int, c1: int, ring: int = 0) -> Counter:
        return _by_op(t, super()._count_call(t, r0, r1, c0, c1, ring))

    def _channels(self, t: int) -> Counter:
        return _by_op(t, super()._channels(t))


def _by_op(t: int, counts: Counter) -> Counter:
    writes = sum(n for name, n in counts.items() if _writes(name))
    return Counter({(t, WRITE): writes, (t, READ): sum(counts.values()) - writes})


def _writes(name: str) -> bool:
    loop = name.partition(":")[2]
    return loop == "output" or loop.startswith("output_")


def loop_runs(graph: Graph, blocks: Sequence[LoweredBlock]) -> list[LoopRuns]:
    """Per block: the loop-body runs of each op's kernel that read its inputs and that write its
    output, and the block's own."""
    counter = _PerOp(graph)
    found = []
    for block in blocks:
        counts = counter.block(block)
        reads = {name[0]: n for name, n in counts.items() if isinstance(name, tuple) and name[1] == READ}
        writes = {name[0]: n for name, n in counts.items() if isinstance(name, tuple) and name[1] == WRITE}
        own = sum(n for name, n in counts.items() if not isinstance(name, tuple))
        found.append(LoopRuns(reads, writes, own))
    return found
