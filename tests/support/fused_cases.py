"""Shared generators for fused-execution tests: random networks (hypothesis) and random plans."""

from hypothesis import strategies as st

from msfcnn.fusion.dag import FusionDAG
from msfcnn.latency.calibration import random_path


def random_plan(dag: FusionDAG, seed: int) -> list:
    """A uniformly random walk from cut 0 to the last cut: an arbitrary complete plan (the same
    walk the latency calibration measures)."""
    return random_path(dag, seed)


@st.composite
def networks(draw, residual=True, tail=True):
    """Layer lists: conv / depthwise / pooling layers with kernels 1-7, strides 1-2, int or
    same/valid padding, non-square inputs, residual inverted-bottleneck blocks, and an optional
    pooling + dense + softmax head."""
    h, w, c = draw(st.integers(5, 24)), draw(st.integers(5, 24)), draw(st.integers(1, 6))
    shape = [h, w, c]
    layers = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["conv2d", "depthwise_conv2d", "max_pool2d", "avg_pool2d", "residual"]
                                    if residual else ["conv2d", "depthwise_conv2d", "max_pool2d", "avg_pool2d"]))
        if kind == "residual":
            k = draw(st.sampled_from([1, 3, 5, 7]))
            source = len(layers) - 1
            layers += [{"op": "conv2d", "filters": c * draw(st.integers(1, 3)), "kernel": 1, "stride": 1,
                        "padding": 0, "act": "relu6"},
                       {"op": "depthwise_conv2d", "kernel": k, "stride": 1, "padding": "same", "act": "relu"},
                       {"op": "conv2d", "filters": c, "kernel": 1, "stride": 1, "padding": 0},
                       {"op": "add", "from": source}]
            continue
        k = draw(st.integers(1, min(7, h, w)))
        s = draw(st.integers(1, 2))
        padding = draw(st.one_of(st.integers(0, k // 2), st.sampled_from(["same", "valid"])))
        layer = {"op": kind, "kernel": k, "stride": s, "padding": padding}
        if kind == "conv2d":
            c = draw(st.integers(1, 8))
            layer["filters"] = c
            layer["act"] = draw(st.sampled_from([None, "relu", "relu6"]))
        pad = 0 if padding == "valid" else (k - 1 if padding == "same" else 2 * padding)
        if h + pad < k or w + pad < k:
            continue
        layers.append({key: v for key, v in layer.items() if v is not None})
        if padding == "same":
            h, w = -(-h // s), -(-w // s)
        else:
            h, w = (h + pad - k) // s + 1, (w + pad - k) // s + 1
    if not layers:
        layers.append({"op": "conv2d", "filters": 2, "kernel": 1, "stride": 1, "padding": 0})
    if tail and draw(st.booleans()):
        # A pooled head, or a dense layer straight on the (flattened) feature map.
        head = draw(st.sampled_from([[{"op": "global_avg_pool"}], []]))
        layers += head + [{"op": "dense", "units": draw(st.integers(1, 10))}]
        if draw(st.booleans()):
            layers.append({"op": "softmax"})
    return {"name": "random", "input": shape, "layers": layers}


ELEMENTWISE_LAYERS = [{"op": "relu"}, {"op": "relu6"}, {"op": "logistic"}, {"op": "hard_swish"},
                      {"op": "mul", "const": "channel"}, {"op": "mul", "const": "scalar", "act": "relu"},
                      {"op": "add", "const": "channel"}, {"op": "add", "const": "scalar", "act": "relu6"},
                      {"op": "leaky_relu", "alpha": 0.1}, {"op": "tanh"}, {"op": "elu"}, {"op": "prelu"},
                      {"op": "relu_n1_to_1"}, {"op": "relu_0_to_1"},
                      {"op": "sub", "const": "channel"}, {"op": "sub", "const": "scalar", "reversed": True, "act": "relu"},
                      {"op": "maximum", "const": "scalar"}, {"op": "minimum", "const": "channel"},
                      {"op": "squared_difference", "const": "channel"}]
BINARY_LAYERS = ("mul", "sub", "maximum", "minimum", "squared_difference")  # of two maps of one shape
HEADS = [[], [{"op": "global_avg_pool"}, {"op": "dense", "units": 5}, {"op": "softmax"}],
         [{"op": "mean", "axes": [1]}, {"op": "transpose", "perm": [2, 0, 1]}, {"op": "mean", "axes": [1]}],
         [{"op": "mean", "axes": [0]}, {"op": "logistic"}], [{"op": "transpose", "perm": [1, 0, 2]}]]


@st.composite
def op_networks(draw):
    """Layer lists mixing convolutions with the other operators: element-wise maps (RELU,
    LOGISTIC, HARD_SWISH, MUL, ADD, SUB, MAXIMUM, MINIMUM and SQUARED_DIFFERENCE of a constant,
    LEAKY_RELU, TANH, ELU, PRELU, RELU_N1_TO_1, RELU_0_TO_1), MUL, SUB, MAXIMUM, MINIMUM,
    SQUARED_DIFFERENCE and CONCATENATION of two maps, PAD,
    squeeze-and-excite (a map times the LOGISTIC of a dense layer on its mean), and heads with a
    MEAN over one axis or a TRANSPOSE."""
    from msfcnn.frontends.layer_list import graph_from_layer_list

    doc = {"name": "ops", "input": [draw(st.integers(4, 16)), draw(st.integers(4, 16)), draw(st.integers(1, 4))],
           "layers": []}
    shapes = [tuple(doc["input"])]  # of the input, then of each layer
    for _ in range(draw(st.integers(2, 7))):
        h, w, c = shapes[-1]
        same_size = [i - 1 for i, s in enumerate(shapes[:-1]) if s[:2] == (h, w)]  # layer indices (-1: input)
        kind = draw(st.sampled_from(["conv", "depthwise", "map", "map", "pad", "se"]
                                    + (["concat", "binary"] if same_size else [])))
        if kind == "conv":
            new = [{"op": "conv2d", "filters": draw(st.integers(1, 8)), "kernel": draw(st.sampled_from([1, 3])),
                    "stride": draw(st.integers(1, 2)), "padding": "same"}]
        elif kind == "depthwise":
            new = [{"op": "depthwise_conv2d", "kernel": 3, "stride": draw(st.integers(1, 2)), "padding": "same"}]
        elif kind == "map":
            new = [draw(st.sampled_from(ELEMENTWISE_LAYERS))]
        elif kind == "pad":
            new = [{"op": "pad", "pads": draw(st.lists(st.integers(0, 2), min_size=4, max_size=4))}]
        elif kind == "se":
            here = len(doc["layers"]) - 1
            new = [{"op": "global_avg_pool"}, {"op": "dense", "units": c}, {"op": "logistic"},
                   {"op": "mul", "from": here}]
        else:
            source = draw(st.sampled_from(same_size))
            same_shape = shapes[source + 1] == (h, w, c)
            op = draw(st.sampled_from(BINARY_LAYERS)) if kind == "binary" and same_shape else "concat"
            new = [{"op": op, "from": source, **({"reversed": draw(st.booleans())} if op == "sub" else {})}]
        doc["layers"] += new
        graph = graph_from_layer_list(doc)
        shapes += [graph.shape_of(t) for t in range(len(shapes) - 1, len(graph))]
    doc["layers"] += draw(st.sampled_from(HEADS))
    return doc
