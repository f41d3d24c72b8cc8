"""`single`: one op on whole tensors.

An element-wise op (add, activation, requantize) or a reshape writes over an input that dies with
it, as TFLite Micro does, so its output costs nothing.
"""

from __future__ import annotations

from ..lowered import WORKSPACE, LoweredBlock, Scratch, Whole, block_reads
from .base import Scheme


class Single(Scheme, name="single", template="single", order=0, fused=False):
    """one op on whole tensors (every op's unfused candidate)"""

    def lower(self, graph, live, first, last, rows, cache):
        if first != last:
            return None
        op = graph.nodes[first].op
        alias = None
        if op.writes_over_input and live.in_arena(first):
            # Prefer the skip (second) input: writing over it ends its wait in the arena.
            for t in reversed(graph.nodes[first].inputs):
                if (live.in_arena(t) and live.last_use[t] == first and live.nbytes(t) == live.nbytes(first)
                        and graph.dtype_of(t) == graph.dtype_of(first)):
                    alias = t
                    break
        workspace = op.workspace_bytes(graph.dtype_of(first))
        scratch = (Scratch(WORKSPACE, (workspace,), "int8", graph.alignment),) if workspace else ()
        return LoweredBlock(first, first, self.name, 1, block_reads(graph, first, first), alias, scratch,
                            graph.macs(first), Whole(), recompute=(1.0,))


    def explain(self, block):
        return "One op on whole tensors." + (" Its output is written over its dying input." if block.alias is not None
                                             else "")


SCHEME = Single()
