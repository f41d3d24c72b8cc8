"""Outputs never destroy what they replace (issue 29): a device, a FIFO or a /proc path is written
as it is, `-o -` is standard output, no folder is written through a symlink leading outside it,
and a compile that is refused, fails (a full disk) or is interrupted leaves its folder as it was."""

import json
import os
import resource
import signal
import stat
import subprocess
import sys
import threading

import numpy as np
import pytest

from support.cli import run_cli
from support.paths import ROOT
import msfcnn.files

MODEL = str(ROOT / "tests" / "fixtures" / "models" / "act_relu_n1_to_1.tflite")


def snapshot(folder):
    """Every entry under `folder` and the folder itself: kind, mode, size, mtime and contents."""
    entries = {}
    for path in [folder, *sorted(folder.rglob("*"))]:
        info = os.lstat(path)
        body = os.readlink(path) if path.is_symlink() else path.read_bytes() if path.is_file() else None
        entries[str(path.relative_to(folder))] = (info.st_mode, info.st_size, info.st_mtime_ns, body)
    return entries


@pytest.fixture
def compiled(tmp_path, capsys):
    """A folder holding an earlier compile of the model, its times set back so any write shows."""
    folder = tmp_path / "out"
    assert run_cli(capsys, "compile", MODEL, "-o", str(folder))[0] == 0
    for path in [folder, *folder.rglob("*")]:
        os.utime(path, ns=(10**18, 10**18), follow_symlinks=False)
    return folder


def a_device_copy(tmp_path, name, major, minor):
    """A copy of /dev/null (1, 3) or /dev/full (1, 7) in tmp_path, or the device itself where this
    user cannot make one (and so cannot replace the real one either)."""
    path = tmp_path / name
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
    except PermissionError:
        return f"/dev/{name}"
    return str(path)


def test_a_device_is_written_not_replaced(tmp_path, capsys):
    null = a_device_copy(tmp_path, "null", 1, 3)
    code, out, err = run_cli(capsys, "plan", MODEL, "-o", null)
    assert code == 0 and err == "" and stat.S_ISCHR(os.stat(null).st_mode)
    full = a_device_copy(tmp_path, "full", 1, 7)
    code, out, err = run_cli(capsys, "plan", MODEL, "-o", full)
    assert code == 2 and err == f"msfcnn: error: cannot write {full}: No space left on device\n"
    assert stat.S_ISCHR(os.stat(full).st_mode)


def test_a_fifo_is_written_not_replaced(tmp_path, capsys):
    fifo = tmp_path / "plan.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    code = run_cli(capsys, "plan", MODEL, "-o", str(fifo))[0]
    reader.join(10)
    assert code == 0 and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert json.loads(received[0])["model"] == "act_relu_n1_to_1"


def test_a_link_to_a_proc_descriptor_is_written_through(tmp_path, capsys):
    read_end, write_end = os.pipe()
    link = tmp_path / "out.json"
    link.symlink_to(f"/proc/self/fd/{write_end}")
    try:
        assert run_cli(capsys, "plan", MODEL, "-o", str(link))[0] == 0
        os.close(write_end)
        written = b"".join(iter(lambda: os.read(read_end, 65536), b""))
    finally:
        os.close(read_end)
    assert link.is_symlink() and json.loads(written)["model"] == "act_relu_n1_to_1"


def test_a_link_to_a_regular_file_keeps_the_link(tmp_path, capsys):
    target, link = tmp_path / "real.json", tmp_path / "link.json"
    target.write_text("old")
    link.symlink_to(target)
    assert run_cli(capsys, "plan", MODEL, "-o", str(link))[0] == 0
    assert link.is_symlink() and json.loads(target.read_text())["model"] == "act_relu_n1_to_1"


def test_dash_is_standard_output(capsysbinary, tmp_path):
    from msfcnn.cli import main
    assert main(["plan", MODEL, "-o", "-"]) == 0
    out, err = capsysbinary.readouterr()
    assert json.loads(out)["model"] == "act_relu_n1_to_1" and b"peak RAM" in err  # the report moves to stderr
    assert main(["run", MODEL, "-o", "-", "--json"]) == 0
    out, err = capsysbinary.readouterr()
    assert np.load(__import__("io").BytesIO(out)).shape == (1, 7, 6, 5) and json.loads(err)["model"]
    assert not (tmp_path / "-").exists() and not os.path.exists("-")


def test_compile_refuses_dash(capsys):
    code, out, err = run_cli(capsys, "compile", MODEL, "-o", "-")
    assert code == 2 and err.count("\n") == 1 and "folder" in err


