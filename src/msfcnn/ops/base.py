"""The fixed interface every operator implements.

An op knows its attributes (dataclass fields), its output shape, its MAC count and, for ops that
slide a window over the rows of a feature map, the receptive field that fusion needs. Feature maps
are (H, W, C) without the batch dimension; vectors are (C,).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from math import prod
from typing import Any, Callable, ClassVar, Mapping

import numpy as np

from .. import numerics as nx
from ..errors import UserError
from .loop_counts import Counts, KernelBuild, KernelRun

Shape = tuple[int, ...]


@dataclass(frozen=True)
class Window:
    """A sliding window: kernel, strides and explicit pads (top, left, bottom, right). With
    dilations (d_h, d_w) the kernel's taps are d apart: tap (i, j) reads input position
    (y0 + i * d_h, x0 + j * d_w), and the window spans `extent` positions per axis."""

    kernel: tuple[int, int]
    strides: tuple[int, int] = (1, 1)
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)
    dilations: tuple[int, int] = (1, 1)

    @property
    def extent(self) -> tuple[int, int]:
        """The input positions a window spans per axis (its receptive field): (k - 1) * d + 1."""
        return tuple((k - 1) * d + 1 for k, d in zip(self.kernel, self.dilations))  # type: ignore[return-value]

    @property
    def dilated(self) -> bool:
        return self.dilations != (1, 1)

    @staticmethod
    def resolve(kernel, stride, padding, in_hw: tuple[int, int], dilation=(1, 1)) -> "Window":
        """Build a window from user-level attributes: padding is an int, 'same' or 'valid'. A
        dilation along an axis of one tap is dropped (it reads the same positions)."""
        kernel = _pair(kernel, "kernel")
        sh, sw = _pair(stride, "stride")
        dilations = tuple(d if k > 1 else 1 for k, d in zip(kernel, _pair(dilation, "dilation")))
        kh, kw = ((k - 1) * d + 1 for k, d in zip(kernel, dilations))
        if isinstance(padding, str):
            mode = padding.lower()
            if mode == "valid":
                pads = (0, 0, 0, 0)
            elif mode == "same":  # TensorFlow's rule (on the dilated extent): extra padding goes to the bottom/right
                ph = max((-(-in_hw[0] // sh) - 1) * sh + kh - in_hw[0], 0)
                pw = max((-(-in_hw[1] // sw) - 1) * sw + kw - in_hw[1], 0)
                pads = (ph // 2, pw // 2, ph - ph // 2, pw - pw // 2)
            else:
                raise UserError(f"bad padding {padding!r}: expected an integer, 'same' or 'valid'")
        else:
            if isinstance(padding, bool) or not isinstance(padding, int) or padding < 0:
                raise UserError(f"bad padding {padding!r}: must be a non-negative integer, 'same' or 'valid'")
            pads = (padding,) * 4
        return Window(kernel, (sh, sw), pads, dilations)  # type: ignore[arg-type]

    def output_hw(self, h: int, w: int) -> tuple[int, int]:
        top, left, bottom, right = self.pads
        eh, ew = self.extent
        what = f"kernel {self.kernel[0]}x{self.kernel[1]}" + (f" (dilated: {eh}x{ew})" if self.dilated else "")
        if max(top, bottom) >= eh or max(left, right) >= ew:
            # a window wholly in the padding reads no input (TFLite's SAME never pads that much)
            raise UserError(f"padding {list(self.pads)} (top, left, bottom, right) must be smaller than the "
                            f"{what} on each side")
        if h + top + bottom < eh or w + left + right < ew:
            raise UserError(f"{what} is larger than its (padded) {h}x{w} input")
        return ((h + top + bottom - eh) // self.strides[0] + 1, (w + left + right - ew) // self.strides[1] + 1)



def _pair(value, what: str) -> tuple[int, int]:
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value, value)
    if (not isinstance(value, (list, tuple)) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise UserError(f"bad {what} {value!r}: expected a positive integer or a pair of them")
    if min(value) <= 0:
        raise UserError(f"bad {what} {list(value)}: must be positive")
    return int(value[0]), int(value[1])


@dataclass(frozen=True)
class KernelContext:
    """What a numpy reference kernel needs besides its input arrays.

    `input_quant`/`output_quant` hold ir.Quant (scale, zero_point) per tensor, or None in float32
    graphs; `consts` are the node's constant tensors ("weights", "bias", "weight_scales");
    `numerics` is whose int8 kernels to be bit-exact with (numerics.LITERT or numerics.TFLM, the
    graph's choice). `states` are the node's state buffers (ir.StateBuffer: a stateful op's
    variable tensors), arrays its kernel reads and writes in place; the executors give them.
    """

    consts: Mapping[str, np.ndarray] = field(default_factory=dict)
    input_quant: tuple[Any, ...] = ()
    output_quant: Any = None
    numerics: str = "litert"
    dtype: str = "int8"  # the element type of the node's kernel: its first input's (Graph.kernel_element)
    states: tuple[np.ndarray, ...] = ()

    @property
    def is_float(self) -> bool:
        return self.output_quant is None

    @property
    def is_int16(self) -> bool:
        """A 16x8 graph: int16 activations (zero point 0), int8 weights, int64 biases."""
        return self.dtype == "int16"

    @property
    def qtype(self) -> type:
        """The numpy type of the quantised activations."""
        return np.int16 if self.is_int16 else np.int8

    def activation_range(self, activation: str | None) -> tuple[int, int]:
        """The output clamp of a fused activation, in the activations' integer range."""
        info = np.iinfo(self.qtype)
        return nx.activation_range(activation, self.output_quant, int(info.min), int(info.max))

    def rounding(self, int8_rounding: str) -> str:
        """The requantisation of a conv / depthwise / dense: 16x8 kernels all use TFLite's 64-bit
        MultiplyByQuantizedMultiplier (nx.WIDE), int8 ones `int8_rounding`."""
        return nx.WIDE if self.is_int16 else int8_rounding


class Pattern(Enum):
    """How an op's output positions depend on its inputs: what fusion may do with it (in the
    spirit of TVM's OpPatternKind)."""

    WINDOW = "window"  # an output position reads a window of input positions (conv, pooling, pad)
    ELEMENTWISE = "elementwise"  # an output position reads the same position of every input
    REDUCE = "reduce"  # a feature map into a vector (global pool): can accumulate a streamed map
    VECTOR = "vector"  # works on a whole vector (dense, softmax) or only views bytes (reshape)
    OPAQUE = "opaque"  # needs its inputs whole: never fused


class CCall(Enum):
    """The form of an op's C kernel call (codegen/kernels/<op>.h)."""

    REGION = "region"  # kernel(&params, &in0[, &in1], &out, r0, r1, c0, c1): views, an output region
    MAP_TO_VECTOR = "map_to_vector"  # kernel(&params, &in, out): a view in, a vector out
    VECTOR = "vector"  # kernel(&params, in, out): a vector in, a vector out
    SEQUENCE = "sequence"  # kernel(&params, in, out, workspace): whole tensors and the op's workspace
    NONE = "none"  # no kernel: the op's output is its input's bytes (a reshape)


@dataclass(frozen=True)
class AxisWindow:
    """What an op's output positions read along one spatial axis: output position i reads input
    positions [i * stride - pad, i * stride - pad + kernel), of which those outside the input are
    padding. Element-wise ops are the identity window (1, 1, 0)."""

    kernel: int = 1
    stride: int = 1
    pad: int = 0
    # A dilated window reads every dilation-th of its `kernel` positions (its extent): the
    # geometry above is the extent's, the taps (in-bounds window taps) are fewer.
    dilation: int = 1

    @property
    def taps(self) -> int:
        """The window's taps: (kernel - 1) // dilation + 1."""
        return (self.kernel - 1) // self.dilation + 1

    def span(self, lo: int, hi: int, size: int) -> tuple[int, int, int, int]:
        """(a, b, before, after): input positions [a, b) (clipped to an input of `size`) that output
        positions [lo, hi) read, and how many of the window's positions fall before 0 and after
        `size` (the padding the region needs made explicit: before + (b - a) + after is the
        window's extent)."""
        y0 = lo * self.stride - self.pad
        y1 = (hi - 1) * self.stride - self.pad + self.kernel
        a, b = min(max(y0, 0), size), min(max(y1, 0), size)
        b = max(a, b)  # an empty range of outputs (a tile wholly in a PAD's border) reads no inverted one
        extent = max(y1 - y0, 0)
        return a, b, min(max(-y0, 0), extent), min(max(y1 - size, 0), extent)

    def position_spans(self, count: int, size: int) -> list[tuple[int, int]]:
        """span(i, i + 1, size)[:2] of each output position i < count, in one list (for the walks
        that ask position by position)."""
        stride, pad, kernel = self.stride, self.pad, self.kernel
        return [(min(max(y, 0), size), min(max(y + kernel, 0), size)) for y in range(-pad, count * stride - pad, stride)]

    def c_end(self, size: int, out_size: int, index: str = "i") -> str:
        """A C expression: one past the last input position that output position `index` (of
        `out_size`) reads (clipped at the input's end; it may be <= 0 when the position reads only
        padding)."""
        if (self.kernel, self.stride, self.pad) == (1, 1, 0) and out_size <= size:
            return f"{index} + 1"  # (a PAD's positions past the input's end read none of it)
        return f"MSF_MIN({size}, {index} * {self.stride} + {self.kernel - self.pad})"


IDENTITY_WINDOW = AxisWindow()


class Op:
    """Base class: subclasses are dataclasses whose fields are the op's attributes."""

    kind: ClassVar[str]
    arity: ClassVar[int] = 1  # number of activation inputs
    pattern: ClassVar[Pattern] = Pattern.OPAQUE
    c_call: ClassVar[CCall] = CCall.REGION
    # True for ops that can consume a streamed feature map position by position: they provide
    # accumulate(acc, region, rows, cols, in_shape, ctx) and finish(acc, in_shape, ctx).
    accumulates: ClassVar[bool] = False
    is_view: ClassVar[bool] = False  # the output is the input's bytes under another shape (reshape)
    # True for a recurrent cell that a time scan may run one step at a time (schemes/timescan.py):
    # it provides cell_bytes, cell_views, cell_start and cell_step, and its C kernel
    # `<c_kernel>_cell_start`, `<c_kernel>_cell` and `<c_kernel>_cell_output` (kernels/<op>_cell.h,
    # kernels/recurrent_cell.h).
    recurrent: ClassVar[bool] = False
    # The element types ("int8", "int16", "float32", "uint8") of the first input that the op has
    # kernels for; a frontend refuses any other (see `supports`). A uint8 kernel computes on the
    # int8 values holding the same reals (frontends/tflite.py's _UINT8_SHIFT).
    elements: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **facts):
        """An op states its fusion facts in its class statement, e.g.
        `class Conv2D(Op, pattern=Pattern.WINDOW)`; the others keep the defaults above."""
        for name, value in facts.items():
            if name not in ("pattern", "c_call", "accumulates", "is_view", "elements", "recurrent"):
                raise TypeError(f"{cls.__name__}: {name} is not an op fact")
            setattr(cls, name, value)
    # The C kernel (src/msfcnn/codegen/kernels/): functions `<c_kernel>_s8` / `<c_kernel>_f32`
    # (tails: `<c_kernel>_accumulate_*` and `<c_kernel>_finish_*`), parameters in a
    # `<c_kernel>_params` struct. None: the op needs no kernel (a reshape aliases its input).
    c_kernel: ClassVar[str | None] = None

    @property
    def window(self) -> Window | None:
        """The sliding window over rows, or None for ops that are not spatial windows."""
        return None

    def axis_window(self, axis: int) -> AxisWindow:
        """What output positions read along axis 0 (rows) or 1 (columns) of the input(s): the op's
        window for window ops, the identity for element-wise ones."""
        win = self.window
        if win is None:
            return IDENTITY_WINDOW
        return AxisWindow(win.extent[axis], win.strides[axis], win.pads[axis], win.dilations[axis])

    def on_region(self, border: tuple[int, int, int, int]) -> "Op":
        """The op that computes an output region from the input positions it reads (cut out of
        the input), given the padding (top, left, bottom, right) the region's window has outside
        the input. Window ops replace their pads; element-wise ops are unchanged."""
        win = self.window
        return self if win is None else replace(self, win=replace(win, pads=border))

    @property
    def writes_over_input(self) -> bool:
        """Whether output value i reads only value i of each input, so that the op may write its
        output over a dying input of its size: element-wise ops and views (and the ADDs whose
        values depend on their place in the whole tensor, which fusion may not cut)."""
        return self.pattern is Pattern.ELEMENTWISE or self.is_view

    def for_numerics(self, ctx: "KernelContext", shape: Shape) -> "Op":
        """The op that computes this one as the kernels of `ctx.numerics` do (Graph.numerics, set
        once a graph is loaded), given its context and output shape: the op itself, unless that
        runtime's arithmetic needs a kernel of its own (ADD under LiteRT: ops/add_litert.py, found
        through `in_numerics`)."""
        return self

    def run_whole(self, inputs: list[np.ndarray], ctx: "KernelContext", workspace: np.ndarray | None) -> np.ndarray:
        """The numpy kernel on whole tensors, with the op's workspace (workspace_bytes of the arena,
        None when it has none) for the bytes the C kernel keeps there: `reference` for most ops."""
        return self.reference(inputs, ctx)

    def workspace_bytes(self, element: str) -> int:
        """Arena bytes the kernel needs besides its inputs and output while it runs (the states of a
        recurrent op), handed to a SEQUENCE kernel as its workspace; 0 for most ops."""
        return 0

    def tap_parts(self, params: str, channels: int) -> tuple[tuple[str, int], ...]:
        """For an int8 depthwise conv of multiplier 1 whose sums a kernel may add tap by tap
        (kernels/chain.c, the `chains` scheme): its C params as plain depthwise params structs (C
        expressions of its params variable `params`), each with the first of the `channels` output
        channels it covers. () for every other op."""
        return ()

    def in_place_channels(self, ctx: "KernelContext | None" = None) -> bool:
        """True when output channel c reads only input channel c, so the op can run channel by
        channel over its own input; its C kernel then has an `<c_kernel>_inplace` variant."""
        return False

    @classmethod
    def supports(cls, element: str) -> bool:
        """Whether the op has a kernel for a first input of element type `element`."""
        return element in cls.elements

    @classmethod
    def numerics_for(cls, element: str) -> tuple[str, ...]:
        """The numerics (numerics.NUMERICS) whose kernels the op has for `element`, for every value
        of its attributes (refused_under may refuse some attribute values under others). TFLite
        Micro has no uint8 kernels (ir.with_numerics refuses uint8 models under tflm)."""
        if not cls.supports(element):
            return ()
        return (nx.LITERT,) if element == "uint8" else nx.NUMERICS

    def takes_clamp(self) -> bool:
        """Whether the op's kernels apply the fused RELU / RELU6 of an `activation` field, so that a
        clamp after it may fold into it (frontends/rewrite.py)."""
        return "activation" in getattr(self, "__dataclass_fields__", {})

    def refused_under(self, numerics: str) -> str | None:
        """Why the runtime whose numerics are `numerics` has no kernel for this op (None: it has
        one); the graph then cannot follow those numerics (ir.with_numerics)."""
        return None

    def output_element(self, input_element: str) -> str:
        """The element type's name of the output, given the first input's: the same, except for the
        ops that convert (DEQUANTIZE, QUANTIZE)."""
        return input_element

    def in_region(self, rows: tuple[int, int], cols: tuple[int, int]) -> "Op":
        """The op that computes the output region rows x cols (as on_region, which it follows):
        itself, except for an op whose arithmetic depends on where a value lies in the whole
        tensor (the interpreter's QUANTIZE / DEQUANTIZE, whose vector code rounds differently)."""
        return self

    def output_shape(self, inputs: list[Shape]) -> Shape:
        raise NotImplementedError

    def with_output_shape(self, shape: Shape) -> "Op":
        """The op that gives an output of `shape` from an input of as many values: a view with
        that target shape (a streaming model's views see fewer rows, frontends/sliding.py); the
        op itself for the others, whose output shape follows their inputs."""
        return self

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        """Multiply-accumulates of one unfused execution (pooling and adds count one per tap)."""
        raise NotImplementedError

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        """The numpy reference kernel: unbatched (H, W, C) / (C,) arrays in, one array out.

        int8 graphs follow TFLite's integer arithmetic exactly; float32 graphs compute in float32.
        """
        raise NotImplementedError(f"{self.kind} has no numpy kernel yet")

    def describe(self) -> str:
        return self.kind

    # ---- the latency model's counts of the C kernel's loops (latency/features.py) ----------------
    # True for kernels that gather a run per window tap (depthwise, pooling; window.c): a window of
    # more than MSF_MAX_RUNS taps is gathered a batch at a time.
    runs_per_tap: ClassVar[bool] = False
    # An int8 kernel without coefficients of its own, counted as the calibrated kernel whose loops
    # it runs (the table ops run msf_lookup_s8 as LOGISTIC does); None: its own.
    int8_counted_as: ClassVar[str | None] = None
    # A kernel that is not its kind's usual one (a numerics or uint8 variant's, e.g. LiteRT's ADD or
    # the weight-offset convolutions) names its own family, so that it is calibrated on its own.
    kernel_family: ClassVar[str | None] = None
    # The 16x8 kernel's family, before "_s16" (None: the kind): one per op, whatever its shape.
    wide_family: ClassVar[str | None] = None
    # The output's values are some of the first input's, or zeros (PAD, MAX_POOL_2D, a view): an
    # input that a ReLU left without negative values stays so (features.rectified_input).
    keeps_rectified: ClassVar[bool] = False
    # A function of each value that maps 0 to 0 and keeps every value's sign (Tanh, Elu,
    # LeakyRelu): a rectified input stays so, for the element-wise kernels' counts only
    # (features.rectified_input's through_functions; the products' counts keep their fits).
    keeps_zeros: ClassVar[bool] = False
    # Every output value is a copy or a product of an input's value (CONCATENATION, MUL, a channel
    # shuffle, a resize, MAXIMUM, PRELU): a ReLU's zeros reach the consumer, though signs may not
    # (features.dense_input: whether a float product reads no zero).
    passes_zeros: ClassVar[bool] = False
    # A MAP_TO_VECTOR kernel whose MACs multiply its input by weights: on soft float a product of
    # a signed (not rectified) input takes the library's long path (features: `value_signed`).
    multiplies_input: ClassVar[bool] = False

    @classmethod
    def own_family(cls, kernel: KernelBuild) -> str | None:
        """The family of a kernel that is not the kind's int8 or float32 one: a 16x8 kernel, or a
        variant's (kernel_family); None for the kind's own kernels."""
        if kernel.wide:
            return (cls.wide_family or cls.kind) + "_s16"
        return cls.kernel_family

    def latency_family(self, kernel: KernelBuild) -> str:
        """The kernel as the target compiles it, which names its counts (`family:loop`; features.py
        appends "_f32" for float kernels): its kind, unless the kernel has several loop structures
        (`kernel.dsp`: an int8 kernel on a core with Arm's DSP extension) or is not the kind's."""
        return self.own_family(kernel) or self._int8_or_kind(kernel)

    @classmethod
    def latency_families(cls, kernel: KernelBuild) -> tuple[str, ...]:
        """Every family `latency_family` names for some op of the class (the support matrix,
        support.py, asks which targets have coefficients for all of them); a class whose
        latency_family depends on its attributes lists each family they can give."""
        return (cls.own_family(kernel) or cls._int8_or_kind(kernel),)

    @classmethod
    def _int8_or_kind(cls, kernel: KernelBuild) -> str:
        return cls.int8_counted_as if kernel.int8 and cls.int8_counted_as else cls.kind

    def value_path(self, ctx: KernelContext) -> str:
        """The per-value path of the kernel that the node's constants, quantisation and numerics
        choose, when the kernel has several of different cost (ABS rescales or not): it names a
        count of its own, or says where the paths split (QUANTIZE's vector code ends). "" for
        kernels with one path."""
        return ""

    def gathers_runs(self, kernel: KernelBuild) -> bool:
        """Whether the kernel gathers a window's taps as runs in batches (window.c): the int8 and
        float32 kernels of runs_per_tap, not the 16x8 ones."""
        return self.runs_per_tap and not kernel.wide

    def count_vector(self, family: str, kernel: KernelBuild, shape: Shape, counts: Counts) -> None:
        """Add the counts of a vector kernel's own loops (a call's inputs and outputs are counted by
        features.py): a 16x8 vector op over a map (SOFTMAX over each pixel's channels) runs once per
        row of its last axis, and its per-row work (its tables, its reciprocal) is most of its
        cost. (Not counted for the int8 and float32 kernels, whose stored fits have no such count.)"""
        if kernel.wide:
            counts[f"{family}:vector_row"] += prod(shape[:-1])

    def count_map(self, family: str, kernel: KernelBuild, in_shape: Shape, counts: Counts) -> None:
        """Add the counts of a MAP_TO_VECTOR kernel's own loops over its whole input map (its call,
        MACs, inputs and outputs are counted by features.py)."""

    def count_sequence(self, family: str, in_shape: Shape, output: Shape, counts: Counts) -> None:
        """Add the counts of a SEQUENCE kernel's own loops over one whole run (its call, MACs,
        inputs and outputs are counted by features.py)."""

    def count_accumulate(self, family: str, rows: int, pixels: int, output: Shape, counts: Counts) -> None:
        """Add the counts of the accumulate's own loops over one streamed region of `rows` rows and
        `pixels` pixels (its calls, values, rows and MACs are counted by features.py)."""

    def count_region(self, run: KernelRun, counts: Counts) -> None:
        """Add the counts of the kernel's own loops for one run over a region (the calls, rows,
        pixels and outputs every region kernel has are counted by features.py)."""

    def value_counts(self, inputs: list[np.ndarray], output: np.ndarray, ctx: KernelContext) -> dict[str, float]:
        """The counts of one whole run of the kernel that depend on its values, on these inputs and
        this output (the reference's): the paths soft float takes by value on a core without an
        FPU (the latency model's value profile; ops/soft_float.py). features.py scales a region
        kernel's by the values a call computes. None for a kernel whose paths do not depend on
        its values."""
        return {}

    def channel_parts(self, channels: int) -> tuple[int, ...]:
        """The output channels of each kernel run over a region: all of them in one run, for most
        kernels."""
        return (channels,)

    def output_stage_rounding(self, numerics: str) -> str | None:
        """The rounding of the int8 output stage the kernel shares with the other weighted kernels
        (msf_output_stage_mode, whose fast loops the latency model counts apart) under the graph's
        `numerics`; None: the kernel has no such stage."""
        return None

    def accumulate_macs(self, values: int, output: Shape) -> int | None:
        """The multiply-accumulates of `accumulate` over `values` streamed values of an op whose
        output has `output`; None when its accumulate only adds (a mean)."""
        return None

    def weights_shape(self, in_shape: Shape, out_shape: Shape) -> tuple[Shape, int] | None:
        """(shape of the "weights" constant, fan-in of one output) of an op with weights, for
        random ones (latency/calibration.py); None for ops without weights."""
        return None

    # whether count_region depends on where the region lies in the tensor (KernelRun.region), not
    # only on its size and its windows' clipping: the latency model then weighs each region apart
    counts_by_position: ClassVar[bool] = False
    # whether count_region depends on the column ring its input is stored in (KernelRun.col_ring,
    # in a column stream): a window that wraps the ring is read otherwise (then also by position)
    counts_by_ring: ClassVar[bool] = False

    def counts_ring(self, kernel: KernelBuild) -> bool:
        """counts_by_ring for the kernel build the target runs (a kernel whose other builds do not
        read a wrapped window otherwise says so for its own build only)."""
        return self.counts_by_ring
    in_place_family: ClassVar[str | None] = None  # the in-place kernel's counts' names

    def count_in_place(self, run: KernelRun, counts: Counts) -> None:
        """Add the counts of the in-place kernel (in_place_channels) over the whole map."""
        raise NotImplementedError(f"{self.kind} has no in-place kernel")

    def accumulator_bound(self, ctx: KernelContext) -> int | None:
        """The largest magnitude the integer accumulator of the op's kernels can reach, on any
        input, at any step of the sum (the bias and any part of the products); None for an op
        without a weighted sum. The importer refuses a model where it overflows (ir/arithmetic.py)."""
        return None

    def summed_values(self, in_shapes: list[Shape]) -> int | None:
        """The most input values one output's integer sum adds (pooling and means, whose kernels
        sum raw values in int32 like TFLite's), or None for an op without such a sum. The importer
        refuses a model where the sum can overflow (ir/arithmetic.py)."""
        return None

    # ---- the C kernel's interface (the code generator's contract) -------------------------------
    def c_consts(self, ctx: KernelContext) -> dict[str, np.ndarray]:
        """The constant arrays the C kernel's params point to, by role ("weights", "bias", "mult",
        "shift", "exp_table"): numpy arrays whose dtype is the C element type (int8, int32,
        float32), to be emitted flattened in C order. Computed with the numpy kernel's helpers."""
        return {}

    def c_params(self, ctx: KernelContext, in_shapes: list[Shape], out_shape: Shape,
                 names: Mapping[str, str]) -> str:
        """The C99 designated initializer of the kernel's `<c_kernel>_params` struct, for a node
        with these input / output shapes; `names` maps each role of `c_consts` to the C array
        that holds it."""
        raise NotImplementedError(f"{self.kind} has no C kernel")


