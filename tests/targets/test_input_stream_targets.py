"""Streamed input (--input-stream) on an emulated board: the harness gives the input's rows from
flash one call at a time, and the C is bit-exact with an arena of the predicted size."""

import pytest

from support.c_build import check_c
from msfcnn.schedule import Liveness
from support.input_stream import chain, edges


@pytest.mark.qemu
def test_streamed_input_on_cortex_m4():
    """The harness gives the rows from flash one call at a time; a row stream and a column stream."""
    graph = chain()
    live = Liveness(graph, input_stream=True)
    for scheme, rows in (("linebuffer", 1), ("hcache", 2)):
        blocks = edges(graph, live, [(0, 2, scheme, rows), (3, 3, "single", 1), (4, 4, "single", 1)])
        assert check_c(graph, blocks, target="cortex-m4", input_stream=True) == max(b.ram_bytes for b in blocks)
