"""Whole models on the Cortex-M4: msfcnn's vanilla plans against TFLite Micro + CMSIS-NN built from
source, instructions counted the same way on the same QEMU board (mps2-an386).

TFLite Micro and CMSIS-NN are not part of msfcnn. This script builds them from public sources: a
tflite-micro checkout (issue 27 measured 90b983c), a CMSIS-NN checkout (4ab83cc) and what TFLite
Micro's Makefile downloads for its library (flatbuffers v25.9.23 with TFLite Micro's patch, gemmlowp
719139c, ruy d371283). Pass local checkouts, or let it clone them at those commits (--clone).

What is compiled is the list TFLite Micro's Makefile builds into libtensorflow-microlite.a:
tensorflow/lite/micro/*.cc and its arena_allocator/, memory_planner/ and tflite_bridge/ folders
without the tests, the shared TFLite sources, and MICROLITE_CC_KERNEL_SRCS of its sources.inc with
each file that kernels/cmsis_nn/ also has taken from there (as OPTIMIZED_KERNEL_DIR=cmsis_nn does),
plus CMSIS-NN's int8/int16 sources. Flags: the cortex-m4 target's (-mcpu=cortex-m4 -mthumb
-mfloat-abi=hard -mfpu=fpv4-sp-d16, picolibc) at -O2 for every file, with TFLite Micro's own
defines (-DTF_LITE_STATIC_MEMORY -DCMSIS_NN -DKERNELS_OPTIMIZED_FOR_SPEED ...) and -DNDEBUG (its
release_with_logs build: no debug checks). C++ needs picolibc's C++ headers (Debian's
libstdc++-arm-none-eabi-picolibc).

Per model a small harness embeds the .tflite, registers the builtin kernels with a
MicroMutableOpResolver, allocates the tensors and copies msfcnn's seeded random input into the
input tensor; then one call of run_inference(), which holds interpreter.Invoke() and nothing else,
is counted (codegen/icount.py's QEMU plugin, from run_inference's entry to its return). Setup, the
input copy and the read of the output are outside the count. msfcnn's side is `msfcnn verify
MODEL --strategy vanilla --target cortex-m4 --instructions`, counted from msfcnn_invoke's entry to
its return: that count includes msfcnn's copy of the input into the arena. Both outputs are
compared with msfcnn's numpy executor under `--numerics tflm` (TFLite Micro's must match it bit
for bit). The arena is TFLite Micro's arena_used_bytes() after AllocateTensors().

    python benchmarks/tflm_whole_model.py --tflite-micro DIR --cmsis-nn DIR --flatbuffers DIR \\
        --gemmlowp DIR --ruy DIR [--model NAME=PATH ...] [--json OUT.json]
    python benchmarks/tflm_whole_model.py --clone   # clones the five repositories at the pinned commits
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from msfcnn import api  # noqa: E402
from msfcnn.codegen import icount  # noqa: E402
from msfcnn.executor import to_internal  # noqa: E402
from msfcnn.pipeline import load  # noqa: E402
from msfcnn.targets import STRICT, get_target  # noqa: E402
from msfcnn.tensors import random_input  # noqa: E402

# (repository, commit) of each source tree, as TFLite Micro 90b983c's Makefile pins its downloads.
PINNED = {
    "tflite-micro": ("https://github.com/tensorflow/tflite-micro", "90b983c2b"),
    "cmsis-nn": ("https://github.com/ARM-software/CMSIS-NN", "4ab83cc3"),
    "flatbuffers": ("https://github.com/google/flatbuffers", "v25.9.23"),
    "gemmlowp": ("https://github.com/google/gemmlowp", "719139ce755a0f31cbf1c37f7f98adcc7fc9f425"),
    "ruy": ("https://github.com/google/ruy", "d37128311b445e758136b8602d1bbd2a755e115d"),
}

# The six trained models of issue 27, as path inside a checkout: (source tree, path). The MLTK
# keyword MobileNetV2 and MCUNet's VWW net are not in a repository this script clones (MLTK's and
# MCUNet's model zoos serve them from their own servers): pass them with --model NAME=PATH.
MODELS = {
    "mlperf-resnet8": ("mlperf-tiny", "benchmark/training/image_classification/trained_models/pretrainedResnet_quant.tflite"),
    "mlperf-dscnn": ("mlperf-tiny", "benchmark/training/keyword_spotting/trained_models/kws_ref_model.tflite"),
    "mlperf-vww": ("mlperf-tiny", "benchmark/training/visual_wake_words/trained_models/vww_96_int8.tflite"),
    "tflm-person-detect": ("tflite-micro", "tensorflow/lite/micro/models/person_detect.tflite"),
}
MLPERF_TINY = ("https://github.com/mlcommons/tiny", None)

# TFLite Micro's compile flags (its Makefile's COMMON_FLAGS, CXXFLAGS and the cortex_m_generic
# target's defines) beside the cortex-m4 target's architecture flags and -O2.
TFLM_DEFINES = ["-DTF_LITE_STATIC_MEMORY", "-DTF_LITE_DISABLE_X86_NEON", "-DTF_LITE_MCU_DEBUG_LOG", "-DCMSIS_NN",
                "-DKERNELS_OPTIMIZED_FOR_SPEED", "-DARM_NN_ENABLE_F16=0", "-DARM_NN_ENABLE_F32=0", "-DNDEBUG",
                "-fno-unwind-tables", "-fno-asynchronous-unwind-tables", "-ffunction-sections", "-fdata-sections"]
CXX_ONLY = ["-std=c++17", "-fno-rtti", "-fno-exceptions", "-fno-threadsafe-statics"]
C_ONLY = ["-std=c17"]
ARENA_BYTES = 1024 * 1024  # the harness's arena; arena_used_bytes() reports what a model needs

# Every builtin a model of the table uses, and the few a converter adds around them.
RESOLVER_OPS = ["AddAdd", "AddAveragePool2D", "AddConcatenation", "AddConv2D", "AddDepthwiseConv2D",
                "AddDequantize", "AddFullyConnected", "AddHardSwish", "AddLogistic", "AddMaxPool2D", "AddMean",
                "AddMul", "AddPad", "AddQuantize", "AddRelu", "AddRelu6", "AddReshape", "AddSoftmax",
                "AddTranspose"]  # (MCUNet's VWW net: a TRANSPOSE before its MEAN)

# The kernel files those ops need (sources.inc's names without .cc and _common)
KERNEL_FILES = {"activations", "add", "concatenation", "conv", "depthwise_conv", "dequantize", "fully_connected",
                "hard_swish", "kernel_util", "logistic", "micro_tensor_utils", "mul", "pad", "pooling", "quantize",
                "reduce", "reshape", "softmax", "transpose"}


def clone(name: str, url: str, commit: str | None, into: Path) -> Path:
    folder = into / name
    if not folder.exists():
        subprocess.run(["git", "clone", "--quiet", url, str(folder)], check=True)
        if commit:
            subprocess.run(["git", "-C", str(folder), "checkout", "--quiet", commit], check=True)
    return folder


def kernel_sources(tflm: Path) -> list[Path]:
    """MICROLITE_CC_KERNEL_SRCS of TFLite Micro's sources.inc, each file kernels/cmsis_nn/ also has
    taken from there (its specialize_files.py); of them only the files of RESOLVER_OPS' kernels and
    their shared helpers (the linker would drop the others)."""
    text = (tflm / "tensorflow/lite/micro/tools/make/sources.inc").read_text()
    block = text.split("MICROLITE_CC_KERNEL_SRCS := \\\n", 1)[1].split("\n\n", 1)[0]
    names = [n for n in re.findall(r"\$\(TENSORFLOW_ROOT\)(\S+\.cc)", block)
             if Path(n).stem.removesuffix("_common") in KERNEL_FILES]
    cmsis = tflm / "tensorflow/lite/micro/kernels/cmsis_nn"
    return [cmsis / Path(n).name if (cmsis / Path(n).name).exists() else tflm / n for n in names]


def core_sources(tflm: Path) -> list[Path]:
    """MICROLITE_CC_BASE_SRCS without the tests: the interpreter, its allocators and planners, and the
    shared TFLite sources (tensorflow/ outside lite/micro and lite/experimental, without array.cc)."""
    micro = tflm / "tensorflow/lite/micro"
    found = [p for folder in (micro, micro / "arena_allocator", micro / "memory_planner", micro / "tflite_bridge")
             for p in sorted(folder.glob("*.cc")) if not p.name.endswith("_test.cc")]
    for path in sorted((tflm / "tensorflow").rglob("*.c*")):
        relative = path.relative_to(tflm).as_posix()
        if path.suffix in (".cc", ".c") and not relative.startswith(("tensorflow/lite/micro/",
                                                                    "tensorflow/lite/experimental/")) \
                and relative != "tensorflow/lite/array.cc":
            found.append(path)
    return found


def cmsis_sources(cmsis: Path) -> list[Path]:
    return sorted(p for p in (cmsis / "Source").rglob("*.c") if not p.name.endswith(("_f16.c", "_f32.c")))


def prepared_flatbuffers(flatbuffers: Path, tflm: Path, work: Path) -> Path:
    """flatbuffers' headers with TFLite Micro's patch applied (its Makefile's download step)."""
    folder = work / "flatbuffers"
    if not (folder / "include").exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cp", "-r", str(flatbuffers / "include"), str(folder / "include")], check=True)
        patch = tflm / "tensorflow/lite/micro/tools/make/flatbuffers.patch"
        subprocess.run(["patch", "-s", "-p1", "-d", str(folder), "-i", str(patch)], check=True)
    return folder


class Build:
    """TFLite Micro + CMSIS-NN compiled once into a static library, then one harness per model."""

    def __init__(self, trees: dict[str, Path], work: Path, target):
        self.trees, self.work, self.target = trees, work, target
        arch = shlex.split(target.cflags.replace(STRICT, ""))
        self.common = ["-O2", *arch, *TFLM_DEFINES]
        # C++ needs picolibc's C++ specs (Debian's libstdc++-arm-none-eabi-picolibc)
        self.common_cxx = [flag.replace("picolibc.specs", "picolibcpp.specs") for flag in self.common]
        flatbuffers = prepared_flatbuffers(trees["flatbuffers"], trees["tflite-micro"], work)
        self.includes = [f"-I{trees['tflite-micro']}", f"-I{trees['cmsis-nn']}", f"-I{trees['cmsis-nn'] / 'Include'}",
                         f"-I{trees['gemmlowp']}", f"-I{flatbuffers / 'include'}", f"-I{trees['ruy']}"]
        self.cxx = target.cc.replace("gcc", "g++")

    def _compile(self, source: Path) -> Path:
        flags = [*self.common_cxx, *CXX_ONLY] if source.suffix == ".cc" else [*self.common, *C_ONLY]
        flags += self.includes
        key = hashlib.sha256((str(source) + " ".join(flags)).encode()).hexdigest()[:12]
        obj = self.work / "obj" / f"{source.stem}-{key}.o"
        if not obj.exists():
            compiler = self.cxx if source.suffix == ".cc" else self.target.cc
            done = subprocess.run([compiler, *flags, "-c", str(source), "-o", str(obj) + ".tmp"],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"{source} did not compile:\n{done.stderr[-3000:]}")
            os.replace(str(obj) + ".tmp", obj)
        return obj

    def library(self, jobs: int) -> Path:
        tflm = self.trees["tflite-micro"]
        sources = [*core_sources(tflm), *kernel_sources(tflm), *cmsis_sources(self.trees["cmsis-nn"])]
        (self.work / "obj").mkdir(parents=True, exist_ok=True)
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            objects = list(pool.map(self._compile, sources))
        archive = self.work / "libtflm_cmsis_nn.a"
        archive.unlink(missing_ok=True)
        subprocess.run([self.target.cc.replace("gcc", "ar"), "rcs", str(archive), *map(str, objects)], check=True)
        return archive

    def harness(self, model: Path, x: np.ndarray, folder: Path, archive: Path, per_op: bool = False) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "harness.cc").write_text(harness_source(model.read_bytes(), x))
        program = folder / ("tflm_per_op.elf" if per_op else "tflm.elf")
        flags = [*self.common_cxx, *CXX_ONLY, *self.includes, *(["-DPER_OP"] if per_op else [])]
        # picolibc's C++ linker script keeps what crtbegin.o refers to
        ldflags = self.target.ldflags.replace("picolibc.ld", "picolibcpp.ld").split()
        linked = subprocess.run([self.cxx, *flags, *ldflags, "-Wl,--gc-sections", "-o", str(program),
                                 str(folder / "harness.cc"), str(archive), "-lm"], capture_output=True, text=True)
        if linked.returncode != 0:
            raise SystemExit(f"the TFLite Micro harness for {model} did not link:\n{linked.stderr[-3000:]}")
        return program


