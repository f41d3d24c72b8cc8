"""The sliding-window goal of issue 25, measured: a streaming model over a long input of W
windows (a hop of one frame by default) against LiteRT without its default delegates on every
window, in numpy (`msfcnn run --streaming`) and in the generated C (`msfcnn verify --streaming`
on each target, with --instructions the instructions of one call beside the whole window's).

    python scripts/check_streaming.py MODEL.tflite [--windows 200] [--hop 1] [--target host --target cortex-m4]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np


def litert_windows(model: str, frames: np.ndarray, axis: int, size: int, hop: int, count: int) -> np.ndarray:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    it = Interpreter(model_path=model, num_threads=1,
                     experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    it.allocate_tensors()
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    outputs = []
    for w in range(count):
        it.set_tensor(inp["index"], np.take(frames, range(w * hop, w * hop + size), axis=axis).reshape(inp["shape"]))
        it.invoke()
        outputs.append(it.get_tensor(out["index"]).reshape(-1))
    return np.stack(outputs)


def _equal(ours: np.ndarray, oracle: np.ndarray) -> int:
    """Windows equal to the oracle's: bit for bit, or float32 within verify's tolerance (sums in another order)."""
    if ours.dtype != np.float32:
        return int(np.sum(np.all(ours == oracle, axis=1)))
    from msfcnn.pipeline import float_tolerance
    return sum(bool(np.all(np.abs(a - b) <= float_tolerance(b))) for a, b in zip(ours, oracle))


def msfcnn(*argv: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "msfcnn", *argv, "--json", "-q"], capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr.strip())
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--windows", type=int, default=200)
    parser.add_argument("--hop", type=int, default=1)
    parser.add_argument("--target", action="append", default=None)
    args = parser.parse_args()
    from msfcnn import pipeline
    whole = pipeline.load(args.model)
    axis = 0 if whole.input_shape[0] > 1 else 1
    size = whole.input_shape[axis]
    shape = list(whole.input_shape)
    shape[axis] = size + (args.windows - 1) * args.hop
    rng = np.random.default_rng(2025)
    frames = (rng.uniform(-0.5, 1.5, size=shape).astype(np.float32) if whole.dtype == "float32" else
              rng.integers(-128, 128, size=shape, dtype=np.int8))
    oracle = litert_windows(args.model, frames, axis, size, args.hop, args.windows)
    with tempfile.TemporaryDirectory() as tmp:
        x, y = Path(tmp) / "x.npy", Path(tmp) / "y.npy"
        np.save(x, frames)
        run = msfcnn("run", args.model, "--streaming", "--hop", str(args.hop), "--input", str(x), "-o", str(y))
        ours = np.load(y).reshape(args.windows, -1)
        print(f"{whole.name}: {args.windows} windows of {size} frames, hop {args.hop}; numpy: "
              f"{_equal(ours, oracle)} equal to LiteRT's{' (float32: within verify tolerance)' * (ours.dtype == np.float32)}, "
              f"{run['windows_equal_whole_window']} to the numpy whole-window executor's")
        for target in args.target or ["host", "cortex-m4"]:
            doc = msfcnn("verify", args.model, "--streaming", "--hop", str(args.hop), "--input", str(x),
                         "--target", target, "--instructions")
            print(f"  C on {target}: {'bit-exact' if doc['bit_exact'] else 'within tolerance' if doc['pass'] else 'DIFFERS'} over {doc['calls']} calls, "
                  f"{doc['windows_equal_whole_window']} of {doc['windows']} windows equal to the whole-window "
                  f"model's; arena {doc['arena_bytes']} B (predicted {doc['predicted_peak_ram_bytes']}, "
                  f"state {doc['state_bytes']}); instructions per call {doc['instructions_per_step']} "
                  f"(predicted {doc['predicted_instructions_per_step']}), whole window {doc['instructions']} "
                  f"(predicted {doc['predicted_instructions']}, arena {doc['whole_window_peak_ram_bytes']} B)")


if __name__ == "__main__":
    main()
