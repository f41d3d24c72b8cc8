"""Generate golden cost numbers from the msf-CNN reference implementation.

This script writes tests/fixtures/reference_costs.json, the data behind
tests/unit/test_paper_reference.py. For a set of layer chains (random plain chains drawn with a
fixed seed, plus the three paper models in src/msfcnn/models/*.json) it records what the
reference's cost model says:

* for every block of layers i..j, the reference's RAM figure (``MemoryUsageEstimator``) and MAC
  count (``MACEstimator``) from ``analysis/fusion_cost_graph.py``; ``null`` where the reference
  gives ``math.inf`` (the block is not a fusion candidate);
* the reference's vanilla (unfused) figures: ``Network(layers).calc_memory_usage(input)`` with its
  default arguments, and ``Network(layers).total_common_mac`` after a forward pass.

The reference implementation is NOT part of this repository and must never be copied into it.
To run this script, check it out into a scratch directory and point ``--reference`` at it:

    git clone https://github.com/TinyPART/msf-CNN /tmp/msfref
    python scripts/gen_reference_costs.py --reference /tmp/msfref

Only ``analysis/building_blocks.py`` and ``analysis/fusion_cost_graph.py`` are used (imported as
the ``analysis`` package from the given directory); the script needs numpy.

Output format: a JSON list of
    {"chain": <layer-list JSON>, "blocks": [[i, j, ram_or_null, macs_or_null], ...],
     "vanilla_ram": int, "vanilla_macs": int}
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
MODELS_DIR = ROOT / "src" / "msfcnn" / "models"
DEFAULT_OUTPUT = ROOT / "tests" / "fixtures" / "reference_costs.json"

OPS = ("conv2d", "depthwise_conv2d", "max_pool2d", "avg_pool2d")
OP_WEIGHTS = (0.4, 0.25, 0.2, 0.15)


# ---------------------------------------------------------------------------------------------
# Random chains (our layer-list JSON format)


def _random_layer(rng: np.random.Generator) -> dict:
    op = OPS[rng.choice(len(OPS), p=OP_WEIGHTS)]
    kernel = int(rng.integers(1, 8))
    stride = int(rng.integers(1, 3))
    if kernel > 1 and rng.random() < 0.1:
        padding = int(rng.integers(0, kernel))  # occasionally larger than kernel // 2
    else:
        padding = int(rng.integers(0, kernel // 2 + 1))
    layer = {"op": op}
    if op == "conv2d":
        layer["filters"] = int(rng.integers(1, 25))
    layer.update(kernel=kernel, stride=stride, padding=padding)
    return layer


def _chain_is_valid(chain: dict) -> bool:
    """Every layer's kernel fits its padded input (so every output is at least 1x1)."""
    h, w, _ = chain["input"]
    for layer in chain["layers"]:
        k, s, p = layer["kernel"], layer["stride"], layer["padding"]
        if h + 2 * p < k or w + 2 * p < k:
            return False
        h = (h + 2 * p - k) // s + 1
        w = (w + 2 * p - k) // s + 1
        if h < 1 or w < 1:
            return False
    return True


