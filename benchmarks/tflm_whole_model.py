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
for bit). The arena is TFLite Micro's arena_used_bytes() after AllocateTensors(), and of it the
non-persistent part: the head of its buffer allocator, where the memory planner places every
tensor (the input and output included) and the kernels' scratch buffers. The persistent rest holds
the interpreter's structures and each op's data, such as per-channel multipliers (msfcnn keeps
those in flash).

The RAM goal's plan, per model and numerics: `msfcnn verify MODEL --objective min-latency --max-ram
N --count-io --target cortex-m4 --instructions`, N half of TFLite Micro's non-persistent arena.
`--count-io` puts the input and output in msfcnn's arena too, as TFLite Micro's holds them; its
arena is the one built into the program. Its instructions are counted as the vanilla plan's.

TFLite Micro's figures are stored in the JSON with a key: a digest of the built library, the
harness (model and input), the compiler and the flags. A later run reuses them while the key
holds, so it counts on QEMU only msfcnn's side (--only NAME runs one model and keeps the others').

    python benchmarks/tflm_whole_model.py --tflite-micro DIR --cmsis-nn DIR --flatbuffers DIR \\
        --gemmlowp DIR --ruy DIR --mlperf-tiny DIR --mltk DIR [--model NAME=PATH ...] [--json OUT.json]
    python benchmarks/tflm_whole_model.py --clone   # clones the repositories at the pinned commits
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
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from msfcnn import api  # noqa: E402
from msfcnn.codegen import icount  # noqa: E402
from msfcnn.errors import UserError  # noqa: E402
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

# The trained models of issue 27, as path inside a checkout: (source tree, path). A path to a .zip is
# an archive whose one .tflite member is the model (MLTK's .mltk.zip holds the trained .tflite beside
# the Keras model and its evaluation). MCUNet's VWW net is not in a repository this script clones
# (TinyEngine's assets/vww.tflite is): pass it with --model NAME=PATH.
MODELS = {
    "mlperf-resnet8": ("mlperf-tiny", "benchmark/training/image_classification/trained_models/pretrainedResnet_quant.tflite"),
    "mlperf-dscnn": ("mlperf-tiny", "benchmark/training/keyword_spotting/trained_models/kws_ref_model.tflite"),
    "mlperf-vww": ("mlperf-tiny", "benchmark/training/visual_wake_words/trained_models/vww_96_int8.tflite"),
    "tflm-person-detect": ("tflite-micro", "tensorflow/lite/micro/models/person_detect.tflite"),
    "mltk-kws-mobilenetv2": ("mltk", "mltk/models/siliconlabs/keyword_spotting_mobilenetv2.mltk.zip"),
}
# The checkouts that only hold models: (repository, commit), None for the default branch.
MODEL_TREES = {"mlperf-tiny": ("https://github.com/mlcommons/tiny", None),
               "mltk": ("https://github.com/SiliconLabs/mltk", "a071446ed509116a36afcdc4a7629e989253f262")}

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
#include <new>
#include "tensorflow/lite/micro/arena_allocator/single_arena_buffer_allocator.h"
#include "tensorflow/lite/micro/memory_helpers.h"
#include "tensorflow/lite/micro/micro_arena_constants.h"
#include "tensorflow/lite/micro/memory_planner/greedy_memory_planner.h"
#include "tensorflow/lite/micro/micro_allocator.h"
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

/* The arena set up as MicroAllocator::Create(arena, size) sets it up (aligned, its buffer
   allocator and greedy planner in the arena), but keeping the buffer allocator, whose head
   (non-persistent: tensors and scratch buffers) and tail (persistent) the harness prints. */
static tflite::SingleArenaBufferAllocator *buffers;

static tflite::MicroAllocator *arena_allocator(void)
{{
    uint8_t *aligned = tflite::AlignPointerUp(arena, tflite::MicroArenaBufferAlignment());
    buffers = tflite::SingleArenaBufferAllocator::Create(aligned, arena + sizeof arena - aligned);
    void *planner = buffers->AllocatePersistentBuffer(sizeof(tflite::GreedyMemoryPlanner),
                                                      alignof(tflite::GreedyMemoryPlanner));
    return tflite::MicroAllocator::Create(buffers, new (planner) tflite::GreedyMemoryPlanner());
}}

int main(void)
{{
    static tflite::MicroMutableOpResolver<{len(RESOLVER_OPS)}> resolver;
{adds}    static tflite::MicroInterpreter micro(tflite::GetModel(model_data), resolver, arena_allocator() PROFILER);
    interpreter = &micro;
    if (micro.AllocateTensors() != kTfLiteOk) {{ printf("allocate failed\\n"); return 2; }}
    TfLiteTensor *input = micro.input(0);
    if (input->bytes != sizeof input_data) {{ printf("input is %u bytes\\n", (unsigned)input->bytes); return 3; }}
    memcpy(input->data.raw, input_data, sizeof input_data);
    int status = run_inference();
    TfLiteTensor *output = micro.output(0);
    printf("arena %u\\nnon-persistent %u\\noutput", (unsigned)micro.arena_used_bytes(),
           (unsigned)buffers->GetNonPersistentUsedBytes());
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


def run_tflm(build: Build, archive: Path, model: Path, x: np.ndarray, folder: Path) -> tuple[int, int, int, np.ndarray]:
    """(instructions of one Invoke, arena_used_bytes, its non-persistent part, output) of TFLite
    Micro on the model."""
    program = build.harness(model, x, folder, archive)
    count = icount.measure(program, build.target, folder / "none.bin", folder / "none.out",
                           function="run_inference").total
    command = build.target.run_command(str(program), str(folder / "none.bin"), str(folder / "none.out"))
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"TFLite Micro failed on {model}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    printed = done.stdout + done.stderr  # QEMU's semihosting console writes to stderr when stdout is no terminal
    arena = int(re.search(r"arena (\d+)", printed).group(1))
    non_persistent = int(re.search(r"non-persistent (\d+)", printed).group(1))
    output = np.array(re.search(r"output([ \-\d.e+]*)", printed).group(1).split(), dtype=float)
    return count, arena, non_persistent, output


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


def tflm_key(build: Build, archive: Path, model: Path, x: np.ndarray) -> str:
    """What TFLite Micro's figures on a model depend on: the library, the harness (model and input)
    and the compiler and flags that build it. Equal keys give equal counts (QEMU counts exactly)."""
    compiler = subprocess.run([build.cxx, "--version"], capture_output=True, text=True, check=True).stdout
    digest = hashlib.sha256()
    for part in (archive.read_bytes(), harness_source(model.read_bytes(), x).encode(),
                 " ".join([*build.common_cxx, *build.target.ldflags.split()]).encode(), compiler.encode()):
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()[:16]


def tflm_side(build: Build, archive: Path, model: Path, x: np.ndarray, folder: Path, stored: dict | None) -> dict:
    """TFLite Micro's figures on the model: the stored row's when its key matches (nothing of
    TFLite Micro, the model or the input changed), else counted on QEMU."""
    key = tflm_key(build, archive, model, x)
    if stored is not None and stored.get("tflm_key") == key:
        print(f"{model.name}: TFLite Micro's stored figures reused (key {key})", file=sys.stderr)
        return {name: stored[name] for name in TFLM_FIELDS}
    count, arena, non_persistent, output = run_tflm(build, archive, model, x, folder)
    per_op = tflm_per_op(build, archive, model, x, folder)
    return {"tflm_key": key, "tflm_instructions": count, "tflm_arena_bytes": arena,
            "tflm_non_persistent_bytes": non_persistent, "tflm_op_instructions": [[op, n] for op, n in per_op],
            "tflm_output": [float(v) if x.dtype == np.float32 else int(v) for v in output]}


TFLM_FIELDS = ("tflm_key", "tflm_instructions", "tflm_arena_bytes", "tflm_non_persistent_bytes",
               "tflm_op_instructions", "tflm_output")


def msfcnn_side(path: Path, numerics: str, **plan_options) -> dict:
    """`verify --target cortex-m4 --instructions` under the numerics, of the vanilla plan or the
    one the plan options choose."""
    result = api.verify(str(path), target="cortex-m4", instructions=True, numerics=numerics, **plan_options)
    if not result.passed:
        raise SystemExit(f"msfcnn's C is not bit-exact on {path} under {numerics}")
    return {"instructions": result.instructions, "block_instructions": list(result.block_instructions or ()),
            "arena_bytes": result.arena_bytes}


def half_ram_side(path: Path, numerics: str, non_persistent: int) -> dict | None:
    """msfcnn_side of the RAM goal's plan; None when no plan fits the cap."""
    try:
        return msfcnn_side(path, numerics, **half_ram_options(non_persistent))
    except UserError as error:
        print(f"{path.name} under {numerics}: {error}", file=sys.stderr)
        return None


def half_ram_options(non_persistent: int) -> dict:
    """The issue's RAM goal: the fastest plan predicted on cortex-m4 whose arena, counting the
    input and output as TFLite Micro's non-persistent arena does, is at most half of it."""
    return {"max_ram": non_persistent // 2, "objective": "min-latency", "count_io": True}


def model_file(name: str, path: Path, work: Path) -> Path:
    """The .tflite of a model: the path itself, or an archive's one .tflite member, extracted."""
    if path.suffix != ".zip":
        return path
    with zipfile.ZipFile(path) as archive:
        members = [m for m in archive.namelist() if m.endswith(".tflite")]
        if len(members) != 1:
            raise SystemExit(f"{path} holds {len(members)} .tflite files, not one")
        folder = work / "models" / name
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / Path(members[0]).name
        target.write_bytes(archive.read(members[0]))
    return target


def ratio(ours: dict | None, theirs: int) -> float | None:
    return None if ours is None else round(ours["instructions"] / theirs, 3)


def model_row(name: str, path: Path, build: Build, archive: Path, work: Path, stored: dict | None) -> dict:
    graph = load(str(path), numerics="tflm")
    x = random_input(graph, 0)
    expected = np.asarray(api.run(str(path), x, strategy="vanilla", numerics="tflm").outputs[0]).reshape(-1)
    given = model_input(graph, x[0])
    tflm = tflm_side(build, archive, path, given, work / "models" / name, stored)
    theirs = tflm["tflm_instructions"]
    vanilla = {n: msfcnn_side(path, n, strategy="vanilla") for n in ("litert", "tflm")}
    half = {n: half_ram_side(path, n, tflm["tflm_non_persistent_bytes"]) for n in ("litert", "tflm")}
    return {"model": name, "file": path.name, **tflm,
            "tflm_output_bit_exact": bool(np.array_equal(np.array(tflm["tflm_output"], expected.dtype), expected)),
            "msfcnn_instructions": vanilla["litert"]["instructions"],
            "msfcnn_tflm_instructions": vanilla["tflm"]["instructions"],
            "msfcnn_arena_bytes": vanilla["litert"]["arena_bytes"],
            "ratio": ratio(vanilla["litert"], theirs), "ratio_tflm": ratio(vanilla["tflm"], theirs),
            "half_ram_max_ram": half_ram_options(tflm["tflm_non_persistent_bytes"])["max_ram"],
            "half_ram": half["litert"], "half_ram_tflm": half["tflm"],
            "half_ram_ratio": ratio(half["litert"], theirs), "half_ram_ratio_tflm": ratio(half["tflm"], theirs),
            "msfcnn_block_instructions": vanilla["litert"]["block_instructions"],
            "msfcnn_tflm_block_instructions": vanilla["tflm"]["block_instructions"]}


HEADER = (f"{'model':21s} {'TFLM':>11s} {'arena':>8s} {'non-pers':>8s} {'vanilla':>7s} {'tflm':>6s} "
          f"{'half arena':>10s} {'ratio':>6s} {'tflm':>6s}")


def row_line(row: dict) -> str:
    """One printed row: TFLM's instructions and arena, the vanilla plan's ratios (default, tflm
    numerics), the half-RAM plan's arena (under the default numerics) and ratios."""
    def shown(value, width):
        return f"{'-':>{width}s}" if value is None else f"{value:{width}.3f}"
    half = row["half_ram"] or row["half_ram_tflm"]
    arena = f"{half['arena_bytes']:,d}" if half else "none"
    return (f"{row['model']:21s} {row['tflm_instructions']:11,d} {row['tflm_arena_bytes']:8,d} "
            f"{row['tflm_non_persistent_bytes']:8,d} {shown(row['ratio'], 7)} {shown(row['ratio_tflm'], 6)} "
            f"{arena:>10s} {shown(row['half_ram_ratio'], 6)} "
            f"{shown(row['half_ram_ratio_tflm'], 6)}"
            f"{'' if row['tflm_output_bit_exact'] else '  (TFLM output differs from msfcnn tflm numerics)'}")


def stored_rows(path: Path) -> dict[str, dict]:
    """The rows of an earlier run's JSON, by model (their TFLite Micro figures may be reused)."""
    if not path.exists():
        return {}
    return {row["model"]: row for row in json.loads(path.read_text())["rows"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in PINNED:
        parser.add_argument(f"--{name}", type=Path, help=f"a checkout of {PINNED[name][0]} at {PINNED[name][1]}")
    for name, (url, commit) in MODEL_TREES.items():
        parser.add_argument(f"--{name}", type=Path,
                            help=f"a checkout of {url} at {commit or 'its head'} (its trained models)")
    parser.add_argument("--clone", action="store_true", help="clone what is not given at the pinned commits")
    parser.add_argument("--model", action="append", default=[], metavar="NAME=PATH",
                        help="a model to add (MCUNet's VWW net), a .tflite or an archive holding one")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="run only these models (the JSON keeps the other models' stored rows)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "msfcnn-tflm-build",
                        help="build folder, kept between runs (objects are cached)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results" / "tflm_whole_model.json",
                        help="the results; TFLite Micro's counts stored there are reused while their key holds")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    models = {name: spec for name, spec in MODELS.items() if not args.only or name in args.only}
    added = dict(entry.partition("=")[::2] for entry in args.model)
    for name, path in added.items():
        if not name or not Path(path).is_file():
            parser.exit(2, f"tflm_whole_model: --model takes NAME=PATH of a model file, not {name}={path}\n")
    added = {name: path for name, path in added.items() if not args.only or name in args.only}
    needed = {**PINNED, **{tree: MODEL_TREES[tree] for tree, _ in models.values() if tree in MODEL_TREES}}
    trees = {}
    for name, (url, commit) in needed.items():
        given = getattr(args, name.replace("-", "_"))
        if given is None and not args.clone:
            parser.exit(2, f"tflm_whole_model: give --{name} DIR or --clone\n")
        trees[name] = given.resolve() if given is not None else clone(name, url, commit, args.work / "src")
    paths = {**{name: trees[tree] / path for name, (tree, path) in models.items()},
             **{name: Path(path).resolve() for name, path in added.items()}}
    target = get_target("cortex-m4")
    build = Build(trees, args.work, target)
    archive = build.library(args.jobs)
    stored = stored_rows(args.json)
    rows = dict(stored)
    print(HEADER)
    for name, path in paths.items():
        rows[name] = model_row(name, model_file(name, path, args.work), build, archive, args.work, stored.get(name))
        print(row_line(rows[name]), flush=True)
    order = [*MODELS, *sorted(set(rows) - set(MODELS))]
    sources = {name: spec[1] for name, spec in {**PINNED, **MODEL_TREES}.items()}
    method = " ".join(__doc__.split("\n\n")[3:5]).replace("\n", " ")
    args.json.write_text(json.dumps({"target": target.name, "method": method, "sources": sources,
                                     "rows": [rows[n] for n in order if n in rows]}, indent=1) + "\n")


if __name__ == "__main__":
    main()
