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
