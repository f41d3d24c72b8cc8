"""`overlap` (vMCU): rows stream top to bottom as in linebuffer, and the block's output is written
over the bytes of its input that the block has already consumed (`placement`).

The output starts `delta` bytes after the start of the input: the largest delta at which no
output row is ever written over an input row that a later (or the current) computation still
reads, found by replaying the stream's pull order. The two then take their union, e.g. for a 1x1
conv over H rows, max(input + one output row, output + one input row), instead of input +
output. For the network's first block under --count-io this puts the first feature map into the
image's own buffer. One op runs this way too, a kernel call per row.
"""

from __future__ import annotations

from .base import Scheme
from .linebuffer import lower_rows
from .placement import may_place, place_over_input


class Overlap(Scheme, name="overlap", template="stream", order=15, time_rank=1, floor="rows"):
    """linebuffer whose output overwrites the input rows already consumed (vMCU); one op too"""

    def lower(self, graph, live, first, last, rows, cache):
        if not may_place(graph, live, first, last):
            return None
        block = lower_rows(graph, live, first, last, cache, self.name, single=True)
        return None if block is None else place_over_input(graph, live, block, cache)

    def explain(self, block):
        return ("overlap: rows stream top to bottom as in linebuffer; " + placed_words(block)
                + " and only overwrites input rows no longer read.")


def placed_words(block) -> str:
    """Where a placed block's output starts, in words."""
    source, delta = block.placed_on
    where = f"{delta} B after" if delta >= 0 else f"{-delta} B before"
    return f"the output starts {where} the input (tensor {source})"


SCHEME = Overlap()
