"""Instructions executed by the generated C: fused plans against the unfused build.

For each built-in model, builds the C for the unfused plan and for the least-RAM plans at
F <= 1.0, 1.2, 1.5 and inf (exact cost model, host gcc -O2), runs one inference under
`valgrind --tool=callgrind` counting only msfcnn_invoke, and reports instructions, the ratio to
the unfused build against the plan's MAC overhead F (goal: ratio <= 1.1 x F), and instructions
per MAC of the unfused build. Instruction counts do not depend on the machine's load.

    python benchmarks/codegen.py [--models mbv2-w0.35,...]
"""

import argparse
import json
import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from msfcnn import executor  # noqa: E402
from msfcnn.codegen import build  # noqa: E402
from msfcnn.frontends import builtin_names, load_model  # noqa: E402
from msfcnn.planner import Planner  # noqa: E402
from msfcnn.schedule import schedule_plan  # noqa: E402
from msfcnn.targets import get_target  # noqa: E402
from msfcnn.tensors import random_input  # noqa: E402

CAPS = [1.0, 1.2, 1.5, math.inf]


def instructions(graph, plan) -> tuple[int, int]:
    """(instructions in msfcnn_invoke, arena bytes) for one inference of the plan's C build."""
    target = get_target("host")
    schedule = schedule_plan(graph, list(plan.blocks))
    x = executor.to_internal(graph, random_input(graph, 0)[0])
    with tempfile.TemporaryDirectory(prefix="msfcnn-bench-") as folder:
        folder = Path(folder)
        build.write_project(folder, graph, schedule, plan)
        program = build.build(folder, target)
        (folder / "input.bin").write_bytes(x.tobytes())
        out = folder / "callgrind.out"
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        "--toggle-collect=msfcnn_invoke", str(program), str(folder / "input.bin"),
                        str(folder / "output.bin")], check=True, capture_output=True)
        summary = re.search(r"^summary:\s+(\d+)", out.read_text(), re.M) or re.search(r"^totals:\s+(\d+)",
                                                                                         out.read_text(), re.M)
        return int(summary.group(1)), build.arena_bytes(folder, target)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(builtin_names()))
    parser.add_argument("--json", default=str(ROOT / "benchmarks" / "results" / "codegen.json"))
    args = parser.parse_args()
    rows = []
    print(f"{'model':18s} {'plan':>8s} {'arena B':>8s} {'MACs F':>7s} {'instructions':>13s} {'ratio':>6s} "
          f"{'<=1.1F':>6s} {'instr/MAC':>9s}")
    for name in args.models.split(","):
        graph = load_model(name, weights=True)
        planner = Planner(graph, "exact")
        vanilla = planner.vanilla()
        base, base_arena = instructions(graph, vanilla)
        per_mac = base / vanilla.macs
        print(f"{name:18s} {'vanilla':>8s} {base_arena:8d} {1.0:7.3f} {base:13d} {1.0:6.3f} {'':>6s} {per_mac:9.2f}")
        rows.append({"model": name, "plan": "vanilla", "arena_bytes": base_arena, "overhead": 1.0,
                     "instructions": base, "ratio": 1.0, "instructions_per_mac": round(per_mac, 3)})
        for cap in CAPS:
            plan = planner.p1(cap)
            count, arena = instructions(graph, plan)
            ratio = count / base
            ok = ratio <= 1.1 * plan.overhead
            label = "F<=inf" if math.isinf(cap) else f"F<={cap:g}"
            print(f"{name:18s} {label:>8s} {arena:8d} {plan.overhead:7.3f} {count:13d} {ratio:6.3f} "
                  f"{'yes' if ok else 'NO':>6s}")
            rows.append({"model": name, "plan": label, "arena_bytes": arena, "overhead": round(plan.overhead, 4),
                         "instructions": count, "ratio": round(ratio, 4), "meets_goal": ok})
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps({"rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
