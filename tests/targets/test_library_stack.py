"""The stack bound's allowance for a call into the C library or libgcc (LIBRARY_CALL_BYTES,
codegen/stack.py), measured: every routine the kernels call on a target is called by a probe of
tests/support/library_probes.c (gcc's call graph of the probes says which), and each probe, run
under QEMU on edge-case values with its stack painted, uses no more than the allowance, its own
frame included."""

import re
import subprocess

import pytest

from msfcnn.codegen.stack import LIBRARY_CALL_BYTES, STACK_FLAGS, library_calls
from support.paths import ROOT
from support.toolchains import require_target

PROBES = ROOT / "tests" / "support" / "library_probes.c"
WINDOW = 2048  # library_probes.c's: a probe that reaches past its painted window prints this
_PROBE_CALL = re.compile(r'^edge: \{ sourcename: "[^"]*:probe_(\w+)" targetname: "([^"]+)"', re.M)


def probe_stacks(target, folder) -> tuple[dict[str, int], dict[str, set[str]]]:
    """(bytes each probe used, the routines each probe calls) on `target`."""
    linked = target.for_board("probes", 256 * 1024 if target.ram_bytes is None else target.ram_bytes, 4096, False)
    program = folder / "probes"
    subprocess.run([target.cc, *target.cflags.split(), *STACK_FLAGS.split(), "-c", "-o", str(folder / "probes.o"),
                    str(PROBES)], cwd=folder, check=True)
    subprocess.run([target.cc, *target.cflags.split(), *linked.ldflags.split(), "-o", str(program),
                    str(folder / "probes.o"), "-lm"], cwd=folder, check=True)
    run = subprocess.run(linked.run_command(str(program), "", ""), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    used = {name: int(size) for name, size in re.findall(r"^probe (\w+) (\d+)$", run.stdout, re.M)}
    calls: dict[str, set[str]] = {}
    for probe, routine in _PROBE_CALL.findall((folder / "probes.ci").read_text()):
        calls.setdefault(probe, set()).add(routine)
    return used, calls


@pytest.mark.parametrize("name", ["cortex-m4", "cortex-m7", "fe310", "esp32c3", "cortex-m0plus"])
def test_every_library_routine_the_kernels_call_fits_the_allowance(name, tmp_path):
    target = require_target(name)
    used, calls = probe_stacks(target, tmp_path)
    assert len(used) == len(re.findall(r'\{"\w+", probe_\w+\}', PROBES.read_text())), used  # every probe ran
    assert all(n < WINDOW for n in used.values()) and max(used.values()) > 0, used
    probed = set().union(*calls.values())
    assert library_calls(target) <= probed, library_calls(target) - probed
    heaviest = {routine: max(used[p] for p, routines in calls.items() if routine in routines) for routine in probed}
    assert max(heaviest.values()) <= LIBRARY_CALL_BYTES, heaviest


if __name__ == "__main__":  # the figures, for docs/cli.md
    import sys
    import tempfile
    from pathlib import Path
    for name in sys.argv[1:]:
        with tempfile.TemporaryDirectory() as scratch:
            used, calls = probe_stacks(require_target(name), Path(scratch))
        print(name, {p: (used[p], sorted(calls.get(p, ()))) for p in used})
