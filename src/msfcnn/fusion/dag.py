"""The fusion DAG: nodes are the cuts 0..N between ops, edges are candidate blocks.

It is a multigraph: several blocks may join the same two cuts (one per scheme and rows-per-step
setting). A complete path from cut 0 to cut N is a fusion plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Block:
    """Ops first..last (inclusive) run together under one scheme: an edge from cut first to last+1."""

    first: int
    last: int
    scheme: str  # a name in msfcnn.schedule.schemes.SCHEMES
    ram_bytes: int
    macs: int
    rows: int = 1  # output rows produced per step (fused schemes)
    # The block's lowering (schedule.LoweredBlock) when the cost model kept one (for a latency
    # model to weigh); `schedule_plan` lowers the others again. Not part of the block's identity.
    lowered: Any = field(default=None, compare=False, repr=False)
    # Between blocks of equal MACs the solvers prefer the lower rank: its scheme runs faster per
    # MAC (a stand-in until plans are costed in time), then the one with less RAM.
    time_rank: int = field(default=0, compare=False)
    # Predicted instructions on the planner's target (latency.model), when it has one.
    instructions: int = field(default=0, compare=False)

    @property
    def src(self) -> int:
        return self.first

    @property
    def dst(self) -> int:
        return self.last + 1


@dataclass(frozen=True)
class FusionDAG:
    n_ops: int
    blocks: tuple[Block, ...]

    @property
    def target(self) -> int:
        return self.n_ops

    def restricted(self, keep) -> "FusionDAG":
        """The sub-DAG of blocks for which keep(block) is true."""
        return FusionDAG(self.n_ops, tuple(b for b in self.blocks if keep(b)))

    def by_destination(self) -> list[list[Block]]:
        incoming: list[list[Block]] = [[] for _ in range(self.n_ops + 1)]
        for block in self.blocks:
            incoming[block.dst].append(block)
        return incoming
