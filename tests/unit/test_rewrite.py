"""The frontends' rewrite stage (frontends/rewrite.py): each declared rule on small hand-made
graphs, and both importers going through the one stage."""

from __future__ import annotations

import numpy as np
import pytest

from support.paths import FIXTURES
from msfcnn.errors import UserError
from msfcnn.frontends import load_model
from msfcnn.frontends import rewrite as stage
from msfcnn.frontends.rewrite import (RULES, Append, BatchNorm, BiasAdd, ChannelView, Clamp, Dequantisation, Flatten,
                                     InputQuantisation, Mean, MovedAxes, Requantisation, UnitAxes, unit_layout)
from msfcnn.ir import NETWORK_INPUT, Graph, GraphInput, Quant, input_tensor
from msfcnn.ops import Conv2D, Dense, GlobalAvgPool, Requantize, Reshape, Window
from msfcnn.ops.activation import Activation
from msfcnn.ops.axis_mean import AxisMean
from msfcnn.ops.channel_gather import ChannelGather
from msfcnn.ops.dequantize import Dequantize
from msfcnn.ops.depthwise_conv2d import DepthwiseConv2D
from msfcnn.ops.min_max import MaximumConst
from msfcnn.ops.quantize import Quantize
from msfcnn.ops.transpose import Transpose

Q = Quant(0.05, -10)


class State:
    """An import in progress: the graph, and the tensors that have readers besides the one converted."""

    def __init__(self, graph: Graph, shared: set[int] = frozenset()):
        self.graph, self.shared = graph, shared

    def sole_reader(self, tensor: int) -> bool:
        return tensor not in self.shared


def _int8_conv(activation=None) -> State:
    graph = Graph("t", (4, 4, 3), input_quant=Q)
    consts = {"weights": np.ones((2, 1, 1, 3), np.int8), "bias": np.zeros(2, np.int32),
              "weight_scales": np.ones(2, np.float32)}
    graph.append(Conv2D(2, Window((1, 1)), activation), (NETWORK_INPUT,), consts, Q)
    return State(graph)


def _float_conv(activation=None, dense=False) -> State:
    graph = Graph("t", (4, 4, 3), dtype="float32")
    rng = np.random.default_rng(3)
    if dense:
        flat = graph.append(Reshape((48,)), (NETWORK_INPUT,))
        graph.append(Dense(5, activation), (flat,), {"weights": rng.normal(size=(5, 48)).astype(np.float32),
                                                     "bias": rng.normal(size=5).astype(np.float32)})
    else:
        graph.append(Conv2D(2, Window((3, 3)), activation), (NETWORK_INPUT,),
                     {"weights": rng.normal(size=(2, 3, 3, 3)).astype(np.float32),
                      "bias": rng.normal(size=2).astype(np.float32)})
    return State(graph)


def _applied(state, proposal):
    """The answer of the first rule that applies to the proposal (as stage.rewrite answers), and
    that rule's name."""
    for rule in RULES:
        if isinstance(proposal, rule.proposal):
            result = rule.apply(state, proposal)
            if result is not None:
                return result, rule.name
    return None, None


def test_rules_are_declared_with_what_they_match_and_make():
    assert len({rule.name for rule in RULES}) == len(RULES)
    assert all(rule.matches and rule.produces and rule.doc for rule in RULES)


def test_the_stage_answers_as_its_first_applicable_rule():
    for make, proposal in ((_int8_conv, Clamp("relu", 0, Q)), (_int8_conv, Clamp("relu", NETWORK_INPUT, Q)),
                           (_float_conv, _batch_norm(0, 2))):
        by_rule, by_stage = make(), make()
        assert repr(_applied(by_rule, proposal)[0]) == repr(stage.rewrite(by_stage, proposal))
        assert repr(by_rule.graph.nodes) == repr(by_stage.graph.nodes)


# ---- clamps ---------------------------------------------------------------------------------


def test_a_clamp_folds_into_its_producer_when_it_is_the_sole_reader():
    state = _int8_conv()
    result, rule = _applied(state, Clamp("relu", 0, Q))
    assert (result, rule) == (0, "fold_clamp") and state.graph.nodes[0].op.activation == "relu"
    result, rule = _applied(state, Clamp("relu6", 0, Q))  # RELU then RELU6: RELU6
    assert (result, rule) == (0, "fold_clamp") and state.graph.nodes[0].op.activation == "relu6"
    assert len(state.graph.nodes) == 1


