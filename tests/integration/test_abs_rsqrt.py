"""ABS (int8, int16) and RSQRT (int8) on their fixtures (`fixtures/make_abs_rsqrt_models.py`):

- the sweeps feed the op every int8 value (RSQRT: every value at or above its input zero point,
  the only ones TFLite runs; int16: 1,024 values and both ends), bit-exact with the LiteRT
  interpreter under the default numerics and with TFLite Micro's under `tflm`;
- the conv -> op -> conv models on random inputs: unfused and under the least-RAM plan, where the
  op fuses with its neighbours, bit-exact with both interpreters; the C on the host bit-exact with
  numpy under both numerics.
"""

from __future__ import annotations

import numpy as np
import pytest

from support import cache
from support.c_build import check_c
from support.litert_oracle import run_jobs as litert_jobs
from support.micro_oracle import run_jobs as micro_jobs
from support.paths import FIXTURES
from msfcnn import pipeline
from msfcnn.executor import run_unfused
from msfcnn.fusion import solvers
from msfcnn.fused_executor import run_fused
from msfcnn.ir import Quant
from msfcnn.ops.rsqrt import Rsqrt
from msfcnn.schedule import schedule_plan

MODELS = FIXTURES / "ops"
SWEEPS = sorted(MODELS.glob("abs_sweep_*.tflite")) + sorted(MODELS.glob("rsqrt_sweep_*.tflite"))
SANDWICHES = [MODELS / f"{name}.tflite" for name in ("abs_int8", "abs_i16", "rsqrt_int8")]
NUMERICS = ("litert", "tflm")


def sweep_inputs(graph) -> list[np.ndarray]:
    """Every value the op is defined on, in two orders: all int8 values (RSQRT straight on the
    input: those at or above its zero point, repeated to fill the map), or 4 x 256 int16 values
    with both ends."""
    shape = graph.input_shape
    if graph.dtype == "int16":
        rng = np.random.default_rng(3)
        batches = [rng.integers(-32768, 32768, np.prod(shape)).astype(np.int16) for _ in range(4)]
        batches[0][:4] = (-32768, 32767, 0, -1)
        return [values.reshape(shape) for values in batches]
    values = np.arange(-128, 128)
    if graph.nodes[0].op.kind == "rsqrt":
        values = values[values >= graph.quant_of(-1).zero_point]
    values = np.resize(values, np.prod(shape)).astype(np.int8)
    return [values.reshape(shape), np.roll(values, 101).reshape(shape)]


def expected_outputs(path, inputs) -> dict[str, list[np.ndarray]]:
    return {"litert": litert_jobs([(path, inputs)])[0].outputs,
            "tflm": micro_jobs([(path, inputs)], "tflm", arena_size=64 * 1024)[0]}


def assert_unfused(graph, inputs, expected, who: str) -> None:
    for n, (x, want) in enumerate(zip(inputs, expected)):
        got = run_unfused(graph, x[None]).reshape(-1)
        np.testing.assert_array_equal(got, np.asarray(want).reshape(-1), err_msg=f"{graph.name}: {who}, input {n}")


@pytest.mark.parametrize("path", SWEEPS, ids=lambda p: p.stem)
def test_every_value_matches_both_runtimes(path):
    inputs = sweep_inputs(pipeline.load(str(path)))
    expected = expected_outputs(path, inputs)
    for numerics in NUMERICS:
        assert_unfused(pipeline.load(str(path), numerics=numerics), inputs, expected[numerics], numerics)
    # LiteRT forms ABS's factor in float32, TFLite Micro in double: on this sweep they differ
    differ = any((np.asarray(a) != np.asarray(b)).any() for a, b in zip(expected["litert"], expected["tflm"]))
    assert differ == (path.stem == "abs_sweep_split")


def test_the_fixtures_exist():
    assert len(SWEEPS) == 9 and all(p.exists() for p in SANDWICHES)


@pytest.mark.parametrize("numerics", NUMERICS)
def test_rsqrt_gives_its_largest_value_at_and_below_the_zero_point(numerics):
    """TFLite returns 127 for the zero point and refuses values below it; the table gives 127 there,
    and less above it."""
    table = Rsqrt().numerics_table(Quant(0.002, -20), Quant(0.3, -100), numerics)
    assert (table[:-20 + 128 + 1] == 127).all() and (table[-20 + 128 + 1:] < 127).all()


@pytest.mark.parametrize("path", SANDWICHES, ids=lambda p: p.stem)
def test_conv_op_conv_numpy_fused_and_c(path):
    """Unfused and least-RAM fused numpy runs equal each runtime's bytes under its numerics, with
    the op inside a fused block; the C on the host equals numpy."""
    graphs = {n: pipeline.load(str(path), numerics=n) for n in NUMERICS}
    graph = graphs["litert"]
    info = np.iinfo(np.int16 if graph.dtype == "int16" else np.int8)
    rng = np.random.default_rng(7)
    inputs = [rng.integers(info.min, info.max + 1, graph.input_shape).astype(info.dtype) for _ in range(4)]
    expected = expected_outputs(path, inputs)
    op_index = next(t for t, node in enumerate(graph.nodes) if node.op.kind in ("abs", "rsqrt"))
    for numerics, graph in graphs.items():
        assert_unfused(graph, inputs, expected[numerics], numerics)
        blocks = solvers.min_peak_ram(cache.dag(graph)).blocks
        assert any(b.first < op_index <= b.last or b.first <= op_index < b.last for b in blocks), \
            f"the least-RAM plan runs the op alone: {blocks}"
        schedule = schedule_plan(graph, blocks)
        for x, want in zip(inputs[:2], expected[numerics]):
            np.testing.assert_array_equal(run_fused(schedule, x[None]).output.reshape(-1), np.asarray(want).reshape(-1))
        check_c(graph, blocks, seed=1)
