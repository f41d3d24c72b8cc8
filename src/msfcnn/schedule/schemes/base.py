"""The interface every fusion scheme implements (one module per scheme in this package)."""

from __future__ import annotations

from typing import ClassVar

from ...ir import Graph
from ..lowered import Liveness, LoweredBlock


class Scheme:
    """How a block of ops runs. A scheme knows which rows-per-step settings the cost model should
    try for a block, and lowers a block into what it allocates and computes (`LoweredBlock`,
    including its loop nest), or refuses it. Its C is the template partial
    `codegen/templates/schemes/<template>.c.j2`, which renders the lowered loop nest."""

    name: ClassVar[str]
    summary: ClassVar[str]  # one line for the CLI's help and the docs: the class docstring
    template: ClassVar[str]  # the C template partial (several schemes may share one loop nest)
    order: ClassVar[int]  # position in the registry: the cost model adds candidates in this order
    fused: ClassVar[bool] = True  # False only for `single`, the candidate every op always has
    # 1 for schemes that save RAM at a cost in time per MAC (one row or one channel per kernel
    # call): at equal MACs the solvers prefer rank 0, so they are chosen where they lower the peak.
    time_rank: ClassVar[int] = 0

    def __init_subclass__(cls, name: str, template: str, order: int, fused: bool = True, time_rank: int = 0,
                          **kwargs):
        """A scheme states its registry facts in its class statement, e.g.
        `class HCache(Scheme, name="hcache", template="stream", order=20)`, and its summary as the
        class docstring."""
        super().__init_subclass__(**kwargs)
        cls.name, cls.template, cls.order, cls.fused, cls.time_rank = name, template, order, fused, time_rank
        cls.summary = " ".join((cls.__doc__ or name).split())

    def rows_options(self, graph: Graph, first: int, last: int, cache: dict | None = None) -> list[int]:
        """Rows (or tile sides) per step to try for ops first..last; [1] for schemes without one.
        `cache` is `lower`'s."""
        return [1]

    def lower(self, graph: Graph, live: Liveness, first: int, last: int, rows: int,
              cache: dict) -> LoweredBlock | None:
        """The block over ops first..last, or None when this scheme cannot run them together.
        `cache` memoises geometry (ring sizes, band profiles) across the blocks of one graph."""
        raise NotImplementedError

    def bound(self, graph: Graph, live: Liveness, first: int, last: int, rows: int,
              cache: dict) -> tuple[int, int] | None:
        """Without lowering it, (the MACs, bytes its scratch buffers take at least) of the block
        `lower` would make, or None when not known cheaply or when it would make none."""
        return None

    def template_for(self, block: LoweredBlock) -> str:
        """The C template partial of one of its blocks (a scheme whose blocks take more than one
        loop nest picks by the block's)."""
        return self.template

    def explain(self, block: LoweredBlock) -> str:
        """One or two sentences for the generated C's comment above the block."""
        raise NotImplementedError
