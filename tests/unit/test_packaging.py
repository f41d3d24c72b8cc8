"""`pip install -e '.[test]'` brings everything the tests import (issue 28: scipy, which the latency
calibration imports, came with no extra, so the fast tier failed in a fresh venv).

Every module imported by the package, by the tests and by the scripts the tests import (module-level
and function-level imports alike) must be the standard library's, the repository's own, or come
from a distribution named in pyproject.toml's `dependencies` or `[test]` extra.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = [ROOT / "src", ROOT / "tests"]
# Folders of scripts that a test may import (tests/conftest.py puts them on sys.path)
SCRIPT_FOLDERS = [ROOT / "scripts", ROOT / "fixtures", ROOT / "benchmarks"]


def imported_modules(path: Path) -> set[str]:
    """The top-level names of the absolute imports in one file."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def local_modules() -> dict[str, Path | None]:
    """The repository's own top-level modules: a script (its file, to follow its imports) or a
    package or test-support folder (None: its files are scanned anyway)."""
    local: dict[str, Path | None] = {"msfcnn": None, "tests": None}
    for folder in SCRIPT_FOLDERS:
        local.update({p.stem: p for p in folder.glob("*.py")})
    local.update({p.name: None for p in (ROOT / "tests").iterdir() if p.is_dir()})
    local.update({p.stem: None for p in (ROOT / "tests").glob("*.py")})
    local.update({p.stem: None for p in (ROOT / "tests").rglob("test_*.py")})  # a test importing another's helpers
    return local


@functools.cache  # about a second of parsing, shared by both tests
def third_party_imports() -> dict[str, Path]:
    """Each imported module that is neither standard nor the repository's, with a file importing it."""
    local = local_modules()
    files = [p for folder in SCANNED for p in sorted(folder.rglob("*.py"))]
    seen, found = set(files), {}
    while files:
        path = files.pop()
        for name in imported_modules(path):
            if name in sys.stdlib_module_names or name == "__future__":
                continue
            if name not in local:
                found.setdefault(name, path)
            elif local[name] is not None and local[name] not in seen:  # a script a test imports
                seen.add(local[name])
                files.append(local[name])
    return found


def normalise(distribution: str) -> str:
    return re.sub(r"[-_.]+", "-", distribution).lower()


def declared_distributions(pyproject: dict) -> set[str]:
    requirements = pyproject["project"]["dependencies"] + pyproject["project"]["optional-dependencies"]["test"]
    return {normalise(re.match(r"[A-Za-z0-9._-]+", r).group()) for r in requirements}


def undeclared(imports: dict[str, Path], declared: set[str]) -> list[str]:
    """The imports no declared distribution provides, each with a file that makes it."""
    providers = importlib.metadata.packages_distributions()
    return [f"{name} (imported by {path.relative_to(ROOT)}; installed from {providers.get(name)})"
            for name, path in sorted(imports.items())
            if not {normalise(d) for d in providers.get(name, [])} & declared]


@pytest.mark.slow  # fast-tier budget: about 2 to 3 s of CPU
def test_the_test_extra_installs_everything_the_tests_import():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert undeclared(third_party_imports(), declared_distributions(pyproject)) == []


def test_the_check_sees_an_import_no_extra_installs():
    imports = third_party_imports()
    assert {"scipy", "onnxruntime", "tflite_micro", "numpy"} <= set(imports)  # function-level ones too
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    test_extra = pyproject["project"]["optional-dependencies"]["test"]
    pyproject["project"]["optional-dependencies"]["test"] = [r for r in test_extra if not r.startswith("scipy")]
    assert [line.split()[0] for line in undeclared(imports, declared_distributions(pyproject))] == ["scipy"]
