"""The activation operators LEAKY_RELU, TANH, ELU, PRELU, RELU_N1_TO_1 and RELU_0_TO_1 on their
fixtures (`fixtures/make_activation_models.py`):

- every int8 value through each op (the `act_sweep_*` models, several quantisations each),
  bit-exact with the LiteRT interpreter under the default numerics and with TFLite Micro's under
  `tflm`; on the `*_ties` sweeps the two runtimes differ, and each numerics follows its own; every
  uint8 value through the ops LiteRT has uint8 kernels of (`u8_act_sweep_*`);
- the conv -> op -> conv models on random inputs: the numpy executor unfused and under the
  least-RAM fused plan bit-exact with both interpreters, and the generated C on the host
  bit-exact with numpy under both numerics.
"""

from __future__ import annotations

import numpy as np
import pytest

import tflite_micro  # noqa: F401  (the oracle; a test dependency, never skipped)

from support import cache
from support.c_build import check_c
from support.litert_oracle import run_jobs as litert_jobs
from support.micro_oracle import OracleError, run_jobs as micro_jobs
from support.paths import FIXTURES
from msfcnn import pipeline
from msfcnn.errors import UserError
from msfcnn.executor import run_unfused
from msfcnn.fusion import solvers
from msfcnn.fused_executor import run_fused
from msfcnn.schedule import schedule_plan

MODELS = FIXTURES / "models"
SWEEPS = sorted(MODELS.glob("act_sweep_*.tflite")) + sorted(MODELS.glob("u8_act_sweep_*.tflite"))
SANDWICHES = sorted(p for p in MODELS.glob("act_*.tflite") if not p.stem.startswith("act_sweep_"))
NOT_IN_TFLM = ("relu_n1_to_1", "relu_0_to_1", "u8_")  # TFLite Micro has no kernel for these, nor uint8 ones
# The sweeps on which LiteRT and TFLite Micro give different bytes (found by search, see the script).
SPLIT = {"act_sweep_tanh_ties", "act_sweep_elu_ties", "act_sweep_prelu_ties"}


def in_tflm(path) -> bool:
    return not any(name in path.stem for name in NOT_IN_TFLM)


def every_value(shape, uint8: bool) -> list[np.ndarray]:
    """Inputs that put every int8 (uint8) value in every channel: a (1, W, 1)-like map gets all 256
    values in two orders; an (H, W, C) map gets, in each channel, all 256 values over its positions."""
    values = np.arange(256, dtype=np.uint8) if uint8 else np.arange(-128, 128, dtype=np.int8)
    h, w, c = shape
    if c == 1:
        return [np.roll(values, k).reshape(shape) for k in (0, 101)]
    position = np.arange(h * w)[:, None] + 37 * np.arange(c)[None, :]
    return [values[(position + k) % 256].reshape(shape) for k in (0, 59)]


@pytest.fixture(scope="module")
def sweeps():
    """{path: (inputs, LiteRT outputs, TFLite Micro outputs or None)}."""
    graphs = {p: pipeline.load(str(p)) for p in SWEEPS}
    inputs = {p: every_value(graphs[p].input_shape, graphs[p].uint8_input) for p in SWEEPS}
    jobs = [(p, inputs[p]) for p in SWEEPS]
    litert = [run.outputs for run in litert_jobs(jobs)]
    micro = dict(zip([p for p in SWEEPS if in_tflm(p)], micro_jobs([j for j in jobs if in_tflm(j[0])], "tflm")))
    return {p: (inputs[p], litert[k], micro.get(p)) for k, p in enumerate(SWEEPS)}


def _assert_runs(graph, inputs, expected, who: str) -> None:
    for n, (x, want) in enumerate(zip(inputs, expected)):
        got = run_unfused(graph, x[None]).reshape(-1)
        np.testing.assert_array_equal(got, np.asarray(want).reshape(-1), err_msg=f"{graph.name}: {who}, input {n}")


@pytest.mark.parametrize("path", SWEEPS, ids=lambda p: p.stem)
def test_every_int8_value_matches_both_runtimes(path, sweeps):
    inputs, litert, micro = sweeps[path]
    _assert_runs(pipeline.load(str(path)), inputs, litert, "LiteRT")
    if micro is None:
        with pytest.raises(UserError, match="TFLite Micro"):
            pipeline.load(str(path), numerics="tflm")
        return
    _assert_runs(pipeline.load(str(path), numerics="tflm"), inputs, micro, "TFLite Micro")
    split = sum(int((np.asarray(a) != np.asarray(b)).sum()) for a, b in zip(litert, micro))
    assert (split > 0) == (path.stem in SPLIT), f"{path.stem}: LiteRT and TFLite Micro differ on {split} values"


@pytest.mark.parametrize("name", ["act_relu_n1_to_1", "act_relu_0_to_1"])
def test_tflite_micro_has_no_kernel_for_the_clamps(name):
    """Why msfcnn refuses these under tflm: TFLite Micro's interpreter cannot allocate the model."""
    path = MODELS / f"{name}.tflite"
    x = np.zeros(pipeline.load(str(path)).input_shape, np.int8)
    with pytest.raises(OracleError, match="TFLM failed to allocate tensors"):
        micro_jobs([(path, [x])], "tflm")


def test_sweeps_exist():
    ops = {"leaky_relu", "tanh", "elu", "prelu", "relu_n1_to_1", "relu_0_to_1"}
    assert {op for op in ops for p in SWEEPS if p.stem.startswith(f"act_sweep_{op}_")} == ops
    assert {op for op in ops for p in SWEEPS if p.stem == f"u8_act_sweep_{op}"} == ops - {"elu"}  # no uint8 ELU in LiteRT
    assert {p.stem for p in SWEEPS} >= SPLIT
    assert {p.stem for p in SANDWICHES} >= {f"act_{op}" for op in ops}


# Variants of an op the fast tier runs already (and ELU, a LOGISTIC-family table as TANH) are slow.
SLOW_SANDWICHES = {"act_leaky_relu_yolo", "act_prelu_scales", "act_elu"}


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.slow) if p.stem in SLOW_SANDWICHES else p for p in SANDWICHES],
                         ids=lambda p: p.stem)
def test_conv_op_conv_numpy_fused_and_c(path):
    """Unfused and least-RAM fused numpy runs equal LiteRT's (and TFLite Micro's under tflm); the C
    on the host equals numpy under each numerics."""
    numerics = ["litert", "tflm"] if in_tflm(path) else ["litert"]
    graphs = {n: pipeline.load(str(path), numerics=n) for n in numerics}
    rng = np.random.default_rng(7)
    inputs = [rng.integers(-128, 128, graphs["litert"].input_shape, dtype=np.int8) for _ in range(6)]
    expected = {"litert": litert_jobs([(path, inputs)])[0].outputs}
    if "tflm" in graphs:
        expected["tflm"] = micro_jobs([(path, inputs)], "tflm")[0]
    for name, graph in graphs.items():
        _assert_runs(graph, inputs, expected[name], name)
        blocks = solvers.min_peak_ram(cache.dag(graph)).blocks
        assert len(blocks) < len(graph.nodes), "the least-RAM plan fuses nothing"
        schedule = schedule_plan(graph, blocks)
        for x, want in zip(inputs[:2], expected[name]):
            np.testing.assert_array_equal(run_fused(schedule, x[None]).output.reshape(-1), np.asarray(want).reshape(-1))
        check_c(graph, blocks, seed=1)
