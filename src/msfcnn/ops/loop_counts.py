"""What the latency model (latency/features.py) hands an op to count its C kernel's loops.

An op counts the loops of its own kernel (`Op.count_region`), next to the kernel's numpy twin,
so that a change to a kernel's loops is made in one module. The generic machinery (which calls a
block makes, the windows' clipping, the names' family prefix) stays in latency/features.py.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

CHANNEL_BLOCK = 16  # MSF_CHANNEL_BLOCK (kernels/window.h): output channels per accumulator block
MAX_RUNS = 25  # MSF_MAX_RUNS: runs of a window gathered at once (a depthwise or pool tap is a run)
POINTWISE_CHUNK = 96  # MSF_POINTWISE_CHUNK (kernels/conv2d.c): patch values extended at once on DSP cores
# Helium (MSF_ARM_MVE): values a vector holds, output channels a CONV_2D block takes (MSF_MVE_BLOCK,
# msfcnn_common.h), the longest patch it gathers (MSF_MVE_PATCH, conv2d.c), and a depthwise
# block's channels and largest window (MSF_MVE_DEPTHWISE_BLOCK, MSF_MVE_TAPS, depthwise_conv2d.c)
MVE_LANES = 16
MVE_BLOCK = 64
MVE_PATCH = 512
MVE_DEPTHWISE_BLOCK = 96
MVE_TAPS = 49
# The blocked DSP depthwise loop's (Cortex-M4, M7, M33; 3 x 3 windows): its block of channels
# (MSF_DSP_DEPTHWISE_BLOCK, depthwise_conv2d.c)
DSP_DEPTHWISE_BLOCK = 16
DSP_MAX_CHANNELS, DSP_MIN_PIXELS = 64, 8  # with multiplier 1, the calls it takes (MSF_DSP_*)

Counts = Counter  # feature name (`family:loop`) -> how often the loop's body runs


def channel_blocks(channels: int, block: int = CHANNEL_BLOCK) -> list[int]:
    """The output channels of each accumulator block (MSF_CHANNEL_BLOCK at a time, or `block`)."""
    return [min(block, channels - k) for k in range(0, channels, block)]


def vectors(values: int, lanes: int = MVE_LANES) -> int:
    """Vectors of `lanes` values a tail-predicated loop over `values` runs (the last one partial)."""
    return -(-values // lanes)


@dataclass(frozen=True)
class KernelBuild:
    """Which build of an op's C kernel a target runs, as far as its loops differ: the element type
    of the values it reads and whether the core has Arm's DSP-extension loops."""

    element: str  # "int8", "int16" (a 16x8 kernel), "float32"; "uint8" when the caller knows the
    # model's tensors are uint8 (the support matrix; inside a graph they are int8 and the op knows)
    dsp: bool
    mve: bool = False  # an int8 kernel built with the Helium (MVE) loops, where it has them (cortex-m55)

    @property
    def int8(self) -> bool:
        """An 8-bit kernel (uint8 models run int8 kernels on their values - 128)."""
        return self.element in ("int8", "uint8")

    @property
    def wide(self) -> bool:
        """A 16x8 kernel (kernels/int16.c and the int16 kernels of the others)."""
        return self.element == "int16"


