"""Inputs the fuzz harness (tests/fuzz/) found giving a traceback or a noisy success, each now a
clean exit."""

import io
import json
import struct

import numpy as np
import pytest

from support.paths import ROOT
from msfcnn.cli import main

FIXTURES = ROOT / "tests" / "fixtures" / "models"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err):
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("msfcnn: error: "), err
    return lines[0]


def test_layer_op_that_is_not_a_string(tmp_path, capsys):
    model = tmp_path / "m.json"
    model.write_text(json.dumps({"input": [8, 8, 3], "layers": [{"op": {"conv2d": 1}, "kernel": 3}]}))
    code, out, err = run(capsys, "plan", model)
    assert code == 2 and "unknown op {'conv2d': 1}" in one_error_line(err) and not out


def test_padding_as_large_as_the_kernel(tmp_path, capsys):
    model = tmp_path / "m.json"  # padding 1000 around a 6x6 map: 2006x2006 outputs, run took minutes
    model.write_text(json.dumps({"input": [12, 12, 3], "layers": [
        {"op": "conv2d", "filters": 8, "kernel": 3, "stride": 2, "padding": 1},
        {"op": "conv2d", "filters": 4, "kernel": 1, "stride": 1, "padding": 1000}]}))
    code, out, err = run(capsys, "run", model)
    assert code == 2 and "layer 1 (conv2d): padding [1000, 1000, 1000, 1000]" in one_error_line(err)


def test_npy_header_claiming_terabytes_is_refused_before_loading(tmp_path, capsys):
    x = io.BytesIO()
    np.save(x, np.zeros((1, 3, 8, 8), np.float32))
    data = x.getvalue()
    end = data.index(b"\n") + 1
    header = data[10:end].decode("latin1").replace("(1, 3, 8, 8)", "(999999999, 3, 8, 8)").rstrip("\n")
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    path = tmp_path / "x.npy"
    path.write_bytes(data[:8] + struct.pack("<H", len(header)) + header.encode("latin1") + data[end:])
    code, out, err = run(capsys, "run", FIXTURES / "onnx_conv_bn_relu.onnx", "--input", path)
    assert code == 2 and "input shape [999999999, 3, 8, 8] does not match" in one_error_line(err)


def test_npy_header_that_does_not_tokenize(tmp_path, capsys):
    x = io.BytesIO()
    np.save(x, np.zeros((1, 8, 8, 3), np.int8))
    data = bytearray(x.getvalue())
    data[data.index(b"}")] = ord("(")  # an unclosed bracket in the header's dict
    path = tmp_path / "x.npy"
    path.write_bytes(bytes(data))
    code, out, err = run(capsys, "run", FIXTURES / "op_gap.tflite", "--input", path)
    assert code == 2 and "not a readable .npy array" in one_error_line(err)


def _onnx(tmp_path, edit, name="onnx_conv_bn_relu.onnx"):
    onnx = pytest.importorskip("onnx")
    model = onnx.load(str(FIXTURES / name))
    edit(model.graph)
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    return path


def test_onnx_input_too_large_for_32_bit_indices(tmp_path, capsys):
    def edit(graph):
        graph.input[0].type.tensor_type.shape.dim[3].dim_value = 2**31
    path = _onnx(tmp_path, edit)
    for command in ("plan", "run"):  # run allocated 768 GiB (MemoryError); plan ran for minutes
        code, out, err = run(capsys, command, path)
        assert code == 2 and "is too large" in one_error_line(err) and not out


def test_onnx_weights_that_overflow_float32(tmp_path, capsys):
    from onnx import numpy_helper

    def edit(graph):  # finite weights (as a flipped byte made them), whose sums overflow
        weight = [t for t in graph.initializer if len(t.dims) == 4][1]
        big = numpy_helper.to_array(weight).copy()
        big[0, 0] = 2.6e38
        weight.CopyFrom(numpy_helper.from_array(big, weight.name))
    path = _onnx(tmp_path, edit, "onnx_residual_add.onnx")
    with _no_warnings():
        code, out, err = run(capsys, "run", path, "-o", tmp_path / "y.npy")
    assert code == 2 and "NaN or infinite" in one_error_line(err) and not (tmp_path / "y.npy").exists()


def test_onnx_overflow_in_a_fused_block_is_not_blamed_on_the_arena(tmp_path, capsys):
    from onnx import numpy_helper

    def edit(graph):  # NaN from inf - inf: the two sentinel runs agree bit for bit, not by ==
        weight = next(t for t in graph.initializer if len(t.dims) == 4)
        big = numpy_helper.to_array(weight).copy()
        big[0, 0, 0, 0] = 2.7669444e38
        weight.CopyFrom(numpy_helper.from_array(big, weight.name))
    path = _onnx(tmp_path, edit, "onnx_same_even_kernel.onnx")
    with _no_warnings():
        code, out, err = run(capsys, "run", path, "--max-ram", "4kB")
    assert code == 2 and "NaN or infinite" in one_error_line(err)


class _no_warnings:
    def __enter__(self):
        import warnings
        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("error")  # a numpy RuntimeWarning would be printed on stderr

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)
