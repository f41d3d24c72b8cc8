"""How early an interrupt still prints a traceback (issue 29: interrupts at any time give one
line and exit 130). Starts a command, sends it SIGINT after 0, 1, 2, ... ms (several times at
each delay), and counts the runs whose stderr holds a traceback, by delay.

    python benchmarks/interrupt_window.py [--repeats 5] [--max-ms 40] -- COMMAND ...

Default command: the installed `msfcnn` console script planning a built-in model. The delay runs
from Popen's return (the fork and exec are done); the interpreter's own start-up comes after it.
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def one_run(command: list[str], delay: float, env: dict) -> tuple[str, int]:
    """Where the command interrupted `delay` s after its start printed a traceback ("site": in the
    interpreter's own start-up, before any script runs; "later"; "" for none), and its status."""
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, env=env)
        end = time.perf_counter() + delay
        while time.perf_counter() < end:  # a busy wait: sleep() overshoots by a millisecond or more
            pass
        child.send_signal(signal.SIGINT)
        code = child.wait()
        err.seek(0)
        text = err.read().decode(errors="replace")
    if "Traceback" not in text:
        return "", code
    return "site" if "Fatal Python error: init" in text else "later", code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--max-ms", type=int, default=40)
    parser.add_argument("--step-ms", type=int, default=1)
    parser.add_argument("command", nargs="*")
    args = parser.parse_args()
    command = args.command or [shutil.which("msfcnn") or "msfcnn", "plan", "mbv2-w0.35"]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    counts, latest, runs_in_all = {"site": 0, "later": 0}, {"site": None, "later": None}, 0
    print(f"command: {' '.join(command)}")
    print(" ms  site  later  exit statuses  (tracebacks in the interpreter's start-up, after it)")
    for ms in range(0, args.max_ms + 1, args.step_ms):
        runs = [one_run(command, ms / 1000, env) for _ in range(args.repeats)]
        runs_in_all += len(runs)
        for where in counts:
            found = sum(w == where for w, _ in runs)
            counts[where] += found
            latest[where] = ms if found else latest[where]
        print(f"{ms:>3}  {sum(w == 'site' for w, _ in runs):>4}  {sum(w == 'later' for w, _ in runs):>5}  "
              f"{sorted({c for _, c in runs})}", flush=True)
    print(f"tracebacks in {runs_in_all} runs: {counts['site']} in start-up (latest at {latest['site']} ms), "
          f"{counts['later']} after it (latest at {latest['later']} ms)")


if __name__ == "__main__":
    main()