def test_a_clamp_the_producer_already_applies_is_no_node_even_with_other_readers():
    state = _int8_conv("relu6")
    state.shared = {0}
    result, rule = _applied(state, Clamp("relu", 0, Q))
    assert (result, rule) == (0, "clamp_already_applied") and state.graph.nodes[0].op.activation == "relu6"


@pytest.mark.parametrize("why", ["other readers", "requantised", "network input"])
def test_a_clamp_that_cannot_fold_is_an_activation_node(why):
    state = _int8_conv()
    src, quant = 0, Q
    if why == "other readers":
        state.shared = {0}
    elif why == "requantised":
        quant = Quant(0.1, -10)
    else:
        src = NETWORK_INPUT
    result, rule = _applied(state, Clamp("relu", src, quant))
    assert rule == "standalone_clamp" and result == Append(Activation("relu"), (src,))
    assert state.graph.nodes[0].op.activation is None


@pytest.mark.parametrize("producer", [GlobalAvgPool(True), MaximumConst()], ids=["mean", "maximum_const"])
def test_a_clamp_never_folds_into_an_op_whose_kernels_ignore_its_activation_field(producer):
    graph = Graph("t", (4, 4, 3), input_quant=Q)
    consts = {"operand": np.zeros(1, np.int8)} if isinstance(producer, MaximumConst) else None
    graph.append(producer, (NETWORK_INPUT,), consts, Q)
    result, rule = _applied(State(graph), Clamp("relu", 0, Q))
    assert rule == "standalone_clamp" and graph.nodes[0].op.activation is None


def test_an_average_pool_as_a_global_pool_takes_the_clamp():
    graph = Graph("t", (4, 4, 3), input_quant=Q)
    graph.append(GlobalAvgPool(True, pool=True), (NETWORK_INPUT,), quant=Q)
    assert _applied(State(graph), Clamp("relu", 0, Q)) == (0, "fold_clamp")
    assert graph.nodes[0].op.activation == "relu"


# ---- channel shuffles -------------------------------------------------------------------------


def test_a_channel_shuffle_becomes_one_gather_once_the_channels_are_one_axis_again():
    state = _int8_conv()
    groups = ChannelView(0, np.arange(6).reshape(2, 3))  # RESHAPE to 2 groups of 3
    assert stage.rewrite(state, groups) is None  # still a view
    swapped = groups.transposed([1, 0])  # TRANSPOSE of the groups and the channels in a group
    assert stage.rewrite(state, swapped) is None
    result, rule = _applied(state, swapped.reshaped((6,)))  # RESHAPE back
    assert rule == "shuffle_to_gather" and result == Append(ChannelGather((0, 3, 1, 4, 2, 5)), (0,))


def test_a_shuffle_that_puts_every_channel_back_is_no_node():
    view = ChannelView(0, np.arange(6).reshape(2, 3)).transposed([1, 0]).transposed([1, 0]).reshaped((6,))
    assert _applied(_int8_conv(), view) == (0, "shuffle_to_gather")


# ---- views with moved axes (TRANSPOSE, SQUEEZE, EXPAND_DIMS folded at import) -------------------


def _map(shape) -> State:
    graph = Graph("t", shape, input_quant=Q)
    graph.append(Requantize(), (NETWORK_INPUT,), quant=Q)
    return State(graph)


def _never():
    raise AssertionError("asked for the input as a tensor of its own")


def test_unit_axes_removed_or_added_within_the_tensors_rank_are_a_view():
    state = _map((1, 5, 3))
    assert _applied(state, UnitAxes(0, (5, 3), _never)) == (MovedAxes(0, (1, 2), (5, 3)), "unit_axes_as_a_view")
    expanded = MovedAxes(0, (1, 0, 2), (5, 1, 3))
    assert _applied(state, UnitAxes(0, (5, 1, 3), _never)) == (expanded, "unit_axes_as_a_view")
    assert _applied(state, UnitAxes(0, (1, 5, 3), _never)) == (0, "unit_axes_as_the_tensor")
    assert len(state.graph.nodes) == 1
    with pytest.raises(UserError, match="cannot view 1x5x3 as 3x5"):
        stage.rewrite(state, UnitAxes(0, (3, 5), _never))


