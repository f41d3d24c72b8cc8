"""C99 from a schedule: the arena, one function per block, the constants and a test harness.

The generated code follows the schedule exactly: every tensor and scratch buffer is a view into
the one static arena at the offset the layout gave it, and each scheme's loop is the same one the
fused numpy executor runs (linebuffer and hcache pull positions on demand, recompute walks
patches), so the C program, the numpy executor and the cost model agree by construction. The
files are rendered from whole templates in `codegen/templates/`; this module only prepares the
values they show.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from importlib import resources
from math import prod

import numpy as np

from ..version import __version__
from ..errors import UserError
from ..ir import NETWORK_INPUT, Graph, is_network_input
from ..ops import CCall, Pattern
from ..plan import Plan
from ..schedule import LoweredBlock, Schedule, loop_kinds
from ..schedule.loop_kinds import EMITTER, handles
from ..schedule.lowered import (WORKSPACE, Channels, Patches, Stream, TimeScan, Whole, as_time_map, step_elements,
                                time_axis)
from ..schedule.schemes import get_scheme
from ..schedule.lowered import Chains
from ..targets import TARGETS, Target

# The generated C's names: `<prefix>_invoke`, `<prefix>_value`, `<prefix>_op0_weights`, macros
# `<PREFIX>_INPUT_SIZE`, ...; under another prefix than the default the kernels' external symbols
# become `<prefix>_msf_*` too (kernels/msfcnn_prefix.h), so that two networks link together.
DEFAULT_PREFIX = "msfcnn"
API_VERSION = 1  # model.h's <PREFIX>_API_VERSION: raise it when a name or a meaning there changes
# A C identifier that starts with a letter and has no "__" and no trailing "_" (NAME_invoke would
# then hold "__", which C++ reserves).
_PREFIX = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*")
PREFIX_HEADER = "kernels/msfcnn_prefix.h"
# Rendered from templates/<name>.j2 for every network (the kernels are copied; input.c and
# PREFIX_HEADER only for some): the C, the harness, and the files of the build systems.
PROJECT_FILES = ("model.h", "model.c", "weights.h", "weights.c", "main.c", "Makefile", "CMakeLists.txt",
                 "idf_component.yml", "zephyr/module.yml", "zephyr/CMakeLists.txt")


def check_prefix(prefix: str) -> str:
    """`prefix` if it can start the generated C's names, else a UserError."""
    if not _PREFIX.fullmatch(prefix) or len(prefix) > 32:
        raise UserError(f"--prefix {prefix!r} is not a C identifier of at most 32 characters that starts with a "
                        f"letter (letters, digits, and single _ between them)")
    return prefix


_C_TYPES = {np.dtype(np.int8): "int8_t", np.dtype(np.int16): "int16_t", np.dtype(np.int32): "int32_t", np.dtype(np.int64): "int64_t",
            np.dtype(np.float32): "float"}


@dataclass
class _Array:
    name: str
    ctype: str
    size: int
    body: str
    comment: str
    shared_by: list[int] = field(default_factory=list)  # later ops whose equal constant this is

    @property
    def description(self) -> str:
        if not self.shared_by:
            return self.comment
        ops = "op" + "s" * (len(self.shared_by) > 1)
        return f"{self.comment}; the same values for {ops} {', '.join(map(str, self.shared_by))}"


