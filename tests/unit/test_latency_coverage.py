"""Every kernel the frontends can produce has fitted latency coefficients on every calibrated
target: a kernel without them costs 0 instructions, and plans on a model that runs it are
predicted low (docs/latency.md)."""

from collections import defaultdict
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import pytest

from msfcnn import latency, ops, pipeline
from msfcnn.errors import UserError
from msfcnn.frontends import builtin_names
from msfcnn.frontends.layer_list import CONVERTERS, graph_from_layer_list
from msfcnn.frontends.random_weights import with_random_weights
from msfcnn.latency.calibration import with_random_float_weights
from msfcnn.latency.features import BlockCounter
from msfcnn.ops.add_const_litert import AddConstLitert, AddConstLitertTail

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "models"
# A layer of each layer-list op, on a 6 x 6 x 8 map after a convolution (a join: with the input).
LAYERS = {"conv2d": {"filters": 4, "kernel": 3}, "depthwise_conv2d": {"kernel": 3, "depth_multiplier": 2},
          "max_pool2d": {"kernel": 2, "stride": 2}, "avg_pool2d": {"kernel": 2, "stride": 2},
          "add": {"from": -1}, "mul": {"from": -1}, "sub": {"from": -1}, "squared_difference": {"from": -1},
          "maximum": {"from": -1}, "minimum": {"from": -1}, "concat": {"from": -1},
          "channel_slice": {"begin": 1, "channels": 4}, "channel_shuffle": {"groups": 2},
          "space_to_depth": {"block": 2}, "depth_to_space": {"block": 2}, "mean": {"axes": [0]},
          "pad": {"pads": [1, 0, 0, 1]}, "transpose": {"perm": [1, 0, 2]}, "dense": {"units": 3}}
CONSTANT_FORMS = ("add", "mul", "sub", "squared_difference", "maximum", "minimum")
# Layer-list ops whose float32 form no frontend makes: float32 models run LeakyRelu, Tanh and Elu
# as FloatUnary (onnx.py), and have no SQUARED_DIFFERENCE (tflite.FLOAT32_OPERATORS).
NOT_FLOAT32 = {"leaky_relu", "tanh", "elu", "squared_difference"}
# Families a target cannot be calibrated for, and why (none today: xtensa-lx106's 16x8 MEAN links
# since its support code has signed 64-bit division, __divdi3).
UNMEASURABLE: dict[str, set[str]] = {}
# Targets whose calibration has so far fitted only the main int8 networks (calibration.network:
# convolutions, depthwise, pools, ADD, MEAN, dense, SOFTMAX), not yet the ops, cover and windows
# networks (none today: cortex-m0plus and cortex-m55 were until issue 23). Every built-in model
# must be covered on them.
MAIN_FIT_ONLY: set[str] = set()
# Op classes with a C kernel that are never a graph's node: bases, and a part of another's kernel.
NOT_NODES = {"LookupOp", "_Pool2D", "_VectorPart"}


def _layer_lists():
    """A layer list per layer-list op (and per constant form), in int8 and (where a frontend
    makes that form) in float32."""
    for kind in CONVERTERS:
        forms = [LAYERS.get(kind, {})] + ([{"const": "channel"}] if kind in CONSTANT_FORMS else [])
        for extra in forms:
            doc = {"name": f"{kind}{'_const' if 'const' in extra else ''}", "input": [6, 6, 8],
                   "layers": [{"op": "conv2d", "filters": 8, "kernel": 1}, {"op": kind, **extra}]}
            graph = graph_from_layer_list(doc)
            yield f"layer list {doc['name']}", with_random_weights(graph)
            if kind not in NOT_FLOAT32:
                yield f"layer list {doc['name']} (float32)", with_random_float_weights(graph)


def _litert_const_adds():
    """LiteRT's ADDs of a constant (ops/add_const_litert.py), which LiteRT numerics make of an
    int8 ADD of a constant for the scale sets where its vector code rounds otherwise (no fixture
    has such a set): swapped into a layer list's graph in place of its ADD."""
    for op in (AddConstLitert, AddConstLitertTail):
        graph = with_random_weights(graph_from_layer_list(
            {"input": [6, 6, 8], "layers": [{"op": "conv2d", "filters": 8, "kernel": 1}, {"op": "add", "const": "scalar"}]}))
        add = graph.nodes[1]
        graph.nodes[1] = replace(add, op=op(add.op.operand_scale, add.op.operand_zero_point, add.op.activation))
        yield f"layer list add_const as {op.__name__}", graph