def test_unit_axes_beyond_the_tensors_rank_are_a_reshape_of_the_input_as_a_tensor():
    state = _map((1, 5, 3))
    asked = []
    result, rule = _applied(state, UnitAxes(0, (1, 1, 5, 3), lambda: asked.append(0) or 7))
    assert rule == "unit_axes_as_reshape" and result == Append(Reshape((1, 1, 5, 3)), (7,)) and asked == [0]


def test_a_view_that_moves_only_unit_axes_is_the_tensor_or_a_reshape():
    state = _map((1, 5, 3))  # a sequence of 5 steps as a map of one row
    layout = unit_layout((1, 5, 3), (5, 1, 3))  # EXPAND_DIMS at the other axis
    assert layout == (1, 0, 2)
    assert _applied(state, MovedAxes(0, layout, (5, 1, 3))) == (Append(Reshape((5, 1, 3)), (0,)), "moved_axes_as_reshape")
    assert _applied(state, MovedAxes(0, (0, 1, 2), (1, 5, 3))) == (0, "moved_axes_as_reshape")
    assert unit_layout((1, 5, 3), (1, 1, 5, 3)) is None  # more axes than the IR tensor: a reshape of its own
    with pytest.raises(UserError, match="cannot view 1x5x3 as 3x5"):
        unit_layout((1, 5, 3), (3, 5))


def test_a_view_that_moves_h_w_or_c_is_a_transpose_and_only_of_a_map():
    state = _map((4, 5, 3))
    result, rule = _applied(state, MovedAxes(0, (2, 0, 1), (3, 4, 5)))  # NHWC to NCHW
    assert rule == "moved_axes_as_transpose" and result == Append(Transpose((2, 0, 1)), (0,))
    assert stage.rewrite(state, MovedAxes(0, (1, 0), (5, 4))) is None  # (the frontend refuses it)


# ---- means of views (a TRANSPOSE, SQUEEZE or EXPAND_DIMS folded into the MEAN reading it) -------


def test_a_mean_of_a_transposed_map_is_an_axis_mean_of_the_map_itself():
    state = _map((4, 5, 3))
    view = MovedAxes(0, (2, 0, 1), (3, 4, 5))  # NHWC to NCHW, then the mean over the view's last axis (W)
    result, rule = _applied(state, Mean(view, (2,), False, lambda: (3, 4)))
    assert rule == "mean_of_the_ir_map" and result == Append(AxisMean(Window((1, 5))), (0,), layout=(2, 0))
    result, rule = _applied(state, Mean(view, (1, 2), True, lambda: (3, 1, 1)))  # over H and W, keeping them
    assert rule == "mean_of_the_ir_map" and result == Append(AxisMean(Window((4, 5))), (0,), layout=(2, 0, 1))
    assert len(state.graph.nodes) == 1


def test_a_mean_over_every_step_of_a_squeezed_sequence_is_a_global_pool():
    state = _map((1, 5, 3))  # a Conv1D's output, squeezed to 5 steps of 3 channels
    view = MovedAxes(0, (1, 2), (5, 3))
    assert _applied(state, Mean(view, (0,), False, lambda: (3,))) == \
        (Append(GlobalAvgPool(False), (0,)), "mean_over_every_position")
    result, rule = _applied(state, Mean(view, (0,), True, lambda: (1, 3)))  # keep_dims: the view keeps its axis
    assert rule == "mean_of_the_ir_map" and result == Append(AxisMean(Window((1, 5))), (0,), layout=(1, 2))


def test_the_declared_output_of_a_mean_is_asked_only_when_a_rule_needs_it():
    def never():
        raise AssertionError("asked for the declared shape")

    result, rule = _applied(_map((4, 5, 3)), Mean(MovedAxes(0, (2, 0, 1), (3, 4, 5)), (1,), False, never))
    assert rule == "mean_of_the_ir_map" and result.op == AxisMean(Window((4, 1)))


# ---- batch normalisation ------------------------------------------------------------------------


