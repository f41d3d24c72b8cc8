"""Peak memory and time of `msfcnn plan` on very deep chains (issue 29: planning memory grows
linearly with depth; a 10,000-layer chain plans within 3 GB).

Each depth is planned by its own `msfcnn` process, whose peak resident memory and CPU time come
from the kernel's accounting of that child (os.wait4). Two chain kinds:

- `conv3x3`: 3x3 convolutions, stride 1, padding 1, 4 channels on a 16x16 map (the fuzzer's
  10,000-layer chain). Every op streams into the next, so blocks may start anywhere and reach the
  graph's end: the memo of the stream walks is what grew quadratically.
- `pointwise`: 1x1 convolutions on the same map. A fused block of hundreds of them keeps less RAM
  than one unfused op: the DAG held a quadratic number of blocks until chains of shorter kept
  blocks beat the long ones (`cost.exact._Chains`).

    python benchmarks/planning_memory.py [--kinds conv3x3,pointwise] [--depths 1000,10000]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT_BYTES = 3 * 1024 ** 3
KERNELS = {"conv3x3": (3, 1), "pointwise": (1, 0)}


def chain(kind: str, depth: int) -> dict:
    kernel, padding = KERNELS[kind]
    layer = {"op": "conv2d", "filters": 4, "kernel": kernel, "stride": 1, "padding": padding}
    return {"name": f"{kind}-{depth}", "input": [16, 16, 4], "layers": [layer] * depth}


def plan_in_child(path: Path) -> dict:
    """Plans the layer list in a child process: its exit status, peak RSS, CPU and wall time."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    with tempfile.TemporaryFile() as stderr:  # a file, not a pipe: the child never blocks on it
        start = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-m", "msfcnn", "plan", str(path), "--json"], env=env,
                                 stdout=subprocess.DEVNULL, stderr=stderr)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        stderr.seek(0)
        last_line = (stderr.read().decode(errors="replace").strip().splitlines() or [""])[-1]
    return {"exit": os.waitstatus_to_exitcode(status), "peak_rss_bytes": usage.ru_maxrss * 1024,
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 1), "wall_s": round(wall, 1), "stderr": last_line}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", default=",".join(KERNELS), help=f"chain kinds, of {', '.join(KERNELS)}")
    parser.add_argument("--depths", default="1000,10000")
    parser.add_argument("--json", default=str(ROOT / "benchmarks" / "results" / "planning_memory.json"))
    args = parser.parse_args()
    kinds = args.kinds.split(",")
    if not set(kinds) <= set(KERNELS):
        parser.error(f"--kinds: unknown kind in {args.kinds!r} (kinds: {', '.join(KERNELS)})")
    rows = []
    print(f"{'chain':<16} {'exit':>4} {'peak RSS MB':>12} {'CPU s':>8} {'wall s':>8}  under 3 GB")
    with tempfile.TemporaryDirectory() as folder:
        for kind, depth in ((k, int(d)) for k in kinds for d in args.depths.split(",")):
            path = Path(folder) / f"{kind}-{depth}.json"
            path.write_text(json.dumps(chain(kind, depth)))
            row = {"kind": kind, "depth": depth, **plan_in_child(path)}
            row["under_limit"] = row["exit"] == 0 and row["peak_rss_bytes"] < LIMIT_BYTES
            rows.append(row)
            print(f"{kind + '-' + str(depth):<16} {row['exit']:>4} {row['peak_rss_bytes'] / 1e6:>12.1f} "
                  f"{row['cpu_s']:>8} {row['wall_s']:>8}  {'yes' if row['under_limit'] else 'NO'}")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps({"limit_bytes": LIMIT_BYTES, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
