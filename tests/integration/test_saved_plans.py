"""Saved plans record their model's sha256 and the tool's version (issue 29): `run`, `compile` and
`verify` refuse a --plan made for another model, and warn (or, with --strict, refuse) when the
figures a plan file records disagree with what the plan costs on the model."""

import json
import shutil

import pytest

from support.cli import run_cli
from support.paths import ROOT
from msfcnn import __version__

MODELS = ROOT / "tests" / "fixtures" / "models"
MODEL = str(MODELS / "extra_pool_relu.tflite")
OTHER = str(MODELS / "act_relu_n1_to_1.tflite")


@pytest.fixture
def saved(tmp_path, capsys):
    """A plan of MODEL written by `plan -o`, and its JSON."""
    path = tmp_path / "plan.json"
    assert run_cli(capsys, "plan", MODEL, "--strategy", "vanilla", "-o", str(path))[0] == 0
    return path, json.loads(path.read_text())


def test_a_plan_records_its_models_digest_and_the_version(saved):
    import hashlib
    path, doc = saved
    assert doc["model_sha256"] == hashlib.sha256(open(MODEL, "rb").read()).hexdigest()
    assert doc["msfcnn_version"] == __version__


def test_its_own_plan_runs_without_a_word(saved, capsys):
    code, out, err = run_cli(capsys, "run", MODEL, "--plan", str(saved[0]), "--strict")
    assert code == 0 and err == ""


def test_a_copy_of_the_model_under_another_name_takes_the_plan(saved, tmp_path, capsys):
    copy = tmp_path / "renamed.tflite"
    shutil.copy(MODEL, copy)
    code, out, err = run_cli(capsys, "run", str(copy), "--plan", str(saved[0]), "--strict")
    assert code == 0 and err == ""


@pytest.mark.parametrize("command", [["run"], ["compile", "-o", "{out}"], ["verify"]])
def test_a_plan_for_another_model_is_refused(saved, tmp_path, capsys, command):
    path, doc = saved
    argv = [part.format(out=tmp_path / "out") for part in command]
    code, out, err = run_cli(capsys, argv[0], OTHER, "--plan", str(path), *argv[1:])
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"{path}: made for another model (sha256 {doc['model_sha256'][:12]}...), not this act_relu_n1_to_1" in err
    assert not (tmp_path / "out").exists()


def edited(saved, **changes):
    path, doc = saved
    path.write_text(json.dumps({**doc, **changes}))
    return str(path)


def test_edited_figures_are_a_warning_and_the_real_ones_are_used(saved, capsys):
    """The issue's edit: a peak of 16 B. The arena is the schedule's, and the report says so."""
    real_peak = saved[1]["peak_ram_bytes"]
    plan = edited(saved, peak_ram_bytes=16, macs=1)
    code, out, err = run_cli(capsys, "run", MODEL, "--plan", plan)
    assert code == 0 and err.count("\n") == 1 and err.startswith("msfcnn: warning: ")
    assert (f"{plan}: its recorded figures disagree with what it costs on extra_pool_relu (peak RAM 16 recorded, "
            f"{real_peak} recomputed; MACs 1 recorded, {saved[1]['macs']} recomputed)") in err
    assert f"{real_peak} B" in out


def test_edited_figures_are_refused_with_strict(saved, capsys):
    plan = edited(saved, peak_ram_bytes=16)
    code, out, err = run_cli(capsys, "run", MODEL, "--plan", plan, "--strict")
    assert code == 2 and err.count("\n") == 1 and err.endswith("refusing it (--strict)\n")


def test_edited_block_figures_and_io_counted_are_caught(saved, capsys):
    path, doc = saved
    doc["blocks"][0]["ram_bytes"] += 1
    plan = edited(saved, io_counted=True)
    code, out, err = run_cli(capsys, "run", MODEL, "--plan", plan, "--strict")
    assert code == 2 and "block 0 (0..0) RAM" in err


def test_an_older_plan_without_a_digest_is_checked_by_its_name(saved, capsys):
    path, doc = saved
    del doc["model_sha256"], doc["msfcnn_version"]
    doc["model"] = "something_else"
    plan = edited((path, doc))
    code, out, err = run_cli(capsys, "run", MODEL, "--plan", plan)
    assert code == 0 and "made for model 'something_else'" in err and err.count("\n") == 1


def test_strict_needs_a_plan(capsys):
    code, out, err = run_cli(capsys, "run", MODEL, "--strict")
    assert code == 2 and err == "msfcnn: error: --strict checks a saved plan: it needs --plan\n"
