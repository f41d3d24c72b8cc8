"""`msfcnn run`: the numpy executor behind the CLI, against the TFLite interpreter."""

import json

import numpy as np
import pytest

from support.paths import FIXTURES
from support.litert_oracle import run_tflite
from msfcnn.cli import main

MBV2 = str(FIXTURES / "models" / "mbv2_035.tflite")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_run_tflite_matches_interpreter(tmp_path, capsys):
    x = np.random.default_rng(7).integers(-128, 128, size=(144, 144, 3), dtype=np.int8)  # no batch dim
    np.save(tmp_path / "x.npy", x)
    code, out, _ = run(capsys, "run", MBV2, "--input", str(tmp_path / "x.npy"), "--output", str(tmp_path / "y.npy"),
                       "--max-overhead", "1.2", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["output_shape"] == [1, 1000] and doc["plan"]["feasible"] and doc["plan"]["overhead"] <= 1.2
    y = np.load(tmp_path / "y.npy")
    expected = run_tflite(FIXTURES / "models" / "mbv2_035.tflite", x[None])
    assert y.dtype == np.int8 and np.array_equal(y, expected.reshape(y.shape))


@pytest.mark.slow
def test_run_builtin_with_random_input_is_deterministic(capsys):
    outputs = []
    for _ in range(2):
        code, out, _ = run(capsys, "run", "mcunet-vww-res", "--json")
        assert code == 0
        outputs.append(json.loads(out))
    assert outputs[0] == outputs[1] and outputs[0]["output_shape"] == [1, 2]
    assert outputs[0]["max_abs_diff_vs_vanilla"] == 0
    assert outputs[0]["measured_peak_ram_bytes"] == outputs[0]["predicted_peak_ram_bytes"] == outputs[0]["plan"]["peak_ram_bytes"]


@pytest.mark.parametrize("model, declared", [("extra_flat_input", (1, 490)), ("op_dense_relu", (1, 32))])
def test_run_takes_the_input_shape_the_model_file_declares(tmp_path, capsys, model, declared):
    """A flat TFLite input ([1, 490] that the model reshapes to 49 x 10 x 1, or a dense layer's
    [1, 32]) is passed as the interpreter takes it, and the output is the interpreter's."""
    path = FIXTURES / "models" / f"{model}.tflite"
    x = np.random.default_rng(3).integers(-128, 128, size=declared, dtype=np.int8)
    np.save(tmp_path / "x.npy", x)
    code, _, err = run(capsys, "run", str(path), "--input", str(tmp_path / "x.npy"), "--output", str(tmp_path / "y.npy"))
    assert code == 0, err
    y = np.load(tmp_path / "y.npy")
    assert np.array_equal(y, run_tflite(path, x).reshape(y.shape))
    np.save(tmp_path / "bad.npy", np.zeros((1, declared[1] + 1), np.int8))
    code, _, err = run(capsys, "run", str(path), "--input", str(tmp_path / "bad.npy"))
    assert code == 2 and f"or the model file's {list(declared)}" in err and err.count("\n") == 1


@pytest.mark.slow
def test_run_rejects_wrong_input_shape(tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.zeros((1, 96, 96, 3), np.int8))
    code, out, err = run(capsys, "run", MBV2, "--input", str(tmp_path / "x.npy"))
    assert code == 2 and out == "" and "does not match the model's [1, 144, 144, 3]" in err and err.count("\n") == 1


@pytest.mark.slow
def test_run_with_saved_plan(tmp_path, capsys):
    plan = tmp_path / "plan.json"
    assert run(capsys, "plan", "mbv2-w0.35", "-o", str(plan))[0] == 0
    saved = json.loads(plan.read_text())
    code, out, _ = run(capsys, "run", "mbv2-w0.35", "--plan", str(plan), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["plan"]["blocks"] == saved["blocks"]
    assert doc["measured_peak_ram_bytes"] == doc["predicted_peak_ram_bytes"] == saved["peak_ram_bytes"]
    assert doc["max_abs_diff_vs_vanilla"] == 0
    code, _, err = run(capsys, "run", "mcunet-vww5", "--plan", str(plan))
    assert code == 2 and "made for another model" in err  # its digest, before its blocks


def test_run_onnx_model(capsys):
    code, out, _ = run(capsys, "run", str(FIXTURES / "models" / "onnx_resnet8.onnx"), "--json")
    assert code == 0 and json.loads(out)["output_dtype"] == "float32"


NON_FINITE_CASES = [(model, command, value) for model in ("onnx_gap_linear.onnx", "resnet8.tflite", "extra_float_io.tflite")
                    for command in ("run", "verify") for value in (np.nan, np.inf, -np.inf, 1e300)]


@pytest.mark.parametrize("model, command, value", NON_FINITE_CASES)
def test_non_finite_float_input_is_one_line(tmp_path, capsys, model, command, value):
    """A NaN or an infinity in a float input (an ONNX model's, or float data for an int8 TFLite
    model to quantise) is bad input: one line, exit 2, nothing quantised or run."""
    from msfcnn.frontends import load_model
    from msfcnn.tensors import model_input_shape
    path = str(FIXTURES / "models" / model)
    x = np.zeros(model_input_shape(load_model(path)), np.float64 if value == 1e300 else np.float32)
    x.flat[5] = value
    np.save(tmp_path / "x.npy", x)
    with np.errstate(all="raise"):  # a numpy warning on the way would be an error here
        code, out, err = run(capsys, command, path, "--input", str(tmp_path / "x.npy"))
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "x.npy" in err and "NaN, infinite or beyond-float32 value" in err
