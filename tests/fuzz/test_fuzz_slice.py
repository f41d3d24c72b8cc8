"""The deterministic slice of the fuzz harness that runs with the test suite (issue 16): a few
hundred mutated models, layer lists, plan files and .npy inputs through plan / run / compile /
pareto / sweep, each one a clean exit (0, or 2 with one line on stderr) within the time limit and
no half-written output. The long run: `python -m tests.fuzz --cases 10000`."""

import pytest

from fuzz.harness import run_cases

pytest.importorskip("onnx")

SEED = 16  # the number; any fixed seed will do
CASES = 320  # about 5-10 s on one busy core


def test_fuzz_slice_exits_cleanly():
    failures = [r for r in run_cases(SEED, range(CASES)) if r.problems]
    report = "\n".join(f"case {r.index} [{r.how}] msfcnn {' '.join(r.argv)}: {r.problems[0][-2000:]}"
                       for r in failures[:5])
    assert not failures, f"{len(failures)} of {CASES} fuzz cases (seed {SEED}) failed; first ones:\n{report}"
