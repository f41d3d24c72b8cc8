"""Sequence graphs built in code for the time-scan tests (no converter writes them with random
weights this small), and the bytes of an int8 LSTM cell's state and gates counted by hand."""

from __future__ import annotations

import numpy as np

from msfcnn.ir import Graph, Quant, with_numerics
from msfcnn.ops import Add, Conv2D
from msfcnn.ops.base import Window
from msfcnn.ops.lstm import Lstm
from msfcnn.ops.reshape import Reshape


def lstm_state_bytes(units: int) -> int:
    """int8: c (int16) and h (int8) of one cell, and the byte that puts c at an even address."""
    return 2 * units + units + 1


def gates_bytes(units: int) -> int:
    """int8: one step's four int16 gates, and the byte that puts them at an even address."""
    return 4 * units * 2 + 1


def _lstm_appender(graph: Graph, rng, units: int, hidden: Quant):
    """A function appending an int8 LSTM(units) of random weights: (its input's features, whether
    it returns the whole sequence, its input tensor)."""
    def lstm(inputs: int, sequences: bool, source: int):
        consts = {"input_weights": rng.integers(-127, 128, (4, units, inputs), dtype=np.int8),
                  "recurrent_weights": rng.integers(-127, 128, (4, units, units), dtype=np.int8),
                  "bias": rng.integers(-20000, 20000, (4, units)).astype(np.int32),
                  "input_scales": np.full(4, 2 / (127 * np.sqrt(inputs)), np.float32),
                  "recurrent_scales": np.full(4, 2 / (127 * np.sqrt(units)), np.float32)}
        op = Lstm(units, sequences, cell_clip=10.0, cell_log2=-11, hidden_scale=hidden.scale,
                  hidden_zero=hidden.zero_point, litert_hidden_scale=hidden.scale, litert_hidden_zero=hidden.zero_point)
        graph.append(op, (source,), consts, hidden)
    return lstm


def window_scan_graph(numerics: str, dilation: int) -> Graph:
    """LSTM(8) over 12 steps -> a centred Conv1D (3 taps, `dilation`) -> LSTM(8), last step:
    the conv reads (3 - 1) x dilation / 2 steps ahead of its own position."""
    rng = np.random.default_rng(dilation)
    steps, features, units, filters = 12, 3, 8, 6
    graph = Graph("scan_window", (1, steps, features), input_quant=Quant(1 / 128, 0), dtype="int8")
    hidden = Quant(1 / 128, 3)

    lstm = _lstm_appender(graph, rng, units, hidden)

    lstm(features, True, -1)
    graph.append(Reshape((1, steps, units)), (0,), {}, hidden)
    window = Window.resolve((1, 3), 1, "same", (1, steps), dilation=(1, dilation))
    conv = {"weights": rng.integers(-127, 128, (filters, 1, 3, units), dtype=np.int8),
            "bias": rng.integers(-500, 500, filters).astype(np.int32),
            "weight_scales": np.full(filters, 1 / (127 * np.sqrt(3 * units)), np.float32)}
    graph.append(Conv2D(filters, window, "relu"), (1,), conv, Quant(3 / 255, -128))
    graph.append(Reshape((steps, filters)), (2,), {}, Quant(3 / 255, -128))
    lstm(filters, False, 3)
    return with_numerics(graph, numerics)


def residual_scan_graph(numerics: str, lookahead: bool) -> Graph:
    """LSTM(8) over 12 steps -> Conv1D a (1 tap) -> Conv1D b (3 taps: `lookahead` centred, else
    causal) -> ADD(a, b) on the one-row maps -> LSTM(8), last step. A centred b reads a step
    ahead, so the ADD would read a and b at different lags: no time scan then."""
    rng = np.random.default_rng(7)
    steps, units, filters = 12, 8, 6
    graph = Graph("scan_residual", (1, steps, 3), input_quant=Quant(1 / 128, 0), dtype="int8")
    hidden, maps = Quant(1 / 128, 3), Quant(3 / 255, -128)

    lstm = _lstm_appender(graph, rng, units, hidden)

    def conv(taps: int, source: int, channels: int):
        causal = Window((1, taps), pads=(0, taps - 1, 0, 0))  # (top, left, bottom, right): the past only
        window = Window.resolve((1, taps), 1, "same", (1, steps)) if lookahead or taps == 1 else causal
        weights = {"weights": rng.integers(-127, 128, (filters, 1, taps, channels), dtype=np.int8),
                   "bias": rng.integers(-500, 500, filters).astype(np.int32),
                   "weight_scales": np.full(filters, 1 / (127 * np.sqrt(taps * channels)), np.float32)}
        graph.append(Conv2D(filters, window, "relu"), (source,), weights, maps)

    lstm(3, True, -1)
    graph.append(Reshape((1, steps, units)), (0,), {}, hidden)
    conv(1, 1, units)
    conv(3, 2, filters)
    graph.append(Add(), (3, 2), {}, Quant(4 / 255, -128))
    graph.append(Reshape((steps, filters)), (4,), {}, Quant(4 / 255, -128))
    lstm(filters, False, 5)
    return with_numerics(graph, numerics)
