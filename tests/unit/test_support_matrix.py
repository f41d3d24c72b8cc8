"""The support matrix (`msfcnn ops`, docs/operators.md, src/msfcnn/support.py): the document is the
generated one, and the matrix says what the importers and the latency model actually do."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import pytest

from msfcnn import support
from msfcnn.errors import UserError
from msfcnn.frontends import load_model
from msfcnn.frontends.layer_list import graph_from_layer_list
from msfcnn.latency.features import BlockCounter
from msfcnn.ops import op_classes
from support.paths import FIXTURES, ROOT

MODELS = FIXTURES / "models"
REGENERATE = "python -m msfcnn.support --write docs/operators.md"


@pytest.fixture(scope="module")
def latency():
    return support.models()


@pytest.fixture(scope="module")
def rows(latency):
    return support.matrix(latency)


def _row(rows, format_name: str, operator: str, element: str) -> support.Row:
    found = [r for r in rows if (r.format, r.operator, r.element) == (format_name, operator, element)]
    assert len(found) == 1, (format_name, operator, element)
    return found[0]


def test_docs_operators_md_is_the_generated_matrix(rows):
    written = (ROOT / "docs" / "operators.md").read_text()
    assert written == support.render_markdown(rows), f"docs/operators.md is stale: run `{REGENERATE}`"


# (fixture, format, operator, element type): models that import, using that operator on that type.
IMPORTED = [
    ("i16_leaky_relu.tflite", "tflite", "LEAKY_RELU", "int16"),
    ("bilinear_i16_chain.tflite", "tflite", "RESIZE_BILINEAR", "int16"),
    ("u8_softmax.tflite", "tflite", "SOFTMAX", "uint8"),
    ("u8_act_sweep_prelu.tflite", "tflite", "PRELU", "uint8"),
    ("space_to_depth_float.tflite", "tflite", "SPACE_TO_DEPTH", "float32"),
    ("split_float.tflite", "tflite", "SPLIT_V", "float32"),
    ("depth_to_space_int8.tflite", "tflite", "DEPTH_TO_SPACE", "int8"),
    ("onnx_sub_max_min.onnx", "onnx", "Sub", "float32"),
    ("onnx_sub_max_min.onnx", "onnx", "Max", "float32"),
]


@pytest.mark.parametrize("fixture, format_name, operator, element", IMPORTED)
def test_an_imported_operator_is_listed_with_the_ops_the_importer_makes(rows, fixture, format_name, operator, element):
    row = _row(rows, format_name, operator, element)
    assert row.imports == support.IMPORTED
    graph = load_model(str(MODELS / fixture))
    assert {node.op.kind for node in graph.nodes} & set(row.kinds)
    assert set(row.numerics) <= set(graph_numerics(element))


def graph_numerics(element: str) -> tuple[str, ...]:
    return ("litert",) if element == "uint8" else ("litert", "tflm")


def test_a_uint8_model_has_no_tflm_numerics(rows):
    """TFLite Micro runs no uint8 model: the matrix lists litert alone, as the graph refuses tflm."""
    assert _row(rows, "tflite", "SOFTMAX", "uint8").numerics == ("litert",)
    with pytest.raises(UserError, match="tflm"):
        load_model(str(MODELS / "u8_softmax.tflite"), numerics="tflm")


def test_an_op_some_of_whose_forms_tflm_refuses_says_so(rows):
    """RELU_N1_TO_1 becomes an activation op, which TFLite Micro has for RELU but not for it."""
    assert _row(rows, "tflite", "RELU_N1_TO_1", "int8").fewer_numerics
    assert not _row(rows, "tflite", "CONV_2D", "int8").fewer_numerics
    assert load_model(str(MODELS / "act_relu_n1_to_1.tflite")).numerics == "litert"
    with pytest.raises(UserError, match="tflm"):
        load_model(str(MODELS / "act_relu_n1_to_1.tflite"), numerics="tflm")


def test_a_layer_list_layer_is_listed_with_the_ops_it_makes(rows):
    doc = {"input": [6, 6, 8], "layers": [{"op": "space_to_depth", "block": 2}, {"op": "prelu"}]}
    graph = graph_from_layer_list(doc)
    assert [node.op.kind for node in graph.nodes] == ["space_to_depth", "prelu"]
    assert _row(rows, "layer_list", "space_to_depth", "int8").kinds == ("space_to_depth",)
    assert _row(rows, "layer_list", "prelu", "int8").kinds == ("prelu",)


# (fixture, operator, element type, the refusal the matrix gives): the TFLite importer refuses them.
REFUSED = [
    ("unsupported_u8_mul.tflite", "MUL", "uint8", support.NO_KERNEL),
    ("unsupported_i16_logistic.tflite", "LOGISTIC", "int16", support.NO_KERNEL),
]


@pytest.mark.parametrize("fixture, operator, element, refusal", REFUSED)
def test_a_refused_operator_is_listed_as_not_imported(rows, fixture, operator, element, refusal):
    assert _row(rows, "tflite", operator, element).imports == refusal
    with pytest.raises(UserError, match=operator):
        load_model(str(MODELS / fixture))


def test_a_form_the_converter_does_not_build_is_listed_as_not_imported(rows):
    """MAXIMUM has a float32 kernel, but the TFLite converter reads only quantised ones."""
    from msfcnn.ops.min_max import Maximum

    assert Maximum.supports("float32")
    assert _row(rows, "tflite", "MAXIMUM", "float32").imports == support.NOT_CONVERTED
    assert _row(rows, "tflite", "MAXIMUM", "int8").imports == support.IMPORTED


def test_an_operator_no_table_names_is_not_in_the_matrix(rows):
    with pytest.raises(UserError, match="LOG_SOFTMAX"):
        load_model(str(MODELS / "unsupported_log_softmax.tflite"))
    assert not [r for r in rows if r.operator == "LOG_SOFTMAX"]


def test_a_refused_onnx_operator_is_not_in_the_matrix(rows, tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    node = helper.make_node("Erf", ["x"], ["y"])
    graph = helper.make_graph([node], "erf", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 4, 4])])
    path = tmp_path / "erf.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    with pytest.raises(UserError, match="Erf"):
        load_model(str(path))
    assert not [r for r in rows if r.format == "onnx" and r.operator == "Erf"]


# Models whose ops run kernels with and without coefficients, on every element type.
LATENCY_MODELS = ["i16_chain.tflite", "fi_float32_model.tflite", "u8_mobilenet_v1.tflite", "depth_to_space_int8.tflite",
                  "space_to_depth_float.tflite", "shuffle_float.tflite", "op_dw_k3_s1_same_mult2.tflite",
                  "onnx_sub_max_min.onnx", "bilinear_i16_chain.tflite"]


@pytest.mark.parametrize("fixture", LATENCY_MODELS)
def test_the_latency_column_agrees_with_the_model_s_uncovered_kernels(rows, latency, fixture):
    """Each op's kernel family is among the families of every row that makes its kind, and it lacks
    coefficients on a target exactly when LatencyModel.uncovered reports it."""
    graph = load_model(str(MODELS / fixture))
    format_name = "onnx" if fixture.endswith(".onnx") else "tflite"
    for target, model in latency.items():
        uncovered = set(model.uncovered(graph))
        counter = BlockCounter(graph, model.dsp, mve=model.mve)
        for t, node in enumerate(graph.nodes):
            if node.op.c_kernel is None:
                continue
            element = "uint8" if graph.uint8_input else graph.kernel_element(t).name
            family = counter.op(t).family
            making = [r for r in rows if r.format == format_name and r.element == element and node.op.kind in r.kinds]
            assert making, (fixture, node.op.kind, element)
            for row in making:
                assert family in row.families[target], (row.operator, element, target, family)
                assert (family in uncovered) == (family in row.missing[target]), (row.operator, element, target)
                if family in uncovered:
                    assert target not in row.latency_targets


def test_the_latency_column_reads_the_coefficients_given(latency):
    """Coefficients are read when the matrix is made: a target without SOFTMAX's drops from its rows."""
    target, model = "cortex-m4", latency["cortex-m4"]  # (a target with float32 costs too)
    without = {name: c for name, c in model.coefficients.items() if not name.startswith("softmax:")}
    changed = support.matrix({**latency, target: replace(model, coefficients=without)})
    assert target in _row(support.matrix(latency), "tflite", "SOFTMAX", "int8").latency_targets
    row = _row(changed, "tflite", "SOFTMAX", "int8")
    assert target not in row.latency_targets and row.missing[target] == ("softmax",)
    assert target in _row(changed, "tflite", "SOFTMAX", "float32").latency_targets  # softmax_f32 is its own