def _batch_norm(src: int, channels: int) -> BatchNorm:
    rng = np.random.default_rng(5)
    return BatchNorm(src, rng.uniform(0.5, 2, channels), rng.normal(size=channels), rng.normal(size=channels))


@pytest.mark.parametrize("dense", [False, True], ids=["conv", "dense"])
def test_a_batch_norm_folds_into_the_conv_or_dense_before_it(dense):
    state = _float_conv(dense=dense)
    src = len(state.graph.nodes) - 1
    before = dict(state.graph.nodes[src].consts)
    bn = _batch_norm(src, 5 if dense else 2)
    assert _applied(state, bn) == (src, "fold_batch_norm")
    consts = state.graph.nodes[src].consts
    axes = (slice(None),) + (None,) * (before["weights"].ndim - 1)
    np.testing.assert_allclose(consts["weights"], before["weights"] * bn.scale[axes], rtol=1e-6)
    np.testing.assert_allclose(consts["bias"], (before["bias"] - bn.mean) * bn.scale + bn.beta, rtol=1e-5, atol=1e-6)
    assert consts["weights"].dtype == np.float32


def test_a_batch_norm_after_an_activation_is_a_depthwise_conv_of_its_own():
    state = _float_conv("relu")
    bn = _batch_norm(0, 2)
    result, rule = _applied(state, bn)
    assert rule == "batch_norm_as_depthwise" and result.op == DepthwiseConv2D(Window((1, 1))) and result.inputs == (0,)
    np.testing.assert_allclose(result.consts["weights"].reshape(-1), bn.scale.astype(np.float32))
    np.testing.assert_allclose(result.consts["bias"], (-bn.mean * bn.scale + bn.beta).astype(np.float32), rtol=1e-6)


def test_a_batch_norm_of_a_vector_that_cannot_fold_is_refused():
    state = _float_conv(dense=True)
    state.shared = {1}
    with pytest.raises(UserError, match="batch normalisation of a vector is only supported right after Gemm/MatMul"):
        stage.rewrite(state, _batch_norm(1, 5))


def test_a_constant_added_after_a_dense_folds_into_its_bias():
    state = _float_conv(dense=True)
    before = state.graph.nodes[1].consts["bias"].astype(np.float64)
    added = np.arange(5, dtype=np.float32)
    assert _applied(state, BiasAdd(1, lambda: added)) == (1, "fold_bias_add")
    np.testing.assert_array_equal(state.graph.nodes[1].consts["bias"], (before + added).astype(np.float32))


def test_a_constant_added_after_an_activation_is_left_to_the_frontend():
    """(its own ADD node, whose operand the frontend checks: the per-channel form is never asked)"""
    state = _float_conv("relu")

    def never():
        raise AssertionError("asked for a bias that does not fold")

    assert stage.rewrite(state, BiasAdd(0, never)) is None and len(state.graph.nodes) == 1


# ---- requantisations and flattening -------------------------------------------------------------


def test_a_requantisation_to_the_tensors_own_quantisation_is_no_node():
    state = _int8_conv()
    assert _applied(state, Requantisation(0, Q)) == (0, "drop_noop_requantisation")
    result, rule = _applied(state, Requantisation(0, Quant(0.1, 3)))
    assert rule == "requantise" and result == Append(Requantize(), (0,))


@pytest.mark.parametrize("k", [0, 1])
def test_quantising_a_float_model_input_is_left_to_the_graphs_caller(k):
    graph = Graph("t", (4, 4, 3), extra_inputs=(GraphInput((4, 4, 3)),))  # float32 inputs, not quantised yet
    assert _applied(State(graph), InputQuantisation(input_tensor(k), Q)) == (input_tensor(k), "quantise_at_the_caller")
    assert graph.quant_of(input_tensor(k)) == Q and graph.quant_of(input_tensor(1 - k)) is None
    assert graph.float_input and not graph.nodes
    assert stage.rewrite(State(graph), InputQuantisation(input_tensor(k), Quant(0.1, 0))) is None  # (once)


def _float_island() -> State:
    """An int8 map, dequantised: a float32 tensor inside an int8 graph."""
    state = _int8_conv()
    state.graph.append(Dequantize((4, 4, 2)), (0,))
    return state


