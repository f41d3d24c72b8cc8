"""The benchmark scripts' own behaviour (not their timings)."""

import importlib.util
import json
import sys
from pathlib import Path

from support.paths import ROOT


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sweep_speed_writes_its_result_only_when_asked(monkeypatch, tmp_path, capsys):
    """A run prints its table; the committed result file is not rewritten unless --json names a file."""
    sweep_speed = load_script("sweep_speed")
    monkeypatch.setattr(sweep_speed, "timed", lambda command: 0.25)
    written = []
    monkeypatch.setattr(Path, "write_text", lambda self, text, *a, **k: written.append((self, text)))
    monkeypatch.setattr(sys, "argv", ["sweep_speed.py", "--repeats", "1"])
    sweep_speed.main()
    assert written == [] and "full Table 1 sweep (median)" in capsys.readouterr().out
    target = tmp_path / "sweep.json"
    monkeypatch.setattr(sys, "argv", ["sweep_speed.py", "--repeats", "1", "--json", str(target)])
    sweep_speed.main()
    assert [path for path, _ in written] == [target] and json.loads(written[0][1])["sweep_median_s"] == 0.25


def test_tflm_build_takes_the_cmsis_nn_kernels_and_only_the_ones_it_registers(tmp_path):
    """The TFLite Micro file list: sources.inc's kernel list, each file kernels/cmsis_nn/ also has taken
    from there (as OPTIMIZED_KERNEL_DIR=cmsis_nn), kernels no registered op needs left out."""
    tflm = load_script("tflm_whole_model")
    kernels = tmp_path / "tensorflow/lite/micro/kernels"
    (kernels / "cmsis_nn").mkdir(parents=True)
    (tmp_path / "tensorflow/lite/micro/tools/make").mkdir(parents=True)
    names = ["conv.cc", "conv_common.cc", "add.cc", "svdf.cc"]
    (tmp_path / "tensorflow/lite/micro/tools/make/sources.inc").write_text(
        "X := \\\nMICROLITE_CC_KERNEL_SRCS := \\\n"
        + "".join(f"$(TENSORFLOW_ROOT)tensorflow/lite/micro/kernels/{n} \\\n" for n in names) + "\nY := 1\n")
    (kernels / "cmsis_nn" / "conv.cc").write_text("")
    (kernels / "cmsis_nn" / "svdf.cc").write_text("")
    assert [p.relative_to(kernels).as_posix() for p in tflm.kernel_sources(tmp_path)] == [
        "cmsis_nn/conv.cc", "conv_common.cc", "add.cc"]


def test_tflm_harness_counts_invoke_alone():
    """The counted function holds Invoke() and nothing else; the input goes in before it."""
    import numpy as np
    tflm = load_script("tflm_whole_model")
    source = tflm.harness_source(b"\x01\x02", np.array([-3, 4], dtype=np.int8))
    body = source.split("int run_inference(void)")[1].split("}")[0]
    assert "interpreter->Invoke()" in body and "memcpy" not in body
    assert "input_data[] = {-3,4}" in source and source.index("memcpy(input") < source.index("int status = run_inference()")
    # the arena's non-persistent part (tensors, scratch) is printed beside arena_used_bytes()
    assert "MicroInterpreter micro(tflite::GetModel(model_data), resolver, arena_allocator()" in source
    assert "buffers->GetNonPersistentUsedBytes()" in source


def fake_build():
    """What tflm_key reads of a Build: the compiler it asks for its version, the flags, the link flags."""
    from types import SimpleNamespace
    return SimpleNamespace(cxx=sys.executable, common_cxx=["-O2"], target=SimpleNamespace(ldflags="-T picolibc.ld"))


def test_tflm_figures_are_reused_only_while_library_model_and_input_are_unchanged(tmp_path, monkeypatch):
    """A stored row's TFLite Micro figures come back without a QEMU run when its key matches; a
    changed library, model or input changes the key, and the figures are counted again."""
    import numpy as np
    tflm = load_script("tflm_whole_model")
    build, archive, model = fake_build(), tmp_path / "lib.a", tmp_path / "m.tflite"
    archive.write_bytes(b"library")
    model.write_bytes(b"model")
    x = np.array([1, -2], dtype=np.int8)
    key = tflm.tflm_key(build, archive, model, x)
    assert key == tflm.tflm_key(build, archive, model, x)
    assert key != tflm.tflm_key(build, archive, model, np.array([1, -3], dtype=np.int8))
    model.write_bytes(b"model 2")
    assert key != tflm.tflm_key(build, archive, model, x)
    model.write_bytes(b"model")
    archive.write_bytes(b"library 2")
    assert key != tflm.tflm_key(build, archive, model, x)
    archive.write_bytes(b"library")

    runs = []
    monkeypatch.setattr(tflm, "run_tflm", lambda *a: runs.append("run") or (1000, 300, 200, np.array([5.0, -5.0])))
    monkeypatch.setattr(tflm, "tflm_per_op", lambda *a: [("CONV_2D", 990)])
    stored = {"tflm_key": key, "tflm_instructions": 7, "tflm_arena_bytes": 3, "tflm_non_persistent_bytes": 2,
              "tflm_op_instructions": [["ADD", 7]], "tflm_output": [1, 2], "ratio": 0.5}
    assert tflm.tflm_side(build, archive, model, x, tmp_path, stored) == {
        name: stored[name] for name in tflm.TFLM_FIELDS} and runs == []
    counted = tflm.tflm_side(build, archive, model, x, tmp_path, {**stored, "tflm_key": "0" * 16})
    assert runs == ["run"] and counted == {"tflm_key": key, "tflm_instructions": 1000, "tflm_arena_bytes": 300,
                                           "tflm_non_persistent_bytes": 200, "tflm_op_instructions": [["CONV_2D", 990]],
                                           "tflm_output": [5, -5]}


def test_tflm_model_from_an_archive_and_the_half_ram_plan_options(tmp_path):
    """An MLTK .mltk.zip gives its one .tflite member; the RAM goal's plan is capped at half the
    non-persistent arena (rounded down), input and output counted, fastest on the target."""
    import zipfile
    import pytest
    tflm = load_script("tflm_whole_model")
    archive = tmp_path / "kws.mltk.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("kws.h5", b"keras")
        z.writestr("kws.tflite", b"TFL3 model")
    extracted = tflm.model_file("kws", archive, tmp_path / "work")
    assert extracted.name == "kws.tflite" and extracted.read_bytes() == b"TFL3 model"
    assert tflm.model_file("plain", tmp_path / "a.tflite", tmp_path / "work") == tmp_path / "a.tflite"
    with zipfile.ZipFile(archive, "a") as z:
        z.writestr("other.tflite", b"TFL3")
    with pytest.raises(SystemExit, match="holds 2 .tflite files"):
        tflm.model_file("kws", archive, tmp_path / "work")
    assert tflm.half_ram_options(76177) == {"max_ram": 38088, "objective": "min-latency", "count_io": True}


def test_tflm_half_ram_plan_is_none_when_nothing_fits(capsys):
    """A cap below the least RAM reachable gives no plan (a row without it), and says why on stderr."""
    from support.paths import FIXTURES
    tflm = load_script("tflm_whole_model")
    assert tflm.half_ram_side(FIXTURES / "models" / "act_sweep_tanh_0.tflite", "tflm", 2) is None
    assert "no plan has peak RAM <= 1 B" in capsys.readouterr().err
