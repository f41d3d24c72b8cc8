"""What a block of the generated C executes, as counts of the loops its kernels and its scheme's
walk run: the features of the latency model (`latency.model`).

Each count is named `family:loop`. A family is a kernel as the target compiles it (CONV_2D has two
on Arm's DSP extension, a 1x1 one that reads its patch in place and one that gathers it; each
element type has its own), or the block's own code (`block:`, `stream:`, `patch:`, `tail:`). A
loop's count is how often its body runs in the block, so that the instructions the block executes
are close to a sum of counts times a per-target cost of one pass (the coefficients the calibration
fits): the model is linear in the counts by construction, not by assumption about the network.

The counts mirror the loops of `codegen/kernels/*.c` and `codegen/templates/schemes/*.j2`; a change
to a kernel's loop structure calls for a change here and a new calibration (`scripts/calibrate_latency.py`,
whose check in the tests fails when the stored coefficients stop predicting within tolerance).

Kernel calls are enumerated from the lowered block exactly as the fused executor walks it (one call
per output region): a whole op, a row (or a column of a band) of a stream, a tile of a patch.

What is particular to one kernel (its family, its own loops, its channel parts, its output stage)
is the op's to say (`ops.base.Op`'s latency methods, ops/loop_counts.py): this module never names
an op kind or an op class.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from math import prod

import numpy as np

from ..codegen.moves import count_move, library_move
from ..ir import NETWORK_INPUT, Graph, is_network_input
from ..numerics import ACTIVATION_BOUNDS, DOUBLE, SINGLE, activation_range
from ..ops import CCall, Pattern
from ..ops.base import as_feature_map
from ..ops.loop_counts import MAX_RUNS, KernelBuild, KernelRun, channel_blocks, division_loop_steps
from ..schedule import LoweredBlock, loop_kinds, streaming
from ..schedule.loop_kinds import LATENCY, handles
from ..schedule.lowered import Chains
from ..schedule.lowered import Channels, Patches, Stream, TimeScan, Whole, as_time_map, step_elements, time_axis

class Features(Counter):
    """Counts by name. Unlike a Counter's, `+` and `-` keep a count that sums to 0 or less: a value
    count (`value_nonzero_excess`) is negative where more than half the values are 0, and the
    calibration adds the calls' counts up before it fits them."""

    def __add__(self, other):
        total = Features(self)
        total.update(other)
        return total

    def __sub__(self, other):
        total = Features(self)
        total.subtract(other)
        return total


