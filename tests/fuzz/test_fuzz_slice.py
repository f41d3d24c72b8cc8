"""The deterministic slices of the fuzz harness that run with the test suite (issues 16 and 29): a
few hundred mutated models, layer lists, plan files and .npy inputs through plan / run / compile /
pareto / sweep, each one a clean exit (0, or 2 with one line on stderr) within the time limit and
no half-written output; and a slow slice that also compiles C (fit, and verify on host and on
host-sanitize, where undefined behaviour fails the run). The long run: `python -m tests.fuzz
--cases 10000`."""

import pytest

from fuzz.harness import run_cases

pytest.importorskip("onnx")

SEED = 16  # the number; any fixed seed will do
# Cases without builds: the first FAST_CASES in the fast tier (about 2 s of CPU), the rest of the
# CASES in the slow tier, so the whole suite runs all of them.
CASES = 320
FAST_CASES = 20
BUILD_CASES = 120


def check_slice(cases: range, builds: bool) -> None:
    failures = [r for r in run_cases(SEED, cases, builds=builds) if r.problems]
    report = "\n".join(f"case {r.index} [{r.how}] msfcnn {' '.join(r.argv)}: {r.problems[0][-2000:]}"
                       for r in failures[:5])
    assert not failures, f"{len(failures)} of {len(cases)} fuzz cases (seed {SEED}) failed; first ones:\n{report}"


def test_fuzz_slice_exits_cleanly():
    check_slice(range(FAST_CASES), builds=False)


@pytest.mark.slow
def test_rest_of_the_fuzz_slice_exits_cleanly():
    check_slice(range(FAST_CASES, CASES), builds=False)


@pytest.mark.slow
def test_fuzz_slice_with_builds_exits_cleanly():
    """Every command, fit and verify too (a tenth of the cases): about a minute on one idle core."""
    check_slice(range(BUILD_CASES), builds=True)
