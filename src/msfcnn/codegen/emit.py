"""C99 from a schedule: the arena, one function per block, the constants and a test harness.

The generated code follows the schedule exactly: every tensor and scratch buffer is a view into
the one static arena at the offset the layout gave it, and each scheme's loop is the same one the
fused numpy executor runs (linebuffer and hcache pull positions on demand, recompute walks
patches), so the C program, the numpy executor and the cost model agree by construction. The
files are rendered from whole templates in `codegen/templates/`; this module only prepares the
values they show.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from math import prod

import numpy as np

from .. import __version__
from ..ir import NETWORK_INPUT, Graph
from ..ops import Add, Dense, GlobalAvgPool, KernelContext, Reshape, Softmax
from ..plan import Plan
from ..schedule import LoweredBlock, Schedule
from ..targets import TARGETS, Target
from ..schedule.blocks import WINDOW_OPS, band_ranges, bands, tail_consumer

_C_TYPES = {np.dtype(np.int8): "int8_t", np.dtype(np.int32): "int32_t", np.dtype(np.int64): "int64_t",
            np.dtype(np.float32): "float"}


@dataclass
class _Array:
    name: str
    ctype: str
    size: int
    body: str
    comment: str


@dataclass
class _Emitter:
    graph: Graph
    schedule: Schedule
    arrays: list[_Array] = field(default_factory=list)
    params: list[dict] = field(default_factory=list)

    @property
    def sfx(self) -> str:
        return "_f32" if self.graph.dtype == "float32" else "_s8"

    @property
    def ctype(self) -> str:
        return "float" if self.graph.dtype == "float32" else "int8_t"

    # ---- constants and params --------------------------------------------------------------
    def context(self, t: int) -> KernelContext:
        node = self.graph.nodes[t]
        return KernelContext(node.consts, tuple(self.graph.quant_of(u) for u in node.inputs), node.quant)

    def declare_params(self) -> None:
        # A dense layer that a block's tail feeds with the streamed map (through a flattening
        # reshape) indexes its weights by the map's (H, W, C) positions, not by the vector's.
        streamed = {tail_consumer(self.graph, b.stream_end): self.graph.shape_of(b.stream_end)
                    for b in self.schedule.blocks if b.stream_end is not None and b.stream_end < b.last}
        for t, node in enumerate(self.graph.nodes):
            op = node.op
            if op.c_kernel is None:
                continue
            ctx = self.context(t)
            in_shapes = self.graph.input_shapes(t)
            if t in streamed:
                in_shapes = [streamed[t]] + in_shapes[1:]
            names = {}
            for role, values in op.c_consts(ctx).items():
                name = f"op{t}_{role}"
                flat = np.ascontiguousarray(values).reshape(-1)
                self.arrays.append(_Array(name, _C_TYPES[flat.dtype], flat.size, _c_body(flat),
                                          f"op {t} ({op.describe()}): {role} {list(np.shape(values))}"))
                names[role] = name
            init = op.c_params(ctx, in_shapes, node.shape, names)
            self.params.append({"struct": f"{op.c_kernel}_params", "name": f"p{t}", "init": init, "op": t,
                                "describe": op.describe()})

    # ---- views -------------------------------------------------------------------------------
    def pointer(self, t: int, offsets: dict[int, int]) -> str:
        if t == NETWORK_INPUT:
            return "(void *)input"
        if t == len(self.graph) - 1:
            return "(void *)output"
        return f"ARENA({offsets[t]})"

    def full_view(self, t: int, offsets: dict[int, int]) -> str:
        h, w, c = _hwc(self.graph.shape_of(t))
        return f"{{ {self.pointer(t, offsets)}, {w * c}, {c}, 0, 0, 0, 0 }}"

    # ---- blocks ------------------------------------------------------------------------------
    def block(self, index: int) -> dict:
        block = self.schedule.blocks[index]
        offsets = self.schedule.tensor_offsets[index]
        scratch = self.schedule.scratch_offsets[index]
        moves = self.schedule.moves[index]
        if block.scheme == "single":
            data = self.single(block, offsets)
        elif block.scheme in ("linebuffer", "hcache"):
            data = self.stream(block, offsets, scratch, index)
        else:
            data = self.patches(block, offsets, scratch, index)
        data["moves"] = moves
        return data

    def title(self, block: LoweredBlock) -> str:
        ops = ", ".join(self.graph.nodes[i].op.describe() for i in range(block.first, block.last + 1))
        span = f"op {block.first}" if block.first == block.last else f"ops {block.first}-{block.last}"
        return f"{span} ({ops})"

    def single(self, block: LoweredBlock, offsets) -> dict:
        t = block.first
        node = self.graph.nodes[t]
        views = [{"name": f"in{j}", "init": self.full_view(u, offsets)} for j, u in enumerate(node.inputs)]
        views.append({"name": "out", "init": self.full_view(t, offsets)})
        h, w, _ = _hwc(node.shape)
        op = node.op
        kernel = f"{op.c_kernel}{self.sfx}" if op.c_kernel else None
        if isinstance(op, Reshape) and block.alias is not None:
            views, body = [], ["/* a reshape: the output is the input's bytes, where they already are */"]
        elif isinstance(op, Reshape):
            body = [f"memmove(out.base, in0.base, {self.nbytes(t)});"]
        elif isinstance(op, Add):
            body = [f"{kernel}(&p{t}, &in0, &in1, &out, 0, {h}, 0, {w});"]
        elif isinstance(op, (GlobalAvgPool, Dense)):
            body = [f"{kernel}(&p{t}, &in0, out.base);"]
        elif isinstance(op, Softmax):
            body = [f"{kernel}(&p{t}, in0.base, out.base);"]
        else:
            body = [f"{kernel}(&p{t}, &in0, &out, 0, {h}, 0, {w});"]
        explain = "One op on whole tensors." + (" Its output is written over its dying input." if block.alias is not None
                                                else "")
        return {"kind": "single", "title": self.title(block), "explain": explain, "views": views, "body": body}

    def nbytes(self, t: int) -> int:
        return prod(self.graph.shape_of(t)) * (4 if self.graph.dtype == "float32" else 1)

    def externals(self, block: LoweredBlock, offsets) -> tuple[list[dict], dict[int, str]]:
        views, names = [], {}
        for j, u in enumerate(block.reads):
            views.append({"name": f"x{j}", "init": self.full_view(u, offsets)})
            names[u] = f"x{j}"
        return views, names

    def tail(self, block: LoweredBlock, offsets, scratch, end_view: str) -> tuple[list[str], list[str], str]:
        """Prologue, epilogue and the accumulate call of a block's tail (empty without one)."""
        end, last = block.stream_end, block.last
        if end == last:
            return [], [], ""
        consumer = tail_consumer(self.graph, end)
        kind = self.graph.nodes[consumer].op.c_kernel
        acc = f"ARENA({scratch[f'acc{consumer}']})"
        width = self.graph.shape_of(consumer)[-1]
        prologue = [f"memset({acc}, 0, {width * 4}); /* the {kind[4:]} accumulator */"]
        accumulate = f"{kind}_accumulate{self.sfx}(&p{consumer}, {end_view}, {acc}, {{r0}}, {{r1}}, {{c0}}, {{c1}});"
        target = {t: f"ARENA({scratch[f'vec{t}']})" for t in range(consumer, last)}
        target[last] = self.pointer(last, offsets)
        epilogue = [f"{kind}_finish{self.sfx}(&p{consumer}, {acc}, {target[consumer]});"]
        for t in range(consumer + 1, last + 1):
            op = self.graph.nodes[t].op
            source = target[t - 1]
            if isinstance(op, Softmax):
                epilogue.append(f"{op.c_kernel}{self.sfx}(&p{t}, {source}, {target[t]});")
            elif isinstance(op, Dense):
                n = self.graph.shape_of(t - 1)[-1]
                epilogue.append("{ const msf_view vec = { " + source + f", {n}, {n}, 0, 0, 0, 0 }}; "
                                f"{op.c_kernel}{self.sfx}(&p{t}, &vec, {target[t]}); }}")
            else:  # a reshape of a vector: same bytes
                epilogue.append(f"memmove({target[t]}, {source}, {self.nbytes(t)});")
        return prologue, epilogue, accumulate

    def stream(self, block: LoweredBlock, offsets, scratch, index: int) -> dict:
        graph, first, end = self.graph, block.first, block.stream_end
        axis = 0 if block.scheme == "linebuffer" else 1
        local = {t: t - first for t in range(first, end + 1)}
        externals, names = self.externals(block, offsets)
        names = {u: f"s->x[{j}]" for j, u in enumerate(block.reads)}
        views = []
        for t in range(first, end + 1):
            h, w, c = graph.shape_of(t)
            if t in block.rings:
                ring = block.rings[t]
                base = f"ARENA({scratch[f'ring{t}']})"
                views.append(f"{{ {base}, {w * c}, {c}, 0, 0, {ring}, 0 }}" if axis == 0
                             else f"{{ {base}, {ring * c}, {c}, 0, 0, 0, {ring} }}")
            else:
                views.append(self.full_view(t, offsets))
        end_view = f"&s->v[{local[end]}]"
        prologue, epilogue, accumulate = self.tail(block, offsets, scratch, end_view)
        ops = []
        for t in range(first, end + 1):
            node = graph.nodes[t]
            pulls = []
            for u in node.inputs:
                if u in local:
                    pulls.append({"local": local[u], "upto": self.needed_hi(t, u, axis)})
            ins = [f"&s->v[{local[u]}]" if u in local else f"&{names[u]}" for u in node.inputs]
            region = ("i, i + 1, 0, " + str(graph.shape_of(t)[1])) if axis == 0 else "s->lo[t], s->hi[t], i, i + 1"
            body = [f"{node.op.c_kernel}{self.sfx}(&p{t}, {', '.join(ins)}, &s->v[{local[t]}], {region});"]
            if t == end and accumulate:
                r0, r1, c0, c1 = region.split(", ")
                body.append(accumulate.format(r0=r0, r1=r1, c0=c0, c1=c1))
            ops.append({"local": local[t], "index": t, "describe": node.op.describe(), "pulls": pulls, "body": body})
        data = {"kind": "stream", "axis": axis, "id": index, "first": first, "count": end - first + 1,
                "title": self.title(block), "externals": externals, "views": views, "ops": ops,
                "prologue": prologue, "epilogue": epilogue, "end_local": local[end],
                "end_extent": graph.shape_of(end)[axis]}
        if axis == 0:
            data["los"] = [graph.shape_of(t)[0] for t in range(first, end + 1)]
            data["explain"] = ("linebuffer: rows stream top to bottom; each inner tensor keeps a ring of the rows "
                               "its readers still need. Nothing is recomputed.")
        else:
            table = []
            for lo, hi in bands(graph.shape_of(end)[0], block.rows):
                spans = band_ranges(graph, first, end, lo, hi)
                table.append(", ".join(f"{{ {spans[t][0]}, {spans[t][1]} }}" for t in range(first, end + 1)))
            data["bands"] = table
            data["explain"] = (f"hcache: {block.rows} output row(s) per band; within a band columns stream left to "
                               "right and each inner tensor keeps a ring of the columns its readers still need. "
                               "Rows shared by two bands are recomputed.")
        return data

    def needed_hi(self, consumer: int, tensor: int, axis: int) -> str:
        """C expression: one past the last position of `tensor` that position i of `consumer` reads."""
        op = self.graph.nodes[consumer].op
        if isinstance(op, WINDOW_OPS):
            k, s, p = op.window.kernel[axis], op.window.strides[axis], op.window.pads[axis]
            size = self.graph.shape_of(tensor)[axis]
            return f"MSF_MIN({size}, i * {s} + {k - p})"
        return "i + 1"

    def patches(self, block: LoweredBlock, offsets, scratch, index: int) -> dict:
        graph, first, end, side = self.graph, block.first, block.stream_end, block.rows
        local = {t: t - first for t in range(first, end + 1)}
        externals, names = self.externals(block, offsets)
        views = []
        for t in range(first, end + 1):
            if f"tile{t}" in scratch:
                h, w, c = graph.shape_of(t)
                shape = next(s.shape for s in block.scratch if s.name == f"tile{t}")
                views.append(f"{{ ARENA({scratch[f'tile{t}']}), {shape[1] * c}, {c}, 0, 0, 0, 0 }}")
            else:
                views.append(self.full_view(t, offsets))
        prologue, epilogue, accumulate = self.tail(block, offsets, scratch, f"&v[{local[end]}]")
        ops = []
        for t in range(first, end + 1):
            node = graph.nodes[t]
            j = local[t]
            region = f"row_bands[rb][{j}][0], row_bands[rb][{j}][1], col_bands[cb][{j}][0], col_bands[cb][{j}][1]"
            body = []
            if f"tile{t}" in scratch:
                body.append(f"v[{j}].row_origin = row_bands[rb][{j}][0]; v[{j}].col_origin = col_bands[cb][{j}][0];")
            ins = [f"&v[{local[u]}]" if u in local else f"&{names[u]}" for u in node.inputs]
            body.append(f"{node.op.c_kernel}{self.sfx}(&p{t}, {', '.join(ins)}, &v[{j}], {region});")
            if t == end and accumulate:
                parts = region.split(", ")
                body.append(accumulate.format(r0=parts[0], r1=parts[1], c0=parts[2], c1=parts[3]))
            ops.append({"index": t, "describe": node.op.describe(), "body": body})
        height, width = graph.shape_of(end)[:2]
        row_table = [", ".join(f"{{ {s[t][0]}, {s[t][1]} }}" for t in range(first, end + 1))
                     for s in (band_ranges(graph, first, end, lo, hi, 0) for lo, hi in bands(height, side))]
        col_table = [", ".join(f"{{ {s[t][0]}, {s[t][1]} }}" for t in range(first, end + 1))
                     for s in (band_ranges(graph, first, end, lo, hi, 1) for lo, hi in bands(width, side))]
        return {"kind": "patches", "title": self.title(block), "count": end - first + 1, "externals": externals,
                "views": views, "ops": ops, "prologue": prologue, "epilogue": epilogue, "row_bands": row_table,
                "col_bands": col_table,
                "explain": (f"recompute: {side}x{side} output patches, each computed from scratch through the "
                            "block into per-tensor patch buffers (overlap recomputed both ways).")}


