"""`msfcnn verify`: a PASS or FAIL against a stated criterion (int8: bit-exact; float32: a stated
tolerance), and a distinct exit status when the C output differs from numpy."""

import json

import numpy as np
import pytest

from support.paths import FIXTURES
from support.toolchains import require_target
from msfcnn import pipeline
from msfcnn.cli import VERIFY_FAILED, main
from msfcnn.codegen import build

FLOAT_MODEL = str(FIXTURES / "models" / "onnx_gap_linear.onnx")
INT8_MODEL = "mcunet-vww5"


def verify(capsys, *argv):
    code = main(["verify", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def perturb_c_output(monkeypatch, change):
    """The harness's output, changed by `change` (as if the generated C computed something else)."""
    real = build.run

    def run(*args, **kwargs):
        result = real(*args, **kwargs)
        return build.HarnessRun(change(result.output.copy()), result.stack_bytes)

    monkeypatch.setattr(build, "run", run)


def test_verification_criteria():
    """int8: bit-exact, tolerance 0; float32: |C - numpy| <= 1e-4 x max |numpy| + 1e-6."""
    same = np.array([3, -7, 0], np.int8)
    assert pipeline.Verification(same, same.copy(), 0, 0, None).passed
    off = pipeline.Verification(same + np.int8(1), same, 0, 0, None)
    assert not off.passed and off.tolerance == 0
    expected = np.array([2.0, -0.5, 0.0], np.float32)
    tolerance = 1e-4 * 2.0 + 1e-6
    check = pipeline.Verification(expected + np.float32(tolerance * 0.9), expected, 0, 0, None)
    assert check.tolerance == pytest.approx(tolerance) and check.passed and not check.bit_exact
    assert not pipeline.Verification(expected + np.float32(tolerance * 1.1), expected, 0, 0, None).passed
    nan = expected.copy()
    nan[1] = np.nan
    assert not pipeline.Verification(nan, expected, 0, 0, None).passed


@pytest.mark.slow
def test_float_model_passes_within_the_stated_tolerance(capsys):
    require_target("host")
    code, out, err = verify(capsys, FLOAT_MODEL, "--json")
    doc = json.loads(out)
    assert code == 0 and err == "" and doc["pass"] is True
    assert 0 < doc["tolerance"] < 1e-3 and doc["max_abs_diff"] <= doc["tolerance"]
    code, out, _ = verify(capsys, FLOAT_MODEL)
    assert code == 0 and ": PASS (" in out and "tolerance" in out


@pytest.mark.slow
def test_float_model_differing_beyond_the_tolerance_fails(capsys, monkeypatch):
    require_target("host")
    perturb_c_output(monkeypatch, lambda y: y + np.float32(0.01))
    code, out, err = verify(capsys, FLOAT_MODEL, "--json")
    doc = json.loads(out)
    assert code == VERIFY_FAILED != 2 and code != 0 and doc["pass"] is False
    assert doc["max_abs_diff"] > doc["tolerance"] > 0
    assert err.count("\n") == 1 and "FAIL" in err
    code, out, err = verify(capsys, FLOAT_MODEL)
    assert code == VERIFY_FAILED and ": FAIL (" in out and "> tolerance" in out


@pytest.mark.slow
def test_int8_model_one_value_off_fails(capsys, monkeypatch):
    require_target("host")

    def off_by_one(y):
        y[0] = y[0] + 1 if y[0] < 127 else y[0] - 1
        return y

    perturb_c_output(monkeypatch, off_by_one)
    code, out, err = verify(capsys, INT8_MODEL, "--max-overhead", "1.2", "--json")
    doc = json.loads(out)
    assert code == VERIFY_FAILED and doc["pass"] is False and doc["bit_exact"] is False and doc["tolerance"] == 0
    assert err.count("\n") == 1 and "FAIL" in err