@dataclass
class _Emitter:
    graph: Graph
    schedule: Schedule
    prefix: str = DEFAULT_PREFIX
    state_macro: str = "ARENA"  # STATE when the state is a buffer of its own (a shared arena: codegen/shared.py)
    arrays: list[_Array] = field(default_factory=list)
    params: list[dict] = field(default_factory=list)
    # (C type, values) -> the array that holds them: an unrolled recurrent layer's steps share one
    # weight tensor, and equal lookup tables recur, so each distinct constant is stored once.
    _stored: dict = field(default_factory=dict)

    def sfx(self, t: int) -> str:
        """Node t's kernels' suffix: its input's element type's (Graph.kernel_element)."""
        return self.graph.kernel_element(t).kernel_suffix

    def kernel(self, t: int) -> str:
        return f"{self.graph.nodes[t].op.c_kernel}{self.sfx(t)}"

    # ---- constants and params --------------------------------------------------------------
    def declare_params(self) -> None:
        # A dense layer that a block's tail feeds with the streamed map (through a flattening
        # reshape) indexes its weights by the map's (H, W, C) positions, not by the vector's.
        streamed = {b.tail.consumer: as_time_map(self.graph.shape_of(b.stream_end)) for b in self.schedule.blocks if b.tail}
        # An element-wise op of (T, F) sequences in a time scan runs on one step, a column of their
        # one-row maps: its params see those maps.
        stepped = {t for b in self.schedule.blocks if isinstance(b.loops, TimeScan)
                   for t in range(b.first, b.loops.end + 1) if self.graph.nodes[t].op.pattern is Pattern.ELEMENTWISE}
        for t, node in enumerate(self.graph.nodes):
            op = node.op
            if op.c_kernel is None:
                continue
            ctx = self.graph.kernel_context(t)
            in_shapes = self.graph.input_shapes(t)
            if t in streamed:
                in_shapes = [streamed[t]] + in_shapes[1:]
            if t in stepped:
                in_shapes = [as_time_map(shape) for shape in in_shapes]
            names = {}
            for role, values in op.c_consts(ctx).items():
                names[role] = self._constant(t, f"{self.prefix}_op{t}_{role}", np.ascontiguousarray(values),
                                             f"op {t} ({op.describe()}): {role} {list(np.shape(values))}")
            for i in self.graph.states_of(t):  # the op's state buffers: in the arena's persistent region
                names[self.graph.states[i].name] = f"{self.state_macro}({self.schedule.state_offsets[i]})"
            init = op.c_params(ctx, in_shapes, as_time_map(node.shape) if t in stepped else node.shape, names)
            self.params.append({"struct": f"{op.c_kernel}{self.graph.kernel_element(t).params_suffix}_params", "name": f"p{t}", "init": init, "op": t,
                                "describe": op.describe()})

    def _constant(self, t: int, name: str, values: np.ndarray, comment: str) -> str:
        """The name of a weights.c array holding op t's `values`: a new one, or an earlier equal one's."""
        flat = values.reshape(-1)
        key = (_C_TYPES[flat.dtype], flat.tobytes())
        if key in self._stored:
            stored = self._stored[key]
            stored.shared_by.append(t)
            return stored.name
        stored = self._stored[key] = _Array(name, key[0], flat.size, _c_body(flat), comment)
        self.arrays.append(stored)
        return name

    def declare_states(self) -> list[dict]:
        """Each state buffer (Graph.states) for model.c's reset: its place in the persistent region,
        its bytes and the constant array holding its initial value (weights.c)."""
        states = []
        for i, (state, offset) in enumerate(zip(self.graph.states, self.schedule.state_offsets)):
            name = f"{self.prefix}_state{i}_initial"
            flat = np.ascontiguousarray(state.initial).reshape(-1)
            self.arrays.append(_Array(name, _C_TYPES[flat.dtype], flat.size, _c_body(flat),
                                      f"op {state.owner}: the initial {state.name} {list(state.initial.shape)}"))
            states.append({"offset": offset, "place": f"{self.state_macro}({offset})", "bytes": state.nbytes, "initial": name, "owner": state.owner,
                           "name": state.name})
        return states

    # ---- views -------------------------------------------------------------------------------
    def pointer(self, t: int, offsets: dict[int, int]) -> str:
        if t in offsets:  # the network input and output too, when the arena holds them (--count-io)
            return f"ARENA({offsets[t]})"
        if t == NETWORK_INPUT:
            return "(void *)input"
        if is_network_input(t):  # input k of several: the pointer the caller gave invoke_inputs
            return f"(void *)other_inputs[{NETWORK_INPUT - t - 1}]"
        assert t == self.graph.output, f"tensor {t} is not live here"
        return "(void *)output"

    def full_view(self, t: int, offsets: dict[int, int]) -> str:
        h, w, c = _hwc(self.graph.shape_of(t))
        return f"{{ {self.pointer(t, offsets)}, {w * c}, {c}, 0, 0, 0, 0 }}"

    def call(self, t: int, ins: list[str], out: str, region: str, workspace: str = "NULL") -> str:
        """The C call of op t's kernel in the form the op declares (`Op.c_call`): `ins` and `out`
        name msf_view variables, `region` gives the output region's bounds, `workspace` the arena
        bytes of a SEQUENCE kernel's workspace."""
        form = self.graph.nodes[t].op.c_call
        if form is CCall.SEQUENCE:
            return f"{self.kernel(t)}(&p{t}, {ins[0]}.base, {out}.base, {workspace});"
        if form is CCall.REGION:
            return f"{self.kernel(t)}(&p{t}, {', '.join('&' + v for v in ins)}, &{out}, {region});"
        if form is CCall.MAP_TO_VECTOR:
            return f"{self.kernel(t)}(&p{t}, &{ins[0]}, {out}.base);"
        if form is CCall.VECTOR:
            return f"{self.kernel(t)}(&p{t}, {ins[0]}.base, {out}.base);"
        # a view: the same bytes (moves.py: whether the compiler expands the move inline)
        return f"memmove({out}.base, {ins[0]}.base, {self.graph.nbytes(t)});"

    def vector_call(self, t: int, source: str, target: str) -> str:
        """One op of a tail's vector chain: from the vector at C pointer `source` to `target`."""
        form = self.graph.nodes[t].op.c_call
        if form is CCall.MAP_TO_VECTOR:
            n = self.graph.elements(t - 1)
            return ("{ const msf_view vec = { " + source + f", {n}, {n}, 0, 0, 0, 0 }}; "
                    f"{self.kernel(t)}(&p{t}, &vec, {target}); }}")
        if form is CCall.VECTOR:
            return f"{self.kernel(t)}(&p{t}, {source}, {target});"
        return f"memmove({target}, {source}, {self.graph.nbytes(t)});"

    # ---- blocks ------------------------------------------------------------------------------
    def block(self, index: int) -> dict:
        block = self.schedule.blocks[index]
        offsets = self.schedule.tensor_offsets[index]
        scratch = self.schedule.scratch_offsets[index]
        scheme = get_scheme(block.scheme)
        # The values its template partial shows, as its loop kind prepares them.
        data = loop_kinds.handler(EMITTER, block.loops)(self, block, offsets, scratch, index)
        data.update(id=index, template=scheme.template_for(block), explain=scheme.explain(block), moves=self.schedule.moves[index])
        return data

    def title(self, block: LoweredBlock) -> str:
        ops = ", ".join(self.graph.nodes[i].op.describe() for i in range(block.first, block.last + 1))
        span = f"op {block.first}" if block.first == block.last else f"ops {block.first}-{block.last}"
        return f"{span} ({ops})"

    @handles(EMITTER, Whole)
    def whole(self, block: LoweredBlock, offsets, scratch, index: int) -> dict:
        t = block.first
        node = self.graph.nodes[t]
        views = [{"name": f"in{j}", "init": self.full_view(u, offsets)} for j, u in enumerate(node.inputs)]
        views.append({"name": "out", "init": self.full_view(t, offsets)})
        h, w, _ = _hwc(node.shape)
        if node.op.c_call is CCall.NONE and block.alias is not None:
            views, body = [], ["/* a reshape: the output is the input's bytes, where they already are */"]
        else:
            ins = [f"in{j}" for j in range(len(node.inputs))]
            workspace = f"ARENA({scratch[WORKSPACE]})" if WORKSPACE in scratch else "NULL"
            body = [self.call(t, ins, "out", f"0, {h}, 0, {w}", workspace)]
        return {"title": self.title(block), "views": views, "body": body}

    @handles(EMITTER, Channels)
    def channels(self, block: LoweredBlock, offsets, scratch, index: int) -> dict:
        t = block.first
        source = self.graph.nodes[t].inputs[0]
        out_h, out_w, _ = self.graph.shape_of(t)
        plane = f"ARENA({scratch[block.loops.plane.name]})"
        views = [{"name": "in0", "init": self.full_view(source, offsets)}, {"name": "out", "init": self.full_view(t, offsets)}]
        call = f"{self.graph.nodes[t].op.c_kernel}_inplace{self.sfx(t)}(&p{t}, &in0, &out, {plane}, {out_h}, {out_w});"
        return {"title": self.title(block), "views": views, "body": [call]}

    def externals(self, block: LoweredBlock, offsets) -> list[dict]:
        return [{"name": f"x{j}", "init": self.full_view(u, offsets)} for j, u in enumerate(block.reads)]

    def tail(self, block: LoweredBlock, offsets, scratch, end_view: str) -> tuple[list[str], list[str], str]:
        """Prologue, epilogue and the accumulate call of a block's tail (empty without one)."""
        tail = block.tail
        if tail is None:
            return [], [], ""
        consumer = tail.consumer
        kind = self.graph.nodes[consumer].op.c_kernel
        acc = f"ARENA({scratch[tail.acc.name]})"
        prologue = [f"memset({acc}, 0, {tail.acc.nbytes}); /* the {kind[4:]} accumulator */"]
        accumulate = f"{kind}_accumulate{self.sfx(consumer)}(&p{consumer}, {end_view}, {acc}, {{r0}}, {{r1}}, {{c0}}, {{c1}});"
        target = {t: f"ARENA({scratch[s.name]})" for t, s in tail.vectors.items()}
        target[tail.last] = self.pointer(tail.last, offsets)
        epilogue = [f"{kind}_finish{self.sfx(consumer)}(&p{consumer}, {acc}, {target[consumer]});"]
        epilogue += [self.vector_call(t, target[t - 1], target[t]) for t in range(consumer + 1, tail.last + 1)]
        return prologue, epilogue, accumulate

    @handles(EMITTER, Stream)
    def stream(self, block: LoweredBlock, offsets, scratch, index: int) -> dict:
        graph, loops, first = self.graph, block.loops, block.first
        end, axis = loops.end, loops.axis
        local = {t: t - first for t in range(first, end + 1)}
        names = {u: f"s->x[{j}]" for j, u in enumerate(block.reads)}
        externals = self.externals(block, offsets)
        source = self.source(block, scratch, local, names, externals)
        views = []
        for t in range(first, end + 1):
            h, w, c = graph.shape_of(t)
            if t in block.homes:  # an in-place row: a slot of its host's ring, from the slot's gap on
                host, shift = block.homes[t]
                base = f"ARENA({scratch[f'ring{host}']})"
                slot = (graph.shape_of(host)[1] + block.gaps[host]) * c
                views.append(f"{{ {base}, {slot}, {c}, {-shift}, 0, {block.rings[host]}, 0 }}")
            elif t in block.gaps:  # its ring's slots start with a gap of pixels (see schemes/inplace.py)
                gap = block.gaps[t]
                base = f"ARENA({scratch[f'ring{t}'] + gap * c * graph.element_of(t).nbytes})"
                views.append(f"{{ {base}, {(w + gap) * c}, {c}, 0, 0, {block.rings[t]}, 0 }}")
            elif t in block.rings:
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
            pulls = [{"local": local[p.tensor], "upto": p.window.c_end(p.size, graph.shape_of(t)[axis])}
                     for p in loops.pulls if p.consumer == t]
            ins = [f"s->v[{local[u]}]" if u in local else names[u] for u in node.inputs]
            region = ("i, i + 1, 0, " + str(graph.shape_of(t)[1])) if axis == 0 else "s->lo[t], s->hi[t], i, i + 1"
            body = [self.call(t, ins, f"s->v[{local[t]}]", region)]
            if t == end and accumulate:
                r0, r1, c0, c1 = region.split(", ")
                body.append(accumulate.format(r0=r0, r1=r1, c0=c0, c1=c1))
            ops.append({"local": local[t], "index": t, "describe": node.op.describe(), "pulls": pulls, "body": body})
        data = {"axis": axis, "first": first, "count": end - first + 1,
                "title": self.title(block), "externals": externals, "views": views, "ops": ops,
                "prologue": prologue, "epilogue": epilogue, "end_local": local[end],
                "end_extent": graph.shape_of(end)[axis], "source": source}
        if axis == 0:
            data["los"] = [graph.shape_of(t)[0] for t in range(first, end + 1)]
            if source:  # the input's rows: the last position of the pull function
                views.append(source["view"])
                ops.append(source["op"])
                data["los"].append(source["rows"])
                data["count"] += 1
        else:
            data["bands"] = [", ".join(f"{{ {spans[t][0]}, {spans[t][1]} }}" for t in range(first, end + 1))
                             for spans in loops.sweeps]
        return data

    def source(self, block: LoweredBlock, scratch, local: dict, names: dict, externals: list) -> dict | None:
        """How a stream pulls the network input from the caller (--input-stream, `Stream.source`):
        a ring view of its rows, and the code that reads rows into it. A row stream reads a row
        when a reader pulls it (one more position of its pull function); a column stream reads,
        before each band, the rows up to the last that band reads (`band_rows`)."""
        if not getattr(block.loops, "source", False):
            return None
        h, w, c = self.graph.shape_of(NETWORK_INPUT)
        view = f"{{ ARENA({scratch[f'ring{NETWORK_INPUT}']}), {w * c}, {c}, 0, 0, {block.rings[NETWORK_INPUT]}, 0 }}"
        if block.loops.axis == 0:
            local[NETWORK_INPUT] = len(local)
            ring = f"s->v[{local[NETWORK_INPUT]}]"
            op = {"local": local[NETWORK_INPUT], "index": NETWORK_INPUT, "describe": "the network input, a row from the caller",
                  "pulls": [], "body": [f"read_input_row(&{ring}, i);"]}
            return {"view": view, "op": op, "rows": h}
        names[NETWORK_INPUT] = f"s->x[{len(externals)}]"
        externals.append({"name": f"x{len(externals)}", "init": view})
        return {"ring": f"s.x[{len(externals) - 1}]", "rows": h,
                "band_rows": [sweep[NETWORK_INPUT][1] for sweep in block.loops.sweeps]}

    @handles(EMITTER, Chains)
    def chains(self, block: LoweredBlock, offsets, scratch, index: int) -> dict:
        """Chains of three ops (schemes/chains.py): per chain a function making one output row pixel
        by pixel, and the block's order of (chain, row), -1 a row of the network input."""
        graph, loops = self.graph, block.loops
        starts = list(loops.starts)

        def view(t: int) -> str:  # a ring of rows, or the whole tensor
            if t not in block.rings:
                return self.full_view(t, offsets)
            _, w, c = graph.shape_of(t)
            return f"{{ ARENA({scratch[f'ring{t}']}), {w * c}, {c}, 0, 0, {block.rings[t]}, 0 }}"

        chains = []
        for k, a in enumerate(starts):
            b, c = a + 1, a + 2
            rows, cols = graph.nodes[b].op.axis_window(0), graph.nodes[b].op.axis_window(1)
            ha, wa, ca = graph.shape_of(a)
            parts = graph.nodes[b].op.tap_parts(f"p{b}", graph.shape_of(b)[2])
            chains.append({"index": k, "ops": self.title(LoweredBlock(a, c, "", 1, (), None, (), 0)),
                           "kh": rows.kernel, "kw": cols.kernel, "sh": rows.stride, "sw": cols.stride,
                           "pt": rows.pad, "pl": cols.pad, "ha": ha, "wa": wa, "ca": ca, "cb": graph.shape_of(b)[2],
                           "width": graph.shape_of(c)[1], "parts": [{"params": p, "first": f} for p, f in parts],
                           "first_call": self.call(a, ["(*in)"], "row", "y, y + 1, x0, x1"),
                           "last_call": self.call(c, ["value"], "(*out)", "i, i + 1, j, j + 1")})
        tensors = [loops.input_of(starts[0])] + [a + 2 for a in starts]
        return {"title": self.title(block), "views": [view(t) for t in tensors], "chains": chains,
                "order": ", ".join(f"{{ {k}, {i} }}" for k, i in loops.order), "steps": len(loops.order),
                "source": loops.source, "axis": 0}

    @handles(EMITTER, Patches)
    def patches(self, block: LoweredBlock, offsets, scratch, index: int) -> dict:
        graph, loops, first = self.graph, block.loops, block.first
        end = loops.end
        local = {t: t - first for t in range(first, end + 1)}
        externals = self.externals(block, offsets)
        names = {u: f"x{j}" for j, u in enumerate(block.reads)}
        views = []
        for t in range(first, end + 1):
            if f"tile{t}" in scratch:
                c = graph.shape_of(t)[2]
                shape = block.scratch_named(f"tile{t}").shape
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
            ins = [f"v[{local[u]}]" if u in local else names[u] for u in node.inputs]
            body.append(self.call(t, ins, f"v[{j}]", region))
            if t == end and accumulate:
                parts = region.split(", ")
                body.append(accumulate.format(r0=parts[0], r1=parts[1], c0=parts[2], c1=parts[3]))
            ops.append({"index": t, "describe": node.op.describe(), "body": body})

        def table(spans):
            return [", ".join(f"{{ {s[t][0]}, {s[t][1]} }}" for t in range(first, end + 1)) for s in spans]

        return {"title": self.title(block), "count": end - first + 1, "externals": externals,
                "views": views, "ops": ops, "prologue": prologue, "epilogue": epilogue,
                "row_bands": table(loops.row_spans), "col_bands": table(loops.col_spans)}

    @handles(EMITTER, TimeScan)
    def time_scan(self, block: LoweredBlock, offsets, scratch, index: int) -> dict:
        graph, loops = self.graph, block.loops
        ctype = {t: graph.element_of(t).ctype for t in range(block.first, block.last + 1)}
        arena = {name: f"ARENA({offset})" for name, offset in scratch.items()}
        decls = [f"const {ctype[t]} *const y{t} = {graph.nodes[t].op.c_kernel}_cell_output{self.sfx(t)}"
                 f"(&p{t}, {arena[f'state{t}']}); /* op {t}'s output: h in its state */" for t in loops.cells]
        prologue = [f"memset({arena[name]}, 0, {block.scratch_named(name).nbytes});"
                    for name in [f"state{t}" for t in loops.cells] + ["temp"]]
        prologue += [f"{graph.nodes[t].op.c_kernel}_cell_start{self.sfx(t)}(&p{t}, {arena[f'state{t}']});"
                     for t in loops.cells]

        def ring(owner: int) -> str:
            return f"{arena[f'ring{owner}']}"

        def step_pointer(u: int) -> str:
            """Position p of tensor u as a pointer to its values."""
            owner, n = loops.storage.get(u), step_elements(graph.shape_of(u))
            if owner is None:
                return f"(const {graph.element_of(u).ctype} *){self.pointer(u, offsets)} + p * {n}"
            if owner in loops.in_state:
                return f"y{owner}"
            return f"(const {ctype[owner]} *){ring(owner)} + (p % {block.rings[owner]}) * {n}"

        def map_view(u: int) -> str:
            """Tensor u as a one-row map: whole, a ring of columns, or a cell's state."""
            owner, c = loops.storage.get(u), step_elements(graph.shape_of(u))
            if owner is None:  # a (T, F) sequence as the one-row map of its steps
                _, w, _ = as_time_map(graph.shape_of(u))
                return f"{{ {self.pointer(u, offsets)}, {w * c}, {c}, 0, 0, 0, 0 }}"
            if owner in loops.in_state:
                return f"{{ (void *)y{owner}, {c}, {c}, 0, 0, 0, 1 }}"
            k = block.rings[owner]
            return f"{{ {ring(owner)}, {k * c}, {c}, 0, 0, 0, {k} }}"

        views, ops = [], []
        tail_start, tail_end, accumulate = self.tail(block, offsets, scratch, "&tail_in")
        for t in range(block.first, loops.end + 1):
            node = graph.nodes[t]
            u = node.inputs[0]
            n = step_elements(graph.shape_of(t)) if time_axis(graph.shape_of(t)) is not None else 0
            if node.op.recurrent:
                state = arena[f"state{t}"]
                body = [f"(void){node.op.c_kernel}_cell{self.sfx(t)}(&p{t}, {step_pointer(u)}, {state}, {arena['temp']});"]
                copy = f"{n} * sizeof({ctype[t]})"
                if t in block.rings:
                    body.append(f"memcpy(({ctype[t]} *){ring(t)} + (p % {block.rings[t]}) * {n}, y{t}, {copy});")
                elif loops.storage.get(t) is None and n:  # the block's output, whole
                    body.append(f"memcpy(({ctype[t]} *){self.pointer(t, offsets)} + p * {n}, y{t}, {copy});")
            elif node.op.is_view:
                body = ["/* a view: its steps are its input's bytes */"]
            else:  # a window, or an element-wise op of one or two sequences
                ins = [f"in{t}" if k == 0 else f"in{t}_{k}" for k in range(len(node.inputs))]
                views += [{"name": name, "init": map_view(v)} for name, v in zip(ins, node.inputs)]
                views.append({"name": f"out{t}", "init": map_view(t)})
                body = [self.call(t, ins, f"out{t}", "0, 1, p, p + 1")]
            if t == loops.end and loops.tail is not None:  # the tail adds this step
                views.append({"name": "tail_in", "init": map_view(t)})
                body.append(accumulate.format(r0="0", r1="1", c0="p", c1="p + 1"))
            lag, count = loops.lag(t), loops.count(t)
            ops.append({"index": t, "describe": node.op.describe(), "lag": lag, "count": count,
                        "guard": lag > 0 or count < loops.steps, "body": body})
        if loops.tail is not None:
            return {"title": self.title(block), "views": views, "decls": decls, "prologue": prologue + tail_start,
                    "ops": ops, "epilogue": tail_end, "steps": loops.steps}
        epilogue = []
        source = f"(void *)y{loops.end}"
        if loops.end == block.last and time_axis(graph.shape_of(block.last)) is None:
            epilogue.append(f"memcpy({self.pointer(block.last, offsets)}, y{loops.end}, {graph.nbytes(block.last)});")
        for t in range(loops.end + 1, block.last + 1):
            target = self.pointer(t, offsets) if t == block.last else arena[f"vec{t}"]
            epilogue.append(self.vector_call(t, source, target))
            source = target
        return {"title": self.title(block), "views": views, "decls": decls, "prologue": prologue, "ops": ops,
                "epilogue": epilogue, "steps": loops.steps}


