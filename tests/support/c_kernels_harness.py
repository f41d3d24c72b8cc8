"""Runs the C kernel library (src/msfcnn/codegen/kernels/) against the numpy kernels.

The library is built once into a shared object with the system gcc and the strict flags of the
product (`-std=c99 -Wall -Wextra -Werror -pedantic -O2`). A test then writes one C driver for many
cases: for each op configuration the driver defines the const arrays of `op.c_consts` and the
params struct from `op.c_params` exactly as the code generator will (so the Python side of the
contract is compiled too), then, per run, calls the kernel on input storage loaded from a data
file through `msf_view`s of a chosen layout (whole tensor, patch buffer with padded strides, row
ring, column ring over a band, both rings), and dumps the output storage to stdout. Storage that
holds no needed value is filled with garbage, so a kernel that reads the wrong slot fails, and the
test checks that nothing outside the output region was written.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from msfcnn.ops import KernelContext, Op, Pattern
from msfcnn.ops.conversion import Conversion
from msfcnn.targets import Target

from support.build_cache import cached_build, compiler_identity, files_key, key_of
from support.paths import ROOT
KERNELS = ROOT / "src" / "msfcnn" / "codegen" / "kernels"
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-g"]
C_TYPES = {np.dtype(np.int8): "int8_t", np.dtype(np.int16): "int16_t", np.dtype(np.int32): "int32_t",
           np.dtype(np.int64): "int64_t", np.dtype(np.float32): "float"}


def kernel_sources() -> list[Path]:
    return sorted(KERNELS.glob("*.c"))


def kernel_includes() -> list[str]:
    """#include lines of every kernel header (each kernel source has its own), for test drivers."""
    return [f'#include "{h.name}"' for h in sorted(KERNELS.glob("*.h"))]


# (sanitize, defines, target name) -> what build_library built this session: tests that need the
# same build share it (and so do the other test processes and later runs, see support.build_cache).
_built: dict[tuple, Path] = {}


def build_library(directory: Path, sanitize: bool = False, defines: tuple[str, ...] = (),
                  target: Target | None = None) -> Path:
    """libmsfkernels.so from every kernel source, with the strict flags (and the sanitizers); for a
    microcontroller target, a folder of its objects built with the target's compiler and flags
    (drivers then link them and run under the target's QEMU: the Arm DSP loops are tested so).
    Each object is compiled once for its sources, compiler, flags and the `defines` it reads, in the
    shared build cache (`directory` is not used: it stays for the callers)."""
    key = (sanitize, tuple(defines), target.name if target is not None else None)
    if key not in _built:
        compiler, flags = library_flags(sanitize, target)
        objects = [kernel_object(source, compiler, flags, tuple(defines))[0] for source in kernel_sources()]
        stem = "libmsfkernels" + ("_san" if sanitize else "") + "".join(f"_{d.replace('=', '')}" for d in defines)
        content = key_of(compiler_identity(compiler), *flags, files_key(objects))
        if target is not None:  # the objects, for drivers to link
            folder = cached_build("kernel-objects", content, lambda into: _copy_objects(objects, into))
            _built[key] = folder
        else:
            _built[key] = cached_build("kernel-library", content,
                                       lambda into: _link(objects, flags, into / f"{stem}.so")) / f"{stem}.so"
    return _built[key]


def library_flags(sanitize: bool = False, target: Target | None = None) -> tuple[str, tuple[str, ...]]:
    """The compiler and flags of build_library's objects."""
    if target is not None:
        return target.cc, tuple(target.cflags.split())
    return "gcc", tuple(STRICT + (["-O1"] + SANITIZE if sanitize else ["-O2"]) + ["-fPIC"])


