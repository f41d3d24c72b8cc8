"""Numeric fields of an imported model are range-checked before use (issue 29): a hostile or
corrupted model gets one line and exit 2 from every command, never a traceback, an allocation of
gigabytes or arithmetic the generated C cannot do without undefined behaviour. The models are
fixtures with one field set in place (support/tflite_fields.py), as a fuzzer's mutation sets it."""

from pathlib import Path

import numpy as np
import pytest

from support.cli import run_cli
from support.paths import ROOT
from support.tflite_fields import all_fields, patched, tensor_values

from msfcnn.frontends import load_model

MODELS = ROOT / "tests" / "fixtures" / "models"


def edited(tmp_path, fixture: str, edits: dict[str, object], name: str = "m.tflite") -> str:
    """The fixture with the fields named (as `all_fields` names them) set to the values given."""
    data = (MODELS / fixture).read_bytes()
    fields = {f.what: f for f in all_fields(data)}
    path = tmp_path / name
    path.write_bytes(patched(data, [(fields[what], value) for what, value in edits.items()]))
    return str(path)


def refused(capsys, model: str, *expected: str) -> None:
    """`plan`, `run` and `compile` each exit 2 with one line holding every `expected` piece."""
    for argv in (["plan", model], ["run", model], ["compile", model, "-o", str(Path(model).parent / "out")]):
        code, out, err = run_cli(capsys, *argv)
        assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("msfcnn: error: "), (argv, err)
        assert all(piece in err for piece in expected), err
    assert not (Path(model).parent / "out").exists()


@pytest.mark.parametrize("field", ["FilterHeight", "FilterWidth"])
def test_a_pool_window_of_2_to_the_31_is_refused(tmp_path, capsys, field):
    model = edited(tmp_path, "op_maxpool_3x3_s1_same.tflite", {f"operator 0 Pool2DOptions.{field}": 2**31 - 1})
    refused(capsys, model, "MAX_POOL_2D", "2147483647", "far wider than its 9x13 input")


def test_a_pool_window_far_wider_than_its_map_is_refused(tmp_path, capsys):
    model = edited(tmp_path, "op_maxpool_3x3_s1_same.tflite", {"operator 0 Pool2DOptions.FilterHeight": 2 * 9 + 65})
    refused(capsys, model, "pool window 83x3 is far wider than its 9x13 input")


@pytest.mark.parametrize("fixture, shape", [("op_maxpool_3x3_s1_same.tflite", (1, 9, 13, 4)),
                                            ("op_avgpool_3x3_s2_same.tflite", (1, 12, 12, 4))])
def test_a_pool_window_wider_than_its_map_runs_as_litert(tmp_path, capsys, fixture, shape):
    """A SAME window wider than its map is legal in TFLite (each window is clipped to the map), up
    to twice the map plus ops/pool2d.py's slack."""
    from support.litert_oracle import run_tflite
    model = edited(tmp_path, fixture, {"operator 0 Pool2DOptions.FilterHeight": 2 * shape[1] + 64})
    x = np.random.default_rng(0).integers(-128, 128, shape, dtype=np.int8)
    np.save(tmp_path / "x.npy", x)
    code, out, err = run_cli(capsys, "run", model, "--input", str(tmp_path / "x.npy"), "-o", str(tmp_path / "y.npy"))
    assert code == 0 and err == ""
    assert np.array_equal(np.load(tmp_path / "y.npy").reshape(-1), run_tflite(Path(model), x).reshape(-1))


@pytest.mark.parametrize("scale", [3.4e38, float("inf"), float("nan"), 0.0, -0.05])
def test_an_input_scale_the_fixed_point_cannot_hold_is_refused(tmp_path, capsys, scale):
    """RELU_N1_TO_1 requantises by input scale / output scale: 3.4e38 / 0.0156 overflows float32."""
    model = edited(tmp_path, "act_relu_n1_to_1.tflite", {"tensor 3 scale[0]": scale})
    refused(capsys, model)


def test_the_rescale_of_a_huge_input_scale_names_the_layer(tmp_path, capsys):
    model = edited(tmp_path, "act_relu_n1_to_1.tflite", {"tensor 3 scale[0]": 3.4e38})
    code, out, err = run_cli(capsys, "run", model)
    assert err == ("msfcnn: error: layer 1 (relu_n1_to_1): a rescale factor (a ratio of the model's scales) is inf: "
                   "the fixed-point multipliers need a finite one\n")


@pytest.mark.parametrize("zero_point", [128, -129, 1000, -2**31])
def test_a_zero_point_outside_int8_is_refused(tmp_path, capsys, zero_point):
    model = edited(tmp_path, "act_relu_n1_to_1.tflite", {"tensor 3 zero point[0]": zero_point})
    refused(capsys, model, "zero point")