def _hwc(shape) -> tuple[int, int, int]:
    return tuple(shape) if len(shape) == 3 else (1, 1, int(prod(shape)))


def _c_body(values: np.ndarray, per_line: int = 16) -> str:
    if values.dtype == np.float32:
        items = [float(v).hex() + "f" if np.isfinite(v) else "0.0f" for v in values]
    else:
        items = [str(int(v)) for v in values]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return ",\n".join("    " + line for line in lines)


def _templates():
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    templates = resources.files("msfcnn.codegen").joinpath("templates")
    return Environment(loader=FileSystemLoader(str(templates)), trim_blocks=True, lstrip_blocks=True,
                       undefined=StrictUndefined, keep_trailing_newline=True)


def generate(graph: Graph, schedule: Schedule, plan: Plan, target: Target = TARGETS["host"]) -> dict[str, str]:
    """The generated files, by name (kernel sources not included: see kernel_sources); the
    Makefile and the harness are for `target` (whose harness may take its input from input.c)."""
    env = _templates()
    emitter = _Emitter(graph, schedule)
    emitter.declare_params()
    values = {
        "name": graph.name, "version": __version__, "plan": plan, "arena_bytes": schedule.arena_bytes,
        "dtype": graph.dtype, "ctype": emitter.ctype, "input_shape": _hwc(graph.input_shape),
        "input_size": prod(graph.input_shape), "output_size": prod(graph.nodes[-1].shape),
        "input_quant": graph.input_quant, "output_quant": graph.output_quant, "params": emitter.params,
        "blocks": [emitter.block(i) for i in range(len(schedule.blocks))], "arrays": emitter.arrays,
        "target": target,
    }
    files = {name: env.get_template(f"{name}.j2").render(**values)
             for name in ("model.h", "model.c", "weights.h", "weights.c", "main.c", "Makefile")}
    if target.embedded_harness:
        files["input.c"] = harness_input(graph, np.zeros(prod(graph.input_shape), _element_type(graph)))
    return files


def harness_input(graph: Graph, x: np.ndarray) -> str:
    """input.c: the harness's input tensor (H, W, C order) as a constant, for targets whose RAM
    cannot hold it."""
    values = np.ascontiguousarray(x, dtype=_element_type(graph)).reshape(-1)
    return _templates().get_template("input.c.j2").render(name=graph.name, input_body=_c_body(values))


def _element_type(graph: Graph):
    return np.float32 if graph.dtype == "float32" else np.int8


def kernel_sources() -> dict[str, str]:
    """The kernel library's files, to copy beside the generated code (kernels/)."""
    folder = resources.files("msfcnn.codegen").joinpath("kernels")
    return {item.name: item.read_text() for item in folder.iterdir() if item.name.endswith((".c", ".h"))}
