"""CONV_2D / ONNX Conv: dense 2-D convolution with an optional fused activation."""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import accumulate

import numpy as np

from .. import numerics as nx
from .base import (C_ACTIVATION, C_ROUNDING, KernelContext, Op, Pattern, Shape, Window, c_pointer, c_struct,
                   require_feature_map, window_fields)
from .loop_counts import (MVE_BLOCK, MVE_PATCH, POINTWISE_CHUNK, Counts, KernelBuild, KernelRun, channel_blocks,
                          count_wide_window, vectors)
from .sliding import pad_hw, windows

# A dilated window on a core with Arm's DSP extension runs the portable loop (kernels/conv2d.c's
# accumulate through dilated.c), not the paired one: a family of its own there.
DSP_DILATED_FAMILY = "conv_dilated"
# On Helium (cortex-m55) a 1x1 unpadded conv reads its patch in place and the others gather it, in
# vector loops (conv_mve in conv2d.c); a gathered patch longer than MSF_MVE_PATCH takes the DSP loop.
MVE_FAMILIES = ("conv_mve_direct", "conv_mve_gather")

# TFLite runs int8 CONV_2D as im2col + a ruy GEMM; its x86 output stage rounds twice, halves up.
# TFLite Micro (the reference kernel) rounds as MultiplyByQuantizedMultiplier: nx.gemm_rounding.