@dataclass(frozen=True)
class KernelRun:
    """One run of an op's kernel over an output region (or, for the in-place schemes, over the
    whole map), as the latency model counts it."""

    family: str  # the counts' name prefix: Op.latency_family, "_f32" for float kernels
    shape: tuple[int, ...]  # the op's output and first input, (H, W, C) for region kernels
    in_shape: tuple[int, ...]
    dsp: bool  # an int8 kernel built with Arm's DSP-extension loops
    is_float: bool
    stage: str  # the int8 output stage (msf_output_stage_mode), "" for kernels without one
    fast_channels: int  # output channels the per-channel (in-place) output stage runs fast
    rows: int  # output rows of the region
    pixels: int  # output pixels of the region
    whole_rows: int  # rows whose window the input's border does not clip
    taps: int  # in-bounds window taps, summed over the region's pixels
    krows: int  # in-bounds kernel rows, summed over the region's pixels
    clipped: int  # pixels whose window the input's border clips
    channels: int  # the output channels this run computes (Op.channel_parts)
    wide: bool = False  # a 16x8 kernel (KernelBuild.wide)
    path: str = ""  # the per-value path the op's constants and numerics choose (Op.value_path), "" for one
    region: tuple[int, int, int, int] = (0, 0, 0, 0)  # rows r0..r1, columns c0..c1 (for
    # Op.counts_by_position ops, whose loops depend on where the region lies in the tensor)
    col_ring: int = 0  # columns of the input's column ring (a column stream's), 0: none (for
    # Op.counts_by_ring ops; the region is then given too)
    rectified: bool = False  # a float kernel whose input a ReLU left without negative values
    # (features.rectified_input): about half its values are 0, which soft float multiplies fast
    rectified_values: bool = False  # the same through Tanh, Elu and LeakyRelu too (Op.keeps_zeros),
    # for the element-wise kernels' values (count_signed_values)
    dense: bool = False  # a float kernel whose input holds no zeros (features.dense_input)


def count_wide_window(run: KernelRun, f: Counts, values_per_tap: int = 0, win=None) -> None:
    """int16.c's window ops: per output value, a loop over the window's in-bounds rows, each over
    its taps (and, for a convolution, over the `values_per_tap` input channels of each tap). Each
    tap locates its input with at_s16, whose row or column index is taken modulo the ring where
    the input is one in a stream (Op.counts_by_ring: `col_ring`, either axis's ring); `win`, the
    op's Window, gives each tap's column for the division's steps (ring_tap_bit)."""
    f[f"{run.family}:krow_output"] += run.krows * run.channels
    f[f"{run.family}:tap_output"] += run.taps * run.channels
    if run.col_ring:  # each tap's address takes a % of the ring (a library division on Armv6-M)
        f[f"{run.family}:ring_tap_output"] += run.taps * run.channels
        if win is not None:
            f[f"{run.family}:ring_tap_bit"] += ring_tap_bits(win, run) * run.channels
    if values_per_tap:
        f[f"{run.family}:value"] += run.taps * values_per_tap * run.channels


def division_loop_steps(dividend: int, divisor: int) -> int:
    """The steps of a shift-and-subtract division's loop (libgcc's __modsi3 on Xtensa without a
    divide instruction): one per bit the dividend has past the divisor's (0 when the dividend is
    smaller, or as long: one subtraction settles it)."""
    return max(dividend.bit_length() - divisor.bit_length(), 0)


def ring_tap_bits(win, run: KernelRun) -> int:
    """The division steps of the region's taps' column `%` (msf_stored_col: the stream's column c
    is stored at c % ring), summed over its output columns' in-bounds taps, once per in-bounds
    kernel row (without the output channels)."""
    ring, width = run.col_ring, run.in_shape[1]
    kw, stride, dilation, pad = win.kernel[1], win.strides[1], win.dilations[1], win.pads[1]
    steps = 0
    for x in range(run.region[2], run.region[3]):
        first = x * stride - pad
        steps += sum(division_loop_steps(col, ring) for col in range(first, first + kw * dilation, dilation)
                     if 0 <= col < width)
    return steps * (run.krows // max(run.region[3] - run.region[2], 1))


def count_signed_values(run: KernelRun, f: Counts) -> None:
    """A float element-wise kernel's values of a signed input (not a ReLU's, rectified): no zero
    among them, so soft float's add, multiply, exp and division run the library's long paths."""
    if run.family.endswith("_f32") and not run.rectified_values:
        f[f"{run.family}:output_signed"] += run.pixels * run.channels