def _bytes(values) -> str:
    return ",".join(str(int(v)) for v in values)


def harness_source(model: bytes, x: np.ndarray) -> str:
    """The harness of one model; `x` is its input as the model takes it: int8, or float32 (a model
    that quantizes a float input itself, as MCUNet's VWW net)."""
    adds = "".join(f"    resolver.{op}();\n" for op in RESOLVER_OPS)
    floats = x.dtype == np.float32
    input_type = "float" if floats else "signed char"
    values = ",".join(f"{float(v)!r}f" for v in x.reshape(-1)) if floats else _bytes(x.astype(np.int8).reshape(-1))
    return f"""#include <stdio.h>
#include <string.h>
#include "tensorflow/lite/micro/micro_interpreter.h"
#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"
#include "tensorflow/lite/schema/schema_generated.h"

alignas(16) static const unsigned char model_data[] = {{{_bytes(model)}}};
static const {input_type} input_data[] = {{{values}}};
alignas(16) static unsigned char arena[{ARENA_BYTES}];
static tflite::MicroInterpreter *interpreter;

#ifdef PER_OP
/* Per-op mode: the interpreter's profiler hook calls op_mark() before and after each op's invoke,
   whose entry the counter marks; the tags are printed after the run. */
extern "C" __attribute__((noinline)) void op_mark(void) {{ __asm__ volatile(""); }}
static const char *tags[1024];
static unsigned n_tags;
class Marks : public tflite::MicroProfilerInterface {{
public:
    uint32_t BeginEvent(const char *tag) override {{ op_mark(); if (n_tags < 1024) tags[n_tags++] = tag; return 0; }}
    void EndEvent(uint32_t) override {{ op_mark(); }}
}};
static Marks marks;
#define PROFILER , nullptr, &marks
#else
#define PROFILER
#endif

/* Invoke() and nothing else: the count is one call of this function. */
extern "C" __attribute__((noinline)) int run_inference(void)
{{
    return interpreter->Invoke() == kTfLiteOk ? 0 : 1;
}}

int main(void)
{{
    static tflite::MicroMutableOpResolver<{len(RESOLVER_OPS)}> resolver;
{adds}    static tflite::MicroInterpreter micro(tflite::GetModel(model_data), resolver, arena, sizeof arena PROFILER);
    interpreter = &micro;
    if (micro.AllocateTensors() != kTfLiteOk) {{ printf("allocate failed\\n"); return 2; }}
    TfLiteTensor *input = micro.input(0);
    if (input->bytes != sizeof input_data) {{ printf("input is %u bytes\\n", (unsigned)input->bytes); return 3; }}
    memcpy(input->data.raw, input_data, sizeof input_data);
    int status = run_inference();
    TfLiteTensor *output = micro.output(0);
    printf("arena %u\\noutput", (unsigned)micro.arena_used_bytes());
    if (output->type == kTfLiteFloat32)
        for (size_t k = 0; k < output->bytes / 4; k++) printf(" %.9g", (double)output->data.f[k]);
    else
        for (size_t k = 0; k < output->bytes; k++) printf(" %d", output->data.int8[k]);
    printf("\\n");
#ifdef PER_OP
    for (unsigned k = 0; k < n_tags; k++) printf("op %s\\n", tags[k]);
#endif
    return status;
}}
"""