@pytest.mark.parametrize("scale", [0.0, -1.0, float("inf"), float("nan")])
def test_a_bad_weight_scale_is_refused(tmp_path, capsys, scale):
    model = edited(tmp_path, "act_relu_n1_to_1.tflite", {"tensor 1 scale[3]": scale})
    refused(capsys, model, "scale")


def test_biases_at_the_int32_limit_are_refused_naming_the_layer(tmp_path, capsys):
    """The issue's biases (a mutated MLTK audio model): the int32 accumulator would overflow, which
    TFLite wraps around and C leaves undefined; the numpy kernels would not."""
    data = bytearray((MODELS / "op_conv_k3_s1_same_relu6.tflite").read_bytes())
    bias = tensor_values(bytes(data), 1)  # the conv's int32 bias, 8 channels
    model = tmp_path / "m.tflite"
    model.write_bytes(patched(bytes(data), [(bias[0], 2147482549), (bias[1], -2147477034)]))
    refused(capsys, str(model), "layer 0 (conv 3x3/1 8): its int32 accumulator can reach", "biases up to 2147482549")


def test_biases_below_the_limit_still_run(tmp_path, capsys):
    """The bound is the largest |bias| plus the |weights| times the largest |input - zero point|:
    a bias that leaves room for it is fine."""
    data = (MODELS / "op_conv_k3_s1_same_relu6.tflite").read_bytes()
    bias, weights = tensor_values(data, 1), tensor_values(data, 2)
    room = sum(abs(w.read(data)) for w in weights[:27]) * 255  # channel 0: 3x3x3 weights
    model = tmp_path / "m.tflite"
    model.write_bytes(patched(data, [(bias[0], 2**31 - 1 - room - 1000)]))
    code, out, err = run_cli(capsys, "run", str(model))
    assert code == 0 and err == ""


def test_a_resize_to_2_to_the_31_rows_is_refused_before_its_tables(tmp_path, capsys):
    """The row table alone would take 24 GiB (fuzz seed 1127 case 3344 ran for minutes)."""
    data = (MODELS / "bilinear_x2.tflite").read_bytes()
    model = tmp_path / "m.tflite"
    model.write_bytes(patched(data, [(tensor_values(data, 5)[0], 2**31 - 1)]))  # the size operand's height
    refused(capsys, str(model), "RESIZE_BILINEAR to 2147483647x8x6 is too large")


@pytest.mark.parametrize("fixture, edits, layer", [
    ("act_sweep_leaky_relu_2.tflite", {"tensor 1 scale[0]": 1e-45}, "LEAKY_RELU"),  # fuzz seed 1412 case 3601
    ("act_relu_n1_to_1.tflite", {"tensor 3 scale[0]": 3.4e38}, "relu_n1_to_1"),
])
def test_a_scale_ratio_overflowing_float32_warns_nothing(tmp_path, capsys, fixture, edits, layer):
    """The ratio of scales overflows float32: one line, and no numpy warning before it (pytest would
    otherwise swallow the warning that a user sees on stderr)."""
    import warnings
    model = edited(tmp_path, fixture, edits)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        refused(capsys, model, layer, "is inf")


def test_a_mean_whose_bias_leaves_int32_is_refused(tmp_path, capsys):
    """A subnormal output scale makes the keepdims MEAN's float bias infinite (fuzz seed 1127 case
    8521): C's cast of it to int32 would be undefined."""
    model = edited(tmp_path, "op_gap_keepdims.tflite", {"tensor 2 scale[0]": 1e-45})
    refused(capsys, model, "MEAN", "past the int32 range of its bias")


def onnx_resize(tmp_path, scales) -> str:
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper
    model = onnx.load(str(MODELS / "det_onnx_upsample.onnx"))
    for init in model.graph.initializer:
        if init.name == "scales":
            init.CopyFrom(numpy_helper.from_array(np.array(scales, np.float32), "scales"))
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    return str(path)


@pytest.mark.parametrize("scales, expected", [([1, 1, np.inf, 2], "finite positive"), ([1, 1, 2, np.nan], "finite"),
                                              ([1, 1, -2, 2], "positive"), ([1, 1, 1e12, 2], "values")])
def test_onnx_resize_scales_are_checked(tmp_path, capsys, scales, expected):
    refused(capsys, onnx_resize(tmp_path, scales), "Resize", expected)


@pytest.mark.parametrize("alpha", [float("inf"), float("nan"), 1e39])
def test_onnx_float_attributes_are_finite_float32(tmp_path, capsys, alpha):
    """The C kernels take HardSigmoid's alpha as a float32 literal (fuzz seed 1127 case 1115)."""
    onnx = pytest.importorskip("onnx")
    model = onnx.load(str(MODELS / "onnx_mbv3_tiny.onnx"))
    node = next(n for n in model.graph.node if n.op_type == "HardSigmoid")
    next(a for a in node.attribute if a.name == "alpha").f = alpha
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    refused(capsys, str(path), "HardSigmoid", "'alpha'", "not a finite float32")


