/*
 * DEPTHWISE_CONV_2D over an output region (src/msfcnn/ops/depthwise_conv2d.py).
 *
 * int8: TFLite's depthwise kernel accumulates (input - input zero point) * weight in int32 over
 * the taps, adds the bias and requantises per channel with its own MultiplyByQuantizedMultiplier
 * (gemmlowp's doubling high multiply, then a rounding shift: p->rounding = MSF_ROUND_DOUBLE),
 * then adds the output zero point and clamps. Output channel o reads input channel
 * o / depth_multiplier; weights are (1, kh, kw, out_c). Padding (the zero point) is skipped.
 * float: taps accumulated in (row, column) order as the numpy kernel does, then bias, activation.
 *
 * Loops (msf_window, window.c): output pixel; its in-bounds taps located once; block of output
 * channels; with multiplier 1, eight channels at a time in registers (four, a word each, on Arm's
 * DSP extension); tap.
 *
 * The `inplace` scheme relies on that order: with multiplier 1, output pixels go left to right,
 * and a block of output channels is written after its sums, which read only those channels (the
 * DSP tail's word may also read earlier channels, whose lanes it drops). So a row may be written
 * one pixel to the left of an input row it reads: pixel x lands on input pixel x - 1, which no
 * later pixel reads and whose channels of the block the sums have already read.
 */
#include "depthwise_conv2d.h"
#include "dilated.h"
#include "window.h"

#if defined(MSF_ARM_DSP)
/* s + the products of the taps [src, end) for four channels (multiplier 1), from input channel ch
   and the weights at w: per tap one word of four inputs and one of four weights, split into 16-bit
   lanes (inputs offset on the way, SXTAB16) and multiplied lane by lane into four accumulators
   (SMLABB / SMLATT): 14 instructions a tap for four multiply-accumulates, tap addressing and loop
   included, all in registers (eight channels, or two taps an iteration, would spill). */
static inline msf_sums4 four_channels(msf_sums4 s, const void *const *src, const void *const *end,
                                      const int32_t *weight, int32_t ch, const int8_t *w, int16x2_t offset2)
{
    for (; src != end; ++src, ++weight) {
        const uint32_t xv = msf_read_s8x4((const int8_t *)*src + ch), wv = msf_read_s8x4(w + *weight);
        const int16x2_t xa = __sxtab16(offset2, (int8x4_t)xv), xb = msf_sxtab16_odd(offset2, xv);
        const int16x2_t wa = __sxtb16((int8x4_t)wv), wb = msf_sxtb16_odd(wv);
        s.s0 = __smlabb(xa, wa, s.s0);
        s.s1 = __smlabb(xb, wb, s.s1);
        s.s2 = __smlatt(xa, wa, s.s2);
        s.s3 = __smlatt(xb, wb, s.s3);
    }
    return s;
}
#endif

#if defined(MSF_ARM_MVE)
/* Taps up to which the Helium loop takes a window (7 x 7); a larger one takes msf_window. */
#define MSF_MVE_TAPS 49

/* Channels the Helium loop takes at a time (a multiple of 16): the first depthwise layers of
   MobileNetV2 and MCUNet in one block, whose per-pixel costs (the taps' addresses) it pays once;
   20 B of stack a channel. */
#ifndef MSF_MVE_DEPTHWISE_BLOCK
#define MSF_MVE_DEPTHWISE_BLOCK 96
#endif

/* The Helium loop's arrays of a block's channels are in "lane order": each eight channels as their
   four even ones, then their four odd ones, as VMULLB and VMULLT produce their products. */

/* v as a predicate's count: 0 when negative (vctp takes it unsigned). */
static inline uint32_t mve_count(int32_t v)
{
    return v > 0 ? (uint32_t)v : 0u;
}

