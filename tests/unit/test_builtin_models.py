"""Built-in models: the paper chains (docs/models.md), unchanged, and the real architectures."""

import json

import numpy as np
import pytest

from msfcnn.frontends import builtin_names, load_model
from msfcnn.ops import Add, Dense, GlobalAvgPool, Softmax
from support.paths import ROOT

SHARED_MODELS = ROOT.parent / "shared" / "models"


@pytest.mark.parametrize("name", ["mbv2-w0.35", "mcunet-vww5", "mcunet-320kb"])
def test_paper_chains_are_the_spec_layer_lists(name):
    packaged = ROOT / "src" / "msfcnn" / "models" / f"{name}.json"
    if SHARED_MODELS.is_dir():  # shared/ sits beside the checkout on developer machines and in CI
        assert json.loads(packaged.read_text()) == json.loads((SHARED_MODELS / f"{name}.json").read_text())
    graph = load_model(name)
    assert graph.is_chain() and len(graph) == len(json.loads(packaged.read_text())["layers"])


def test_mobilenetv2_full_has_residuals_and_head():
    graph = load_model("mobilenetv2-0.35")
    kinds = [n.op.kind for n in graph.nodes]
    assert kinds.count("add") == 10  # MobileNetV2: 16 bottlenecks, 10 with identity shortcuts
    assert isinstance(graph.nodes[-3].op, GlobalAvgPool) and isinstance(graph.nodes[-2].op, Dense)
    assert isinstance(graph.nodes[-1].op, Softmax) and graph.nodes[-1].shape == (1000,)
    assert graph.input_shape == (144, 144, 3) and graph.nodes[-4].shape == (5, 5, 1280)
    for node in graph.nodes:
        if isinstance(node.op, Add):
            assert graph.shape_of(node.inputs[0]) == graph.shape_of(node.inputs[1])


def test_mcunet_vww_res_has_residuals():
    graph = load_model("mcunet-vww-res")
    assert sum(isinstance(n.op, Add) for n in graph.nodes) >= 8 and graph.nodes[-1].shape == (2,)


def test_random_weights_are_deterministic_and_complete():
    a, b = load_model("mcunet-vww-res", weights=True), load_model("mcunet-vww-res", weights=True)
    assert a.input_quant is not None
    for na, nb in zip(a.nodes, b.nodes):
        assert na.quant is not None and na.quant == nb.quant
        assert na.consts.keys() == nb.consts.keys()
        for key in na.consts:
            assert np.array_equal(na.consts[key], nb.consts[key])
    conv = a.nodes[0]
    assert conv.consts["weights"].dtype == np.int8 and conv.consts["weights"].shape == (16, 3, 3, 3)
    assert conv.consts["bias"].dtype == np.int32 and conv.consts["weight_scales"].shape == (16,)


@pytest.mark.slow
def test_every_builtin_plans(capsys):
    from msfcnn.cli import main
    for name in builtin_names():
        assert main(["plan", name, "--max-overhead", "1.2", "--json"]) == 0
        plan = json.loads(capsys.readouterr().out)
        assert plan["overhead"] <= 1.2 and plan["blocks"][-1]["last"] == len(load_model(name)) - 1


def test_builtin_mobilenetv2_matches_keras_export():
    """The built-in MobileNetV2-0.35 has the architecture Keras exports (the TFLite fixture):
    same op kinds, same tensor shapes, same MACs (pads differ: TFLite SAME is asymmetric)."""
    from support.paths import FIXTURES
    ours, keras = load_model("mobilenetv2-0.35"), load_model(str(FIXTURES / "models" / "mbv2_035.tflite"))
    assert [n.op.kind for n in ours.nodes] == [n.op.kind for n in keras.nodes]
    assert [n.shape for n in ours.nodes] == [n.shape for n in keras.nodes]
    assert [ours.macs(i) for i in range(len(ours))] == [keras.macs(i) for i in range(len(keras))]
