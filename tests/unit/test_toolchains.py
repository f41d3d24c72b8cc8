"""support.toolchains: a test whose tools are missing skips, naming the tool and the packages;
with MSFCNN_REQUIRE_TOOLCHAINS=1 (as CI sets it) it fails instead."""

import shutil

import pytest

from msfcnn import targets
from support.toolchains import REQUIRE_ENV, require_target, require_tools

FAKE = targets.Target("fake-mcu", "fake-gcc", "-O2", command=("qemu-fake", "{program}"), nm="fake-nm",
                      packages=("gcc-fake", "qemu-system-fake"))


@pytest.fixture
def installed(monkeypatch):
    """Pretend exactly these executables are on PATH."""
    tools: set[str] = set()
    which = lambda name: f"/usr/bin/{name}" if name in tools else None  # noqa: E731
    monkeypatch.setattr(shutil, "which", which)  # what both msfcnn.targets and support.toolchains look up
    monkeypatch.setitem(targets.TARGETS, FAKE.name, FAKE)
    monkeypatch.delenv(REQUIRE_ENV, raising=False)
    return tools


def test_installed_target_is_returned(installed):
    installed.update({"make", "fake-gcc", "fake-nm", "qemu-fake"})
    assert require_target("fake-mcu") is FAKE


def test_missing_cross_compiler_skips_naming_it_and_the_packages(installed):
    installed.update({"make", "fake-nm", "qemu-fake"})
    with pytest.raises(pytest.skip.Exception, match=r"fake-gcc.*not installed.*apt-get install gcc-fake qemu-system-fake"):
        require_target("fake-mcu")


def test_missing_emulator_skips(installed):
    installed.update({"make", "fake-gcc", "fake-nm"})
    with pytest.raises(pytest.skip.Exception, match="qemu-fake"):
        require_target("fake-mcu")


def test_missing_host_compiler_suggests_the_debian_packages(installed):
    installed.update({"make", "nm"})
    with pytest.raises(pytest.skip.Exception, match=r"\bcc\b.*apt-get install gcc make binutils"):
        require_target("host")


def test_missing_make_skips(installed):
    installed.update({"fake-gcc", "fake-nm", "qemu-fake"})
    with pytest.raises(pytest.skip.Exception, match=r"make not installed \(apt-get install make\)"):
        require_target("fake-mcu")


@pytest.mark.parametrize("value, outcome", [("1", pytest.fail.Exception), ("0", pytest.skip.Exception),
                                            ("", pytest.skip.Exception)])
def test_required_toolchains_turn_the_skip_into_a_failure(installed, monkeypatch, value, outcome):
    monkeypatch.setenv(REQUIRE_ENV, value)
    installed.update({"make"})
    with pytest.raises(outcome, match="fake-gcc"):
        require_target("fake-mcu")
    with pytest.raises(outcome, match=r"gcc not installed \(apt-get install gcc\)"):
        require_tools("gcc", packages=("gcc",))


def test_unknown_target_is_an_error_not_a_skip(installed, monkeypatch):
    monkeypatch.setenv(REQUIRE_ENV, "1")
    with pytest.raises(KeyError, match="no-such-board"):
        require_target("no-such-board")
    monkeypatch.delenv(REQUIRE_ENV)
    with pytest.raises(KeyError, match="no-such-board"):
        require_target("no-such-board")