/* sums[k] = start[k] + sum over the taps t of (x_t[k] + offset) * w_t[k], k < n, in the arrays'
   lane order, for the taps' input channels x_t = src[t] and weights w_t = wp[t]: sixteen
   channels at a time, per tap two loads of inputs and two of weights, each eight values
   sign-extended to 16 bits, their products (exact in 16 bits, widened by VMULLB / VMULLT) added to
   four int32 vectors. Loads of the channels past n are predicated off. with_offset 0: the offset
   is already in start. */
static MSF_ALWAYS_INLINE void mve_depthwise_sums(int32_t *sums, const int32_t *start, int32_t n,
                                                 const int8_t *const *src, const int8_t *const *wp, int32_t taps,
                                                 int32_t offset, const int with_offset, const int partial)
{
    const int16_t add = (int16_t)offset;
    int32_t k, t;
    for (k = 0; k < n; k += 16) {
        const mve_pred16_t p0 = vctp16q(mve_count(n - k)), p1 = vctp16q(mve_count(n - k - 8));
        int32x4_t e0 = vldrwq_s32(start + k), o0 = vldrwq_s32(start + k + 4);
        int32x4_t e1 = vldrwq_s32(start + k + 8), o1 = vldrwq_s32(start + k + 12);
        for (t = 0; t < taps; ++t) {
            const int8_t *x = src[t] + k, *wt = wp[t] + k;
            int16x8_t x0 = partial ? vldrbq_z_s16(x, p0) : vldrbq_s16(x);
            const int16x8_t w0 = partial ? vldrbq_z_s16(wt, p0) : vldrbq_s16(wt);
            int16x8_t x1;
            if (with_offset) {
                x0 = vaddq_n_s16(x0, add);
            }
            e0 = vaddq_s32(e0, vmullbq_int_s16(x0, w0));
            o0 = vaddq_s32(o0, vmulltq_int_s16(x0, w0));
            /* The second eight channels' loads after the first's products: hoisted above them, they
               would need more vector registers than the core has, and GCC spills an accumulator. */
            MSF_MEMORY_ORDER();
            x1 = partial ? vldrbq_z_s16(x + 8, p1) : vldrbq_s16(x + 8);
            if (with_offset) {
                x1 = vaddq_n_s16(x1, add);
            }
            {
                const int16x8_t w1 = partial ? vldrbq_z_s16(wt + 8, p1) : vldrbq_s16(wt + 8);
                e1 = vaddq_s32(e1, vmullbq_int_s16(x1, w1));
                o1 = vaddq_s32(o1, vmulltq_int_s16(x1, w1));
            }
        }
        vstrwq_s32(sums + k, e0);
        vstrwq_s32(sums + k + 4, o0);
        vstrwq_s32(sums + k + 8, e1);
        vstrwq_s32(sums + k + 12, o1);
    }
}

/* The output stage of a block's n channels from sums in the arrays' order, into dst in channel
   order: each eight channels' even and odd values, multiplied and shifted (msf_mve_requantize),
   narrowed with saturation into the halves of 16-bit lanes, then the zero point and the clamp
   there (saturating to int16 first keeps the order, and [lo, hi] lies inside int16), stored a
   byte each. */
static inline void mve_depthwise_output(const msf_output_stage *s, const int32_t *sums, const int32_t *multiplier,
                                        const int32_t *shift, int32_t n, int8_t *dst, const int away)
{
    const int16x8_t low = vdupq_n_s16((int16_t)s->act_min), high = vdupq_n_s16((int16_t)s->act_max);
    const int16_t zero_point = (int16_t)s->output_offset;
    int32_t k;
    for (k = 0; k < n; k += 8) {
        const int32x4_t even = msf_mve_shift(vldrwq_s32(sums + k), vldrwq_s32(multiplier + k), vldrwq_s32(shift + k),
                                             away);
        const int32x4_t odd = msf_mve_shift(vldrwq_s32(sums + k + 4), vldrwq_s32(multiplier + k + 4),
                                            vldrwq_s32(shift + k + 4), away);
        const int16x8_t narrow = vqmovntq_s32(vqmovnbq_s32(vreinterpretq_s16_s32(even), even), odd);
        const int16x8_t both = vminq_s16(vmaxq_s16(vqaddq_n_s16(narrow, zero_point), low), high);
        if (k + 8 <= n) {
            vstrbq_s16(dst + k, both);
        } else {
            vstrbq_p_s16(dst + k, both, vctp16q((uint32_t)(n - k)));
        }
    }
}

