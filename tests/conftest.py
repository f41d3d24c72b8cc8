import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def pytest_configure(config):
    # Let the tests run from a checkout without installing (CI installs the package anyway).
    # tests/: the shared helpers, imported as `support.*`; scripts/: golden-file and fixture generators.
    for folder in (ROOT / "src", ROOT / "scripts", TESTS):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))


def pytest_collection_modifyitems(config, items):
    # tests/targets/ is the generated C on emulated microcontrollers: cross compilers and QEMU.
    for item in items:
        if TESTS / "targets" in item.path.parents:
            item.add_marker(pytest.mark.qemu)