@dataclass(frozen=True)
class Conv2D(Op, pattern=Pattern.WINDOW, elements=frozenset({"int8", "int16", "float32", "uint8"})):
    kind = "conv2d"
    filters: int
    win: Window
    activation: str | None = None

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
        """A dilated window runs its own entry (kernels/conv2d.c), which takes the dilations
        beside the plain params: the undilated kernels stay as they were calibrated."""
        return dilated_kernel("msf_conv2d", self.win)

    def output_shape(self, inputs: list[Shape]) -> Shape:
        h, w, _ = require_feature_map(inputs[0], self.kind)
        return (*self.win.output_hw(h, w), self.filters)

    def macs(self, inputs: list[Shape], output: Shape) -> int:
        kh, kw = self.win.kernel
        return output[0] * output[1] * output[2] * inputs[0][2] * kh * kw

    def describe(self) -> str:
        kh, kw = self.win.kernel
        return f"conv {kh}x{kw}/{self.win.strides[0]}{dilation_note(self.win)} {self.filters}"

    def reference(self, inputs: list[np.ndarray], ctx: KernelContext) -> np.ndarray:
        x = inputs[0]
        weights = ctx.consts["weights"]  # (C_out, kh, kw, C_in)
        bias = ctx.consts.get("bias")
        ho, wo = self.win.output_hw(x.shape[0], x.shape[1])
        if ctx.is_float:
            cols = _im2col(x.astype(np.float32), self.win, 0.0)
            out = cols @ weights.reshape(self.filters, -1).T.astype(np.float32)
            if bias is not None:
                out += bias.astype(np.float32)
            return nx.float_activation(out, self.activation).reshape(ho, wo, self.filters)
        in_q, out_q = ctx.input_quant[0], ctx.output_quant
        # Subtracting the input zero point first makes the padding (which TFLite fills with the
        # zero point) plain zeros, and keeps every product exact in the float64 GEMM.
        cols = _im2col(x.astype(np.float64) - in_q.zero_point, self.win, 0.0)
        acc = nx.exact_int_matmul(cols, weights.reshape(self.filters, -1).T)
        if bias is not None:
            acc += bias.astype(np.int64)
        mult, shift = self.multipliers(ctx)
        out = nx.requantize_accumulator(acc, mult, shift, out_q.zero_point, ctx.activation_range(self.activation),
                                        ctx.rounding(nx.gemm_rounding(ctx.numerics)), ctx.qtype)
        return out.reshape(ho, wo, self.filters)

    def multipliers(self, ctx: KernelContext) -> tuple[np.ndarray, np.ndarray]:
        """Per-output-channel (multiplier, shift) of the int8 requantisation."""
        return nx.per_channel_multipliers(ctx.input_quant[0].scale, ctx.consts["weight_scales"],
                                          ctx.output_quant.scale, self.filters)

    def value_counts(self, inputs: list[np.ndarray], output: np.ndarray, ctx: KernelContext) -> dict[str, float]:
        """The float products (`products`) and those that read a value other than 0
        (`value_nonzero`): soft float multiplies and adds a 0 by its short paths (a ReLU's zeros, a
        PAD's fill); features.py prices a product by them (_Op._weigh_zeros)."""
        zeros, taps = zero_products(inputs[0], self.win)
        return {"value_nonzero": (taps - zeros) * self.filters, "products": taps * self.filters}

    def accumulator_bound(self, ctx: KernelContext) -> int | None:
        return weighted_accumulator_bound(ctx, 0)

    def c_consts(self, ctx: KernelContext) -> dict[str, np.ndarray]:
        return weighted_c_consts(ctx, self.multipliers, nx.gemm_rounding(ctx.numerics))

    def c_params(self, ctx, in_shapes, out_shape, names) -> str:
        h, w, c = require_feature_map(in_shapes[0], self.kind)
        fields = {"in_h": h, "in_w": w, "in_c": c, "out_c": self.filters, **window_fields(self.win)}
        rounding = ctx.rounding(nx.gemm_rounding(ctx.numerics))
        plain = c_struct({**fields, **weighted_c_fields(ctx, self.activation, rounding, self.c_consts(ctx), names)})
        return with_dilations(plain, self.win)

    # ---- the latency model's counts (ops/loop_counts.py) -----------------------------------------
    wide_family = "conv"
    counts_by_ring = True  # gather_patch reads a window that wraps a column ring tap by tap

    def latency_family(self, kernel: KernelBuild) -> str:
        """On DSP cores a 1x1 unpadded conv reads its patch in place, the others gather it, and a
        dilated window runs the portable loop (`conv_dilated`); on other cores the 1x1 and the
        general conv loops differ, and a dilated window runs the general one."""
        own = self.own_family(kernel)
        if own:
            return own
        pointwise = self.win.kernel == (1, 1)
        if kernel.dsp:
            if self.win.dilated:
                return DSP_DILATED_FAMILY
            direct = pointwise and self.win.pads[:2] == (0, 0)
            if kernel.mve:
                return MVE_FAMILIES[0] if direct else MVE_FAMILIES[1]
            return "conv_direct" if direct else "conv_gather"
        return "conv_1x1" if pointwise else "conv"

    @classmethod
    def latency_families(cls, kernel: KernelBuild) -> tuple[str, ...]:
        own = cls.own_family(kernel)
        if own:
            return (own,)
        if kernel.dsp and kernel.mve:  # (a patch of more than MSF_MVE_PATCH: conv_gather's counts in conv_mve_gather's calls)
            return (*MVE_FAMILIES, DSP_DILATED_FAMILY)
        return ("conv_direct", "conv_gather", DSP_DILATED_FAMILY) if kernel.dsp else ("conv_1x1", "conv")

    def output_stage_rounding(self, numerics: str) -> str:
        return nx.gemm_rounding(numerics)

    def weights_shape(self, in_shape: Shape, out_shape: Shape) -> tuple[Shape, int]:
        kh, kw = self.win.kernel
        return (self.filters, kh, kw, in_shape[2]), kh * kw * in_shape[2]

    def count_region(self, run: KernelRun, f: Counts) -> None:
        fam, out_c, in_c = run.family, run.shape[2], run.in_shape[2]
        if run.wide:
            count_wide_window(run, f, in_c, self.win)
            count_wide_dilated(self.win, run, f)
            return
        blocks = channel_blocks(out_c)
        if fam in MVE_FAMILIES:
            self._count_mve(run, f)
            return
        self._count_line(run, f)
        if run.dsp and fam != DSP_DILATED_FAMILY:
            self._count_dsp(run, f, blocks)
            return
        # window_loop: a pixel's runs (a kernel row each), then per block the accumulate loops
        runs = run.taps if self.win.dilated else run.krows  # a dilated row's taps are not side by side
        count_dilated_loop(self.win, run, f, blocks)
        if run.is_float and not self.win.dilated:  # a row that wraps a column ring: two runs
            runs += ring_wrapped_rows(self.win, run)
        f[f"{fam}:block"] += run.pixels * len(blocks)
        f[f"{fam}:run"] += runs
        if run.is_float:
            count_float_accumulate(run, f, runs, sum(blocks))
            return
        # int8's accumulate: four channels at a time over every run's values, then one at a time
        quads = sum(n // 4 for n in blocks)
        singles = sum(n % 4 for n in blocks)
        f[f"{fam}:run_channels"] += runs * (quads + singles)
        if not self.win.dilated:  # a row cut in two where a column ring wraps: counted apart
            self._count_ring_runs(run, f, quads + singles)
        f[f"{fam}:value_quad"] += run.taps * in_c * quads
        f[f"{fam}:value_single"] += run.taps * in_c * singles

    def _count_ring_runs(self, run: KernelRun, f: Counts, passes: int) -> None:
        """int8's runs that a column ring's wrap adds (ring_wrapped_rows: gather_runs stores one
        more run, then every pass of four or one channels reads it). Counted apart from `run`,
        which every target fitted without them, so that a target prices them only once fitted
        (`--fit-counts ring_run,ring_run_channels`; a Conv1D called a step at a time wraps
        in most of its calls, a k x k window of a row stream never)."""
        wrapped = ring_wrapped_rows(self.win, run)
        f[f"{run.family}:ring_run"] += wrapped
        f[f"{run.family}:ring_run_channels"] += wrapped * passes

    def _count_line(self, run: KernelRun, f: Counts) -> None:
        """A window of one kernel row (1 x k, a Conv1D along W): its pixels apart. The other
        windows' fits price a pixel's own work (locating it, its patch, its sums) partly per kernel
        row, which a 1 x k window has only one of; this count takes the rest (0 on k x k windows,
        so their predictions stay as fitted; `calibrate_latency.py --lines`)."""
        kh, kw = self.win.kernel
        if kh == 1 and kw > 1:
            f[f"{run.family}:line_call"] += 1
            f[f"{run.family}:line_pixel"] += run.pixels
            if run.dsp and run.family != DSP_DILATED_FAMILY:  # the paired loop's odd pixel, alone
                f[f"{run.family}:line_single"] += run.pixels % 2

    def _count_dsp(self, run: KernelRun, f: Counts, blocks: list[int]) -> None:
        """conv_pairs (kernels/conv2d.c): pixels in pairs, then an odd last one; per pair, per block of
        output channels, per chunk of the patch: lanes, pairs of channels by pairs of quads."""
        fam, pixels, clipped = run.family, run.pixels, run.clipped
        kh, kw = self.win.kernel
        patch = kh * kw * run.in_shape[2]
        chunks = [min(POINTWISE_CHUNK, patch - k) for k in range(0, patch, POINTWISE_CHUNK)]
        one_chunk = len(chunks) == 1
        pairs, odd = pixels // 2, pixels % 2
        lane_passes = 1 if one_chunk else len(blocks)  # one chunk: its lanes serve every block
        quads_all = sum(m >> 2 if m >= 4 else 0 for m in chunks)
        f[f"{fam}:pair"] += pairs
        f[f"{fam}:single"] += odd
        f[f"{fam}:lanes"] += (2 * pairs + odd) * lane_passes * len(chunks)
        f[f"{fam}:lane_quad"] += (2 * pairs + odd) * lane_passes * quads_all
        f[f"{fam}:block_chunk"] += (pairs + odd) * len(blocks) * len(chunks)
        ch_pairs = sum(n >> 1 for n in blocks)
        odd_channels = sum(n & 1 for n in blocks)
        for m in chunks:
            quads = m >> 2 if m >= 4 else 0
            tail = m & 3 if quads else 0
            singles = 0 if quads else m
            f[f"{fam}:pair_channels"] += pairs * ch_pairs
            f[f"{fam}:pair_quad2"] += pairs * ch_pairs * (quads >> 1)
            f[f"{fam}:pair_quad1"] += pairs * ch_pairs * (quads & 1)
            f[f"{fam}:pair_tail"] += pairs * ch_pairs * (tail > 0)
            f[f"{fam}:pair_odd_channel"] += pairs * odd_channels
            f[f"{fam}:pair_odd_quad"] += pairs * odd_channels * (quads + (tail > 0))
            four = sum(n // 4 for n in blocks)
            rest = sum(n % 4 for n in blocks)
            f[f"{fam}:single_four"] += odd * four
            f[f"{fam}:single_four_quad"] += odd * four * (quads + (tail > 0))
            f[f"{fam}:single_rest"] += odd * rest
            f[f"{fam}:single_rest_quad"] += odd * rest * (quads + (tail > 0))
            f[f"{fam}:small_chunk"] += (2 * pairs + odd) * singles * sum(blocks)
        f[f"{fam}:requant_pair_{run.stage}"] += pairs * run.shape[2]
        f[f"{fam}:requant_single_{run.stage}"] += odd * run.shape[2]
        if fam.startswith("conv_gather"):
            # gather_patch, per pixel and lane pass: a copy per kernel row when the window is whole,
            # within its column ring and the patch one chunk, else kernel row by kernel row with
            # padding filled (a row that wraps the ring: tap by tap)
            whole_wrapped, wrapped_taps = self._ring_wraps(run)
            fast = pixels - clipped - whole_wrapped if one_chunk else 0
            passes = lane_passes * len(chunks)
            f[f"{fam}:gather_wrapped_tap"] += wrapped_taps * lane_passes
            if kh == 1 and kw > 1:
                # a one-row window's pixels gathered in one piece: gather_slow is fitted on k x k
                # windows' slow pixels (kh rows clipped), and a one-row slow pixel runs one row, so
                # line_pixel is priced apart for the fast ones (0 on targets that do not fit it)
                f[f"{fam}:line_gather_fast"] += fast
            # a clipped window's padding is filled piece by piece (put_patch): a kernel row outside
            # the input whole, and the outside taps of a row inside it (0 on targets that do not fit them)
            f[f"{fam}:gather_fill_krow"] += pixels * kh - run.krows
            f[f"{fam}:gather_fill_tap"] += run.krows * kw - run.taps
            f[f"{fam}:gather_fast_row"] += fast * kh
            f[f"{fam}:gather_fast_byte"] += fast * patch
            # a slow pass walks every kernel row and works on those in its chunk (a row across a
            # chunk's end in both passes); the passes of a lane pass copy the patch once
            f[f"{fam}:gather_slow"] += (pixels * passes - fast)
            f[f"{fam}:gather_slow_row"] += (pixels * passes - fast) * kh
            f[f"{fam}:gather_work_row"] += (pixels * lane_passes - fast) * chunk_rows(kh, patch // kh, chunks)
            f[f"{fam}:gather_slow_byte"] += (pixels * lane_passes - fast) * patch
            # msf_copy_s8 copies words, then a copy's last n % 4 bytes one at a time
            tail_bytes, tail_copies = copy_tails(self.win, run, chunks)
            f[f"{fam}:gather_tail_byte"] += tail_bytes * lane_passes
            f[f"{fam}:gather_tail_copy"] += tail_copies * lane_passes
            f[f"{fam}:gather_fill_piece"] += fill_pieces(self.win, run, chunks) * lane_passes

    def _count_mve(self, run: KernelRun, f: Counts) -> None:
        """conv_mve (kernels/conv2d.c): per block of MSF_MVE_BLOCK output channels, each channel's
        weight sum (a vector per 16 patch values) and the block's output stage constants (four
        channels a vector), then per pixel the gathered patch (conv_mve_gather), the dot products in
        the form the patch length picks and the output stage, four channels a vector. A gathered
        patch longer than MSF_MVE_PATCH runs the DSP loop (conv_gather's counts)."""
        fam, pixels = run.family, run.pixels
        kh, kw = self.win.kernel
        patch = kh * kw * run.in_shape[2]
        if fam == MVE_FAMILIES[1] and patch > MVE_PATCH:
            self._count_dsp(replace(run, family="conv_gather"), f, channel_blocks(run.shape[2]))
            return
        blocks = channel_blocks(run.shape[2], MVE_BLOCK)
        quads = sum(vectors(n, 4) for n in blocks)
        f[f"{fam}:block"] += len(blocks)
        f[f"{fam}:block_channel"] += run.shape[2]
        f[f"{fam}:weight_vector"] += run.shape[2] * (patch // 16)
        f[f"{fam}:weight_tail"] += run.shape[2] * (patch % 16 > 0)
        f[f"{fam}:stage_quad"] += quads
        f[f"{fam}:pixel_block"] += pixels * len(blocks)
        if patch <= 16:  # one vector of the patch, a load and a VMLADAVA per channel (predicated: < 16)
            f[f"{fam}:short_channel"] += pixels * run.shape[2]
            f[f"{fam}:short_partial"] += pixels * run.shape[2] * (patch < 16)
        elif patch <= 32 and patch % 16:  # two vectors
            f[f"{fam}:two_channel"] += pixels * run.shape[2]
        else:  # four channels at a time over the patch's vectors, then one by one
            fours, rest = sum(n // 4 for n in blocks), sum(n % 4 for n in blocks)
            f[f"{fam}:four"] += pixels * fours
            f[f"{fam}:four_vector"] += pixels * fours * (patch // 16)
            f[f"{fam}:four_tail"] += pixels * fours * (patch % 16 > 0)
            f[f"{fam}:rest_channel"] += pixels * rest
            f[f"{fam}:rest_vector"] += pixels * rest * vectors(patch)
        if run.stage != "general":  # (a block's last quad of 1 to 3 channels stored predicated)
            f[f"{fam}:requant_quad"] += pixels * quads
            f[f"{fam}:requant_partial"] += pixels * sum(n % 4 > 0 for n in blocks)
        if fam == MVE_FAMILIES[1]:  # gather_patch, per pixel and block: one chunk, as conv_pairs' fast one
            whole_wrapped, wrapped_taps = self._ring_wraps(run)
            fast = pixels - run.clipped - whole_wrapped
            f[f"{fam}:gather_wrapped_tap"] += wrapped_taps * len(blocks)
            f[f"{fam}:gather_fast_row"] += fast * kh * len(blocks)
            f[f"{fam}:gather_fast_byte"] += fast * patch * len(blocks)
            f[f"{fam}:gather_slow"] += (pixels - fast) * len(blocks)
            f[f"{fam}:gather_slow_row"] += (pixels - fast) * kh * len(blocks)
            f[f"{fam}:gather_slow_byte"] += (pixels - fast) * patch * len(blocks)

    def _ring_wraps(self, run: KernelRun) -> tuple[int, int]:
        return ring_wraps(self.win, run)


def ring_wraps(win: Window, run: KernelRun) -> tuple[int, int]:
    """In a column stream (run.col_ring columns kept, column c stored at c % ring): the region's
    pixels whose window is whole but wraps the ring, and the in-bounds taps of the kernel rows
    whose taps wrap it (gather_patch copies them tap by tap, Helium's depthwise loop locates them
    so)."""
    whole = taps = 0
    for inside in _wrapping_windows(win, run):
        taps += _krows_per_column(run) * inside
        whole += run.whole_rows if inside == win.kernel[1] else 0
    return whole, taps


def ring_wrapped_rows(win: Window, run: KernelRun) -> int:
    """In a column stream: the region's kernel rows whose in-bounds taps wrap the input's column
    ring. window.c's gather_runs cuts such a row in two runs (the taps up to the ring's end, then
    from its start), each then summed for every output channel."""
    return _krows_per_column(run) * sum(1 for _ in _wrapping_windows(win, run))


def _krows_per_column(run: KernelRun) -> int:
    return run.krows // max(run.region[3] - run.region[2], 1)


def _wrapping_windows(win: Window, run: KernelRun):
    """The in-bounds taps of each of the region's output columns whose window wraps the input's
    column ring (none without a ring)."""
    ring = run.col_ring
    if not ring:
        return
    kw, stride, pad, width = win.kernel[1], win.strides[1], win.pads[1], run.in_shape[1]
    for x in range(run.region[2], run.region[3]):
        lo, hi = max(x * stride - pad, 0), min(x * stride - pad + kw, width)
        if hi > lo and lo % ring + (hi - lo) > ring:
            yield hi - lo


def count_float_accumulate(run: KernelRun, f: Counts, runs: int, channels: int) -> None:
    """accumulate_f32 (kernels/conv2d.c) sums one output channel at a time over every run's values:
    per channel a pass over the runs (`run_channel`), per value and channel a multiply-accumulate
    (`mac`). int8's loop takes four channels at a time, and counted as its quads and single
    channels, a float layer of 6 outputs paid its two single channels' runs as a quad's. On soft
    float a product's cost depends on its input: `value_signed` where no ReLU left it rectified,
    `value_dense` too where no zero reaches it at all (features.dense_input)."""
    fam, values = run.family, run.taps * run.in_shape[2]
    f[f"{fam}:run_channel"] += runs * channels
    f[f"{fam}:mac"] += values * channels
    if not run.rectified:  # (soft float: products of non-zero values, the long path)
        f[f"{fam}:value_signed"] += values * run.channels
    if run.dense:  # (not rectified either, but no zero behind a CONCATENATION or MUL: every one)
        f[f"{fam}:value_dense"] += values * run.channels


def count_dilated_loop(win: Window, run: KernelRun, f: Counts, blocks: list[int]) -> None:
    """What kernels/dilated.c's loop runs besides the plain window loop's counts: per call the
    copy of the op's description (a struct copy the compiler makes a byte-by-byte memcpy, which a
    column stream pays per pixel), per pixel its taps' clipping, per block of channels an output
    stage called (not inline). Its integer divisions count apart (`dilated_division`): per call
    the taps per axis, (extent - 1) / d + 1, then per pixel msf_dilated_tap_range's."""
    if win.dilated:
        f[f"{run.family}:dilated_call"] += 1
        f[f"{run.family}:dilated_pixel"] += run.pixels
        f[f"{run.family}:dilated_block"] += run.pixels * len(blocks)
        f[f"{run.family}:dilated_division"] += 2 + tap_range_divisions(win, run)


def tap_range_divisions(win: Window, run: KernelRun) -> int:
    """The divisions by the dilation that msf_dilated_tap_range (kernels/dilated.h) makes over the
    region's pixels: per axis the window's end, and its first in-bounds tap where it starts before
    the input (y0 < 0, x0 < 0). A call of a library routine on a core without a divider (the
    LX106: support/xtensa-lx106/arith.c's __divsi3, 32 steps whatever the operands)."""
    r0, r1, c0, c1 = run.region
    rows, cols = r1 - r0, c1 - c0
    early = [max(min(hi, -(-pad // stride)) - lo, 0)  # positions x with x * stride - pad < 0
             for lo, hi, pad, stride in ((r0, r1, win.pads[0], win.strides[0]), (c0, c1, win.pads[1], win.strides[1]))]
    return 2 * rows * cols + early[0] * cols + early[1] * rows


def count_wide_dilated(win: Window, run: KernelRun, f: Counts) -> None:
    """What int16.c's dilated window loop runs besides the plain one's counts: per pixel its taps'
    clipping (its divisions apart, as count_dilated_loop's), per output value and per tap of it
    the general (conv or depthwise) addressing."""
    if win.dilated:
        f[f"{run.family}:dilated_pixel"] += run.pixels
        f[f"{run.family}:dilated_output"] += run.pixels * run.channels
        f[f"{run.family}:dilated_tap_output"] += run.taps * run.channels
        f[f"{run.family}:dilated_division"] += tap_range_divisions(win, run)


def dilated_kernel(kernel: str, win: Window) -> str:
    """The C kernel of a conv or depthwise window: `kernel`, or its dilated entry `kernel`_dilated."""
    return f"{kernel}_dilated" if win.dilated else kernel


def dilation_note(win: Window) -> str:
    """What describe() adds for a dilated window: " d2" (or " d2x3")."""
    if not win.dilated:
        return ""
    dh, dw = win.dilations
    return f" d{dh}" if dh == dw else f" d{dh}x{dw}"


def with_dilations(plain: str, win: Window) -> str:
    """The params initializer of a kernel's dilated entry (`<kernel>_dilated_params`): the plain
    kernel's params, then the dilations; `plain` itself for an undilated window."""
    if not win.dilated:
        return plain
    return f"{{ .op = {plain}, .dilation_h = {win.dilations[0]}, .dilation_w = {win.dilations[1]} }}"


def weighted_c_consts(ctx: KernelContext, multipliers, rounding: str) -> dict[str, np.ndarray]:
    """The constants of a conv / depthwise kernel: weights, bias, and the int8 output stage."""
    weights, bias = ctx.consts["weights"], ctx.consts.get("bias")
    if ctx.is_float:
        consts = {"weights": np.ascontiguousarray(weights, dtype=np.float32)}
        if bias is not None:
            consts["bias"] = np.ascontiguousarray(bias, dtype=np.float32)
        return consts
    consts = {"weights": np.ascontiguousarray(weights, dtype=np.int8)}
    if bias is not None:
        consts["bias"] = np.ascontiguousarray(bias, dtype=np.int64 if ctx.is_int16 else np.int32)
    if ctx.is_int16:  # the 16x8 kernels take TFLite's (significand, shift) pairs as they are
        mult, shift = (np.asarray(v, np.int32).reshape(-1) for v in multipliers(ctx))
        return {**consts, "mult": mult, "shift": shift}
    return {**consts, **output_stage_consts(*multipliers(ctx), rounding)}


def weighted_accumulator_bound(ctx: KernelContext, channel_axis: int) -> int | None:
    """The largest |accumulator| of a conv / depthwise / dense kernel over every output channel,
    on any input: each product w * (x - zero point) lies between w times the two extremes of
    x - zero point (padding, the zero point, gives 0, which is between them), so every partial sum,
    in any order, with or without the bias, lies between the bias plus the sums of the smaller and
    of the larger ends. Reached when every tap reads the extreme that its weight favours. None for
    float."""
    if ctx.is_float:
        return None
    weights = np.moveaxis(np.asarray(ctx.consts["weights"], dtype=np.int64), channel_axis, 0)
    weights = weights.reshape(weights.shape[0], -1)
    info, zero = np.iinfo(ctx.qtype), ctx.input_quant[0].zero_point
    high, low = int(info.max) - zero, int(info.min) - zero
    largest = np.maximum(weights * high, weights * low).sum(axis=1).astype(object)  # exact: Python ints
    smallest = np.minimum(weights * high, weights * low).sum(axis=1).astype(object)
    bias = ctx.consts.get("bias")
    biased = np.asarray(bias, dtype=object) if bias is not None else 0
    ends = [largest + biased, smallest + biased, largest, smallest]
    return int(max(np.max(np.abs(end), initial=0) for end in ends))


def output_stage_consts(mult, shift, rounding: str) -> dict[str, np.ndarray]:
    """Per-channel (multiplier, shift) as the C output stage (msf_requantize_block_s8) applies
    them, with the work that does not depend on the value done here: the left shift folded into a
    64-bit multiplier (mult * 2^left < 2^62), and the right shift. SINGLE rounding shifts the
    product right by 31 - shift in one step. A channel of multiplier 0 (a zero scale) outputs its
    zero point under any shift: it gets a right shift of 1, so that it does not keep the layer from
    the fast output stage, which takes every channel shifting right (msf_output_stage_is_fast)."""
    mult = np.asarray(mult, dtype=np.int64).reshape(-1)
    shift = np.asarray(shift, dtype=np.int64).reshape(-1)
    if rounding == nx.SINGLE:
        return {"multiplier": mult, "right": (31 - shift).astype(np.int32)}
    right = np.where(mult == 0, 1, np.maximum(-shift, 0))
    return {"multiplier": mult << np.maximum(shift, 0), "right": right.astype(np.int32)}


REQUANTISATION_ROLES = ("mult", "shift", "multiplier", "right")


def weighted_c_fields(ctx: KernelContext, activation: str | None, rounding: str, consts, names) -> dict:
    """The quantisation and constant fields shared by the conv, depthwise and dense params."""
    if ctx.is_float:
        return {"activation": C_ACTIVATION[activation], "weights_f32": c_pointer(names, consts, "weights"),
                "bias_f32": c_pointer(names, consts, "bias")}
    in_q, out_q = ctx.input_quant[0], ctx.output_quant
    low, high = ctx.activation_range(activation)
    if ctx.is_int16:  # msf_conv2d_s16_params, msf_dense_s16_params: no zero points
        return {"act_min": low, "act_max": high, "rounding": C_ROUNDING[rounding],
                **{role: c_pointer(names, consts, role) for role in ("weights", "bias", "mult", "shift")}}
    return {"input_offset": -in_q.zero_point, "output_offset": out_q.zero_point, "act_min": low, "act_max": high,
            "rounding": C_ROUNDING[rounding], "weights": c_pointer(names, consts, "weights"),
            "bias": c_pointer(names, consts, "bias"),
            **{role: c_pointer(names, consts, role) for role in REQUANTISATION_ROLES if role in consts}}


def zero_products(x: np.ndarray, win: Window) -> tuple[int, int]:
    """Of one output channel's products over map `x` (each output pixel's in-bounds taps: the
    kernels skip the padded ones, over the input channels), those that read a 0, and all."""
    zeros = (np.asarray(x) == 0).astype(np.int64)
    return int(_im2col(zeros, win, 0).sum()), int(_im2col(np.ones_like(zeros), win, 0).sum())


def _im2col(x: np.ndarray, win: Window, pad_value) -> np.ndarray:
    """(Ho*Wo, kh*kw*C_in) patch matrix, columns in the (kh, kw, C_in) order of TFLite's weights."""
    if win.kernel == (1, 1) and not any(win.pads):
        sh, sw = win.strides
        x = x[::sh, ::sw]
        return x.reshape(-1, x.shape[2])
    view = windows(pad_hw(x, win, pad_value), win)
    return view.reshape(view.shape[0] * view.shape[1], -1)


def chunk_rows(kh: int, row_len: int, chunks: list[int]) -> int:
    """Kernel rows (row_len values each) that gather_patch works on over the passes of a patch cut in
    `chunks` (kernels/conv2d.c: a pass skips the rows outside [ch0, ch0 + m))."""
    return sum(min(kh, -(-end // row_len)) - start // row_len for start, end in _chunk_spans(chunks))


def copy_tails(win: Window, run: KernelRun, chunks: list[int]) -> tuple[int, int]:
    """Bytes gather_patch's copies (msf_copy_s8) take one at a time over the region's pixels, per
    lane pass, and the copies that take some: each in-bounds kernel row's in-bounds taps are one
    copy, cut at the chunks' ends, and a copy of n bytes takes its last n % 4 so. (A row that wraps
    a column ring is copied tap by tap instead: gather_wrapped_tap prices those taps.)"""
    r0, r1, c0, c1 = run.region
    rows, cols = _spans(win, run, 0, r0, r1), _spans(win, run, 1, c0, c1)
    in_c = run.in_shape[2]
    row_len = win.kernel[1] * in_c
    chunk_spans = _chunk_spans(chunks)
    total = copies = 0
    for (i_lo, i_hi), n_rows in rows.items():
        for (j_lo, j_hi), n_cols in cols.items():
            for i in range(i_lo, i_hi):
                lo, hi = i * row_len + j_lo * in_c, i * row_len + j_hi * in_c
                tails = [max(min(hi, b) - max(lo, a), 0) % 4 for a, b in chunk_spans]
                total += sum(tails) * n_rows * n_cols
                copies += sum(t > 0 for t in tails) * n_rows * n_cols
    return total, copies


def fill_pieces(win: Window, run: KernelRun, chunks: list[int]) -> int:
    """The padding pieces gather_patch fills (put_patch) left and right of the in-bounds taps of an
    in-bounds kernel row of a clipped window, over the region's pixels, once in each chunk that a
    piece overlaps."""
    r0, r1, c0, c1 = run.region
    row_len, in_c = win.kernel[1] * run.in_shape[2], run.in_shape[2]
    chunk_spans = _chunk_spans(chunks)
    pieces = 0
    for (i_lo, i_hi), n_rows in _spans(win, run, 0, r0, r1).items():
        for (j_lo, j_hi), n_cols in _spans(win, run, 1, c0, c1).items():
            if j_hi <= j_lo:
                continue
            for i in range(i_lo, i_hi):
                sides = [(0, j_lo * in_c), (j_hi * in_c, row_len)]
                pieces += n_rows * n_cols * sum(min(hi + i * row_len, b) > max(lo + i * row_len, a)
                                                for lo, hi in sides for a, b in chunk_spans)
    return pieces


def _chunk_spans(chunks: list[int]) -> list[tuple[int, int]]:
    """The [start, end) of each chunk of a patch cut in chunks of these lengths."""
    ends = list(accumulate(chunks))
    return list(zip([0, *ends], ends))


def _spans(win: Window, run: KernelRun, axis: int, lo: int, hi: int) -> Counts:
    """(first, end) in-bounds kernel positions along an axis -> output positions lo..hi with them."""
    k, stride, pad, size = win.kernel[axis], win.strides[axis], win.pads[axis], run.in_shape[axis]
    spans: Counts = Counts()
    for x in range(lo, hi):
        start = x * stride - pad
        spans[(max(-start, 0), min(size - start, k))] += 1
    return spans