def run_tflm(build: Build, archive: Path, model: Path, x: np.ndarray, folder: Path) -> tuple[int, int, np.ndarray]:
    """(instructions of one Invoke, arena_used_bytes, output) of TFLite Micro on the model."""
    program = build.harness(model, x, folder, archive)
    count = icount.measure(program, build.target, folder / "none.bin", folder / "none.out",
                           function="run_inference").total
    command = build.target.run_command(str(program), str(folder / "none.bin"), str(folder / "none.out"))
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"TFLite Micro failed on {model}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    printed = done.stdout + done.stderr  # QEMU's semihosting console writes to stderr when stdout is no terminal
    arena = int(re.search(r"arena (\d+)", printed).group(1))
    output = np.array(re.search(r"output([ \-\d.e+]*)", printed).group(1).split(), dtype=float)
    return count, arena, output


def tflm_per_op(build: Build, archive: Path, model: Path, x: np.ndarray, folder: Path) -> list[tuple[str, int]]:
    """(op name, instructions) of each op's invoke call, from the profiler hook's marks: a separate
    build, so that the hook does not touch the whole count."""
    program = build.harness(model, x, folder, archive, per_op=True)
    symbols = subprocess.run([build.target.nm, str(program)], capture_output=True, text=True, check=True).stdout
    address = int(re.search(r"^([0-9a-f]+) T op_mark$", symbols, re.M).group(1), 16) & ~1
    events = folder / "events.txt"
    command = build.target.run_command(str(program), str(folder / "none.bin"), str(folder / "none.out"))
    done = subprocess.run([*command, "-plugin", f"file={icount.plugin_path()},out={events},mark={address:#x}"],
                          capture_output=True, text=True, timeout=600)
    counts = [int(line.split()[1]) for line in events.read_text().splitlines() if line and line.split()[0] == "0"]
    names = re.findall(r"^op (\S+)$", done.stdout + done.stderr, re.M)
    return [(name, end - begin) for name, begin, end in zip(names, counts[0::2], counts[1::2])]


