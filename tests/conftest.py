import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"


def pytest_configure(config):
    # Let the tests run from a checkout without installing (CI installs the package anyway).
    for folder in (ROOT / "src", ROOT / "scripts"):  # scripts/: golden-file and fixture generators
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