@lru_cache(maxsize=1)
def models() -> dict:
    """Every graph the frontends make of the built-in models, the model fixtures (.tflite, .onnx;
    those they refuse left out) and a layer list per layer-list op."""
    graphs = {**dict(_layer_lists()), **dict(_litert_const_adds())}
    for model in [*builtin_names(), *sorted(map(str, FIXTURES.glob("*.tflite"))), *sorted(map(str, FIXTURES.glob("*.onnx"))),
                  *sorted(map(str, (FIXTURES.parent / "ops").glob("*.tflite"))),
                  *sorted(map(str, (FIXTURES.parent / "sequence").glob("*.tflite"))),
                  *sorted(map(str, (FIXTURES.parent / "sequence").glob("*.onnx")))]:
        try:
            graphs[Path(model).name] = pipeline.load(model, weights=True)
        except UserError:
            continue
    for model in sorted((FIXTURES.parent / "streaming").glob("*.tflite")):  # and their streaming form's rings
        graphs[f"{model.name} (streaming)"] = pipeline.load(str(model), weights=True, hop=1)
    sequence = FIXTURES.parent / "sequence"  # LSTMs and the keyword head's SOFTMAX, under both numerics
    for model in sorted(sequence.glob("lstm_*_*.tflite")) + [sequence / "svdf_keyword.tflite"]:
        if "refused" not in model.name:
            graphs[model.name] = pipeline.load(str(model))
            graphs[f"{model.name} (tflm)"] = pipeline.load(str(model), numerics="tflm")
    return graphs


def _kernels(dsp: bool, mve: bool = False) -> dict:
    """(family, op class, element type) -> the first model that runs that kernel (`mve`: on a
    Helium core, whose int8 convolutions and depthwise have families of their own)."""
    found = {}
    for name, graph in models().items():
        counter = BlockCounter(graph, dsp, mve=mve)
        for t, node in enumerate(graph.nodes):
            if node.op.c_kernel is not None:
                found.setdefault((counter.op(t).family, type(node.op).__name__, graph.kernel_element(t).name), name)
    return found


def _op_classes(base=ops.Op) -> set:
    classes = set()
    for sub in base.__subclasses__():
        classes |= {sub} | _op_classes(sub)
    return classes


@pytest.mark.slow  # about 12 s of CPU: every fixture and layer-list form loaded twice
def test_every_kernel_class_is_enumerated():
    """The enumeration below reaches every op class that has a C kernel (a new operator needs a
    fixture or a layer-list form, or this fails)."""
    reached = {op for _, op, _ in _kernels(True)} | {op for _, op, _ in _kernels(False)}
    with_kernel = {cls.__name__ for cls in _op_classes() if getattr(cls, "c_kernel", None) is not None} - NOT_NODES
    assert sorted(with_kernel - reached) == []


@pytest.mark.parametrize("target", latency.calibrated_targets())
def test_every_kernel_has_coefficients(target):
    """Every op kind x element type the frontends produce runs a kernel family that `target`'s
    calibration fitted (`has_costs`: a cost per call, and not every coefficient 0, which a fit
    without the family's samples leaves and `uncovered` refuses to predict with), but those it
    cannot measure (UNMEASURABLE): the missing ones are listed. On a MAIN_FIT_ONLY target, every
    built-in model's kernels."""
    model = latency.load(target)
    if target in MAIN_FIT_ONLY:
        assert {name: model.uncovered(pipeline.load(name, weights=True)) for name in builtin_names()} == \
            {name: [] for name in builtin_names()}
        return
    missing = defaultdict(list)
    for (family, op, element), example in sorted(_kernels(model.dsp, model.mve).items()):
        if not model.has_costs(family) and family not in UNMEASURABLE.get(target, ()):
            missing[family].append(f"{op} {element} ({example})")
    assert not missing, f"{target}: {len(missing)} kernel families without costs:\n" + "\n".join(
        f"  {family}: {', '.join(kernels)}" for family, kernels in sorted(missing.items()))


def test_a_family_without_coefficients_is_named_uncovered():
    """`uncovered` (which `plan --target` warns with) names a kernel family the model has no cost
    per call for, and only it."""
    graph = models()["layer list channel_shuffle"]
    fitted = latency.load("cortex-m4")
    assert fitted.uncovered(graph) == []
    without = replace(fitted, coefficients={k: v for k, v in fitted.coefficients.items() if not k.startswith("channel_gather:")})
    assert without.uncovered(graph) == ["channel_gather"]


def test_unmeasurable_families_are_still_uncalibrated():
    """UNMEASURABLE lists only families that still have no coefficients: one calibrated since is
    taken off it, so that the coverage test checks it again."""
    calibrated = {target: sorted(f for f in families if f"{f}:call" in latency.load(target).coefficients)
                  for target, families in UNMEASURABLE.items()}
    assert calibrated == {target: [] for target in UNMEASURABLE}