# ---- numerics variants --------------------------------------------------------------------------
# How an op computes under one runtime's numerics, when that runtime's kernel rounds its own way:
# (op class, numerics) -> choose(op, ctx, shape), which gives the op to run (a variant, or `op`).
# A variant's module registers its chooser (`numerics_variant`) and imports only the op it varies;
# ops/__init__.py imports every variant module, so the op's own module never imports them back.
_NUMERICS_VARIANTS: dict[tuple[type, str], Callable[[Op, KernelContext, Shape], Op]] = {}


def numerics_variant(op_class: type, numerics: str):
    """Decorator: register `choose(op, ctx, shape) -> Op` as how `op_class`'s ops compute under
    `numerics` (one chooser per class and numerics)."""
    def register(choose):
        if (op_class, numerics) in _NUMERICS_VARIANTS:
            raise TypeError(f"{op_class.__name__} already has a {numerics} numerics variant")
        _NUMERICS_VARIANTS[(op_class, numerics)] = choose
        return choose
    return register


def in_numerics(op_class: type, op: Op, ctx: KernelContext, shape: Shape) -> Op:
    """`op` (an `op_class` op) as the kernels of `ctx.numerics` compute it: the registered
    variant's choice, or `op` itself when that runtime has no variant of the class."""
    choose = _NUMERICS_VARIANTS.get((op_class, ctx.numerics))
    return op if choose is None else choose(op, ctx, shape)