def _hwc(shape) -> tuple[int, int, int]:
    return tuple(shape) if len(shape) == 3 else (1, 1, int(prod(shape)))


def _c_body(values: np.ndarray, per_line: int = 16) -> str:
    items = _c_items(values)
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return ",\n".join("    " + line for line in lines)


def _c_items(values: np.ndarray) -> list[str]:
    """Each value as a C literal: float32 in exact hex (a non-finite value as 0), integers in decimal.
    Models carry megabytes of weights, so narrow integers are looked up in a table of every value."""
    if values.dtype == np.float32:
        items = [v.hex() + "f" for v in values.tolist()]
        for i in np.flatnonzero(~np.isfinite(values)).tolist():
            items[i] = "0.0f"
        return items
    if values.dtype.itemsize <= 2:
        low, literals = _integer_literals(values.dtype.str)
        return literals[values.astype(np.int32) - low].tolist()
    return list(map(str, values.tolist()))


@functools.cache
def _integer_literals(dtype: str) -> tuple[int, np.ndarray]:
    """Every value of a narrow integer type and its decimal text: (the lowest value, the texts)."""
    info = np.iinfo(np.dtype(dtype))
    return info.min, np.array([str(v) for v in range(info.min, info.max + 1)], dtype=object)


@functools.cache
def _templates():
    """The templates' one Environment: it keeps each template compiled (compiling them took most
    of write_c's time), and reloads one whose file changed (jinja's auto_reload)."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    templates = resources.files("msfcnn.codegen").joinpath("templates")
    return Environment(loader=FileSystemLoader(str(templates)), trim_blocks=True, lstrip_blocks=True,
                       undefined=StrictUndefined, keep_trailing_newline=True)


def generate(graph: Graph, schedule: Schedule, plan: Plan, target: Target = TARGETS["host"],
             prefix: str = DEFAULT_PREFIX, shared_arena: bool = False) -> dict[str, str]:
    """The generated files, by name (kernel sources not included: see kernel_sources; under a
    prefix other than the default, kernels/msfcnn_prefix.h replaces theirs); the Makefile and the
    harness are for `target` (whose harness may take its input from input.c, and link the
    target's own run-time from support/). `shared_arena`: model.c uses the arena that
    codegen/shared.py defines for several networks, keeps its state in a buffer of its own and
    finds the kernels in the folder above."""
    env = _templates()
    support = support_sources(target)
    emitter = _Emitter(graph, schedule, check_prefix(prefix), "STATE" if shared_arena else "ARENA")
    emitter.declare_params()
    states = emitter.declare_states()
    blocks = [emitter.block(i) for i in range(len(schedule.blocks))]
    values = {
        "prefix": prefix, "PREFIX": prefix.upper(), "default_prefix": DEFAULT_PREFIX, "api_version": API_VERSION,
        "element_bytes": graph.element.nbytes, "output_shape": _hwc(graph.nodes[-1].shape),
        "output_element_bytes": output_element(graph).nbytes, "output_ctype": output_element(graph).ctype,
        "arena_word": arena_word(graph).name,
        "name": graph.name, "version": __version__, "numerics": graph.numerics, "plan": plan, "arena_bytes": schedule.arena_bytes,
        "dtype": graph.dtype, "ctype": graph.element.ctype, "input_shape": _hwc(graph.input_shape),
        "input_size": prod(graph.input_shape), "output_size": prod(graph.nodes[-1].shape),
        "input_quant": graph.input_quant, "output_quant": graph.output_quant, "uint8_edges": (graph.uint8_input, graph.uint8_output),
        "params": emitter.params,
        "input_offset": schedule.input_offset, "output_offset": schedule.output_offset,
        "blocks": blocks, "arrays": emitter.arrays,
        "source_axes": sorted({b["axis"] for b in blocks if b.get("source")}),
        "target": target,
        "support_sources": [name for name in support if name.endswith((".c", ".S"))],
        "outputs": _outputs(graph, schedule), "inputs": _inputs(graph, schedule),
        "states": states, "state_bytes": graph.state_bytes, "input_stream": schedule.input_stream,
        "input_row_size": prod(_hwc(graph.input_shape)[1:]),
        "shared_arena": shared_arena, "kernel_dir": "../kernels" if shared_arena else "kernels",
        "regions": _regions(schedule),
    }
    # model.c includes the headers of the kernels it calls only, and the build files list the
    # kernel sources it needs only: both known once its code is written
    headers = kernel_headers(env.get_template("model.c.j2").render(**values, kernel_headers=[]))
    model_c = env.get_template("model.c.j2").render(**values, kernel_headers=headers)
    values["kernel_files"] = [f"kernels/{n}" for n in project_kernels(model_c) if n.endswith(".c")]
    files = {name: model_c if name == "model.c" else env.get_template(f"{name}.j2").render(**values)
             for name in PROJECT_FILES}
    if prefix != DEFAULT_PREFIX:
        files[PREFIX_HEADER] = env.get_template("msfcnn_prefix.h.j2").render(**values, kernel_symbols=kernel_symbols())
    files.update(support)
    if schedule.regions and not shared_arena:
        files.update(region_scripts(_regions(schedule), target))
    if target.embedded_harness:
        zeros = [np.zeros(graph.elements(t), _element_type(graph)) for t in graph.input_tensors]
        files["input.c"] = harness_input(graph, zeros, prefix)
    return files


def arena_word(graph: Graph):
    """The widest element type of the network's tensors: the arena is aligned for it."""
    return max((graph.element_of(t) for t in range(NETWORK_INPUT, len(graph))), key=lambda e: e.nbytes)


def region_scripts(regions: list[dict], target: Target) -> dict[str, str]:
    """The linker fragment that puts each region's arena section in its memory (msfcnn_regions.ld),
    and for a target linked as the board (Target.region_map), the emulated memory it names.
    `regions`: the arenas, as `_regions` gives them."""
    lines = ["/* Where each arena of the network goes: INCLUDE this file in your linker script after its MEMORY,",
             "   with REGION_ALIAS(\"MSFCNN_<REGION>\", <your memory>) for each region below. NOLOAD: the",
             "   arenas need no initial value (the network writes every byte before reading it). */",
             "SECTIONS", "{"]
    lines += [f"    .msfcnn_{r['name']} (NOLOAD) : ALIGN(16) {{ KEEP(*(.msfcnn_{r['name']})) }} > MSFCNN_{r['NAME']}"
              f"  /* {r['bytes']} B */" for r in regions]
    files = {"msfcnn_regions.ld": "\n".join(lines + ["}", ""])}
    if target.region_map:
        memory = ["/* The board's RAM regions at distinct addresses of the emulated RAM (msfcnn verify --board). */",
                  "MEMORY", "{"]
        memory += [f"    msfcnn_{name} (rw) : ORIGIN = {origin:#x}, LENGTH = {size:#x}"
                   for name, origin, size in target.region_map]
        memory += ["}"] + [f"REGION_ALIAS(\"MSFCNN_{name.upper()}\", msfcnn_{name});" for name, _, _ in target.region_map]
        files["msfcnn_memory.ld"] = "\n".join(memory + ["INCLUDE msfcnn_regions.ld", ""])
    return files


def _regions(schedule: Schedule) -> list[dict]:
    """The arenas of a schedule over several RAM regions (those holding something), for model.c."""
    return [{"name": name, "NAME": name.upper(), "base": base, "bytes": size, "end": base + size,
             "words": -(-size // 4)} for name, base, size in schedule.regions if size]


def output_element(graph: Graph):
    """The element type of the model's outputs (`<prefix>_output_value`), which must share one."""
    elements = {graph.element_of(t) for t in graph.output_tensors}
    if len(elements) > 1:
        raise UserError(f"the model's outputs are of {len(elements)} element types "
                        f"({', '.join(sorted(e.name for e in elements))}): the C API gives them one")
    return elements.pop()


def _outputs(graph: Graph, schedule: Schedule) -> list[dict]:
    """Each model output in the model's order, for the several-output API: its shape, its size,
    its quantisation, whether `invoke`'s output buffer receives it (`main`), and its arena offset
    after the run (None: only in that buffer)."""
    return [{"k": k, "shape": _hwc(graph.shape_of(t)), "size": graph.elements(t), "bytes": graph.nbytes(t),
             "quant": graph.quant_of(t), "main": t == graph.output, "offset": schedule.output_offset_of(t)}
            for k, t in enumerate(graph.output_tensors)]


def _inputs(graph: Graph, schedule: Schedule) -> list[dict]:
    """Each model input in the model's order, for the several-input API: its shape, size,
    quantisation, arena offset (None: the caller's buffer) and where it starts in the harness's
    input (every input one after the other)."""
    starts = np.cumsum([0] + [graph.elements(t) for t in graph.input_tensors]).tolist()
    return [{"k": k, "shape": _hwc(graph.shape_of(t)), "size": graph.elements(t), "bytes": graph.nbytes(t),
             "quant": graph.quant_of(t), "offset": schedule.input_offset_of(k), "start": starts[k]}
            for k, t in enumerate(graph.input_tensors)]


def harness_values(graph: Graph, x) -> np.ndarray:
    """The harness's input: one internal (H, W, C) array, or one per input of a model with several,
    flattened one after the other in the model's order."""
    parts = x if isinstance(x, (list, tuple)) else [x]
    return np.concatenate([np.ascontiguousarray(a, dtype=_element_type(graph)).reshape(-1) for a in parts])


def harness_input(graph: Graph, x, prefix: str = DEFAULT_PREFIX) -> str:
    """input.c: the harness's input tensors (H, W, C order, one after the other) as a constant, for
    targets whose RAM cannot hold them."""
    values = harness_values(graph, x)
    several = len(graph.input_tensors) > 1
    return _templates().get_template("input.c.j2").render(
        name=graph.name, input_body=_c_body(values), prefix=prefix, PREFIX=prefix.upper(),
        size=values.size if several else f"{prefix.upper()}_INPUT_SIZE",
        several=" (its inputs one after the other, in the model's order)" if several else "")


def _element_type(graph: Graph):
    return graph.element.numpy


def kernel_sources() -> dict[str, str]:
    """The kernel library's files, to copy beside the generated code (kernels/)."""
    folder = resources.files("msfcnn.codegen").joinpath("kernels")
    return {item.name: item.read_text() for item in folder.iterdir() if item.name.endswith((".c", ".h"))}


# Written into every project, whatever the network calls: msf_quantize_f32 and msf_dequantize_s8
# convert the caller's float data at an int8 model's edges (docs/c-api.md, "Calling it").
ALWAYS_KERNELS = ("numerics.c",)
_INCLUDE = re.compile(r'^#include "(?:(?:\.\./)?kernels/)?([\w.]+)"', re.M)
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def project_kernels(model_c: str) -> dict[str, str]:
    """The kernel library files a network's `model_c` needs, by name: the source of each msf_*
    function it calls (<op>.c beside the <op>.h that declares it), of those these call in turn,
    and the headers all of them include."""
    library = kernel_sources()
    source_of = {name: header[:-2] + ".c" for header, text in _kernel_headers().items()
                 for name in _EXTERNAL.findall(text) if header[:-2] + ".c" in library}
    needed = set(ALWAYS_KERNELS)
    pending = [model_c, *(library[name] for name in ALWAYS_KERNELS)]
    while pending:
        text = _COMMENT.sub(" ", pending.pop())  # a name in a comment needs no source
        for name in [source_of.get(n) for n in re.findall(r"\bmsf_\w+", text)] + _INCLUDE.findall(text):
            if name in library and name not in needed:
                needed.add(name)
                pending.append(library[name])
    return {name: library[name] for name in sorted(needed)}


def support_sources(target: Target) -> dict[str, str]:
    """The target's own start-up code, C library glue and linker script (codegen/support/<name>/),
    by their names in the project (support/<file>); none for most targets."""
    if target.support is None:
        return {}
    folder = resources.files("msfcnn.codegen").joinpath("support", target.support)
    return {f"support/{item.name}": item.read_text() for item in sorted(folder.iterdir(), key=lambda i: i.name)}


# A declaration of an external function or constant at the start of a line of a kernel header.
# (`void msf_x_s8 MSF_REGION_ARGS(msf_x_params);` declares a region kernel: msfcnn_common.h)
_EXTERNAL = re.compile(r"^(?!static\b|typedef\b|#)(?:extern\s+)?[A-Za-z_][\w\s]*?[\s*](msf_\w+)\s*(?:[(\[]|MSF_REGION2?_ARGS\b)",
                       re.M)
# A type a kernel header names: `} msf_x;` closing a struct, or `typedef ... msf_x;`.
_TYPE = re.compile(r"^(?:\}|typedef\b[^;(]*?)\s*(msf_\w+);", re.M)
# A constant a params struct may hold (MSF_ROUND_RUY, MSF_ACT_RELU...): `MSF_X = value` in an enum.
_CONSTANT = re.compile(r"\b(MSF_[A-Z0-9_]+)\s*=")
# The header every kernel header includes: views, copies, the region loop (kernels/msfcnn_common.h).
COMMON_HEADER = "msfcnn_common.h"


def kernel_symbols() -> list[str]:
    """The kernel library's external symbols (msf_*), as the kernel headers declare them."""
    return sorted({name for text in _kernel_headers().values() for name in _EXTERNAL.findall(text)})


def _kernel_headers() -> dict[str, str]:
    return {name: text for name, text in kernel_sources().items() if name.endswith(".h")}


def _declaring_header() -> dict[str, str]:
    """Each kernel function and params type (msf_*) -> the header that declares it."""
    return {name: header for header, text in _kernel_headers().items()
            for name in _EXTERNAL.findall(text) + _TYPE.findall(text) + _CONSTANT.findall(text)}


def kernel_headers(code: str) -> list[str]:
    """The kernel headers C `code` needs: the common one, and those declaring the msf_* and MSF_*
    names it uses."""
    declared = _declaring_header()
    used = {declared[name] for name in re.findall(r"\b(?:msf|MSF)_\w+", code) if name in declared}
    return [COMMON_HEADER, *sorted(used - {COMMON_HEADER})]
