"""`--numerics tflm`: the numpy executor bit-exact with TFLite Micro's interpreter (the
`tflite-micro` package, TFLM's reference kernels) and with LiteRT's BUILTIN_REF resolver (TFLite's
reference kernels), on every supported int8 `.tflite` fixture; the generated C under the same
numerics bit-exact with numpy on the host (docs/numerics.md)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tflite_micro  # noqa: F401  (the oracle; a test dependency, never skipped)

from support import cache
from support.c_build import check_c
from support.cli import run_cli as cli
from support.micro_oracle import run_jobs
from support.paths import FIXTURES, UINT8_PREFIX
from msfcnn import pipeline
from msfcnn.executor import run_unfused
from msfcnn.fusion import solvers
from msfcnn.tensors import random_input

# TFLite Micro refuses uint8 models, and has no RELU_N1_TO_1 / RELU_0_TO_1 nor int16 RESIZE_BILINEAR
# (msfcnn refuses those under tflm); LiteRT's BUILTIN_REF resolver has no ELU and no int8
# DEPTH_TO_SPACE (version 2). tests/integration/test_activation_ops.py and test_space_to_depth.py
# check those fixtures against TFLite Micro alone.
MODELS = sorted(p for d in ("models", "executor") for p in (FIXTURES / d).glob("*.tflite")
                if not p.name.startswith(("unsupported_", UINT8_PREFIX, "act_relu_n1_to_1", "act_relu_0_to_1",
                                          "act_sweep_relu_n1_to_1", "act_sweep_relu_0_to_1", "act_elu",
                                          "act_sweep_elu", "bilinear_i16_chain", "depth_to_space")))
NETWORKS = {"mbv2_035", "mbv1_025_vww", "resnet8", "dscnn"}
# Where TFLite Micro and LiteRT's reference kernels disagree with each other, `tflm` follows TFLite
# Micro; they do on some values of ex_relu6_standalone (TFLM's int8 RELU6 clamps the raw input to
# [input zero point, 6 in the input's quantisation] and does not requantise to the output's, by up
# to 36 LSB here), ex_per_tensor_conv_dense (its last FULLY_CONNECTED: BUILTIN_REF rounds once,
# TFLM twice) and op14_mul_se (MUL's multiplier: float32 in BUILTIN_REF, double in TFLM), by 1 LSB.


def inputs_for(graph, path) -> list[np.ndarray]:
    """Seeded random inputs: int8, or float32 across the int8 range and beyond for a float-input model
    (so that its QUANTIZE rounds and saturates)."""
    n = 3 if path.stem in NETWORKS else 8
    if not graph.float_input:
        return [random_input(graph, seed) for seed in range(n)]
    rng = np.random.default_rng(0)

    def spread(spec):
        return ((rng.uniform(-140, 140, spec.shape) - spec.quant.zero_point) * spec.quant.scale).astype(np.float32)
    inputs = [[spread(graph.input_spec(k)) for k in range(len(graph.input_tensors))] for _ in range(n)]
    return [x[0] if len(x) == 1 else x for x in inputs]


def with_batch(graph, x):
    """An input (each of them, for a model with several) with its batch of 1."""
    if isinstance(x, list):
        return [with_batch(graph, a) for a in x]
    return x if x.ndim == len(graph.input_shape) + 1 else x[None]


@pytest.fixture(scope="module")
def oracles():
    """(graph, inputs, {oracle: outputs}) per fixture, each oracle in one subprocess."""
    graphs = {p: pipeline.load(str(p), numerics="tflm") for p in MODELS}
    inputs = {p: inputs_for(graphs[p], p) for p in MODELS}
    outputs = {oracle: run_jobs([(p, inputs[p]) for p in MODELS], oracle) for oracle in ("tflm", "ref")}
    return {p: (graphs[p], inputs[p], {o: outputs[o][k] for o in outputs}) for k, p in enumerate(MODELS)}


@pytest.mark.slow
@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_numpy_matches_tflite_micro_and_reference_kernels(path, oracles, record_property):
    """Every value equals TFLite Micro's; every value on which the two oracles agree equals both."""
    graph, inputs, expected = oracles[path]
    assert graph.numerics == "tflm"
    split = 0
    for n, x in enumerate(inputs):
        ours = np.asarray(run_unfused(graph, with_batch(graph, x))).reshape(-1)
        micro, ref = (np.asarray(expected[o][n]).reshape(-1) for o in ("tflm", "ref"))
        if graph.element_of(graph.output).is_float:  # float32 kernels: within a few float32 roundings
            np.testing.assert_allclose(ours, micro, rtol=1e-5, atol=1e-6)
            continue
        np.testing.assert_array_equal(ours, micro, err_msg=f"{path.stem}: differs from TFLite Micro on input {n}")
        agree = micro == ref
        np.testing.assert_array_equal(ours[agree], ref[agree],
                                      err_msg=f"{path.stem}: differs from LiteRT BUILTIN_REF on input {n}")
        split += int((~agree).sum())
    record_property("values_where_tflm_and_builtin_ref_disagree", split)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["resnet8", "op14_mul_se", "ex_mean_keepdims_c40", "ex_relu6_standalone",
                                  "ex_per_tensor_conv_dense", "op_dense_softmax"])
