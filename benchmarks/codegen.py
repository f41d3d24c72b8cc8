"""Instructions executed by the generated C: fused plans against the unfused build.

For each built-in model, builds the C for the unfused plan and for the least-RAM plans at
F <= 1.0, 1.2, 1.5 and inf (exact cost model, host gcc -O2), runs one inference under
`valgrind --tool=callgrind` counting only msfcnn_invoke, and reports instructions and their ratio
to the unfused build against the plan's MAC overhead F (goal: ratio <= 1.1 x F).

A plan recomputes some ops more than others, and ops differ in instructions per MAC (a thin 1x1
convolution requantises an output every 8 MACs, a wide one every 480), so the ratio a fused plan
can reach depends on which ops it recomputes. The table therefore also shows the recompute bound:
the ratio a fusion with no overhead of its own would have, sum over ops of (instructions of the op
in the unfused build x how often the plan computes each of its outputs) / sum of those
instructions (pipeline.recompute_bound). Per-op instructions come from the unfused build's call
sites (built once more with -g, which does not change the code: the totals are checked equal);
recompute factors come from the plan's lowering, the same numbers the fused executor verifies.
ratio / bound is then the cost of fusing itself: ring and band indexing, per-column calls, memmoves.
benchmarks/target_speed.py measures the same bound on the microcontrollers, with per-op
instructions from per-block counts of the unfused build.

    python benchmarks/codegen.py [--models mbv2-w0.35,...]
"""

import argparse
import dataclasses
import json
import math
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from msfcnn import executor, pipeline  # noqa: E402
from msfcnn.codegen import build  # noqa: E402
from msfcnn.frontends import builtin_names  # noqa: E402
from msfcnn.targets import get_target  # noqa: E402
from msfcnn.tensors import random_input  # noqa: E402

CAPS = [1.0, 1.2, 1.5, math.inf]
CALL = re.compile(r"\bmsf_\w+\(&p(\d+),")
INCLUSIVE = re.compile(r"^\s*([\d,]+) \([^)]*\)\s+=> ")


def profile(graph, plan, per_op: bool = False) -> tuple[int, int, Counter]:
    """(instructions in msfcnn_invoke, arena bytes, instructions per op if per_op) for one
    inference of the plan's C build."""
    target = get_target("host")
    if per_op:
        target = dataclasses.replace(target, cflags=target.cflags + " -g")
    schedule = pipeline.lower(graph, plan)
    x = executor.to_internal(graph, random_input(graph, 0)[0])
    with tempfile.TemporaryDirectory(prefix="msfcnn-bench-") as folder:
        folder = Path(folder)
        pipeline.write_c(folder, graph, schedule, plan)
        program = build.build(folder, target)
        folder = program.parent  # the Makefile's BUILD_DIR
        (folder / "input.bin").write_bytes(x.tobytes())
        out = folder / "callgrind.out"
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-line=yes",
                        "--toggle-collect=msfcnn_invoke", str(program), str(folder / "input.bin"),
                        str(folder / "output.bin")], check=True, capture_output=True)
        text = out.read_text()
        total = int((re.search(r"^summary:\s+(\d+)", text, re.M) or re.search(r"^totals:\s+(\d+)", text, re.M))
                    .group(1))
        ops = _per_call_site(out) if per_op else Counter()
        return total, build.arena_bytes(folder.parent, target), ops


def _per_call_site(out: Path) -> Counter:
    """Inclusive instructions of the kernel calls on each `msf_...(&pN, ...)` line of model.c."""
    listing = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--auto=yes", str(out)],
                             check=True, capture_output=True, text=True).stdout
    cost, op = Counter(), None
    for line in listing.splitlines():
        call = CALL.search(line)
        if call:
            op = int(call.group(1))
            continue
        inclusive = INCLUSIVE.match(line)
        if inclusive and op is not None:
            cost[op] += int(inclusive.group(1).replace(",", ""))
            op = None
    return cost


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(builtin_names()))
    parser.add_argument("--json", default=str(ROOT / "benchmarks" / "results" / "codegen.json"))
    args = parser.parse_args()
    rows = []
    print(f"{'model':18s} {'plan':>8s} {'arena B':>8s} {'MACs F':>7s} {'instructions':>13s} {'ratio':>6s} "
          f"{'<=1.1F':>6s} {'bound':>6s} {'ratio/bound':>11s} {'instr/MAC':>9s}")
    for name in args.models.split(","):
        graph = pipeline.load(name, weights=True)
        planner = pipeline.planner(graph)
        vanilla = planner.vanilla()
        base, base_arena, _ = profile(graph, vanilla)
        check, _, per_op = profile(graph, vanilla, per_op=True)
        if check != base:
            raise SystemExit(f"{name}: building with -g changed the instruction count ({check} vs {base})")
        per_mac = base / vanilla.macs
        print(f"{name:18s} {'vanilla':>8s} {base_arena:8d} {1.0:7.3f} {base:13d} {1.0:6.3f} {'':>6s} {'':>6s} "
              f"{'':>11s} {per_mac:9.2f}")
        rows.append({"model": name, "plan": "vanilla", "arena_bytes": base_arena, "overhead": 1.0,
                     "instructions": base, "ratio": 1.0, "instructions_per_mac": round(per_mac, 3),
                     "instructions_in_op_calls": sum(per_op.values())})
        for cap in CAPS:
            plan = planner.p1(cap)
            count, arena, _ = profile(graph, plan)
            ratio = count / base
            bound = sum(pipeline.recompute_bound(pipeline.lower(graph, plan), per_op)) / sum(per_op.values())
            ok = ratio <= 1.1 * plan.overhead
            label = "F<=inf" if math.isinf(cap) else f"F<={cap:g}"
            print(f"{name:18s} {label:>8s} {arena:8d} {plan.overhead:7.3f} {count:13d} {ratio:6.3f} "
                  f"{'yes' if ok else 'NO':>6s} {bound:6.3f} {ratio / bound:11.3f}")
            rows.append({"model": name, "plan": label, "arena_bytes": arena, "overhead": round(plan.overhead, 4),
                         "instructions": count, "ratio": round(ratio, 4), "meets_goal": ok,
                         "recompute_bound": round(bound, 4), "fusion_overhead": round(ratio / bound, 4)})
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps({"rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
