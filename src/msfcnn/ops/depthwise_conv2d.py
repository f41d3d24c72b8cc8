"""DEPTHWISE_CONV_2D / ONNX Conv with group == channels."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from .. import numerics as nx
from .base import (KernelContext, Op, Pattern, Shape, Window, c_struct, in_numerics, require_feature_map,
                   window_fields)
from .conv2d import (count_dilated_loop, ring_wraps, count_wide_dilated, dilated_kernel, dilation_note, weighted_accumulator_bound,
                     weighted_c_consts, weighted_c_fields, with_dilations)
from .loop_counts import (DSP_DEPTHWISE_BLOCK, DSP_MAX_CHANNELS, DSP_MIN_PIXELS, MVE_DEPTHWISE_BLOCK, MVE_TAPS, Counts, KernelBuild, KernelRun, channel_blocks,
                          count_wide_window, vectors)
from .sliding import pad_hw, tap_slices

# TFLite's int8 depthwise kernel requantises with its own MultiplyByQuantizedMultiplier
# (gemmlowp's doubling high multiply, then a rounding shift): two roundings.
ROUNDING = nx.DOUBLE


@dataclass(frozen=True)
class DepthwiseConv2D(Op, pattern=Pattern.WINDOW, elements=frozenset({"int8", "int16", "float32", "uint8"})):
    kind = "depthwise_conv2d"
    plain_kernel: ClassVar[str] = "msf_depthwise_conv2d"  # the undilated kernel (c_kernel)
    win: Window
    depth_multiplier: int = 1
    activation: str | None = None
    int8_rounding = ROUNDING  # of the C kernel's int8 output stage
    runs_per_tap = True  # window.c gathers a run per tap

    @property
    def window(self) -> Window:
        return self.win

    @property
    def counts_by_position(self) -> bool:  # type: ignore[override]
        """A dilated window's divisions (dilated.c) depend on which of its windows start before
        the input, so on where a region lies."""
        return self.win.dilated

    @property
    def c_kernel(self) -> str:  # type: ignore[override]
        return dilated_kernel(self.plain_kernel, self.win)

    def output_shape(self, inputs: list[Shape]) -> Shape:
        h, w, c = require_feature_map(inputs[0], self.kind)
        return (*self.win.output_hw(h, w), c * self.depth_multiplier)

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        kh, kw = self.win.kernel
        return output[0] * output[1] * output[2] * kh * kw

    def describe(self) -> str:
        kh, kw = self.win.kernel
        return f"dw {kh}x{kw}/{self.win.strides[0]}{dilation_note(self.win)}"

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        kernel = ctx.consts["weights"][0]  # (1, kh, kw, C_in * multiplier) -> (kh, kw, C_out)
        bias = ctx.consts.get("bias")
        out_hw = self.win.output_hw(x.shape[0], x.shape[1])
        if ctx.is_float:
            acc = self._accumulate(x.astype(np.float32), kernel.astype(np.float32), out_hw)
            if bias is not None:
                acc += bias.astype(np.float32)
            return nx.float_activation(acc, self.activation)
        in_q = ctx.input_quant[0]
        # int32 accumulation as in TFLite; the zero-point offset makes padding zeros.
        acc_type = np.int64 if ctx.is_int16 else np.int32  # 16x8 accumulates in int64
        acc = self._accumulate(x.astype(acc_type) - acc_type(in_q.zero_point), kernel.astype(acc_type), out_hw)
        if bias is not None:
            acc += bias.astype(acc_type)
        return self.requantize(acc, ctx)

    def requantize(self, acc: np.ndarray, ctx: KernelContext) -> np.ndarray:
        """The int8 (or int16) output from the int32 (int64) accumulators of every channel."""
        mult, shift = self.multipliers(ctx)
        return nx.requantize_accumulator(acc, mult, shift, ctx.output_quant.zero_point,
                                         ctx.activation_range(self.activation), ctx.rounding(ROUNDING), ctx.qtype)

    def for_numerics(self, ctx: KernelContext, shape) -> "DepthwiseConv2D":
        """LiteRT's int8 kernel rounds its leading channels as its vector code does
        (ops/depthwise_conv2d_litert.py registers it); TFLite Micro's, the 16x8 and the float ones are this op's."""
        return in_numerics(DepthwiseConv2D, self, ctx, shape)

    # The C in-place variant keeps one channel's taps on the stack (depthwise_inplace.c).
    MAX_IN_PLACE_TAPS = 64

    def in_place_channels(self, ctx=None) -> bool:
        return (self.depth_multiplier == 1 and self.win.kernel[0] * self.win.kernel[1] <= self.MAX_IN_PLACE_TAPS
                and not self.win.dilated)  # (the in-place kernel has no dilated form)

    def tap_parts(self, params: str, channels: int) -> tuple[tuple[str, int], ...]:
        """The plain int8 kernel's params, undilated and of multiplier 1 (not the uint8 weight-offset one)."""
        plain = self.c_kernel == "msf_depthwise_conv2d" and self.depth_multiplier == 1 and not self.win.dilated
        return ((f"&{params}", 0),) if plain else ()

    def channel(self, ctx: KernelContext, c: int) -> KernelContext:
        """The context of channel c alone (multiplier 1): its taps, bias and weight scale."""
        consts = {role: (v[..., c:c + 1] if np.ndim(v) and np.shape(v)[-1] > 1 else v) for role, v in ctx.consts.items()}
        return replace(ctx, consts=consts)

    def multipliers(self, ctx: KernelContext) -> tuple[np.ndarray, np.ndarray]:
        """Per-output-channel (multiplier, shift) of the int8 requantisation."""
        channels = ctx.consts["weights"].shape[-1]
        return nx.per_channel_multipliers(ctx.input_quant[0].scale, ctx.consts["weight_scales"],
                                          ctx.output_quant.scale, channels)

    def accumulator_bound(self, ctx: KernelContext) -> int | None:
        return weighted_accumulator_bound(ctx, -1)  # weights (1, kh, kw, C_out)

    def c_consts(self, ctx: KernelContext) -> dict[str, np.ndarray]:
        return weighted_c_consts(ctx, self.multipliers, self.int8_rounding)

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        h, w, c = require_feature_map(in_shapes[0], self.kind)
        fields = {"in_h": h, "in_w": w, "in_c": c, "out_c": out_shape[-1],
                  "depth_multiplier": self.depth_multiplier, **window_fields(self.win)}
        rounding = ctx.rounding(self.int8_rounding)
        plain = c_struct({**fields, **weighted_c_fields(ctx, self.activation, rounding, self.c_consts(ctx), names)})
        return with_dilations(plain, self.win)

    # ---- the latency model's counts (ops/loop_counts.py) -----------------------------------------
    wide_family = "depthwise"

    def latency_family(self, kernel: KernelBuild) -> str:
        """On Helium, a multiplier of 1 over at most MSF_MVE_TAPS taps runs the vector loop
        (`depthwise_mve`), undilated; on the other DSP cores, an int8 3 x 3 window with a multiplier
        of 1 or a multiple of 4 runs the blocked DSP loop (`depthwise_dsp`); the others, window.c's
        loop."""
        kernel_taps, undilated = self.win.kernel[0] * self.win.kernel[1], not self.win.dilated
        blocked = kernel.dsp and not kernel.mve and kernel.int8 and undilated and self.win.kernel == (3, 3)
        if blocked and (self.depth_multiplier == 1 or self.depth_multiplier % 4 == 0):
            return self.own_family(kernel) or "depthwise_dsp"
        if self.depth_multiplier != 1:
            return self.own_family(kernel) or "depthwise_multiplier"
        helium = kernel.mve and undilated and kernel_taps <= MVE_TAPS
        return self.own_family(kernel) or ("depthwise_mve" if helium else "depthwise")

    def counts_ring(self, kernel: KernelBuild) -> bool:
        """The Helium and blocked DSP loops locate a window's taps one by one where they wrap a
        column ring; the 16x8 loop locates every tap in its ring (loop_counts.count_wide_window)."""
        return kernel.wide or self.latency_family(kernel) in ("depthwise_mve", "depthwise_dsp")

    def gathers_runs(self, kernel: KernelBuild) -> bool:
        """The Helium and blocked DSP loops locate each tap themselves, without window.c's batches
        of runs."""
        return super().gathers_runs(kernel) and self.latency_family(kernel) not in ("depthwise_mve", "depthwise_dsp")

    @classmethod
    def latency_families(cls, kernel: KernelBuild) -> tuple[str, ...]:
        own = cls.own_family(kernel)
        helium = ("depthwise_mve",) if kernel.mve else ()
        blocked = ("depthwise_dsp",) if kernel.dsp and not kernel.mve and kernel.int8 else ()
        return (own,) if own else (*helium, *blocked, "depthwise", "depthwise_multiplier")

    def output_stage_rounding(self, numerics: str) -> str:
        return ROUNDING  # the C output stage's mode (the LiteRT variant's vector part included)

    def weights_shape(self, in_shape: Shape, out_shape: Shape) -> tuple[Shape, int]:
        kh, kw = self.win.kernel
        return (1, kh, kw, out_shape[2]), kh * kw

    def count_region(self, run: KernelRun, f: Counts) -> None:
        fam, pixels, taps, channels = run.family, run.pixels, run.taps, run.channels
        if run.wide:
            count_wide_window(run, f, win=self.win)
            count_wide_dilated(self.win, run, f)
            return
        if fam == "depthwise_mve":
            self._count_mve(run, f)
            return
        if fam == "depthwise_dsp":
            if self.depth_multiplier != 1 or (4 <= channels <= DSP_MAX_CHANNELS and pixels >= DSP_MIN_PIXELS):
                self._count_dsp(run, f)
                return
            run = self._to_window_loop(run, f)
            fam = run.family
        blocks = channel_blocks(channels)
        count_dilated_loop(self.win, run, f, blocks)
        f[f"{fam}:block"] += pixels * len(blocks)
        f[f"{fam}:tap"] += taps  # a run per tap (located once a pixel)
        if not run.is_float and self.depth_multiplier == 1:
            # gather_runs (window.c) locates each in-bounds kernel row (its stored row, first
            # stored column and weights) before its taps: a 1 x 1 window pays it once a tap
            f[f"{fam}:krow"] += run.krows
        if run.is_float or self.depth_multiplier != 1:
            f[f"{fam}:tap_channel"] += taps * channels
            f[f"{fam}:block_channel"] += pixels * channels
            # the channel-by-channel loop finds each channel's input as (oc0 + k) / m, a library
            # division on a core without a divider (the LX106's __divsi3, 334 instructions)
            f[f"{fam}:division"] += pixels * channels
        elif run.dsp:  # four channels a tap at a time, the last 1-3 as the four that end with them
            # (a block ending before channel 4, in a layer of fewer than four channels, has no such
            # four: its channels take the scalar loop, one by one over the taps)
            starts = np.cumsum([0, *blocks[:-1]])
            fours = [n for n, start in zip(blocks, starts) if start + n >= 4]
            scalar = sum(n for n, start in zip(blocks, starts) if start + n < 4)
            f[f"{fam}:tap_four"] += taps * sum(n // 4 + (n % 4 > 0) for n in fours)
            f[f"{fam}:tail_channel"] += pixels * sum(n % 4 for n in fours)
            f[f"{fam}:four"] += pixels * sum(n // 4 + (n % 4 > 0) for n in fours)
            f[f"{fam}:scalar_tap_channel"] += taps * scalar
            f[f"{fam}:scalar_channel"] += pixels * scalar
        else:  # eight channels a tap at a time, then one by one
            f[f"{fam}:tap_eight"] += taps * sum(n // 8 for n in blocks)
            f[f"{fam}:tap_single"] += taps * sum(n % 8 for n in blocks)
            f[f"{fam}:eight"] += pixels * sum(n // 8 for n in blocks)
            f[f"{fam}:single_channel"] += pixels * sum(n % 8 for n in blocks)
            f[f"{fam}:division"] += pixels * sum(n % 8 for n in blocks)  # (oc0 + k) / m, as above

    def _count_mve(self, run: KernelRun, f: Counts) -> None:
        """depthwise_mve (kernels/depthwise_conv2d.c): per block of MSF_MVE_DEPTHWISE_BLOCK
        channels, the taps' weight pointers and the constants eight channels at a time (a loop over
        every tap each); per pixel and block, its in-bounds taps' addresses (per kernel row, per
        tap), a clipped window's weights too; sixteen channels at a time over the taps (a clipped
        window adds the offset to each input; a block of channels not a multiple of 16 predicates
        its loads); the output stage eight channels at a time."""
        fam, pixels, taps = run.family, run.pixels, run.taps
        kernel = self.win.kernel[0] * self.win.kernel[1]
        blocks = channel_blocks(run.channels, MVE_DEPTHWISE_BLOCK)
        sixteens, eights = sum(vectors(n) for n in blocks), sum(vectors(n, 8) for n in blocks)
        clipped_taps = taps - (pixels - run.clipped) * kernel
        f[f"{fam}:block"] += len(blocks)
        f[f"{fam}:block_tap"] += len(blocks) * kernel
        f[f"{fam}:constant_eight"] += eights
        f[f"{fam}:constant_eight_tap"] += eights * kernel
        f[f"{fam}:pixel_block"] += pixels * len(blocks)
        f[f"{fam}:krow_block"] += run.krows * len(blocks)
        f[f"{fam}:tap_block"] += taps * len(blocks)
        f[f"{fam}:clipped_block"] += run.clipped * len(blocks)
        f[f"{fam}:clipped_tap_block"] += clipped_taps * len(blocks)
        f[f"{fam}:sixteen"] += pixels * sixteens
        f[f"{fam}:tap_sixteen"] += taps * sixteens
        f[f"{fam}:clipped_tap_sixteen"] += clipped_taps * sixteens
        f[f"{fam}:wrapped_tap_block"] += ring_wraps(self.win, run)[1] * len(blocks)
        partial = sum(vectors(n) for n in blocks if n % 16)
        f[f"{fam}:partial_sixteen"] += pixels * partial
        f[f"{fam}:partial_tap_sixteen"] += taps * partial
        f[f"{fam}:output_eight"] += pixels * eights

    @staticmethod
    def _to_window_loop(run: KernelRun, f: Counts) -> KernelRun:
        """A call the blocked DSP loop leaves to window.c's (see DSP_MAX_CHANNELS): the counts
        every region kernel gets (latency/features.py) moved from depthwise_dsp to depthwise,
        whose own counts follow."""
        generic = {"call": 1, "row": run.rows, "pixel": run.pixels, "clipped": run.clipped,
                   "output": run.pixels * run.channels}
        if run.stage:
            generic[f"output_{run.stage}"] = run.pixels * run.channels
        for name, count in generic.items():
            f[f"depthwise_dsp:{name}"] -= count
            f[f"depthwise:{name}"] += count
        return replace(run, family="depthwise")

    def _count_dsp(self, run: KernelRun, f: Counts) -> None:
        """depthwise_dsp (kernels/depthwise_conv2d.c, 3 x 3 windows): per block of
        DSP_DEPTHWISE_BLOCK channels, its groups of four channels' constants (a loop over the taps
        each); per output row and block, the tap offsets (from its kernel rows' stored rows, when
        they lie inside the input); per pixel and block, a window inside the input (its columns not
        wrapping a ring) at those offsets, any other located tap by tap (the padding's included);
        per pixel and group, the sums over the nine taps, then the fast output stage (run.stage;
        the general one is called once a pixel and block)."""
        fam, pixels = run.family, run.pixels
        blocks = channel_blocks(run.channels, DSP_DEPTHWISE_BLOCK)
        groups = sum(-(-n // 4) for n in blocks)
        border = run.clipped + ring_wraps(self.win, run)[0]
        f[f"{fam}:block"] += len(blocks)
        f[f"{fam}:group"] += groups
        f[f"{fam}:pixel_block"] += pixels * len(blocks)
        f[f"{fam}:row_block"] += run.rows * len(blocks)
        f[f"{fam}:whole_row_block"] += run.whole_rows * len(blocks)
        f[f"{fam}:border_block"] += border * len(blocks)
        f[f"{fam}:pixel_group"] += pixels * groups
        f[f"{fam}:border_group"] += border * groups
        if run.stage == "general":
            f[f"{fam}:general_block"] += pixels * len(blocks)

    in_place_family = "depthwise_inplace"  # the in-place kernel's counts' names

    def count_in_place(self, run: KernelRun, f: Counts) -> None:
        """The in-place kernel (kernels/depthwise_inplace.c): channel by channel, row by row; int8
        pixels whose window lies inside the input take the unrolled inner loop, the others the
        border loop over their in-bounds taps; then the plane is copied back."""
        fam, win = run.family, self.win
        h, w, c = run.shape
        kh, kw = win.kernel
        x_lo = -(-win.pads[1] // win.strides[1])
        x_hi = min((run.in_shape[1] - kw + win.pads[1]) // win.strides[1] + 1, w) if run.in_shape[1] - kw + win.pads[1] >= 0 else 0
        inner = run.whole_rows * max(x_hi - min(x_lo, x_hi), 0) if not run.is_float else 0
        f[f"{fam}:call"] += 1
        f[f"{fam}:channel"] += c
        f[f"{fam}:row_channel"] += h * c
        f[f"{fam}:pixel_channel"] += h * w * c
        f[f"{fam}:inner_pixel_channel" + ("_3x3" if (kh, kw) == (3, 3) else "")] += inner * c
        f[f"{fam}:inner_krow_channel"] += (0 if (kh, kw) == (3, 3) else inner * kh * c)
        # (each kernel row's row_sum then runs kw taps: a 1 x k window's rows are short, a 7x7's long)
        f[f"{fam}:inner_tap_channel"] += (0 if (kh, kw) == (3, 3) else inner * kh * kw * c)
        f[f"{fam}:border_pixel_channel"] += (h * w - inner) * c
        f[f"{fam}:border_tap_channel"] += (run.taps - inner * kh * kw) * c
        if not run.is_float:  # channels whose shift the fast loop cannot take: msf_requantize_block_s8
            f[f"{fam}:general_pixel_channel"] += h * w * (c - run.fast_channels)

    def _accumulate(self, x: np.ndarray, kernel: np.ndarray, out_hw: tuple[int, int]) -> np.ndarray:
        """Sum over the kernel taps of input x weight; output channel o reads input channel o // m."""
        padded = pad_hw(x, self.win, 0)
        if self.depth_multiplier > 1:
            padded = np.repeat(padded, self.depth_multiplier, axis=2)
        acc = np.zeros((*out_hw, kernel.shape[-1]), dtype=x.dtype)
        for (i, j), tap in tap_slices(padded, self.win, out_hw):
            acc += tap * kernel[i, j]
        return acc