def kernel_object(source: Path, compiler: str, flags: tuple[str, ...], defines: tuple[str, ...] = ()) -> tuple[Path, str]:
    """`source` compiled (-c) with `compiler`, `flags` and those of the `defines` that it or a kernel
    header it includes mentions: the object and what the compiler printed. Compiled once per key in
    the shared build cache; a failed compile raises AssertionError with the compiler's messages."""
    closure = _include_closure(source)
    text = "".join(path.read_text() for path in closure)
    read = tuple(d for d in defines if re.search(rf"\b{re.escape(d.split('=')[0])}\b", text))
    content = key_of(compiler_identity(compiler), *flags, *read, files_key(closure))

    def compile_into(folder: Path) -> None:
        cmd = [compiler, *flags, *[f"-D{d}" for d in read], "-c", "-o", str(folder / f"{source.stem}.o"), str(source)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise AssertionError(f"kernel build failed:\n{' '.join(cmd)}\n{done.stderr}")
        (folder / "stderr.txt").write_text(done.stderr)

    folder = cached_build(f"kernel-{source.stem}", content, compile_into)
    return folder / f"{source.stem}.o", (folder / "stderr.txt").read_text()


def _include_closure(source: Path) -> list[Path]:
    """`source` and the kernel headers it includes, directly or through each other."""
    found, pending = [], [source]
    while pending:
        path = pending.pop()
        if path in found or not path.exists():  # (msfcnn_prefix.h is written by compile, not here)
            continue
        found.append(path)
        pending += [KERNELS / name for name in re.findall(r'#include "([^"]+)"', path.read_text())]
    return found


def _copy_objects(objects: list[Path], folder: Path) -> None:
    for obj in objects:
        shutil.copyfile(obj, folder / obj.name)


def _link(objects: list[Path], flags: tuple[str, ...], lib: Path) -> None:
    cmd = ["gcc", *flags, "-shared", "-o", str(lib), *map(str, objects), "-lm"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"kernel library link failed:\n{' '.join(cmd)}\n{done.stderr}")


# ---- C text -----------------------------------------------------------------------------------

def c_array_literal(values: np.ndarray) -> str:
    flat = np.asarray(values).reshape(-1)
    if flat.dtype == np.float32:
        items = [repr(float(v)) for v in flat.tolist()]
    else:
        items = ["(-2147483647 - 1)" if v == -(1 << 31) else str(v) for v in flat.tolist()]
    lines = [", ".join(items[i:i + 24]) for i in range(0, len(items), 24)]
    return "{\n    " + ",\n    ".join(lines) + "\n}" if items else "{ 0 }"


class Driver:
    """One C program: declarations, buffers loaded from a data file, calls, dumps to stdout."""

    def __init__(self):
        self.decls: list[str] = []
        self.body: list[str] = []
        self.loads: list[tuple[str, bytes]] = []
        self.dumps: list[tuple[str, np.dtype, int]] = []
        self.count = 0

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def const(self, name: str, values: np.ndarray) -> str:
        """A const array as the generator emits it; very large ones (a classifier's weights) are
        loaded from the data file instead, only to keep the driver quick to compile."""
        values = np.ascontiguousarray(values)
        if values.size > 50000:
            self.decls.append(f"static {C_TYPES[values.dtype]} {name}[{values.size}];")
            self.loads.append((name, values.tobytes()))
        else:
            self.decls.append(f"static const {C_TYPES[values.dtype]} {name}[] = {c_array_literal(values)};")
        return name

    def buffer(self, stem: str, values: np.ndarray) -> str:
        """A mutable static array, initialised from the data file."""
        name = self.fresh(stem)
        values = np.ascontiguousarray(values).reshape(-1)
        if values.size == 0:  # (an input region entirely in a pad's padding) C has no empty arrays
            values = np.zeros(1, values.dtype)
        self.decls.append(f"static {C_TYPES[values.dtype]} {name}[{max(values.size, 1)}];")
        self.loads.append((name, values.tobytes()))
        return name

    def zeros(self, stem: str, dtype, size: int) -> str:
        name = self.fresh(stem)
        self.decls.append(f"static {C_TYPES[np.dtype(dtype)]} {name}[{max(size, 1)}];")
        return name

    def dump(self, name: str, dtype, size: int) -> int:
        """Write `size` elements of array `name` to stdout after the calls before; returns its index."""
        self.body.append(f"    dump({name}, {size} * sizeof({name}[0]));")
        self.dumps.append((name, np.dtype(dtype), size))
        return len(self.dumps) - 1

    def source(self) -> str:
        loads = "\n".join(f"    load({name}, sizeof {name});" for name, _ in self.loads)
        return "\n".join([
            "#include <stdio.h>", "#include <stdlib.h>", *kernel_includes(), "",
            "static FILE *data, *dumps;",
            "void load(void *p, size_t n);", "void dump(const void *p, size_t n);",
            "void load(void *p, size_t n) {",
            "    if (fread(p, 1, n, data) != n) { fprintf(stderr, \"short data file\\n\"); exit(2); }", "}",
            "void dump(const void *p, size_t n) {",
            "    if (n != 0 && fwrite(p, 1, n, dumps) != n) { exit(3); }", "}", "",
            *self.decls, "",
            "int main(int argc, char **argv) {",
            "    if (argc < 2 || (data = fopen(argv[1], \"rb\")) == NULL) { return 1; }",
            "    dumps = argc > 2 ? fopen(argv[2], \"wb\") : stdout;",  # a target's semihosting: a file
            "    if (dumps == NULL) { return 1; }",
            loads, "    fclose(data);",
            *self.body,
            "    return fclose(dumps) == 0 ? 0 : 4;", "}", ""])

    def run(self, directory: Path, lib: Path, sanitize: bool = False, tag: str = "driver",
            target: Target | None = None) -> list[np.ndarray]:
        directory.mkdir(parents=True, exist_ok=True)
        src, exe, dat = directory / f"{tag}.c", directory / tag, directory / f"{tag}.bin"
        src.write_text(self.source())
        dat.write_bytes(b"".join(blob for _, blob in self.loads))
        if target is not None:
            return self._unpack(self._run_on(target, src, exe, dat, lib))
        # The kernels are in `lib`, optimised; the driver only loads, calls and dumps, and its
        # initialisers of every case's constants compile in half the time unoptimised.
        flags = STRICT + (["-O1"] + SANITIZE if sanitize else ["-O0"])
        cmd = ["gcc", *flags, f"-I{KERNELS}", "-o", str(exe), str(src), str(lib),
               f"-Wl,-rpath,{lib.parent}", "-lm"]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise AssertionError(f"driver build failed ({src}):\n{done.stderr[:4000]}")
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0",
                   UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
        done = subprocess.run([str(exe), str(dat)], capture_output=True, env=env)
        if done.returncode != 0 or (sanitize and done.stderr):
            raise AssertionError(f"driver {exe} failed ({done.returncode}):\n{done.stderr.decode()[:4000]}")
        return self._unpack(done.stdout)

    def _run_on(self, target: Target, src: Path, exe: Path, dat: Path, objects: Path) -> bytes:
        """Build the driver for a QEMU target, run it, and return what it dumped (to a file: the
        semihosting console is not binary-safe)."""
        cmd = [target.cc, *target.cflags.split(), f"-I{KERNELS}", *target.ldflags.split(), "-o", str(exe), str(src),
               *sorted(map(str, objects.glob("*.o"))), "-lm"]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise AssertionError(f"driver build failed ({src}):\n{done.stderr[:4000]}")
        out = exe.with_suffix(".out")
        out.unlink(missing_ok=True)
        done = subprocess.run(target.run_command(str(exe), str(dat), str(out)), capture_output=True, timeout=600)
        if done.returncode != 0 or not out.exists():
            raise AssertionError(f"driver {exe} failed on {target.name} ({done.returncode}):\n"
                                 f"{(done.stdout + done.stderr).decode(errors='replace')[:4000]}")
        return out.read_bytes()

    def _unpack(self, raw: bytes) -> list[np.ndarray]:
        out, pos = [], 0
        for _, dtype, size in self.dumps:
            n = size * dtype.itemsize
            out.append(np.frombuffer(raw[pos:pos + n], dtype=dtype).copy())
            pos += n
        if pos != len(raw):
            raise AssertionError(f"driver wrote {len(raw)} bytes, expected {pos}")
        return out


# ---- storage layouts ----------------------------------------------------------------------------

LAYOUTS = ("whole", "patch", "row_ring", "col_ring", "rings")


@dataclass
class Storage:
    """A buffer plus the msf_view fields that map logical (r, c, ch) into it."""

    data: np.ndarray  # flat
    row_stride: int
    col_stride: int
    row_origin: int = 0
    col_origin: int = 0
    row_ring: int = 0
    col_ring: int = 0

    def index(self, rows: tuple[int, int], cols: tuple[int, int], channels: int) -> np.ndarray:
        """(rows, cols, channels) flat indices of a logical region."""
        r = np.arange(*rows) - self.row_origin
        c = np.arange(*cols) - self.col_origin
        assert (r >= 0).all() and (c >= 0).all()
        if self.row_ring:
            r = r % self.row_ring
        if self.col_ring:
            c = c % self.col_ring
        return (r[:, None, None] * self.row_stride + c[None, :, None] * self.col_stride
                + np.arange(channels)[None, None, :])

    def view(self, name: str) -> str:
        return (f"{{ {name}, {self.row_stride}, {self.col_stride}, {self.row_origin}, {self.col_origin}, "
                f"{self.row_ring}, {self.col_ring} }}")


def garbage(rng, dtype, size: int) -> np.ndarray:
    if np.dtype(dtype) == np.float32:
        return (rng.standard_normal(size) * 1e4).astype(np.float32)
    return rng.integers(-128, 128, size, dtype=np.int8)


def make_storage(rng, layout: str, full_hw: tuple[int, int], channels: int, rows, cols, dtype) -> Storage:
    """Storage of `layout` able to hold the logical region rows x cols at once, all garbage."""
    h, w = full_hw
    n_rows, n_cols = max(rows[1] - rows[0], 1), max(cols[1] - cols[0], 1)
    col_stride = channels
    row_origin = col_origin = row_ring = col_ring = 0
    if layout == "whole":
        stored_rows, stored_cols = h, w
    elif layout == "patch":  # a patch buffer: origins, padded strides
        col_stride = channels + int(rng.integers(0, 3))
        row_origin, col_origin = rows[0] - int(rng.integers(0, 3)), cols[0] - int(rng.integers(0, 3))
        stored_rows = rows[1] - row_origin + int(rng.integers(0, 2))
        stored_cols = cols[1] - col_origin + int(rng.integers(0, 2))
    elif layout == "row_ring":  # a linebuffer: whole rows in a ring
        row_ring = n_rows + int(rng.integers(0, 3))
        row_origin = rows[0] - int(rng.integers(0, 3 * row_ring + 1))
        stored_rows, stored_cols = row_ring, w
    elif layout == "col_ring":  # an hcache: a band of rows, its columns in a ring
        row_origin = rows[0] - int(rng.integers(0, 2))
        stored_rows = rows[1] - row_origin
        col_ring = n_cols + int(rng.integers(0, 3))
        col_origin = cols[0] - int(rng.integers(0, 3 * col_ring + 1))
        stored_cols = col_ring
        col_stride = channels + int(rng.integers(0, 2))
    elif layout == "rings":
        row_ring, col_ring = n_rows + int(rng.integers(0, 2)), n_cols + int(rng.integers(0, 2))
        row_origin = rows[0] - int(rng.integers(0, 2 * row_ring + 1))
        col_origin = cols[0] - int(rng.integers(0, 2 * col_ring + 1))
        stored_rows, stored_cols = row_ring, col_ring
    else:
        raise ValueError(layout)
    row_stride = stored_cols * col_stride + (int(rng.integers(0, 4)) if layout in ("patch", "rings") else 0)
    size = stored_rows * row_stride
    return Storage(garbage(rng, dtype, size), row_stride, col_stride, row_origin, col_origin, row_ring, col_ring)


def pack(rng, layout: str, x: np.ndarray, rows, cols) -> Storage:
    """Storage holding x[rows, cols] (x is the whole (H, W, C) tensor) at its logical positions."""
    st = make_storage(rng, layout, x.shape[:2], x.shape[2], rows, cols, x.dtype)
    if rows[1] > rows[0] and cols[1] > cols[0]:
        st.data[st.index(rows, cols, x.shape[2])] = x[rows[0]:rows[1], cols[0]:cols[1]]
    return st


# ---- regions -------------------------------------------------------------------------------------

def needed(op: Op, in_hw: tuple[int, int], rows, cols) -> tuple[tuple[int, int], tuple[int, int]]:
    """Input rows / cols (inside the input) that output rows x cols of an op read (the op's own
    receptive field: `Op.axis_window`; an opaque op, such as a transpose, reads its whole input)."""
    if op.pattern is Pattern.OPAQUE:
        return (0, in_hw[0]), (0, in_hw[1])
    return tuple(op.axis_window(axis).span(*span, in_hw[axis])[:2] for axis, span in enumerate((rows, cols)))


def regions(rng, out_hw: tuple[int, int]) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The whole output, one row, one column band, a sub-rectangle."""
    h, w = out_hw
    r = int(rng.integers(0, h))
    c0 = int(rng.integers(0, w))
    c1 = int(rng.integers(c0 + 1, min(w, c0 + 3) + 1))
    r0, q0 = int(rng.integers(0, h)), int(rng.integers(0, w))
    r1, q1 = int(rng.integers(r0 + 1, h + 1)), int(rng.integers(q0 + 1, w + 1))
    return [((0, h), (0, w)), ((r, r + 1), (0, w)), ((0, h), (c0, c1)), ((r0, r1), (q0, q1))]


def as_map(x: np.ndarray) -> np.ndarray:
    return x if x.ndim == 3 else x.reshape(1, 1, -1)


# ---- cases ---------------------------------------------------------------------------------------

@dataclass
class Result:
    """What one kernel run produced and what the numpy kernel says it should be."""

    label: str
    got: np.ndarray
    expected: np.ndarray
    untouched: bool = True  # nothing outside the output region was written
    extra: dict = field(default_factory=dict)


class Cases:
    """Kernel runs collected into one driver; `results()` runs it and pairs outputs with numpy's."""

    def __init__(self, seed: int = 0):
        self.driver = Driver()
        self.rng = np.random.default_rng(seed)
        self.checks: list[Callable[[list[np.ndarray]], Result]] = []

    def _config(self, op: Op, ctx: KernelContext, in_shapes, out_shape) -> tuple[str, str]:
        """Emit the op's const arrays and params struct; returns (params name, kernel suffix)."""
        d = self.driver
        tag = d.fresh("k")
        names = {role: d.const(f"{tag}_{role}", values) for role, values in op.c_consts(ctx).items()}
        params = f"{tag}_p"
        d.decls.append(f"static const {op.c_kernel}_params {params} = "
                       f"{op.c_params(ctx, [tuple(s) for s in in_shapes], tuple(out_shape), names)};")
        # a conversion's kernel is its input's (DEQUANTIZE: int8), any other op's its output's
        float_kernel = ctx.dtype == "float32" if isinstance(op, Conversion) else ctx.is_float
        return params, "_f32" if float_kernel else "_s8"

    def spatial(self, op: Op, ctx: KernelContext, inputs: list[np.ndarray], label: str,
                runs: list[tuple[tuple, tuple, list[str], str]] | None = None, n_layout_runs: int = 0) -> None:
        """Window / element-wise / pad kernels: one params struct, several (region, layouts) runs.

        runs: (rows, cols, input layouts, output layout); default: the four `regions` with whole
        tensors, plus `n_layout_runs` random (region, layouts) combinations."""
        expected = as_map(op.reference(inputs, ctx))
        maps = [as_map(x) for x in inputs]
        in_shapes = [x.shape for x in inputs]
        params, suffix = self._config(op, ctx, in_shapes, op.output_shape(in_shapes))
        if runs is None:
            runs = [(r, c, ["whole"] * len(maps), "whole") for r, c in regions(self.rng, expected.shape[:2])]
            for _ in range(n_layout_runs):
                r, c = regions(self.rng, expected.shape[:2])[int(self.rng.integers(0, 4))]
                runs.append((r, c, [LAYOUTS[int(self.rng.integers(0, 5))] for _ in maps],
                             LAYOUTS[int(self.rng.integers(0, 5))]))
        for rows, cols, in_layouts, out_layout in runs:
            self._spatial_run(op, params, suffix, maps, expected, rows, cols, in_layouts, out_layout, label)

    def _spatial_run(self, op, params, suffix, maps, expected, rows, cols, in_layouts, out_layout, label):
        d, rng = self.driver, self.rng
        views = []
        for x, layout in zip(maps, in_layouts):
            in_rows, in_cols = needed(op, x.shape[:2], rows, cols)
            st = pack(rng, layout, x, in_rows, in_cols)
            views.append((d.buffer("in", st.data), st))
        out_st = make_storage(rng, out_layout, expected.shape[:2], expected.shape[2], rows, cols, expected.dtype)
        before = out_st.data.copy()
        out_name = d.buffer("out", out_st.data)
        call = [f"    {{ /* {label} rows {rows} cols {cols} in {in_layouts} out {out_layout} */"]
        for i, (name, st) in enumerate(views):
            call.append(f"        msf_view in{i} = {st.view(name)};")
        call.append(f"        msf_view out = {out_st.view(out_name)};")
        args = ", ".join(f"&in{i}" for i in range(len(views)))
        call.append(f"        {op.c_kernel}{suffix}(&{params}, {args}, &out, {rows[0]}, {rows[1]}, {cols[0]}, {cols[1]});")
        call.append("    }")
        d.body.extend(call)
        slot = d.dump(out_name, expected.dtype, out_st.data.size)
        index = out_st.index(rows, cols, expected.shape[2])
        want = expected[rows[0]:rows[1], cols[0]:cols[1]]
        tag = f"{label} rows={rows} cols={cols} in={in_layouts} out={out_layout}"

        def check(outputs, slot=slot, index=index, before=before, want=want, tag=tag):
            data = outputs[slot]
            mask = np.zeros(data.size, bool)
            mask[index.reshape(-1)] = True
            untouched = np.array_equal(data[~mask].view(np.uint8 if data.dtype == np.int8 else np.uint32),
                                       before[~mask].view(np.uint8 if data.dtype == np.int8 else np.uint32))
            return Result(tag, data[index], want, untouched)
        self.checks.append(check)

    def tail(self, op: Op, ctx: KernelContext, x: np.ndarray, label: str, in_shape=None,
             splits: list[tuple[tuple, tuple, str]] | None = None) -> None:
        """Global pool / dense: accumulate over regions of the (H, W, C) input, then finish.

        in_shape: the shape handed to c_params (the dense's own input, or the map before a
        flattening reshape); x is indexed as that map."""
        d = self.driver
        in_shape = tuple(in_shape or x.shape)
        grid = as_map(x.reshape(in_shape) if len(in_shape) == 3 else x)
        expected = op.reference([x], ctx).reshape(-1)
        acc_expected = op.accumulate(None, grid, (0, grid.shape[0]), (0, grid.shape[1]), grid.shape, ctx)
        params, suffix = self._config(op, ctx, [in_shape], op.output_shape([in_shape]))
        n_acc = acc_expected.size
        acc_type = np.float32 if ctx.is_float else np.int32
        acc = d.zeros("acc", acc_type, n_acc)
        out = d.zeros("vec", expected.dtype, expected.size)
        splits = splits or [((0, grid.shape[0]), (0, grid.shape[1]), "whole")]
        body = [f"    {{ /* {label} */"]
        for i, (rows, cols, layout) in enumerate(splits):
            st = pack(self.rng, layout, grid, rows, cols)
            name = d.buffer("in", st.data)
            body.append(f"        msf_view in{i} = {st.view(name)};")
            body.append(f"        {op.c_kernel}_accumulate{suffix}(&{params}, &in{i}, {acc}, "
                        f"{rows[0]}, {rows[1]}, {cols[0]}, {cols[1]});")
        body.append(f"        {op.c_kernel}_finish{suffix}(&{params}, {acc}, {out});")
        body.append("    }")
        d.body.extend(body)
        acc_slot = d.dump(acc, acc_type, n_acc)
        out_slot = d.dump(out, expected.dtype, expected.size)
        tag = f"{label} splits={[(r, c, lay) for r, c, lay in splits]}"

        def check(outputs):
            return Result(tag, outputs[out_slot], expected,
                          extra={"acc": outputs[acc_slot], "acc_expected": acc_expected})
        self.checks.append(check)

    def oneshot(self, op: Op, ctx: KernelContext, x: np.ndarray, label: str, in_shape=None,
                layout: str = "whole") -> None:
        """Global pool / dense in one call on the whole input (no accumulator)."""
        d = self.driver
        in_shape = tuple(in_shape or x.shape)
        grid = as_map(x.reshape(in_shape) if len(in_shape) == 3 else x)
        expected = op.reference([x], ctx).reshape(-1)
        params, suffix = self._config(op, ctx, [in_shape], op.output_shape([in_shape]))
        st = pack(self.rng, layout, grid, (0, grid.shape[0]), (0, grid.shape[1]))
        name = d.buffer("in", st.data)
        out = d.zeros("vec", expected.dtype, expected.size)
        d.body.append(f"    {{ msf_view in0 = {st.view(name)}; {op.c_kernel}{suffix}(&{params}, &in0, {out}); }}"
                      f" /* {label} */")
        slot = d.dump(out, expected.dtype, expected.size)
        self.checks.append(lambda outputs: Result(f"{label} one-shot in={layout}", outputs[slot], expected))

    def softmax(self, op: Op, ctx: KernelContext, x: np.ndarray, label: str, in_place: bool = False) -> None:
        d = self.driver
        expected = op.reference([x], ctx)
        params, suffix = self._config(op, ctx, [x.shape], x.shape)
        src = d.buffer("in", x)
        dst = src if in_place else d.zeros("vec", expected.dtype, x.size)
        d.body.append(f"    {op.c_kernel}{suffix}(&{params}, {src}, {dst}); /* {label} */")
        slot = d.dump(dst, expected.dtype, x.size)
        self.checks.append(lambda outputs: Result(f"{label} in_place={in_place}", outputs[slot],
                                                  expected.reshape(-1)))

    def results(self, directory: Path, lib: Path, sanitize: bool = False, tag: str = "driver",
                target: Target | None = None) -> list[Result]:
        outputs = self.driver.run(directory, lib, sanitize, tag, target)
        return [check(outputs) for check in self.checks]


def node_inputs(graph, xs: list[np.ndarray]):
    """Yield (index, node, ctx, inputs) for every node of a graph run by the numpy executor on xs,
    one array per model input (already in the graph's internal (H, W, C) layout and type)."""
    values = dict(zip(graph.input_tensors, xs))
    for index, node in enumerate(graph.nodes):
        # the kernel's element type: float32 or int8 (16x8 nodes run the int8 kernels' arithmetic here)
        dtype = "float32" if graph.kernel_element(index).is_float else "int8"
        ctx = KernelContext(node.consts, tuple(graph.quant_of(t) for t in node.inputs), node.quant, dtype=dtype)
        inputs = [values[t] for t in node.inputs]
        yield index, node, ctx, inputs
        values[index] = node.op.reference(inputs, ctx)
