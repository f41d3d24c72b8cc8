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