/* One output pixel's sums for a block: its in-bounds taps' inputs (their columns one after the
   other unless a ring buffer wraps among them) and weights (all taps': `every`, set once a block). */
static MSF_ALWAYS_INLINE void mve_depthwise_pixel(const msf_depthwise_conv2d_params *p, const msf_view *in,
                                                  const msf_pixel *px, int32_t oc0, int32_t n, const int32_t *bias,
                                                  const int32_t *inside, const int8_t *const *every, int32_t *sums,
                                                  const int partial)
{
    const int8_t *src[MSF_MVE_TAPS], *wp[MSF_MVE_TAPS];
    const int32_t kw = p->kw, col_stride = in->col_stride;
    const int32_t first = msf_stored_col(in, px->x0 + px->j_lo), width = px->j_hi - px->j_lo;
    const int in_order = in->col_ring == 0 || first + width <= in->col_ring;
    int32_t taps = 0, i, j;
    for (i = px->i_lo; i < px->i_hi; ++i) {
        const int8_t *const row = (const int8_t *)in->base + (ptrdiff_t)msf_stored_row(in, px->y0 + i) * in->row_stride
                                  + oc0;
        for (j = px->j_lo; j < px->j_hi; ++j, ++taps) {
            const int32_t col = in_order ? first + (j - px->j_lo) : msf_stored_col(in, px->x0 + j);
            src[taps] = row + (ptrdiff_t)col * col_stride;
        }
    }
    if (taps == p->kh * kw) {
        mve_depthwise_sums(sums, inside, n, src, every, taps, p->input_offset, 0, partial);
    } else {
        for (taps = 0, i = px->i_lo; i < px->i_hi; ++i) {
            for (j = px->j_lo; j < px->j_hi; ++j, ++taps) {
                wp[taps] = every[i * kw + j];
            }
        }
        mve_depthwise_sums(sums, bias, n, src, wp, taps, p->input_offset, 1, partial);
    }
}

/* A block's constants for its eight channels from channel `at` of the block that starts at oc0
   (when left < 8, its first `left` only: the others' lanes read nothing), in lane order: the bias,
   the bias plus offset times the weights' sum over all taps (summed in 16-bit lanes: 49 taps of
   int8 stay inside int16), each channel's multiplier (the low word of its int64) and its right
   shift negated, as VRSHL takes it. Gathers pick the even and odd channels. Once a block and
   call: vectors, so that a call of a few pixels pays little for them. */
