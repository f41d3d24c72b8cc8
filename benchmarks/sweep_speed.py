"""Wall time of the whole paper Table 1 sweep in one process, start-up included.

Runs `msfcnn sweep` (3 models x vanilla, heuristic, 6 P1 caps, 5 P2 caps, paper cost model) as a
fresh subprocess several times and reports the median and best. The reference implementation
takes about 80 s for the same table (not re-measured here).

It prints the table and writes nothing: wall time depends on the machine and its load, so a quick
run must not rewrite the committed result. To record a result, name the file:

    python benchmarks/sweep_speed.py [--repeats 7] [--json benchmarks/results/sweep_speed.json]
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMAND = [sys.executable, "-m", "msfcnn", "sweep", "mbv2-w0.35", "mcunet-vww5", "mcunet-320kb",
           "--cost-model", "paper", "--max-overhead", "1.1,1.2,1.3,1.4,1.5,inf",
           "--max-ram", "16kB,32kB,64kB,128kB,256kB"]
RESULT = Path(__file__).resolve().parent / "results" / "sweep_speed.json"  # written only with --json
REFERENCE_SECONDS = 80.0
TARGET_SECONDS = 0.8


def timed(cmd) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", metavar="FILE", help=f"also write the result as JSON to FILE (the committed one: "
                                                        f"{RESULT.relative_to(RESULT.parents[2])})")
    args = parser.parse_args()
    timed(COMMAND)  # warm the file cache and .pyc files
    sweep = [timed(COMMAND) for _ in range(args.repeats)]
    bare = [timed([sys.executable, "-c", "pass"]) for _ in range(args.repeats)]
    result = {
        "command": " ".join(COMMAND[1:]),
        "repeats": args.repeats,
        "sweep_median_s": round(statistics.median(sweep), 4),
        "sweep_best_s": round(min(sweep), 4),
        "python_startup_median_s": round(statistics.median(bare), 4),
        "target_s": TARGET_SECONDS,
        "reference_s": REFERENCE_SECONDS,
        "speedup_vs_reference": round(REFERENCE_SECONDS / statistics.median(sweep), 1),
        "meets_target": statistics.median(sweep) < TARGET_SECONDS,
    }
    print(f"{'what':36s} {'seconds':>8s}")
    print(f"{'full Table 1 sweep (median)':36s} {result['sweep_median_s']:8.3f}")
    print(f"{'full Table 1 sweep (best)':36s} {result['sweep_best_s']:8.3f}")
    print(f"{'bare python start-up (median)':36s} {result['python_startup_median_s']:8.3f}")
    print(f"speed-up vs the reference's ~80 s: {result['speedup_vs_reference']}x; "
          f"target < {TARGET_SECONDS} s: {'met' if result['meets_target'] else 'MISSED'}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
