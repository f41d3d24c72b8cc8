"""The tail of a streamed block: an op that accumulates the streamed map, then vector ops."""

from __future__ import annotations

from ...ir import Graph
from ..lowered import Scratch, Tail
from ..streaming import tail_consumer


def tail_of(graph: Graph, end: int, last: int) -> Tail | None:
    """The tail after stream end `end` of a block ending at `last` (None when end == last): the
    consumer's accumulator (per channel or per unit), then a buffer per vector op before the last."""
    if end == last:
        return None
    consumer = tail_consumer(graph, end)
    accumulator = graph.kernel_element(consumer).accumulator
    acc = Scratch(f"acc{consumer}", (graph.shape_of(consumer)[-1],), accumulator, graph.alignment)
    vectors = {t: Scratch.of(graph, f"vec{t}", graph.shape_of(t), t) for t in range(consumer, last)}
    return Tail(consumer, last, acc, vectors)


def tail_scratch(tail: Tail | None) -> list[Scratch]:
    return [] if tail is None else [tail.acc, *tail.vectors.values()]