static void mve_depthwise_constants(const msf_depthwise_conv2d_params *p, const int8_t *const *every, int32_t taps,
                                    int32_t oc0, int32_t at, int32_t left, int32_t *bias, int32_t *inside,
                                    int32_t *multiplier, int32_t *shift)
{
    static const uint32_t pairs[4] = { 0, 2, 4, 6 };  /* every other channel */
    const uint32x4_t step = vldrwq_u32(pairs), step64 = vshlq_n_u32(step, 1);  /* (int64: two words each) */
    const int32_t k = oc0 + at;  /* the first channel's index in the layer */
    const mve_pred16_t all = vctp16q(mve_count(left));
    const mve_pred16_t even = vctp32q(mve_count((left + 1) / 2)), odd = vctp32q(mve_count(left / 2));
    const int32_t *words = (const int32_t *)(const void *)(p->multiplier + k);
    int16x8_t sum = vdupq_n_s16(0);
    int32_t t;
    for (t = 0; t < taps; ++t) {
        sum = vaddq_s16(sum, vldrbq_z_s16(every[t] + at, all));
    }
    {
        const int32x4_t bias_even = p->bias != NULL ? vldrwq_gather_shifted_offset_z_s32(p->bias + k, step, even)
                                                    : vdupq_n_s32(0);
        const int32x4_t bias_odd = p->bias != NULL ? vldrwq_gather_shifted_offset_z_s32(p->bias + k + 1, step, odd)
                                                   : vdupq_n_s32(0);
        vstrwq_s32(bias, bias_even);
        vstrwq_s32(bias + 4, bias_odd);
        vstrwq_s32(inside, vmlaq_n_s32(bias_even, vmovlbq_s16(sum), p->input_offset));
        vstrwq_s32(inside + 4, vmlaq_n_s32(bias_odd, vmovltq_s16(sum), p->input_offset));
        vstrwq_s32(multiplier, vldrwq_gather_shifted_offset_z_s32(words, step64, even));
        vstrwq_s32(multiplier + 4, vldrwq_gather_shifted_offset_z_s32(words + 2, step64, odd));
        vstrwq_s32(shift, vnegq_s32(vldrwq_gather_shifted_offset_z_s32(p->right + k, step, even)));
        vstrwq_s32(shift + 4, vnegq_s32(vldrwq_gather_shifted_offset_z_s32(p->right + k + 1, step, odd)));
    }
}

/* DEPTHWISE_CONV_2D with multiplier 1 on Helium: block of MSF_MVE_DEPTHWISE_BLOCK channels; output
   pixel;
   the pixel's in-bounds taps located once; sixteen channels at a time. A window with every tap
   inside the input starts from bias + offset * (the sum of the block's weights over all taps),
   computed once a block, and multiplies the int8 inputs themselves; a clipped window adds the
   offset to each input. The channels of a block read only those channels, so the blocks may go
   one after the other over the region (the `inplace` scheme's order holds within each). The
   output stage's other modes (a left shift, TFLite's single rounding) take msf_window. */
static void depthwise_mve(const msf_depthwise_conv2d_params *p, const msf_view *in, msf_view *out, int32_t r0,
                          int32_t r1, int32_t c0, int32_t c1, const int away)
{
    /* in lane order, rounded up to whole vectors of sixteen */
    int32_t bias[MSF_MVE_DEPTHWISE_BLOCK + 15], inside[MSF_MVE_DEPTHWISE_BLOCK + 15], sums[MSF_MVE_DEPTHWISE_BLOCK + 15];
    int32_t multiplier[MSF_MVE_DEPTHWISE_BLOCK + 15], shift[MSF_MVE_DEPTHWISE_BLOCK + 15];
    const int8_t *every[MSF_MVE_TAPS];
    const msf_window_shape shape = MSF_WINDOW_SHAPE(p);
    const msf_output_stage stage = MSF_OUTPUT_STAGE(p);
    const int32_t out_c = p->out_c, taps = p->kh * p->kw;
    msf_pixels it;
    msf_pixel px;
    int32_t oc0, k, t;
    for (oc0 = 0; oc0 < out_c; oc0 += MSF_MVE_DEPTHWISE_BLOCK) {
        const int32_t n = out_c - oc0 < MSF_MVE_DEPTHWISE_BLOCK ? out_c - oc0 : MSF_MVE_DEPTHWISE_BLOCK;
        for (t = 0; t < taps; ++t) {
            every[t] = p->weights + (ptrdiff_t)t * out_c + oc0;
        }
        for (k = 0; k < n; k += 8) {
            mve_depthwise_constants(p, every, taps, oc0, k, n - k, bias + k, inside + k, multiplier + k, shift + k);
        }
        msf_pixels_start(&it, &shape, r0, r1, c0, c1);
        while (msf_pixels_next(&it, &px)) {
            if ((n & 15) == 0) {
                mve_depthwise_pixel(p, in, &px, oc0, n, bias, inside, every, sums, 0);
            } else {
                mve_depthwise_pixel(p, in, &px, oc0, n, bias, inside, every, sums, 1);
            }
            mve_depthwise_output(&stage, sums, multiplier, shift, n, msf_at_s8(out, px.r, px.c, oc0), away);
        }
    }
}
#endif

