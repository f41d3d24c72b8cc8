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

Counts = Counter  # feature name (`family:loop`) -> how often the loop's body runs


def channel_blocks(channels: int) -> list[int]:
    """The output channels of each accumulator block (MSF_CHANNEL_BLOCK at a time)."""
    return [min(CHANNEL_BLOCK, channels - k) for k in range(0, channels, CHANNEL_BLOCK)]


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