def random_chains(count: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    chains = []
    while len(chains) < count:
        n_layers = int(rng.integers(2, 10))
        shape = [int(rng.integers(8, 65)), int(rng.integers(8, 65)), int(rng.integers(1, 9))]
        chain = {"name": f"rand{len(chains):02d}", "input": shape,
                 "layers": [_random_layer(rng) for _ in range(n_layers)]}
        if _chain_is_valid(chain):
            chains.append(chain)
    return chains


def paper_models() -> list[dict]:
    return [json.loads(path.read_text()) for path in sorted(MODELS_DIR.glob("*.json"))]


# ---------------------------------------------------------------------------------------------
# Running the reference


def _reference_layers(ref, chain: dict) -> list:
    """Fresh reference layer objects for a chain (the reference mutates them while estimating)."""
    channels = chain["input"][2]
    layers = []
    for layer in chain["layers"]:
        op, k, s, p = layer["op"], layer["kernel"], layer["stride"], layer["padding"]
        if op == "conv2d":
            layers.append(ref.ConvLayer(layer["filters"], k, s, p))
            channels = layer["filters"]
        elif op == "depthwise_conv2d":
            if layer.get("depth_multiplier", 1) != 1:
                raise ValueError("the reference's DepthwiseConv has no depth multiplier")
            layers.append(ref.DepthwiseConv(channels, k, s, p))
        elif op in ("max_pool2d", "avg_pool2d"):
            layers.append(ref.PoolingLayer(k, s, p))
        else:
            raise ValueError(f"op {op!r} has no reference counterpart")
    return layers


def _as_int_or_none(value):
    if isinstance(value, float) and math.isinf(value):
        return None
    if int(value) != value:
        raise ValueError(f"non-integer cost {value!r}")
    return int(value)


def reference_record(ref, chain: dict) -> dict:
    def input_tensor():
        return np.zeros(tuple(chain["input"]))

    ram = ref.MemoryUsageEstimator(_reference_layers(ref, chain), input_tensor()).all_costs
    macs = ref.MACEstimator(_reference_layers(ref, chain), input_tensor()).all_costs
    if set(ram) != set(macs):
        raise RuntimeError(f"{chain['name']}: the two estimators cover different blocks")
    blocks = [[int(i), int(j), _as_int_or_none(ram[i, j]), _as_int_or_none(macs[i, j])]
              for i, j in sorted(ram)]

    vanilla_ram = ref.Network(_reference_layers(ref, chain)).calc_memory_usage(input_tensor())
    network = ref.Network(_reference_layers(ref, chain))
    network.forward(input_tensor())
    vanilla_macs = network.total_common_mac
    return {"chain": chain, "blocks": blocks,
            "vanilla_ram": int(vanilla_ram), "vanilla_macs": int(vanilla_macs)}


def import_reference(path: Path):
    """The reference's building blocks and estimators, imported from a scratch checkout."""
    if not (path / "analysis" / "fusion_cost_graph.py").is_file():
        sys.exit(f"{path}: no analysis/fusion_cost_graph.py there (see this script's docstring)")
    sys.path.insert(0, str(path))
    import types

    from analysis import building_blocks, fusion_cost_graph  # noqa: E402  (reference code)

    return types.SimpleNamespace(
        ConvLayer=building_blocks.ConvLayer, DepthwiseConv=building_blocks.DepthwiseConv,
        PoolingLayer=building_blocks.PoolingLayer, Network=building_blocks.Network,
        MemoryUsageEstimator=fusion_cost_graph.MemoryUsageEstimator,
        MACEstimator=fusion_cost_graph.MACEstimator)


def dump(records: list[dict]) -> str:
    """Compact JSON, one chain per line."""
    return "[\n" + ",\n".join(json.dumps(r, separators=(",", ":")) for r in records) + "\n]\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, required=True,
                        help="directory of a msf-CNN checkout (holding analysis/)")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--count", type=int, default=60, help="number of random chains")
    parser.add_argument("--seed", type=int, default=20250607)
    parser.add_argument("--no-paper-models", action="store_true")
    args = parser.parse_args(argv)

    ref = import_reference(args.reference.resolve())
    chains = random_chains(args.count, args.seed)
    if not args.no_paper_models:
        chains += paper_models()
    records = []
    for chain in chains:
        records.append(reference_record(ref, chain))
        print(f"{chain['name']}: {len(chain['layers'])} layers", file=sys.stderr)
    text = dump(records)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    n_blocks = sum(len(r["blocks"]) for r in records)
    print(f"wrote {args.output}: {len(records)} chains, {n_blocks} blocks, {len(text)} bytes",
          file=sys.stderr)


if __name__ == "__main__":
    main()