#if defined(MSF_ARMV6M) && MSF_MAX_RUNS <= 31
/* s += the products of four channels ch + [0, 4) (multiplier 1) over the taps (count > 0):
   tap t's inputs at taps->src[t] + ch, its weights at weights + taps->weight[t] + ch, both read
   with the channel as LDRSB's register offset. 30 instructions a tap for four multiply-accumulates,
   where GCC's code for the eight-channel loop below takes 101 for eight on Armv6-M (no immediate
   offset for LDRSB, and twelve live values for eight low registers). The operands take the eight
   low registers and five high ones, as many as GCC gives an asm statement. A tap's weight offset is
   read at a fixed distance from its input pointer (4 * MSF_MAX_RUNS bytes: the arrays of msf_runs,
   within LDR's reach while MSF_MAX_RUNS <= 31). */
static inline void four_channels(msf_sums4 *s, const msf_runs *taps, const int8_t *weights, int32_t ch,
                                 int32_t offset)
{
    const void *const *src = taps->src, *const *const end = taps->src + taps->count;
    const int8_t *x, *w;
    int32_t v, t;
    __asm__(".syntax unified\n"
            "1:\n\t"
            "ldr %[x], [%[src]]\n\t"
            "ldr %[w], [%[src], %[gap]]\n\t"
            "adds %[w], %[w], %[weights]\n\t"
            "ldrsb %[v], [%[x], %[ch]]\n\t"
            "adds %[v], %[v], %[offset]\n\t"
            "ldrsb %[t], [%[w], %[ch]]\n\t"
            "muls %[t], %[v]\n\t"
            "add %[s0], %[t]\n\t"
            "adds %[ch], #1\n\t"
            "ldrsb %[v], [%[x], %[ch]]\n\t"
            "adds %[v], %[v], %[offset]\n\t"
            "ldrsb %[t], [%[w], %[ch]]\n\t"
            "muls %[t], %[v]\n\t"
            "add %[s1], %[t]\n\t"
            "adds %[ch], #1\n\t"
            "ldrsb %[v], [%[x], %[ch]]\n\t"
            "adds %[v], %[v], %[offset]\n\t"
            "ldrsb %[t], [%[w], %[ch]]\n\t"
            "muls %[t], %[v]\n\t"
            "add %[s2], %[t]\n\t"
            "adds %[ch], #1\n\t"
            "ldrsb %[v], [%[x], %[ch]]\n\t"
            "adds %[v], %[v], %[offset]\n\t"
            "ldrsb %[t], [%[w], %[ch]]\n\t"
            "muls %[t], %[v]\n\t"
            "add %[s3], %[t]\n\t"
            "subs %[ch], #3\n\t"
            "adds %[src], #4\n\t"
            "cmp %[src], %[end]\n\t"
            "bne 1b"
            : [s0] "+h"(s->s0), [s1] "+h"(s->s1), [s2] "+h"(s->s2), [s3] "+h"(s->s3), [src] "+l"(src), [ch] "+l"(ch),
              [x] "=&l"(x), [w] "=&l"(w), [v] "=&l"(v), [t] "=&l"(t)
            : [end] "h"(end), [weights] "l"(weights), [offset] "l"(offset),
              [gap] "i"((int32_t)((const char *)taps->weight - (const char *)taps->src))
            : "cc", "memory");
}
#endif

/* acc = start + the window's sum for output channels oc0 + k, k < n (start NULL: 0; each run is
   one tap). */
