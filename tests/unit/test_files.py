"""Output files: written whole or not at all, with the permissions any new file gets (the umask),
or the mode of the file they replace; never over a file the command reads."""

import os
import stat

import pytest

from msfcnn.errors import UserError
from msfcnn.files import write_atomic
from msfcnn.files import guarding_inputs


@pytest.fixture
def umask():
    """Set the process umask for the test; restored afterwards."""
    saved = os.umask(0o022)
    yield lambda mask: os.umask(mask)
    os.umask(saved)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_new_files_honour_the_umask(tmp_path, umask, mask, expected):
    umask(mask)
    write_atomic(tmp_path / "plan.json", "{}\n")
    assert mode(tmp_path / "plan.json") == expected and (tmp_path / "plan.json").read_text() == "{}\n"
    assert [p.name for p in tmp_path.iterdir()] == ["plan.json"]  # no temporary file left behind


@pytest.mark.parametrize("existing", [0o664, 0o600, 0o755])
def test_overwriting_keeps_the_files_mode(tmp_path, umask, existing):
    target = tmp_path / "y.npy"
    target.write_bytes(b"old")
    os.chmod(target, existing)
    write_atomic(target, b"new")
    assert mode(target) == existing and target.read_bytes() == b"new"


def test_missing_folders_are_created(tmp_path, umask):
    write_atomic(tmp_path / "a" / "b" / "plan.json", "{}")
    assert (tmp_path / "a" / "b" / "plan.json").read_text() == "{}"
    assert mode(tmp_path / "a") == 0o755


def test_a_file_where_a_folder_should_be_is_one_error(tmp_path):
    (tmp_path / "a").write_text("")
    with pytest.raises(UserError, match="cannot write"):
        write_atomic(tmp_path / "a" / "plan.json", "{}")


def test_inputs_are_never_overwritten(tmp_path):
    model = tmp_path / "model.json"
    model.write_text("model")
    os.link(model, tmp_path / "alias.json")
    with guarding_inputs([str(model), None, "mbv2-w0.35"]):
        for target in (model, tmp_path / "alias.json", tmp_path / "." / "model.json"):
            with pytest.raises(UserError, match="the command's input"):
                write_atomic(target, "plan")
        write_atomic(tmp_path / "plan.json", "plan")
    assert model.read_text() == "model"
    write_atomic(model, "plan")  # outside the command, nothing is guarded
    assert model.read_text() == "plan"
