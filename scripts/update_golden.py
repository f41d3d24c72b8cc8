"""Regenerate tests/golden/: the C emitted for a small residual network with a fused plan.

    python scripts/update_golden.py
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from msfcnn.codegen.emit import generate  # noqa: E402
from msfcnn.frontends.layer_list import graph_from_layer_list  # noqa: E402
from msfcnn.frontends.random_weights import with_random_weights  # noqa: E402
from msfcnn import pipeline  # noqa: E402

TINY = {"name": "tiny", "input": [12, 10, 3], "layers": [
    {"op": "conv2d", "filters": 4, "kernel": 3, "stride": 2, "padding": "same", "act": "relu6"},
    {"op": "conv2d", "filters": 8, "kernel": 1, "stride": 1, "padding": 0, "act": "relu6"},
    {"op": "depthwise_conv2d", "kernel": 3, "stride": 1, "padding": 1, "act": "relu6"},
    {"op": "conv2d", "filters": 4, "kernel": 1, "stride": 1, "padding": 0},
    {"op": "add", "from": 0},
    {"op": "global_avg_pool"}, {"op": "dense", "units": 3}, {"op": "softmax"}]}


def render() -> dict[str, str]:
    graph = with_random_weights(graph_from_layer_list(TINY))
    plan = pipeline.planner(graph).p1(1.3)
    files = generate(graph, pipeline.lower(graph, plan), plan)
    return {name: files[name] for name in ("model.c", "model.h", "weights.c")}


if __name__ == "__main__":
    golden = ROOT / "tests" / "golden"
    golden.mkdir(exist_ok=True)
    for name, text in render().items():
        (golden / name).write_text(text)
        print(f"wrote tests/golden/{name}")