def test_every_op_that_varies_its_latency_family_lists_all_it_can_give():
    """latency_family depends on attributes only where the class says which families it can give."""
    def definer(cls, name):
        return next(k for k in cls.__mro__ if name in k.__dict__)

    for cls in op_classes():
        assert issubclass(definer(cls, "latency_families"), definer(cls, "latency_family")), cls.__name__


def test_ops_command_prints_text_and_json():
    text = support.ops_command(json_output=False)
    assert text.startswith("calibrated targets: ") and "CONV_2D" in text and "Layer-list layers" in text
    doc = json.loads(support.ops_command(json_output=True))
    assert doc["targets"] == sorted(doc["targets"]) and set(doc["patterns"]) >= {"window", "opaque"}
    conv = [r for r in doc["operators"] if (r["format"], r["operator"], r["element"]) == ("tflite", "CONV_2D", "int8")]
    assert conv and conv[0]["imports"] == "yes" and conv[0]["kinds"] == ["conv2d"]


def test_the_matrix_needs_no_model_reader():
    """`msfcnn ops` imports neither the TFLite flatbuffer classes nor onnx."""
    code = ("import sys; from msfcnn import support; support.matrix(support.models()); "
            "assert not {'tflite', 'onnx', 'msfcnn.frontends.tflite'} & set(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)