static void accumulate(const void *params, const msf_runs *taps, int32_t oc0, int32_t n, const int32_t *start,
                       msf_block *block)
{
    const msf_depthwise_conv2d_params *p = (const msf_depthwise_conv2d_params *)params;
    const int32_t m = p->depth_multiplier;
    const int32_t offset = p->input_offset;
    const int8_t *w = p->weights + oc0;
    int32_t *acc = block->i32;
    int32_t k = 0, t;
#if defined(MSF_ARM_DSP)
    if (m == 1) {  /* four channels at a time */
        const int16x2_t offset2 = msf_dup16(offset);
        const void *const *const src = taps->src, *const *const end = taps->src + taps->count;
        for (; k + 4 <= n; k += 4) {
            const msf_sums4 s = four_channels(msf_sums4_start(start != NULL ? start + k : NULL), src, end,
                                              taps->weight, oc0 + k, w + k, offset2);
            acc[k] = s.s0;
            acc[k + 1] = s.s1;
            acc[k + 2] = s.s2;
            acc[k + 3] = s.s3;
        }
        if (k < n && oc0 + n >= 4) {
            /* The last 1 to 3 channels: the four channels that end with them, from 0 (the first
               may lie before the block), of which the last n - k are kept. Words are read in
               bounds, and the scalar loop below is left for layers of fewer than four channels. */
            const int32_t first = oc0 + n - 4;
            const msf_sums4 s = four_channels(msf_sums4_start(NULL), src, end, taps->weight, first,
                                              p->weights + first, offset2);
            const int32_t sums[4] = { s.s0, s.s1, s.s2, s.s3 };
            for (; k < n; ++k) {
                acc[k] = (start != NULL ? start[k] : 0) + sums[k - (n - 4)];
            }
        }
    }
#elif defined(MSF_ARMV6M) && MSF_MAX_RUNS <= 31
    if (m == 1 && taps->count > 0) {  /* four channels at a time */
        for (; k + 4 <= n; k += 4) {
            msf_sums4 s = msf_sums4_start(start != NULL ? start + k : NULL);
            four_channels(&s, taps, p->weights, oc0 + k, offset);
            acc[k] = s.s0;
            acc[k + 1] = s.s1;
            acc[k + 2] = s.s2;
            acc[k + 3] = s.s3;
        }
    }
#else
    if (m == 1) {  /* the usual case: output channel oc reads input channel oc; eight at a time */
        for (; k + 8 <= n; k += 8) {
            int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
            if (start != NULL) {
                s0 = start[k];
                s1 = start[k + 1];
                s2 = start[k + 2];
                s3 = start[k + 3];
                s4 = start[k + 4];
                s5 = start[k + 5];
                s6 = start[k + 6];
                s7 = start[k + 7];
            }
            for (t = 0; t < taps->count; ++t) {
                const int8_t *x = (const int8_t *)taps->src[t] + oc0 + k;
                const int8_t *wt = w + taps->weight[t] + k;
                s0 += ((int32_t)x[0] + offset) * wt[0];
                s1 += ((int32_t)x[1] + offset) * wt[1];
                s2 += ((int32_t)x[2] + offset) * wt[2];
                s3 += ((int32_t)x[3] + offset) * wt[3];
                s4 += ((int32_t)x[4] + offset) * wt[4];
                s5 += ((int32_t)x[5] + offset) * wt[5];
                s6 += ((int32_t)x[6] + offset) * wt[6];
                s7 += ((int32_t)x[7] + offset) * wt[7];
            }
            acc[k] = s0;
            acc[k + 1] = s1;
            acc[k + 2] = s2;
            acc[k + 3] = s3;
            acc[k + 4] = s4;
            acc[k + 5] = s5;
            acc[k + 6] = s6;
            acc[k + 7] = s7;
        }
    }
#endif
    for (; k < n; ++k) {
        const int32_t ic = (oc0 + k) / m;
        int32_t sum = start != NULL ? start[k] : 0;
        for (t = 0; t < taps->count; ++t) {
            sum += ((int32_t)((const int8_t *)taps->src[t])[ic] + offset) * w[taps->weight[t] + k];
        }
        acc[k] = sum;
    }
}