def test_quantising_a_float_tensor_inside_the_model_is_a_quantize_node():
    state = _float_island()
    assert _applied(state, Requantisation(1, Q)) == (Append(Quantize((4, 4, 2)), (1,)), "end_float_island")


def test_dequantising_the_models_output_is_left_to_the_graphs_caller():
    state = _int8_conv()
    assert _applied(state, Dequantisation(0, model_output=True)) == (0, "dequantise_at_the_caller")
    assert state.graph.float_output and len(state.graph.nodes) == 1


@pytest.mark.parametrize("why", ["inside the model", "the model input"])
def test_any_other_dequantisation_is_a_dequantize_node(why):
    state = _int8_conv()
    src, output = (0, False) if why == "inside the model" else (NETWORK_INPUT, True)
    shape = state.graph.shape_of(src)
    assert _applied(state, Dequantisation(src, output)) == (Append(Dequantize(shape), (src,)), "dequantise")
    assert not state.graph.float_output


def _pooled(dtype: str) -> State:
    graph = Graph("t", (4, 4, 3), dtype=dtype, input_quant=None if dtype == "float32" else Q)
    graph.append(GlobalAvgPool(True), (NETWORK_INPUT,), quant=None if dtype == "float32" else Q)
    return State(graph)


def test_flattening_a_float_mean_with_keep_dims_drops_the_kept_axes():
    state = _pooled("float32")
    assert _applied(state, Flatten(0)) == (0, "flatten_into_mean")
    assert state.graph.nodes[0].op == GlobalAvgPool(False) and state.graph.shape_of(0) == (3,)


@pytest.mark.parametrize("why", ["int8", "other readers"])
def test_any_other_flattening_is_a_reshape(why):
    """An int8 MEAN's keep_dims picks LiteRT's arithmetic, so it is never dropped."""
    state = _pooled("int8" if why == "int8" else "float32")
    state.shared = {0} if why == "other readers" else set()
    result, rule = _applied(state, Flatten(0))
    assert rule == "flatten_as_reshape" and result == Append(Reshape((3,)), (0,))
    assert state.graph.nodes[0].op == GlobalAvgPool(True)


# ---- both frontends ---------------------------------------------------------------------------


def test_both_importers_rewrite_through_the_one_stage(monkeypatch):
    """The TFLite and ONNX importers hand their clamps, shuffles, means of views, (de)quantisations
    and batch norms to frontends/rewrite.py (and have no copy of their own)."""
    seen = []

    def recording(state, proposal):
        seen.append((type(state).__module__, type(proposal).__name__))
        return rewrite(state, proposal)

    rewrite = stage.rewrite
    monkeypatch.setattr(stage, "rewrite", recording)
    load_model(str(FIXTURES / "models" / "extra_relu_foldable.tflite"))
    load_model(str(FIXTURES / "models" / "onnx_conv_bn_relu.onnx"))
    load_model(str(FIXTURES / "models" / "onnx_channel_shuffle.onnx"))
    load_model(str(FIXTURES / "models" / "onnx_gap_linear.onnx"))
    load_model(str(FIXTURES / "models" / "shuffle_groups3.tflite"))
    load_model(str(FIXTURES / "models" / "extra_requantize.tflite"))
    load_model(str(FIXTURES / "models" / "op14_transpose_mean.tflite"))
    load_model(str(FIXTURES / "models" / "fi_float_io.tflite"))  # float32 edges and a float island
    tflite_kinds = ("Clamp", "ChannelView", "Requantisation", "Mean", "InputQuantisation", "Dequantisation")
    assert {("msfcnn.frontends.tflite", kind) for kind in tflite_kinds} <= set(seen)
    load_model(str(FIXTURES / "models" / "onnx_matmul.onnx"))
    load_model(str(FIXTURES / "models" / "onnx_sub_max_min.onnx"))  # (Unsqueeze)
    load_model(str(FIXTURES / "models" / "bin_conv1d.tflite"))  # (EXPAND_DIMS, SQUEEZE)
    onnx_kinds = ("Clamp", "BatchNorm", "ChannelView", "Flatten", "BiasAdd", "UnitAxes")
    assert {("msfcnn.frontends.onnx", kind) for kind in onnx_kinds} <= set(seen)
    assert ("msfcnn.frontends.tflite", "UnitAxes") in seen
