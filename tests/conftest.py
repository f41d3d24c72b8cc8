import os
import resource
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent

# MSFCNN_TEST_CPU_LOG=FILE appends one line per test phase: CPU seconds of this process and of the
# subprocesses it waited for (user + system), the phase and the test. On a shared machine wall
# times say little; this says what each test costs (docs/testing.md, "What the tiers cost").
CPU_LOG = os.environ.get("MSFCNN_TEST_CPU_LOG")


@pytest.hookimpl(trylast=True)  # after pytest-xdist has chosen its `load` for -n
def pytest_configure(config):
    # Let the tests run from a checkout without installing (CI installs the package anyway).
    # tests/: the shared helpers, imported as `support.*`; scripts/: golden-file and fixture generators.
    for folder in (ROOT / "src", ROOT / "scripts", TESTS):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    # `-n N` without --dist sends each test file to one worker (--dist loadfile), the most tests
    # first. Per test (xdist's `load`), every worker would set up each module- and session-scoped
    # fixture of each file (an interpreter run, a C driver of every fixture, a kernel library): the
    # same CPU spent once per worker.
    if getattr(config.option, "dist", "no") == "load" and not any(
            arg.startswith(("--dist", "-d")) for arg in config.invocation_params.args):
        config.option.dist = "loadfile"


def pytest_collection_modifyitems(config, items):
    # tests/targets/ is the generated C on emulated microcontrollers: cross compilers and QEMU.
    for item in items:
        if TESTS / "targets" in item.path.parents:
            item.add_marker(pytest.mark.qemu)
    _log_cpu("collect", f"{len(items)} tests")


def _cpu_seconds() -> tuple[float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


_last = _cpu_seconds()


def _log_cpu(phase: str, what: str) -> None:
    global _last
    if not CPU_LOG:
        return
    now = _cpu_seconds()
    own, children = now[0] - _last[0], now[1] - _last[1]
    _last = now
    with open(CPU_LOG, "a") as log:  # one short line per write: workers may append at once
        log.write(f"{own + children:.3f}\t{own:.3f}\t{children:.3f}\t{phase}\t{what}\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    _log_cpu("between", item.nodeid)
    yield
    _log_cpu("setup", item.nodeid)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    yield
    _log_cpu("call", item.nodeid)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield
    _log_cpu("teardown", item.nodeid)