class SameShapeBinary(Op):
    """An element-wise op of two tensors of one shape (add, mul): one MAC per output value."""

    arity = 2

    def output_shape(self, inputs: list[Shape]) -> Shape:
        if inputs[0] != inputs[1]:
            raise UserError(f"{self.kind} of mismatched shapes {list(inputs[0])} and {list(inputs[1])}")
        return inputs[0]

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        size = 1
        for dim in output:
            size *= dim
        return size


class ValueMap(Op):
    """An op that maps values and keeps its input's shape, with no multiply-accumulates
    (activation, requantisation, softmax)."""

    def output_shape(self, inputs: list[Shape]) -> Shape:
        return inputs[0]

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        return 0


def c_float(value: float) -> str:
    """An exact C float literal (hexadecimal) of value rounded to float32."""
    value = float(np.float32(value))
    if not np.isfinite(value):
        raise ValueError(f"no finite float32 literal for {value}")
    return "0.0f" if value == 0 else value.hex() + "f"


def c_int(value: int) -> str:
    """A C integer literal of an int32 value (INT32_MIN cannot be written as a plain literal)."""
    value = int(value)
    return "(-2147483647 - 1)" if value == -(1 << 31) else str(value)


def c_struct(fields: Mapping[str, Any]) -> str:
    """A designated initializer: ints become integer literals, floats exact float literals, None
    NULL, strings (C names, enum constants) stay as they are."""
    def literal(value):
        if value is None:
            return "NULL"
        if isinstance(value, str):
            return value
        if isinstance(value, (bool, int, np.integer)):
            return c_int(value)
        return c_float(value)
    return "{ " + ", ".join(f".{name} = {literal(v)}" for name, v in fields.items()) + " }"


