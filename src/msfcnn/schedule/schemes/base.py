"""The interface every fusion scheme implements (one module per scheme in this package)."""

from __future__ import annotations

from typing import ClassVar

from ...ir import Graph
from ..lowered import Liveness, LoweredBlock


# The kinds of RAM floor (`cost.exact._ring_floor`), each the least buffer an inner tensor of a
# stream takes: a ring of rows by the whole width (`rows`), the same but for depthwise rows that
# may live in their input's ring (`homes`), a band or tile of at least its reader's window
# (`patches`).
FLOORS = ("rows", "homes", "patches")


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
    # The least RAM the exact cost model may assume of its blocks before lowering them (one of
    # FLOORS; None: no floor, every candidate is lowered), and the axes along which its buffers
    # hold an inner tensor's widest band over the bands of the stream end (they grow with the
    # distance to it: `cost.exact._Bounds.band_floor`; only with a floor).
    floor: ClassVar[str | None] = None
    growing: ClassVar[tuple[int, ...]] = ()

    def __init_subclass__(cls, name: str, template: str, order: int, fused: bool = True, time_rank: int = 0,
                          floor: str | None = None, growing: tuple[int, ...] = (), **kwargs):
        """A scheme states its registry facts in its class statement, e.g.
        `class HCache(Scheme, name="hcache", template="stream", order=20, floor="patches",
        growing=(0,))`, and its summary as the class docstring."""
        super().__init_subclass__(**kwargs)
        if floor not in (None, *FLOORS):
            raise TypeError(f"scheme {name}: unknown floor {floor!r} (floors: {', '.join(FLOORS)})")
        if growing and floor is None or not set(growing) <= {0, 1}:
            raise TypeError(f"scheme {name}: growing axes {growing} need a floor and are among 0 (rows), 1 (columns)")
        cls.name, cls.template, cls.order, cls.fused, cls.time_rank = name, template, order, fused, time_rank
        cls.floor, cls.growing = floor, tuple(growing)
        cls.summary = " ".join((cls.__doc__ or name).split())

    def rows_options(self, graph: Graph, first: int, last: int, cache: dict | None = None) -> list[int]:
        """Rows (or tile sides) per step to try for ops first..last; [1] for schemes without one.
        `cache` is `lower`'s."""
        return [1]

    def reach(self, graph: Graph, first: int, cache: dict) -> int | None:
        """One past the last op a block from `first` may take, for a scheme whose blocks are no
        streams; None: the streams' reach (`streaming.stream_break`)."""
        return None

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