/* float: acc = (start NULL: 0, else acc) + the taps' products, tap by tap in the window's order. */
static void accumulate_f32(const void *params, const msf_runs *taps, int32_t oc0, int32_t n, const int32_t *start,
                           msf_block *acc)
{
    const msf_depthwise_conv2d_params *p = (const msf_depthwise_conv2d_params *)params;
    const int32_t m = p->depth_multiplier;
    const float *w = p->weights_f32 + oc0;
    int32_t k, t;
    for (k = 0; k < n; ++k) {
        const int32_t ic = (oc0 + k) / m;
        float sum = start == NULL ? 0.0f : acc->f32[k];
        for (t = 0; t < taps->count; ++t) {
            sum += ((const float *)taps->src[t])[ic] * w[taps->weight[t] + k];
        }
        acc->f32[k] = sum;
    }
}

/* Both element types: a run per tap, the weights of consecutive taps out_c apart. (Inlined into
   each caller, as conv2d.c's convolution.) */
static MSF_ALWAYS_INLINE void depthwise(const msf_depthwise_conv2d_params *p, const msf_view *in, msf_view *out,
                                        int32_t r0, int32_t r1, int32_t c0, int32_t c1, int32_t element,
                                        msf_accumulate_fn multiply_accumulate, const int32_t dilation_h,
                                        const int32_t dilation_w)
{
    const msf_output_stage stage = MSF_OUTPUT_STAGE(p);
    const msf_window_op op = {
        .shape = MSF_WINDOW_SHAPE(p), .channels = p->out_c, .element = element, .tap_values = 1,
        .tap_weights = p->out_c, .merge_taps = 0, .bias = element == (int32_t)sizeof(int8_t) ? p->bias : NULL,
        .accumulate = multiply_accumulate, .finish = NULL, .stage = &stage, .params = p
    };
    if (dilation_h == 1 && dilation_w == 1) {  /* (constants: the plain kernels have no test here) */
        msf_window(&op, in, out, r0, r1, c0, c1);
    } else {  /* the window spans its extent; still a run per tap */
        msf_window_op dilated = op;
        dilated.shape.kh = msf_dilated_extent(p->kh, dilation_h);
        dilated.shape.kw = msf_dilated_extent(p->kw, dilation_w);
        msf_window_dilated(&dilated, dilation_h, dilation_w, in, out, r0, r1, c0, c1);
    }
}

void msf_depthwise_conv2d_s8 MSF_REGION_ARGS(msf_depthwise_conv2d_params)
{
#if defined(MSF_ARM_MVE)
    if (p->depth_multiplier == 1 && p->kh * p->kw <= MSF_MVE_TAPS) {
        const msf_output_stage stage = MSF_OUTPUT_STAGE(p);
        const int mode = msf_output_stage_mode(&stage, p->out_c);
        if (mode == MSF_STAGE_RUY || mode == MSF_STAGE_RUY_FULL) {
            depthwise_mve(p, in, out, r0, r1, c0, c1, 0);
            return;
        }
        if (mode == MSF_STAGE_DOUBLE || mode == MSF_STAGE_DOUBLE_FULL) {
            depthwise_mve(p, in, out, r0, r1, c0, c1, 1);
            return;
        }
    }
#endif
    depthwise(p, in, out, r0, r1, c0, c1, sizeof(int8_t), accumulate, 1, 1);
}

void msf_depthwise_conv2d_f32 MSF_REGION_ARGS(msf_depthwise_conv2d_params)
{
    depthwise(p, in, out, r0, r1, c0, c1, sizeof(float), accumulate_f32, 1, 1);
}

void msf_depthwise_conv2d_dilated_s8 MSF_REGION_ARGS(msf_depthwise_conv2d_dilated_params)
{
    depthwise(&p->op, in, out, r0, r1, c0, c1, sizeof(int8_t), accumulate, p->dilation_h, p->dilation_w);
}

void msf_depthwise_conv2d_dilated_f32 MSF_REGION_ARGS(msf_depthwise_conv2d_dilated_params)
{
    depthwise(&p->op, in, out, r0, r1, c0, c1, sizeof(float), accumulate_f32, p->dilation_h, p->dilation_w);
}