C_ROUNDING = {"double": "MSF_ROUND_DOUBLE", "ruy": "MSF_ROUND_RUY", "single": "MSF_ROUND_SINGLE",
              "wide": "MSF_ROUND_WIDE"}
C_ACTIVATION = {None: "MSF_ACT_NONE", "relu": "MSF_ACT_RELU", "relu6": "MSF_ACT_RELU6"}


def c_pointer(names: Mapping[str, str], consts: Mapping[str, np.ndarray], role: str) -> str | None:
    """The C array holding a constant role, or None (NULL) when the op has no such constant."""
    if role not in consts:
        return None
    if role not in names:
        raise KeyError(f"no C array name given for the {role!r} constant")
    return names[role]


def window_fields(win: Window) -> dict[str, int]:
    """The window part of a conv / depthwise / pool params struct (bottom / right pads are
    implicit: the output region never reaches beyond them)."""
    return {"kh": win.kernel[0], "kw": win.kernel[1], "stride_h": win.strides[0], "stride_w": win.strides[1],
            "pad_top": win.pads[0], "pad_left": win.pads[1]}


def as_feature_map(shape: Shape) -> tuple[int, int, int]:
    """(H, W, C) of a feature map; a vector (C,) or any other shape is 1 x 1 x size."""
    if len(shape) == 3:
        return tuple(int(d) for d in shape)  # type: ignore[return-value]
    size = 1
    for dim in shape:
        size *= int(dim)
    return 1, 1, size


def require_feature_map(shape: Shape, kind: str) -> tuple[int, int, int]:
    if len(shape) != 3:
        raise UserError(f"{kind} needs an (H, W, C) feature map, got shape {list(shape)}")
    return shape  # type: ignore[return-value]
