"""The exact cost model's DAG build: its search bound drops no edge."""

from pathlib import Path

import pytest

from msfcnn.cost import exact
from msfcnn.frontends import load_model
from msfcnn.schedule import Liveness, streaming
from msfcnn.schedule import schemes as registry

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "models"
MODELS = ["mobilenetv2-0.35", "mcunet-vww-res", str(FIXTURES / "onnx_gap_linear.onnx"),
          str(FIXTURES / "op_flatten_dense_b1.tflite")]


def edges(dag):
    return [(b.first, b.last, b.scheme, b.rows, b.ram_bytes, b.macs, b.time_rank,
             b.lowered.placed_on, sorted(b.lowered.homes.items())) for b in dag.blocks]


@pytest.mark.parametrize("model", MODELS)
def test_no_block_reaching_the_stream_break_lowers(model):
    graph = load_model(model)
    live, cache = Liveness(graph), {}
    n = len(graph)
    for first in range(n):
        stop = streaming.stream_break(graph, first)
        for last in range(max(first + 1, stop), n):
            assert streaming.stream_end(graph, first, last) is None
            for name in registry.FUSED_SCHEMES:
                scheme = registry.SCHEMES[name]
                for rows in scheme.rows_options(graph, first, last):
                    assert scheme.lower(graph, live, first, last, rows, cache) is None, (first, last, name, rows)


@pytest.mark.parametrize("model", MODELS)
def test_the_bound_drops_no_edge(model, monkeypatch):
    graph = load_model(model)
    bounded = edges(exact.build_dag(graph, count_io=True))
    monkeypatch.setattr(streaming, "stream_break", lambda graph, first: len(graph))
    assert bounded == edges(exact.build_dag(graph, count_io=True))