def test_c_matches_numpy_under_tflm(name):
    path = next(p for p in MODELS if p.stem == name)
    graph = pipeline.load(str(path), numerics="tflm")
    blocks = solvers.min_peak_ram(cache.dag(graph)).blocks
    check_c(graph, blocks, seed=0)
    check_c(graph, blocks, seed=1)


def test_numerics_change_the_generated_requantisation():
    """The default is LiteRT's ruy rounding for CONV_2D; tflm makes it TFLite's double rounding."""
    path = FIXTURES / "models" / "op_conv_k3_s2_same.tflite"
    litert, tflm = pipeline.load(str(path)), pipeline.load(str(path), numerics="tflm")
    assert litert.numerics == "litert" and tflm.numerics == "tflm"
    names = {"weights": "w", "bias": "b", "multiplier": "m", "right": "r"}
    shape = [litert.shape_of(-1)]
    op = litert.nodes[0].op
    assert "MSF_ROUND_RUY" in op.c_params(litert.kernel_context(0), shape, litert.nodes[0].shape, names)
    assert "MSF_ROUND_DOUBLE" in op.c_params(tflm.kernel_context(0), shape, tflm.nodes[0].shape, names)


def test_unknown_numerics_is_a_user_error():
    from msfcnn.errors import UserError
    with pytest.raises(UserError, match="unknown numerics"):
        pipeline.load(str(MODELS[0]), numerics="cmsis")


# ---- the command line: --numerics on run, compile and verify ----------------------------------------

RESNET8 = FIXTURES / "models" / "resnet8.tflite"


@pytest.mark.slow
def test_run_under_tflm_gives_tflite_micros_output(tmp_path, capsys):
    graph = pipeline.load(str(RESNET8), numerics="tflm")
    x = random_input(graph, 4)
    np.save(tmp_path / "x.npy", x)
    code, out, _ = cli(capsys, "run", str(RESNET8), "--numerics", "tflm", "--input", str(tmp_path / "x.npy"),
                       "-o", str(tmp_path / "y.npy"), "--json")
    result = json.loads(out)
    assert code == 0 and result["numerics"] == "tflm" and result["max_abs_diff_vs_vanilla"] == 0
    micro = run_jobs([(RESNET8, [x])], "tflm")[0][0]
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy").reshape(-1), micro.reshape(-1))
    code, out, _ = cli(capsys, "run", str(RESNET8), "--input", str(tmp_path / "x.npy"), "--json")
    assert code == 0 and json.loads(out)["numerics"] == "litert"


@pytest.mark.slow
def test_verify_and_compile_under_tflm(tmp_path, capsys):
    code, out, _ = cli(capsys, "verify", str(RESNET8), "--numerics", "tflm", "--json")
    result = json.loads(out)
    assert code == 0 and result["numerics"] == "tflm" and result["bit_exact"] and result["pass"]
    for numerics, rounding in (("litert", "MSF_ROUND_RUY"), ("tflm", "MSF_ROUND_DOUBLE")):
        folder = tmp_path / numerics
        code, _, _ = cli(capsys, "compile", str(RESNET8), "--numerics", numerics, "-o", str(folder))
        assert code == 0
        model_c = (folder / "model.c").read_text()
        assert rounding in model_c and (numerics == "tflm") == ("MSF_ROUND_RUY" not in model_c)
        assert f'#define MSFCNN_NUMERICS "{numerics}"' in (folder / "model.h").read_text()


@pytest.mark.parametrize("command", ["run", "compile", "verify"])
def test_bad_numerics_is_one_line_and_exit_2(command, tmp_path, capsys):
    extra = ["-o", str(tmp_path / "out")] if command == "compile" else []
    code, out, err = cli(capsys, command, str(RESNET8), "--numerics", "cmsis", *extra)
    assert code == 2 and out == "" and err.count("\n") == 1 and "--numerics" in err and "cmsis" in err