@dataclass(frozen=True)
class _Profile:
    """Per axis of an op's output, prefix sums over positions of: in-bounds window taps, and whether
    the window is whole (not clipped by the input's border)."""

    taps: list[int]  # taps[i] = sum of in-bounds taps of positions < i
    whole: list[int]  # whole[i] = positions < i whose window is not clipped
    inside: np.ndarray  # inside[i] = in-bounds taps of position i

    @staticmethod
    def of(kernel: int, stride: int, pad: int, in_size: int, out_size: int, dilation: int = 1) -> "_Profile":
        """`kernel` is the window's extent; its taps are every `dilation`-th position of it."""
        start = np.arange(out_size) * stride - pad
        if dilation == 1:
            inside = np.minimum(start + kernel, in_size) - np.maximum(start, 0)
        else:  # taps i with 0 <= start + i * dilation < in_size
            first = np.maximum(-(start // dilation), 0)  # ceil(-start / dilation) where start < 0
            end = np.minimum(-((start - in_size) // dilation), (kernel - 1) // dilation + 1)
            inside = end - first
            kernel = (kernel - 1) // dilation + 1
        inside = np.clip(inside, 0, kernel)
        # Python lists: `sums` is called for every region a plan's blocks make, and indexing
        # them is several times faster than numpy's scalars.
        return _Profile(np.concatenate([[0], np.cumsum(inside)]).tolist(),
                        np.concatenate([[0], np.cumsum(inside == kernel)]).tolist(), inside)

    def sums(self, lo: int, hi: int) -> tuple[int, int]:
        return self.taps[hi] - self.taps[lo], self.whole[hi] - self.whole[lo]


def _division_steps(quotient: int) -> int:
    """The quotient bits libgcc's Armv6-M __divsi3 steps through one at a time for a quotient: it
    skips to the highest group of bits (1, 4, 8, 12, ...) the quotient reaches, then steps
    through the bits below the lowest one (0 for a quotient of 0 or 1, 3 below 16, 7 below 256)."""
    if quotient < 2:
        return 0
    return 3 if quotient < 16 else 4 * ((quotient.bit_length() - 1) // 4) + 3


class _Op:
    """One op's kernel as the features see it: its family and its per-region counts."""

    def __init__(self, graph: Graph, t: int, dsp: bool, shape: tuple[int, ...] | None = None, mve: bool = False,
                 values: Counter | None = None):
        """`shape`: the map an element-wise op runs on, its input's and output's, instead of the
        graph's shapes (a time scan's op of (T, F) sequences, one column of their one-row maps);
        `mve`: the core runs the int8 kernels' Helium loops; `values`: the op's whole run's value
        counts (Op.value_counts), whose share a region's call counts by its values."""
        node = graph.nodes[t]
        self.values = Counter(values or ())
        self.index = t
        self.op = node.op
        self.node_inputs = node.inputs
        self.shape = shape or graph.shape_of(t)
        self.in_shape = shape or (graph.shape_of(node.inputs[0]) if node.inputs else self.shape)
        self.float = graph.kernel_element(t).is_float
        self.int8 = graph.kernel_element(t).nbytes == 1
        self.dsp = dsp and not self.float
        self.macs = graph.macs(t)
        self.bytes = graph.nbytes(t)
        self.build = KernelBuild(graph.kernel_element(t).name, self.dsp, mve and self.dsp and self.int8)
        self.wide = self.build.wide
        self.suffix = "_f32" if self.float else ""
        self.family = self.op.latency_family(self.build) + self.suffix
        if self.op.c_call is CCall.REGION and (len(self.shape) != 3 and self.op.pattern is Pattern.ELEMENTWISE
                                               or len(self.in_shape) != 3 and self.op.pattern is Pattern.OPAQUE):
            # an element-wise kernel on a vector runs on it as a 1 x 1 x C map (so does a pack step)
            self.shape, self.in_shape = as_feature_map(self.shape), as_feature_map(self.in_shape)
        if len(self.shape) == 3 and len(self.in_shape) == 3 and self.op.c_call is CCall.REGION:
            windows = [self.op.axis_window(axis) for axis in (0, 1)]
            self.profiles = [_Profile.of(w.kernel, w.stride, w.pad, self.in_shape[axis], self.shape[axis], w.dilation)
                             for axis, w in zip((0, 1), windows)]
            self.kernel = (windows[0].taps, windows[1].taps)
        else:
            self.profiles = None
            self.kernel = (1, 1)
        self.batched = self.op.gathers_runs(self.build)
        # counts that depend on a region's position (not only on its size and clipping)
        self.positional = self.op.counts_by_position or (self.kernel[0] * self.kernel[1] > MAX_RUNS and self.batched)
        self.path = self.op.value_path(graph.kernel_context(t))
        self._taps: dict = {}  # _tap_counts, memoised
        self.stage, self.fast_channels = _output_stage(graph, t)
        # the general stage's values rounded as TFLite's reference kernels do (two roundings), which
        # the fits of LiteRT's rounding do not price: counted apart (0 under LiteRT's numerics)
        self.double_general = self.stage == "general" and self.op.output_stage_rounding(graph.numerics) == DOUBLE
        self.parts = self.op.channel_parts(self.shape[-1])
        self.rectified = self.float and rectified_input(graph, t)
        self.rectified_values = self.float and rectified_input(graph, t, through_functions=True)
        self.pooled_rectified = self.float and self.op.multiplies_input and pooled_rectified_input(graph, t)
        self.dense = self.float and dense_input(graph, t)
        if "products" in self.values:
            self._weigh_zeros()
        self.value_rate = {name: count / max(prod(graph.shape_of(t)), 1) for name, count in self.values.items()}

    def _weigh_zeros(self) -> None:
        """A float window's products priced by their zeros (the value profile's cores): soft float
        multiplies and adds a 0 by its short paths, measured 133 instructions under a product of
        two non-zero values. Each product costs what it costs on a dense input (`value_dense`, on
        top of `mac`), less that for each that reads a 0 (`value_dense_zero`): a ReLU's zeros, a
        PAD's fill."""
        products = self.values.pop("products")
        nonzero = self.values.pop("value_nonzero")
        self.values["value_dense_zero"] = products - nonzero
        if not self.dense:  # (count_float_accumulate counts value_dense on a dense input only)
            self.values["value_dense"] = products

    def axis_key(self, axis: int, lo: int, hi: int, ring: int = 0) -> tuple:
        """What `region`'s counts depend on along one axis (see region_key)."""
        if self.profiles is None or self.positional or hi <= lo or (ring and axis == 1):
            return (lo, hi)
        return (hi - lo, *self.profiles[axis].sums(lo, hi))

    def region_key(self, r0: int, r1: int, c0: int, c1: int, ring: int = 0) -> tuple:
        """What `region`'s counts depend on: the region's size and the clipping of its windows
        (its position only through them, unless some windows hold several batches of runs or
        may wrap the input's column ring)."""
        if ring:
            return (self.index, r0, r1, c0, c1, ring)
        if self.profiles is None or self.positional:
            return (self.index, r0, r1, c0, c1)
        if r1 <= r0 or c1 <= c0:
            return (self.index, 0, 0, 0, 0)
        return (self.index, r1 - r0, c1 - c0, *self.profiles[0].sums(r0, r1), *self.profiles[1].sums(c0, c1))

    def ring_of(self, block: LoweredBlock) -> int:
        """The column ring the op's input is stored in within a column stream of `block`, where
        its kernel's counts depend on it (Op.counts_by_ring); else 0."""
        source = self.node_inputs[0] if self.node_inputs else -1
        return block.rings.get(source, 0) if self.op.counts_ring(self.build) and source >= block.first else 0

    def region(self, r0: int, r1: int, c0: int, c1: int, ring: int = 0) -> Features:
        """The counts of one kernel call over output rows r0..r1, columns c0..c1 (`ring`: the
        input's column ring, Op.counts_by_ring)."""
        f = Features()
        fam = self.family
        f[f"{fam}:call"] += len(self.parts)
        if r1 <= r0 or c1 <= c0:
            return f
        nr, nc = r1 - r0, c1 - c0
        pixels = nr * nc
        row_taps, whole_rows = self.profiles[0].sums(r0, r1)
        col_taps, whole_cols = self.profiles[1].sums(c0, c1)
        taps = row_taps * col_taps
        clipped = pixels - whole_rows * whole_cols
        for channels in self.parts:  # a kernel run over each part of the channels (most ops: one)
            f[f"{fam}:row"] += nr
            f[f"{fam}:pixel"] += pixels
            f[f"{fam}:clipped"] += clipped
            f[f"{fam}:output"] += pixels * channels
            if self.stage:
                f[f"{fam}:output_{self.stage}"] += pixels * channels
            if self.double_general:
                f[f"{fam}:output_general_double"] += pixels * channels
            self.op.count_region(self.run(nr, pixels, whole_rows, taps, row_taps * nc, clipped, channels,
                                          region=(r0, r1, c0, c1), col_ring=ring), f)
            for name, rate in self.value_rate.items():  # (a patch that computes pixels again: their values again)
                f[f"{fam}:{name}"] += rate * pixels * channels
            if self.batched:
                self._batches(f, r0, r1, c0, c1)
        return f

    def run(self, rows: int, pixels: int, whole_rows: int, taps: int, krows: int, clipped: int,
            channels: int, family: str | None = None, region: tuple = (0, 0, 0, 0), col_ring: int = 0) -> KernelRun:
        """What the op's own counts of one kernel run depend on (ops/loop_counts.py)."""
        return KernelRun(family or self.family, self.shape, self.in_shape, self.dsp, self.float, self.stage,
                         self.fast_channels, rows, pixels, whole_rows, taps, krows, clipped, channels, self.wide,
                         self.path, region, col_ring, self.rectified, self.rectified_values, self.dense)

    def _batches(self, f: Features, r0: int, r1: int, c0: int, c1: int) -> None:
        """Pixels whose window has more taps than MSF_MAX_RUNS (a run per tap): gathered a batch at
        a time, again for every block of channels (window.c, all_but_last_batch)."""
        if self.kernel[0] * self.kernel[1] <= MAX_RUNS:
            return
        rows, cols = self._tap_counts(0, r0, r1), self._tap_counts(1, c0, c1)
        blocks = len(channel_blocks(self.shape[2]))
        fam = self.family
        for a, rows_a in rows:
            for b, cols_b in cols:
                taps = a * b
                if taps > MAX_RUNS:
                    n = rows_a * cols_b
                    f[f"{fam}:batched_pixel"] += n
                    f[f"{fam}:batched_block"] += n * blocks
                    f[f"{fam}:batched_gather_tap"] += n * blocks * taps
                    f[f"{fam}:batched_gather_row"] += n * blocks * a  # (a kernel row's located once)
                    f[f"{fam}:batched_call"] += n * blocks * (-(-taps // MAX_RUNS) - 1)
                    # each batch's accumulate call runs its loop over the block's channels again
                    f[f"{fam}:batched_call_output"] += n * self.shape[2] * (-(-taps // MAX_RUNS) - 1)
                    f[f"{fam}:tap"] -= n * (taps - MAX_RUNS)  # the first gather stops at a full batch


    def _tap_counts(self, axis: int, lo: int, hi: int) -> list[tuple[int, int]]:
        """(in-bounds taps, positions with that many) over positions lo..hi along the axis."""
        key = (axis, lo, hi)
        if key not in self._taps:
            counts = np.bincount(self.profiles[axis].inside[lo:hi])
            self._taps[key] = [(int(a), int(counts[a])) for a in np.flatnonzero(counts)]
        return self._taps[key]


# The activations that leave no negative value (their low bound is 0).
RECTIFYING = frozenset(name for name, (low, _) in ACTIVATION_BOUNDS.items() if low == 0.0)


def _relu_behind(graph: Graph, t: int, passes) -> bool | None:
    """Walking back from op t along first inputs through the ops that `passes` lets values by:
    True at a ReLU (fused or standalone), False at an op it does not let by, None at the network's
    input."""
    node = graph.nodes[t]
    while node.inputs and not is_network_input(node.inputs[0]):
        node = graph.nodes[node.inputs[0]]
        if getattr(node.op, "activation", None) in RECTIFYING:
            return True
        if not passes(node.op):
            return False
    return None


def rectified_input(graph: Graph, t: int, through_functions: bool = False) -> bool:
    """Whether op t's first input holds no negative value because a ReLU (fused or standalone)
    made it, through ops that only pass values on or add zeros (Op.keeps_rectified, views), and
    with `through_functions` through functions that keep 0 and signs too (Op.keeps_zeros: Tanh,
    Elu, LeakyRelu). About half of such a map is 0, whose soft-float products and sums take the
    library's short path: a float kernel's multiply-accumulates cost less on it (the cores
    without an FPU)."""
    def passes(op) -> bool:
        keeps = op.keeps_rectified or op.is_view or (through_functions and op.keeps_zeros)
        return keeps and not getattr(op, "value", None)
    return _relu_behind(graph, t, passes) is True


def dense_input(graph: Graph, t: int) -> bool:
    """Whether op t's first input holds no zeros: no ReLU behind it, through views and ops that
    keep a ReLU's zeros (keeps_rectified, keeps_zeros, passes_zeros). An input rectified_input
    misses behind such an op (a CONCATENATION or MUL of ReLU outputs) still holds zeros, whose
    soft-float products and sums take the short path: only a dense input runs every product's
    long path (`value_dense`, on the cores without an FPU)."""
    def passes(op) -> bool:
        return op.keeps_rectified or op.is_view or op.keeps_zeros or op.passes_zeros
    return _relu_behind(graph, t, passes) is not True


def pooled_rectified_input(graph: Graph, t: int) -> bool:
    """Whether op t's first input is a pooled vector (a REDUCE op's, through views) of a map that
    rectified_input holds: no negative value, and 0 only where a channel's whole window was (a
    dead channel, a short window), so fewer zeros than the map had but not none."""
    node = graph.nodes[t]
    while node.inputs and not is_network_input(node.inputs[0]):
        u = node.inputs[0]
        node = graph.nodes[u]
        if node.op.pattern is Pattern.REDUCE:
            return rectified_input(graph, u)
        if not node.op.is_view:
            return False
    return False


def _output_stage(graph: Graph, t: int) -> tuple[str, int]:
    """The int8 output stage a weighted kernel runs (msf_output_stage_mode; the op says its
    rounding, Op.output_stage_rounding): the general requantisation, or a fast loop for one
    rounding, clamping or (full) not; and how many output channels a per-channel kernel (the
    in-place one) can run fast. ("", 0) for ops without such a stage."""
    node = graph.nodes[t]
    rounding = node.op.output_stage_rounding(graph.numerics) if graph.kernel_element(t).nbytes == 1 else None
    if rounding is None:
        return "", 0
    ctx = graph.kernel_context(t)
    right = node.op.c_consts(ctx).get("right")
    fast = 0 if right is None or rounding == SINGLE else int(np.count_nonzero(np.asarray(right) >= 1))
    if right is None or fast < len(right):
        return "general", fast
    low, high = activation_range(node.op.activation, ctx.output_quant)
    return rounding + ("_full" if (low, high) == (-128, 127) else ""), fast


# ---- calls of a block ---------------------------------------------------------------------------
class BlockCounter:
    """The features of lowered blocks of one graph on one kind of core (`dsp`: Arm's DSP extension,
    `mve`: also Helium, whose kernels differ). With `weigh` (a model's features -> predicted instructions) every count
    is weighed as soon as it is made and the results are numbers, which is what planning needs:
    thousands of candidate blocks share their calls, so the weighed calls are cached per op and
    region, per op and band (a column stream's sweep) and per op (a row stream's)."""

    def __init__(self, graph: Graph, dsp: bool, weigh=None, mve: bool = False, values=None):
        """`values`: the float ops' value counts (values.value_profile) on a core without an FPU,
        None on the others (where no count depends on the values)."""
        self.graph, self.dsp, self.mve = graph, dsp, mve
        self.weigh = weigh or (lambda f: f)
        self.values = values or {}
        self._ops: dict[int, _Op] = {}
        self._regions: dict = {}
        self._sweeps: dict = {}
        self._geometry: dict = {}

    def op(self, t: int) -> _Op:
        if t not in self._ops:
            self._ops[t] = _Op(self.graph, t, self.dsp, mve=self.mve, values=self.values.get(t))
        return self._ops[t]

    def _zero(self):
        return self.weigh(Features())

    def call(self, t: int, r0: int, r1: int, c0: int, c1: int, ring: int = 0):
        """One call of op t's kernel in the form the op declares (weighed, cached); `ring`: its
        input's column ring (_Op.ring_of)."""
        key = self.op(t).region_key(r0, r1, c0, c1, ring)
        if key not in self._regions:
            self._regions[key] = self.weigh(self._count_call(t, r0, r1, c0, c1, ring))
        return self._regions[key]

    def _count_call(self, t: int, r0: int, r1: int, c0: int, c1: int, ring: int = 0) -> Features:
        op = self.op(t)
        form = op.op.c_call
        if form is CCall.REGION:
            return op.region(r0, r1, c0, c1, ring)
        f = Features()
        if form is CCall.NONE:  # a view's bytes, moved from its input's place to its own
            node = self.graph.nodes[t]
            # (two tensors live at once lie apart in the arena; the caller's input and output are pointers)
            apart = t != self.graph.output and not any(is_network_input(u) for u in node.inputs)
            count_move(f, op.bytes, apart)
            return f
        # a vector op, or a map into a vector, run whole
        f[f"{op.family}:call"] += 1
        f[f"{op.family}:mac"] += op.macs
        f[f"{op.family}:input"] += prod(op.in_shape)
        f[f"{op.family}:output"] += prod(op.shape)
        if op.stage:
            f[f"{op.family}:output_{op.stage}"] += prod(op.shape)
        if op.double_general:
            f[f"{op.family}:output_general_double"] += prod(op.shape)
        if form is CCall.SEQUENCE:
            op.op.count_sequence(op.family, op.in_shape, op.shape, f)
            if op.float:
                _count_signed_macs(op, f)
        if form is CCall.VECTOR:
            op.op.count_vector(op.family, op.build, op.shape, f)
        if form is CCall.MAP_TO_VECTOR:
            op.op.count_map(op.family, op.build, op.in_shape, f)
            if op.float and op.op.multiplies_input and not op.rectified:
                _count_vector_products(op, f)
        if form is not CCall.SEQUENCE:  # (a sequence's are its products', _count_signed_macs)
            for name, count in op.values.items():
                f[f"{op.family}:{name}"] += count
        return f

    def sweep(self, t: int, axis: int, positions: int, lo: int, hi: int, ring: int = 0):
        """Op t's first `positions` positions along `axis`, one call each, over [lo, hi) of the
        other axis (a stream pulls a tensor's positions from 0 up to the last one read)."""
        key = (t, axis, positions, lo, hi, ring)
        if key not in self._sweeps:
            steps = [(i, i + 1) for i in range(positions)]
            self._sweeps[key] = (self.grid(t, steps, [(lo, hi)]) if axis == 0 else
                                 self.grid(t, [(lo, hi)], steps, ring))
        return self._sweeps[key]

    def grid(self, t: int, row_spans, col_spans, ring: int = 0):
        """One call of op t per row span x column span. A call's counts depend on each axis only
        through `_Op.axis_key`, so the spans are grouped by key and each pair of groups weighed once."""
        op = self.op(t)
        rows, cols = self._groups(op, 0, row_spans), self._groups(op, 1, col_spans, ring)
        total = self._zero()
        for r, (rn, (r0, r1)) in rows.items():
            for c, (cn, (c0, c1)) in cols.items():
                total = total + _times(self.call(t, r0, r1, c0, c1, ring), rn * cn)
        return total

    @staticmethod
    def _groups(op: "_Op", axis: int, spans, ring: int = 0) -> dict:
        groups: dict = {}
        for lo, hi in spans:
            key = op.axis_key(axis, lo, hi, ring)
            count, span = groups.get(key, (0, (lo, hi)))
            groups[key] = (count + 1, span)
        return groups

    def block(self, block: LoweredBlock):
        """The block's counts (weighed): its kernel calls, as its loop kind's counter enumerates
        them (which also adds the loops of its own to `own`), and the block's own loops."""
        own = Features({"block:call": 1})
        total = loop_kinds.handler(LATENCY, block.loops)(self, block, block.loops, own)
        return total + self.weigh(own)

    @handles(LATENCY, Whole)
    def _whole(self, block: LoweredBlock, loops: Whole, own: Features):
        t = block.first
        if self.graph.nodes[t].op.c_call is CCall.NONE and block.alias is not None:
            return self._zero()  # a reshape over its input's bytes: no call, no move (emit.whole)
        h, w = _hw(self.graph.shape_of(t))
        return self.call(t, 0, h, 0, w)

    @handles(LATENCY, Channels)
    def _channels_block(self, block: LoweredBlock, loops: Channels, own: Features):
        own.update(self._channels(block.first))  # one kernel call, counted as the block's own
        return self._zero()

    def _channels(self, t: int) -> Features:
        """The in-place depthwise kernel (kernels/depthwise_inplace.c): channel by channel, row by
        row; int8 pixels whose window lies inside the input take the unrolled inner loop, the
        others the border loop over their in-bounds taps; then the plane is copied back."""
        f = Features()
        op = self.op(t)
        h, w, c = op.shape
        row_taps, whole_rows = op.profiles[0].sums(0, h)
        col_taps, whole_cols = op.profiles[1].sums(0, w)
        family = op.op.in_place_family + ("_s16" if op.wide else op.suffix)
        op.op.count_in_place(op.run(h, h * w, whole_rows, row_taps * col_taps, row_taps * w,
                                    h * w - whole_rows * whole_cols, c, family), f)
        return f

    def _spans(self, t: int, end: int, rows: int, axis: int) -> list[tuple[int, int]]:
        """Per band of `rows` positions of `end` along `axis`, the positions of tensor t it needs
        (streaming.band_table, shared by every block ending at `end`)."""
        key = ("spans", t, end, rows, axis)
        if key not in self._sweeps:
            los, his = streaming.band_table(self.graph, t, end, rows, self._geometry, axis)[t]
            self._sweeps[key] = list(zip(los, his))
        return self._sweeps[key]

    def _per_op(self, key, compute):
        if key not in self._sweeps:
            self._sweeps[key] = compute()
        return self._sweeps[key]

    @handles(LATENCY, Stream)
    def _stream(self, block: LoweredBlock, loops: Stream, own: Features):
        graph, first, end, axis = self.graph, block.first, loops.end, loops.axis
        # Stream.pulls, counted per consumer without building them: a read of each input >= first.
        pulls = {t: sum(u >= first for u in graph.nodes[t].inputs) for t in range(first, end + 1)}
        # Positions each tensor computes along the axis: from 0 to the last one its readers need.
        computed = {t: self._spans(t, end, graph.shape_of(end)[axis], axis)[0][1] for t in range(first, end + 1)}
        total = self._zero()
        if axis == 0:
            bands = 1
            for t in range(first, end + 1):
                total = total + self.sweep(t, 0, computed[t], 0, graph.shape_of(t)[1])
        else:  # a column sweep per band of the stream end's rows
            bands = len(self._spans(end, end, loops.band_rows, 0))
            for t in range(first, end + 1):
                ring = self.op(t).ring_of(block)
                total = total + self._per_op(("columns", end, loops.band_rows, t, ring), lambda t=t, ring=ring: self._sum(
                    self.sweep(t, 1, computed[t], *span, ring) for span in self._spans(t, end, loops.band_rows, 0)))
        for t in range(first, end + 1):
            own["stream:position"] += computed[t] * bands
            own["stream:pull"] += computed[t] * bands * pulls[t]
            self._ring_views(block, t, end, axis, computed[t], loops.band_rows if axis else 0, own)
            if axis == 0:
                self._ring_rows(block, t, computed[t], own)
        own["stream:band"] += bands
        own["stream:band_op"] += bands * (end - first + 1)
        own["stream:op"] += end - first + 1
        if loops.source:
            self._source(loops, own)
        if loops.tail is not None:
            w = graph.shape_of(end)[1]
            regions = ([(i, i + 1, 0, w) for i in range(graph.shape_of(end)[0])] if axis == 0 else
                       [(*span, i, i + 1) for span in self._spans(end, end, loops.band_rows, 0) for i in range(w)])
            self._tail(loops.tail, end, own, regions)
        return total

    def _ring_views(self, block: LoweredBlock, t: int, end: int, axis: int, positions: int, band_rows: int,
                    own: Features) -> None:
        """An element-wise kernel locates each pixel of each of its views (msf_at_s8, once per
        input and the output) with a % of the view's ring where the view is one in the stream:
        a library division on Armv6-M. ring_view_pixel counts them, per pixel and ringed view, and
        ring_view_step the quotient bits each division steps through (_division_steps)."""
        op = self.op(t)
        if op.op.pattern is not Pattern.ELEMENTWISE or op.op.c_call is not CCall.REGION:
            return
        rings = [block.rings[u] for u in (*op.node_inputs, t) if u >= block.first and u in block.rings]
        if not rings:
            return
        if axis:  # positions are columns, over every band's rows
            lines = sum(hi - lo for lo, hi in self._spans(t, end, band_rows, 0))
        else:
            lines = as_feature_map(self.graph.shape_of(t))[1]
        own["stream:ring_view_pixel"] += positions * lines * len(rings)
        own["stream:ring_view_step"] += lines * sum(_division_steps(i // ring) for ring in rings
                                                          for i in range(positions))

    def _ring_rows(self, block: LoweredBlock, t: int, rows: int, own: Features) -> None:
        """An int8 or float window kernel (window.c's loop, PAD's) in a row stream locates its
        input's rows and its output's pixels with a `%` of the view's row ring (msf_stored_row):
        one per in-bounds kernel row of each output pixel where its input is a ring, one per
        output pixel where its output is; a library division on the LX106 (__modsi3). ring_row
        counts them, ring_row_bit the passes of its loop (division_loop_steps; both cost 0 where
        not fitted)."""
        op = self.op(t)
        if op.op.pattern is not Pattern.WINDOW or op.op.c_call is not CCall.REGION or op.wide or op.profiles is None:
            return
        width = self.graph.shape_of(t)[1]
        source = op.node_inputs[0] if op.node_inputs else -1
        if source >= block.first and source in block.rings:
            win = op.op.axis_window(0)
            height, ring = self.graph.shape_of(source)[0], block.rings[source]
            read = [y for r in range(rows) for y in range(r * win.stride - win.pad, r * win.stride - win.pad
                                                           + win.kernel, win.dilation) if 0 <= y < height]
            own["stream:ring_row"] += len(read) * width
            own["stream:ring_row_bit"] += sum(division_loop_steps(y, ring) for y in read) * width
        if t in block.rings:
            own["stream:ring_row"] += rows * width
            own["stream:ring_row_bit"] += sum(division_loop_steps(r, block.rings[t]) for r in range(rows)) * width

    def _source(self, loops: Stream, own: Features) -> None:
        """A stream pulling the network input from the caller (--input-stream): each row is one
        position of the stream (a row stream pulls it as its readers' input, a column stream
        before the band that reads it first), read by a call of the caller's read_rows, which
        copies the row (as the harnesses do: a memcpy, counted as one)."""
        graph = self.graph
        h, w, c = graph.shape_of(NETWORK_INPUT)
        own["stream:position"] += h
        if loops.axis == 0:
            own["stream:pull"] += sum(graph.shape_of(t)[0] for t in range(loops.first, loops.end + 1)
                                      for u in graph.nodes[t].inputs if u == NETWORK_INPUT)
        count_move(own, w * c * graph.element_of(NETWORK_INPUT).nbytes, apart=False, times=h)

    def _sum(self, parts):
        total = self._zero()
        for part in parts:
            total = total + part
        return total

    @handles(LATENCY, Patches)
    def _patches(self, block: LoweredBlock, loops: Patches, own: Features):
        first, end, (tile_rows, tile_cols) = block.first, loops.end, loops.tile
        total = self._zero()
        for t in range(first, end + 1):
            total = total + self._per_op(("patches", end, loops.tile, t), lambda t=t: self.grid(
                t, self._spans(t, end, tile_rows, 0), self._spans(t, end, tile_cols, 1)))
        rows, cols = self._spans(end, end, tile_rows, 0), self._spans(end, end, tile_cols, 1)
        tiles = len(rows) * len(cols)
        own["patch:op"] += tiles * (end - first + 1)
        own["patch:tile"] += tiles
        own["patch:ops"] += end - first + 1
        if loops.tail is not None:
            self._tail(loops.tail, end, own, [(*r, *c) for r in rows for c in cols])
        return total

    @handles(LATENCY, Chains)
    def _chains(self, block: LoweredBlock, loops: Chains, own: Features):
        """Chains (schemes/chains.py, templates/schemes/chains.c.j2): per output pixel of a chain,
        its first op's kernel once per in-bounds kernel row of the depthwise window, over the
        row's in-bounds columns (every row of taps times every span of columns), the last op's
        kernel on the pixel, and the depthwise sums' own loops (kernels/chain.c: per part a start
        and a finish of its channels, per tap its channels); per (chain, row) of the order a step,
        and the input's rows read as a stream's source reads them."""
        graph = self.graph
        total = self._zero()
        for a in loops.starts:
            b, c = a + 1, a + 2
            h, w = graph.shape_of(c)[:2]
            rows = [(y, y + 1) for lo, hi in graph.nodes[b].op.axis_window(0).position_spans(h, graph.shape_of(a)[0])
                    for y in range(lo, hi)]
            cols = graph.nodes[b].op.axis_window(1).position_spans(w, graph.shape_of(a)[1])
            total = total + self._per_op(("chain first", a), lambda a=a, rows=rows, cols=cols: self.grid(a, rows, cols))
            total = total + self._per_op(("chain last", c), lambda c=c, h=h, w=w: self.grid(
                c, [(i, i + 1) for i in range(h)], [(j, j + 1) for j in range(w)]))
            channels, parts = graph.shape_of(b)[2], len(graph.nodes[b].op.tap_parts("p", graph.shape_of(b)[2]))
            krows = len(rows) * w
            taps = len(rows) * sum(hi - lo for lo, hi in cols)
            own["chain:row"] += h
            own["chain:pixel"] += h * w
            own["chain:krow"] += krows
            own["chain:part_krow"] += krows * parts
            own["chain:part_pixel"] += h * w * parts
            own["chain:tap"] += taps
            own["chain:tap_channel"] += taps * channels
            own["chain:output"] += h * w * channels
        own["chain:step"] += len(loops.order)
        if loops.source:
            height, width, depth = graph.shape_of(NETWORK_INPUT)
            count_move(own, width * depth * graph.element_of(NETWORK_INPUT).nbytes, apart=False, times=height)
        return total

    @handles(LATENCY, TimeScan)
    def _time_scan(self, block: LoweredBlock, loops: TimeScan, own: Features):
        """Each cell's steps (its whole op's counts, and one call of its step function per step),
        each window's positions one call each, the step loop's own passes, the zeroing of the
        states and the copies of steps to rings or the output, and the vector head."""
        graph = self.graph
        total = self._zero()
        for t in range(block.first, loops.end + 1):
            op = graph.nodes[t].op
            if op.recurrent:
                total = total + self.call(t, 0, 1, 0, 1)
                copies = Counter({k: v for k, v in self._count_call(t, 0, 1, 0, 1).items()
                                  if k.endswith((":output_copy", ":output_copy_byte"))})
                if copies:  # (a float cell's step does not copy its state to an output sequence)
                    total = total - self.weigh(copies)
                own["scan:cell_step"] += loops.count(t)
                sequence = time_axis(graph.shape_of(t)) is not None
                if sequence and (t in block.rings or t == block.last):  # h copied to a ring or the output
                    _count_scan_copy(own, step_elements(graph.shape_of(t)) * graph.element_of(t).nbytes, loops.count(t))
            elif len(graph.nodes[t].inputs) > 1:  # element-wise on two sequences: the same call per step
                one_step = _Op(graph, t, self.dsp, as_time_map(graph.shape_of(t)), self.mve).region(0, 1, 0, 1)
                total = total + _times(self.weigh(one_step), loops.count(t))
            elif not op.is_view:
                total = total + self.sweep(t, 1, loops.count(t), 0, 1)
        own["scan:step"] += loops.steps
        own["scan:cell"] += len(loops.cells)
        own["scan:zero_byte"] += sum(s.nbytes for s in block.scratch if s.name.startswith(("state", "temp")))
        if loops.tail is not None:
            self._tail(loops.tail, loops.end, own, [(0, 1, p, p + 1) for p in range(loops.count(loops.end))])
            return total
        if loops.end == block.last and time_axis(graph.shape_of(block.last)) is None:
            _count_scan_copy(own, graph.nbytes(block.last))
        for t in range(loops.end + 1, block.last + 1):
            own.update(self._count_call(t, 0, 1, 0, 1))
        return total

    def _tail(self, tail, end: int, f: Features, regions) -> None:
        """The consumer's accumulate per streamed region of the stream end, its finish, and the
        vector ops after it."""
        consumer = self.op(tail.consumer)
        fam = f"{consumer.family}_accumulate"
        channels = self.graph.shape_of(end)[-1]
        for r0, r1, c0, c1 in regions:
            f[f"{fam}:call"] += 1
            f[f"{fam}:value"] += max(r1 - r0, 0) * max(c1 - c0, 0) * channels
            f[f"{fam}:row"] += max(r1 - r0, 0)
            macs = consumer.op.accumulate_macs(max(r1 - r0, 0) * max(c1 - c0, 0) * channels, consumer.shape)
            if macs is not None:
                f[f"{fam}:mac"] += macs
            consumer.op.count_accumulate(fam, max(r1 - r0, 0), max(r1 - r0, 0) * max(c1 - c0, 0), consumer.shape, f)
        f[f"{consumer.family}_finish:call"] += 1
        f[f"{consumer.family}_finish:output"] += prod(consumer.shape)
        f["tail:zero_byte"] += tail.acc.nbytes
        for t in range(tail.consumer + 1, tail.last + 1):
            f.update(self._count_call(t, 0, 1, 0, 1))


def _count_signed_macs(op: "_Op", f: Features) -> None:
    """A float recurrent layer's MACs that read a signed value, `value_signed` (as a float
    window's, on top of `mac`): without an FPU a product or sum with a 0 takes soft float's short
    path. Not signed: the first step's recurrent rows, which read the zero initial state; and,
    counted as `value_rectified` (about half of what they read is 0), the input rows on an input
    a ReLU made (rectified_input) and the later steps' recurrent rows on a ReLU RNN's h."""
    inputs = op.op.input_macs(op.in_shape)
    state = op.macs - inputs - op.op.zero_state_macs(op.in_shape)
    rectified = (inputs if op.rectified else 0) + (state if op.op.rectified_state else 0)
    f[f"{op.family}:value_signed"] += state + inputs - rectified
    if rectified:
        f[f"{op.family}:value_rectified"] += rectified
    values = op.values
    excess = (values["input_nonzero_excess"] if op.rectified else 0) + \
        (values["state_nonzero_excess"] if op.op.rectified_state else 0)
    if excess:
        f[f"{op.family}:value_nonzero_excess"] += excess
    for name, count in values.items():
        if not name.endswith("_nonzero_excess"):
            f[f"{op.family}:{name}"] += count


def _count_vector_products(op: "_Op", f: Features) -> None:
    """A float dense layer's MACs on an input no ReLU left half zeros: `value_signed` (as a float
    window's, on top of `mac`: soft float's long path), or `value_pooled` when the input is a
    pooled rectified map (pooled_rectified_input), whose zeros are fewer and depend on its values."""
    kind = "value_pooled" if op.pooled_rectified else "value_signed"
    f[f"{op.family}:{kind}"] += op.macs


def _times(counts, n: int):
    """counts (a number, or a Counter of counts) n times over."""
    if isinstance(counts, Counter):
        return Features({name: value * n for name, value in counts.items()})
    return counts * n


def _hw(shape) -> tuple[int, int]:
    return (shape[0], shape[1]) if len(shape) == 3 else (1, 1)


def _count_scan_copy(own: Features, size: int, times: int = 1) -> None:
    """A time scan's memcpy of `size` bytes (a step to a ring or the output), `times` times. Its
    size is a constant, so the Arm compilers copy up to 64 bytes inline and call the C library's
    byte loop above that (codegen/moves.py): those copies count `scan:library_copy` and
    `scan:library_copy_byte` too (0 on the targets whose fit does not price them)."""
    own["scan:copy"] += times
    own["scan:copy_byte"] += times * size
    if library_move(size, apart=True):
        own["scan:library_copy"] += times
        own["scan:library_copy_byte"] += times * size