def test_an_op_nothing_reads_is_refused(tmp_path, capsys):
    """A corrupted operator input leaves the first conv's output unread: planning streams every
    tensor to its readers."""
    model = edited(tmp_path, "space_to_depth_float.tflite", {"operator 1 inputs[0]": 0})
    refused(capsys, model, "never read")


@pytest.mark.parametrize("fixture, operator", [("act_sweep_elu_0.tflite", "ELU"), ("act_sweep_tanh_2.tflite", "TANH"),
                                               ("u8_act_sweep_tanh.tflite", "TANH")])
def test_a_table_op_writing_float32_is_refused(tmp_path, capsys, fixture, operator):
    model = edited(tmp_path, fixture, {"tensor 1 type": 0})
    refused(capsys, model, f"({operator}): reads a quantised tensor and writes float32 tensor 1")


def extreme_conv(tmp_path, over: int):
    """op_conv_k3_s1_same_relu6 (3x3 conv of a 12x12x3 map, 8 filters) with channel 0's bias set so
    that its accumulator's bound is 2^31 - 1 + `over`, and the input that reaches the bound at the
    centre pixel: each tap at the extreme of the weight's sign."""
    import tflite as schema
    data = (MODELS / "op_conv_k3_s1_same_relu6.tflite").read_bytes()
    bias, weights = tensor_values(data, 1), tensor_values(data, 2)
    w = np.array([f.read(data) for f in weights], dtype=np.int64).reshape(8, 3, 3, 3)[0]
    zero = int(schema.Model.GetRootAs(data, 0).Subgraphs(0).Tensors(0).Quantization().ZeroPoint(0))
    high, low = 127 - zero, -128 - zero  # the extremes of input - zero point
    largest = max(high, -low)
    edge = high if largest == high else low  # the extreme of the larger magnitude
    taps = np.where(w * np.sign(edge) >= 0, 127 if edge == high else -128, -128 if edge == high else 127)
    reach = int(np.sum(w * (taps.astype(np.int64) - zero)))  # the sum the centre pixel's taps give
    path = tmp_path / f"conv{over}.tflite"
    path.write_bytes(patched(data, [(bias[0], 2**31 - 1 + over - reach)]))
    x = np.random.default_rng(1).integers(-128, 128, (1, 12, 12, 3), dtype=np.int8)
    x[0, 5:8, 5:8, :] = taps
    np.save(tmp_path / "x.npy", x)
    return str(path), str(tmp_path / "x.npy")


@pytest.mark.slow
def test_an_accumulator_at_the_int32_limit_runs_clean_under_the_sanitizers(tmp_path, capsys):
    """The accumulator reaches exactly 2^31 - 1 on this input: accepted, bit-exact, no UBSan report.
    One more and the model is refused, where the C would overflow (UBSan: signed integer overflow
    in conv2d.c) and verify would fail."""
    from support.toolchains import require_target
    require_target("host-sanitize")
    model, x = extreme_conv(tmp_path, 0)
    code, out, err = run_cli(capsys, "verify", model, "--target", "host-sanitize", "--input", x)
    assert code == 0 and err == "" and "PASS" in out
    model, x = extreme_conv(tmp_path, 1)
    code, out, err = run_cli(capsys, "verify", model, "--target", "host-sanitize", "--input", x)
    assert code == 2 and err.count("\n") == 1 and "layer 0 (conv 3x3/1 8): its int32 accumulator can reach" in err


def mean_over(tmp_path, height: int, width: int) -> str:
    path = tmp_path / f"gap{height}x{width}.json"
    path.write_text(f'{{"name": "gap", "input": [{height}, {width}, 1], "layers": [{{"op": "global_avg_pool"}}]}}')
    return str(path)


def test_a_mean_whose_int32_sum_can_overflow_is_refused(tmp_path, capsys):
    """The sum of 4096 x 4096 int8 values of zero point 0 reaches 128 * 2^24 = 2^31, one past
    int32 (TFLite's and msfcnn's kernels sum raw values in an int32); one row less stays inside."""
    code, out, err = run_cli(capsys, "run", mean_over(tmp_path, 4096, 4096), "-o", str(tmp_path / "out.npy"))
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "layer 0 (global_avg_pool)" in err and "16777216 values can reach 2147483648" in err
    assert not (tmp_path / "out.npy").exists()
    load_model(mean_over(tmp_path, 4095, 4096), weights=True)  # accepted: 2^31 - 2^19