def test_compile_never_writes_through_a_symlinked_folder_outside(tmp_path, capsys):
    elsewhere, folder = tmp_path / "elsewhere", tmp_path / "out"
    elsewhere.mkdir()
    (elsewhere / "numerics.c").write_text("mine")
    folder.mkdir()
    (folder / "kernels").symlink_to(elsewhere)
    before = snapshot(tmp_path)
    code, out, err = run_cli(capsys, "compile", MODEL, "-o", str(folder))
    assert code == 2 and err == (f"msfcnn: error: {folder}/kernels is a symlink to {elsewhere}, outside {folder}: "
                                 f"refusing to write through it\n")
    assert snapshot(tmp_path) == before


def test_a_symlinked_folder_inside_is_fine(tmp_path, capsys):
    folder = tmp_path / "out"
    (folder / "real_kernels").mkdir(parents=True)
    (folder / "kernels").symlink_to("real_kernels")
    assert run_cli(capsys, "compile", MODEL, "-o", str(folder))[0] == 0
    assert (folder / "real_kernels" / "numerics.c").is_file()


def test_a_refused_compile_writes_nothing(compiled, capsys):
    plan = compiled / "model.h"  # the plan given is a file compile would write
    assert run_cli(capsys, "plan", MODEL, "-o", str(plan))[0] == 0
    os.utime(plan, ns=(10**18, 10**18))
    os.utime(compiled, ns=(10**18, 10**18))
    before = snapshot(compiled)
    code, out, err = run_cli(capsys, "compile", MODEL, "--plan", str(plan), "-o", str(compiled))
    assert code == 2 and err.count("\n") == 1 and "the command's input" in err
    assert snapshot(compiled) == before


def test_a_folder_where_a_file_goes_is_refused(tmp_path, capsys):
    (tmp_path / "out" / "model.c").mkdir(parents=True)
    before = snapshot(tmp_path)
    code, out, err = run_cli(capsys, "compile", MODEL, "-o", str(tmp_path / "out"))
    assert code == 2 and err == f"msfcnn: error: {tmp_path}/out/model.c is a folder: refusing to replace it\n"
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("target", ["outside", "inside", "dangling"])
def test_a_symlinked_file_in_the_folder_is_refused(tmp_path, capsys, target):
    """compile never writes through a symlink in its folder (it may lead outside) nor replaces it:
    one line naming it, exit 2, nothing written (the link's target neither)."""
    folder = tmp_path / "out"
    (folder / "kernels").mkdir(parents=True)
    goal = {"outside": tmp_path / "mine.c", "inside": folder / "notes.c", "dangling": tmp_path / "absent.c"}[target]
    if target != "dangling":
        goal.write_text("mine")
    (folder / "kernels" / "numerics.c").symlink_to(goal)
    before = snapshot(tmp_path)
    code, out, err = run_cli(capsys, "compile", MODEL, "-o", str(folder))
    assert code == 2 and err == (f"msfcnn: error: {folder}/kernels/numerics.c is a symlink (to {goal}): "
                                 "refusing to write through or replace it\n")
    assert snapshot(tmp_path) == before


def compile_with_little_room(folder):
    """compile under a file size limit that the first kernel file larger than 1 kB breaks (EFBIG),
    part-way through the files, as a full disk fails a write (ENOSPC)."""
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))

    return subprocess.run([sys.executable, "-m", "msfcnn", "compile", MODEL, "-o", str(folder)],
                          capture_output=True, text=True, preexec_fn=limit,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src")})


def test_a_compile_on_a_full_disk_leaves_the_folder_as_it_was(compiled):
    before = snapshot(compiled)
    result = compile_with_little_room(compiled)
    assert result.returncode == 2 and result.stderr == f"msfcnn: error: cannot write {compiled}: File too large\n"
    assert snapshot(compiled) == before


def test_a_failed_compile_into_a_new_folder_leaves_none(tmp_path):
    result = compile_with_little_room(tmp_path / "new" / "out")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_an_interrupted_compile_leaves_the_folder_as_it_was(compiled, capsys, monkeypatch):
    before = snapshot(compiled)
    real_stage, calls = msfcnn.files._stage, []

    def interrupted(*args):
        calls.append(1)
        if len(calls) == 20:
            raise KeyboardInterrupt
        return real_stage(*args)

    monkeypatch.setattr(msfcnn.files, "_stage", interrupted)
    code, out, err = run_cli(capsys, "compile", MODEL, "-o", str(compiled))
    assert code == 130 and err == "msfcnn: interrupted\n" and len(calls) == 20
    assert snapshot(compiled) == before
