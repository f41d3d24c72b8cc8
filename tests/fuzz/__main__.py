"""`python -m tests.fuzz [--cases N] [--seed S] [--jobs J] [--only I] [--save DIR]`: the long fuzz run
(issues 16 and 29).

Prints one line per failing case (with the seed and index that reproduce it), a summary and the
count of cases per command and outcome; exits 1 if any case failed."""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from tests.fuzz.harness import TIME_LIMIT, run_cases  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    p.add_argument("--cases", type=int, default=1000, help="how many cases (default 1000)")
    p.add_argument("--seed", type=int, default=1, help="seed of the run (default 1)")
    p.add_argument("--start", type=int, default=0, help="first case index (default 0)")
    p.add_argument("--only", type=int, action="append", help="run just this case index (repeatable)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--time-limit", type=int, default=TIME_LIMIT, help=f"seconds per case (default {TIME_LIMIT})")
    p.add_argument("-v", "--verbose", action="store_true", help="print every failure in full")
    p.add_argument("--save", metavar="DIR", help="copy each failing case's files and command line into DIR")
    args = p.parse_args(argv)
    indices = args.only or range(args.start, args.start + args.cases)
    start = time.monotonic()
    statuses = collections.Counter()
    kinds = collections.Counter()
    failures = []
    slowest = (0.0, None)
    outcomes = collections.Counter()
    for done, r in enumerate(run_cases(args.seed, indices, args.jobs, args.time_limit, save=args.save), 1):
        statuses[str(r.status)] += 1
        outcomes[(r.argv[0], "FAIL" if r.problems else str(r.status))] += 1
        kinds[r.kind] += 1
        slowest = max(slowest, (r.seconds, r.index))
        if r.problems:
            failures.append(r)
            first = r.problems[0].splitlines()[-1] if not args.verbose else "\n".join(r.problems)
            print(f"FAIL seed {args.seed} case {r.index} [{r.how}] msfcnn {' '.join(r.argv)}: {first}", flush=True)
        if done % 500 == 0:
            print(f"... {done} cases, {len(failures)} failing, {time.monotonic() - start:.0f} s",
                  file=sys.stderr, flush=True)
    elapsed = time.monotonic() - start
    print(f"{sum(statuses.values())} cases (seed {args.seed}) in {elapsed:.1f} s; statuses {dict(statuses)}; "
          f"kinds {dict(kinds)}; slowest case {slowest[1]} {slowest[0]:.2f} s; {len(failures)} failing")
    for command in sorted({c for c, _ in outcomes}):
        print(f"  {command}: " + ", ".join(f"{o} {n}" for (c, o), n in sorted(outcomes.items()) if c == command))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