def model_input(graph, x: np.ndarray) -> np.ndarray:
    """msfcnn's int8 input as the model takes it: the same int8 values, or for a float input (the
    model quantizes it) the floats (q - zero point) * scale, which its QUANTIZE turns back into q."""
    values = to_internal(graph, x).reshape(-1)
    if not graph.float_input:
        return values
    scale, zero_point = graph.input_quant.scale, graph.input_quant.zero_point
    return ((values.astype(np.float32) - np.float32(zero_point)) * np.float32(scale)).astype(np.float32)


def msfcnn_side(path: Path, numerics: str) -> dict:
    """`verify --strategy vanilla --target cortex-m4 --instructions` under the numerics."""
    result = api.verify(str(path), strategy="vanilla", target="cortex-m4", instructions=True, numerics=numerics)
    if not result.passed:
        raise SystemExit(f"msfcnn's C is not bit-exact on {path} under {numerics}")
    return {"instructions": result.instructions, "block_instructions": list(result.block_instructions or ())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in PINNED:
        parser.add_argument(f"--{name}", type=Path, help=f"a checkout of {PINNED[name][0]} at {PINNED[name][1]}")
    parser.add_argument("--mlperf-tiny", type=Path, help=f"a checkout of {MLPERF_TINY[0]} (its trained models)")
    parser.add_argument("--clone", action="store_true", help="clone what is not given at the pinned commits")
    parser.add_argument("--model", action="append", default=[], metavar="NAME=PATH",
                        help="a model to add (the MLTK keyword MobileNetV2, MCUNet's VWW net)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="run only these models")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "msfcnn-tflm-build",
                        help="build folder, kept between runs (objects are cached)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results" / "tflm_whole_model.json")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    trees = {}
    for name, (url, commit) in {**PINNED, "mlperf-tiny": MLPERF_TINY}.items():
        given = getattr(args, name.replace("-", "_"))
        if given is None and not args.clone:
            parser.exit(2, f"tflm_whole_model: give --{name} DIR or --clone\n")
        trees[name] = given.resolve() if given is not None else clone(name, url, commit, args.work / "src")
    models = {name: trees[tree] / path for name, (tree, path) in MODELS.items()}
    for entry in args.model:
        name, _, path = entry.partition("=")
        models[name] = Path(path).resolve()
    if args.only:
        models = {name: path for name, path in models.items() if name in args.only}
    target = get_target("cortex-m4")
    build = Build(trees, args.work, target)
    archive = build.library(args.jobs)
    rows = []
    print(f"{'model':20s} {'TFLM':>11s} {'msfcnn':>11s} {'ratio':>6s} {'msf tflm':>11s} {'ratio':>6s} {'arena':>8s}")
    for name, path in models.items():
        graph = load(str(path), numerics="tflm")
        x = random_input(graph, 0)
        expected = np.asarray(api.run(str(path), x, strategy="vanilla", numerics="tflm").outputs[0]).reshape(-1)
        given = model_input(graph, x[0])
        theirs, arena, output = run_tflm(build, archive, path, given, args.work / "models" / name)
        per_op = tflm_per_op(build, archive, path, given, args.work / "models" / name)
        ours = {numerics: msfcnn_side(path, numerics) for numerics in ("litert", "tflm")}
        row = {"model": name, "file": path.name, "tflm_instructions": theirs, "tflm_arena_bytes": arena,
               "tflm_op_instructions": [[op, n] for op, n in per_op],
               "tflm_output_bit_exact": bool(np.array_equal(output.astype(expected.dtype), expected)),
               "msfcnn_instructions": ours["litert"]["instructions"],
               "msfcnn_tflm_instructions": ours["tflm"]["instructions"],
               "ratio": round(ours["litert"]["instructions"] / theirs, 3),
               "ratio_tflm": round(ours["tflm"]["instructions"] / theirs, 3),
               "msfcnn_block_instructions": ours["litert"]["block_instructions"],
               "msfcnn_tflm_block_instructions": ours["tflm"]["block_instructions"]}
        rows.append(row)
        print(f"{name:20s} {theirs:11,d} {row['msfcnn_instructions']:11,d} {row['ratio']:6.3f} "
              f"{row['msfcnn_tflm_instructions']:11,d} {row['ratio_tflm']:6.3f} {arena:8,d}"
              f"{'' if row['tflm_output_bit_exact'] else '  (TFLM output differs from msfcnn tflm numerics)'}",
              flush=True)
    args.json.write_text(json.dumps({"target": target.name, "method": __doc__.split("\n\n")[3].replace("\n", " "),
                                     "sources": {name: PINNED.get(name, MLPERF_TINY)[1] for name in trees},
                                     "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
