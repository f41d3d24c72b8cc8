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

#if defined(MSF_ARM_DSP) && !defined(MSF_ARM_MVE)
/* Taps up to which the DSP loop could take a window (5 x 5). Only 3 x 3 windows take it: the others
   locate their taps one by one there, which costs more than msf_window's runs. */
#define MSF_DSP_TAPS 25

/* Output channels the DSP loop takes at a time (a multiple of 4): its weights, widened to 16 bits,
   take 8 B a tap and four channels on the stack (288 B for a 3 x 3 window). */
#define MSF_DSP_DEPTHWISE_BLOCK 16

/* With multiplier 1, the blocked loop takes a call of at most MSF_DSP_MAX_CHANNELS channels and at
   least MSF_DSP_MIN_PIXELS output pixels: its block constants, set once a call, and its per-pixel
   work pay off on thin maps of some size; msf_window's runs cost less on wide channels, small maps
   (mostly border pixels) and the few pixels of a fused plan's calls. */
#define MSF_DSP_MAX_CHANNELS 64
#define MSF_DSP_MIN_PIXELS 8

/* floor((c * 2^32 + a * b + 2^31) / 2^32): SMMLAR, which ACLE lacks. */
static inline int32_t dsp_smmlar(int32_t a, int32_t b, int32_t c)
{
#if defined(__GNUC__) && !defined(MSF_ACLE_ONLY)
    int32_t r;
    __asm__("smmlar %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
#else
    return (int32_t)asr64((int64_t)c * 4294967296LL + (int64_t)a * b + 2147483648LL, 32);
#endif
}

/* The output stage of the fast modes (ruy's or gemmlowp's rounding, a right shift r >= 1 on every
   channel) in 32 bits, for accumulators |acc| < 2^30 (dsp_block_constants checks the bound on each
   channel): the high part of msf_requantize_fast_loop, floor((acc * mult + 2^30) / 2^31), is
   floor((2 acc * mult + 2^31) / 2^32), one SMMLAR, which also adds the rounding constant into the
   high word: 2^(r - 1), less 1 for gemmlowp's ties away from zero when acc < 0 (the comment of
   msf_requantize_fast_loop shows that acc's sign may stand for the high part's); then the shift
   by r. Per channel: add = 2^(r - 1) and shift = r. */
static MSF_ALWAYS_INLINE int32_t dsp_requantize(int32_t acc, int32_t mult, int32_t add, int32_t shift,
                                                const int away)
{
    if (away) {
        add += msf_asr32(acc, 31);  /* -1 when acc < 0 */
    }
    return msf_asr32(dsp_smmlar((int32_t)((uint32_t)acc << 1), mult, add), shift);
}

/* What the DSP loop keeps for a block of channels, set once a block and call. Group g of four
   output channels starts at channel first[g] of the block (the last group of a block whose count
   is not a multiple of 4 ends with the block, its first lanes dropped); reads input channel
   input[g] of each tap, counted from the block's first (the group's channel with multiplier 1,
   else the one input channel its four share); starts from start[g] = bias + offset * (the
   weights' sum over all taps); multiplies the tap's inputs by weights[g][2 t] (its channels 0 and
   2 as 16-bit halves) and weights[g][2 t + 1] (channels 1 and 3); and its channel lane has
   dsp_requantize's constants mult[g][lane], add[g][lane], shift[g][lane]. small: every channel's
   accumulators stay below 2^30 in magnitude, as dsp_requantize needs. */
typedef struct {
    int32_t groups, small, first[MSF_DSP_DEPTHWISE_BLOCK / 4], input[MSF_DSP_DEPTHWISE_BLOCK / 4];
    msf_sums4 start[MSF_DSP_DEPTHWISE_BLOCK / 4];
    int32_t mult[MSF_DSP_DEPTHWISE_BLOCK / 4][4], add[MSF_DSP_DEPTHWISE_BLOCK / 4][4];
    int32_t shift[MSF_DSP_DEPTHWISE_BLOCK / 4][4];
    uint32_t weights[MSF_DSP_DEPTHWISE_BLOCK / 4][2 * MSF_DSP_TAPS];
} dsp_block;

/* Two int8 weights as the halves of a word (a at the bottom). */
static inline uint32_t weight_pair(int8_t a, int8_t b)
{
    return ((uint32_t)(uint16_t)(int16_t)a) | ((uint32_t)(uint16_t)(int16_t)b << 16);
}

/* The constants of a group's channel oc (see dsp_block); returns 1 if its accumulators stay below
   2^30 in magnitude: |bias| + 255 * (the sum of |weight|), (x + offset) lying in [-255, 255]. */
static int dsp_channel_constants(const msf_depthwise_conv2d_params *p, int32_t oc, dsp_block *b, int32_t g,
                                 int32_t lane)
{
    const int32_t out_c = p->out_c, taps = p->kh * p->kw;
    const int64_t bias = p->bias != NULL ? p->bias[oc] : 0;
    int32_t sum = 0, size = 0, t;
    for (t = 0; t < taps; ++t) {
        const int32_t w = p->weights[(ptrdiff_t)t * out_c + oc];
        sum += w;
        size += w < 0 ? -w : w;
    }
    b->mult[g][lane] = (int32_t)p->multiplier[oc];
    b->shift[g][lane] = p->right[oc];
    b->add[g][lane] = p->right[oc] >= 1 && p->right[oc] <= 31 ? (int32_t)1 << (p->right[oc] - 1) : 0;
    sum = (int32_t)bias + p->input_offset * sum;
    if (lane == 0) {
        b->start[g].s0 = sum;
    } else if (lane == 1) {
        b->start[g].s1 = sum;
    } else if (lane == 2) {
        b->start[g].s2 = sum;
    } else {
        b->start[g].s3 = sum;
    }
    return (bias < 0 ? -bias : bias) + 255 * (int64_t)size < ((int64_t)1 << 30);
}

/* The block of n channels from oc0 (see dsp_block). */
static void dsp_block_constants(const msf_depthwise_conv2d_params *p, int32_t oc0, int32_t n, dsp_block *b)
{
    const int32_t m = p->depth_multiplier, out_c = p->out_c, taps = p->kh * p->kw;
    const int32_t first_input = m == 1 ? oc0 : oc0 / m;
    int32_t g, t, lane;
    b->groups = (n + 3) / 4;
    b->small = 1;
    for (g = 0; g < b->groups; ++g) {
        const int32_t k = 4 * g + 4 <= n ? 4 * g : n - 4;  /* the last group ends with the block */
        const int32_t oc = oc0 + k;
        b->first[g] = k;
        b->input[g] = (m == 1 ? oc : oc / m) - first_input;
        for (lane = 0; lane < 4; ++lane) {
            b->small &= dsp_channel_constants(p, oc + lane, b, g, lane);
        }
        for (t = 0; t < taps; ++t) {
            const int8_t *w = p->weights + (ptrdiff_t)t * out_c + oc;
            b->weights[g][2 * t] = weight_pair(w[0], w[2]);
            b->weights[g][2 * t + 1] = weight_pair(w[1], w[3]);
        }
    }
}

/* One tap of a group (see dsp_group): its four inputs at x, split into 16-bit lanes, or the one
   at x spread over both halves, multiplied by its two words of weights into the four sums. */
static MSF_ALWAYS_INLINE msf_sums4 dsp_tap(msf_sums4 s, const int8_t *x, const uint32_t *w, const int spread)
{
    int16x2_t xa, xb;
    if (spread) {
        xa = xb = msf_dup16(*x);
    } else {
        const uint32_t v = msf_read_s8x4(x);
        xa = __sxtb16((int8x4_t)v);
        xb = msf_sxtb16_odd(v);
    }
    s.s0 = __smlabb(xa, (int16x2_t)w[0], s.s0);
    s.s1 = __smlabb(xb, (int16x2_t)w[1], s.s1);
    s.s2 = __smlatt(xa, (int16x2_t)w[0], s.s2);
    s.s3 = __smlatt(xb, (int16x2_t)w[1], s.s3);
    return s;
}

/* Where a pixel's taps are: tap t's input channel 0 of the block at src[t] (a window in the padding
   or across a column ring's wrap: its padding taps at a copy of the zero point), or at base +
   offset[t] (a window inside the input). The offsets hold the stored rows of the output row's
   kernel rows (a row ring may wrap among them) and are set once an output row whose window rows
   lie inside the input (row_inside), with row_base, its first kernel row at stored column 0. */
typedef struct {
    const int8_t *src[MSF_DSP_TAPS];
    const int8_t *base, *row_base;
    int32_t row_inside;
    ptrdiff_t offset[MSF_DSP_TAPS];
} dsp_taps;

/* s + the products of a group's four channels over the taps: per tap one word of four inputs
   (multiplier 1; split into 16-bit lanes by SXTB16) or one input for all four (spread: a multiplier
   that is a multiple of 4), two words of weights, four SMLAxy. The input offset is in s already:
   a tap in the padding reads the zero point, whose product with the offset added is 0. A 3 x 3
   window's nine taps are written out, their pointers and weights at constant offsets. */
static MSF_ALWAYS_INLINE msf_sums4 dsp_group(msf_sums4 s, const dsp_taps *at, int32_t channel, const uint32_t *w,
                                             int32_t taps, const int spread, const int inside)
{
    const int8_t *const base = inside ? at->base + channel : NULL;
    int32_t t;
#define MSF_DSP_TAP(t) dsp_tap(s, inside ? base + at->offset[t] : at->src[t] + channel, w + 2 * (t), spread)
    if (taps == 9) {
        s = MSF_DSP_TAP(0);
        s = MSF_DSP_TAP(1);
        s = MSF_DSP_TAP(2);
        s = MSF_DSP_TAP(3);
        s = MSF_DSP_TAP(4);
        s = MSF_DSP_TAP(5);
        s = MSF_DSP_TAP(6);
        s = MSF_DSP_TAP(7);
        return MSF_DSP_TAP(8);
    }
    for (t = 0; t < taps; ++t) {
        s = MSF_DSP_TAP(t);
    }
#undef MSF_DSP_TAP
    return s;
}

/* at->src of pixel px's window, at the block's first input channel (first_input), the padding's
   taps at pad. */
static void dsp_pixel_taps(const msf_depthwise_conv2d_params *p, const msf_view *in, const msf_pixel *px,
                           int32_t first_input, const int8_t *pad, dsp_taps *at)
{
    const int32_t kh = p->kh, kw = p->kw, col_stride = in->col_stride;
    const int32_t first = msf_stored_col(in, px->x0 + px->j_lo), width = px->j_hi - px->j_lo;
    const int in_order = in->col_ring == 0 || first + width <= in->col_ring;
    const int8_t **src = at->src;
    int32_t i, j;
    for (i = 0; i < kh; ++i, src += kw) {
        if (i < px->i_lo || i >= px->i_hi) {
            for (j = 0; j < kw; ++j) {
                src[j] = pad;
            }
        } else {
            const int8_t *const row = (const int8_t *)in->base
                                      + (ptrdiff_t)msf_stored_row(in, px->y0 + i) * in->row_stride + first_input;
            for (j = 0; j < kw; ++j) {
                if (j < px->j_lo || j >= px->j_hi) {
                    src[j] = pad;
                } else {
                    const int32_t col = in_order ? first + (j - px->j_lo) : msf_stored_col(in, px->x0 + j);
                    src[j] = row + (ptrdiff_t)col * col_stride;
                }
            }
        }
    }
}

/* The offsets of output row px->r's taps (see dsp_taps), for a 3 x 3 window. */
static void dsp_row_offsets(const msf_view *in, const msf_pixel *px, int32_t first_input, dsp_taps *at)
{
    int32_t i;
    at->row_inside = px->i_lo == 0 && px->i_hi == 3;
    if (at->row_inside) {
        const int32_t top = msf_stored_row(in, px->y0);
        at->row_base = (const int8_t *)in->base + (ptrdiff_t)top * in->row_stride + first_input;
        for (i = 0; i < 3; ++i) {
            const ptrdiff_t row = (ptrdiff_t)(msf_stored_row(in, px->y0 + i) - top) * in->row_stride;
            at->offset[3 * i] = row;
            at->offset[3 * i + 1] = row + in->col_stride;
            at->offset[3 * i + 2] = row + 2 * (ptrdiff_t)in->col_stride;
        }
    }
}

/* 1 if pixel px's 3 x 3 window lies inside the input and its columns do not wrap a ring; then
   at->base is its first tap (see dsp_taps). */
static MSF_ALWAYS_INLINE int dsp_window_inside(const msf_view *in, const msf_pixel *px, dsp_taps *at)
{
    int32_t col;
    if (!at->row_inside || px->j_lo != 0 || px->j_hi != 3) {
        return 0;
    }
    col = msf_stored_col(in, px->x0);
    if (in->col_ring > 0 && col + 3 > in->col_ring) {
        return 0;
    }
    at->base = at->row_base + (ptrdiff_t)col * in->col_stride;
    return 1;
}

/* The output values of a group's lanes [from, 4) (see dsp_requantize), at dst[lane]. */
static MSF_ALWAYS_INLINE void dsp_group_output(msf_sums4 s, const dsp_block *b, int32_t g, int32_t from,
                                               const msf_output_stage *stage, int8_t *dst, const int away,
                                               const int full)
{
    const int32_t zero_point = stage->output_offset, lo = stage->act_min, hi = stage->act_max;
    const int32_t *mult = b->mult[g], *add = b->add[g], *shift = b->shift[g];
    if (from == 0) {
        dst[0] = msf_clamp_output(dsp_requantize(s.s0, mult[0], add[0], shift[0], away) + zero_point, lo, hi, full);
    }
    if (from <= 1) {
        dst[1] = msf_clamp_output(dsp_requantize(s.s1, mult[1], add[1], shift[1], away) + zero_point, lo, hi, full);
    }
    if (from <= 2) {
        dst[2] = msf_clamp_output(dsp_requantize(s.s2, mult[2], add[2], shift[2], away) + zero_point, lo, hi, full);
    }
    dst[3] = msf_clamp_output(dsp_requantize(s.s3, mult[3], add[3], shift[3], away) + zero_point, lo, hi, full);
}

/* One pixel of a block. stage_form 0: every group's sums (the last group's dropped lanes not
   stored), then msf_output_stage_s8; else each group's output values right after its sums
   (dsp_group_output: 1 ruy's rounding, 2 gemmlowp's; + 2: clamped to the whole of int8). taps is
   a constant in the 3 x 3 form, so that its loop unrolls. */
static MSF_ALWAYS_INLINE void dsp_pixel(const dsp_block *b, const dsp_taps *at, int32_t taps, int32_t n,
                                        const msf_output_stage *stage, int mode, int32_t oc0, int8_t *dst,
                                        const int spread, const int inside, const int stage_form)
{
    int32_t sums[MSF_DSP_DEPTHWISE_BLOCK];
    int32_t g;
    for (g = 0; g < b->groups; ++g) {
        const msf_sums4 s = dsp_group(b->start[g], at, b->input[g], b->weights[g], taps, spread, inside);
        const int32_t k = b->first[g];
        if (stage_form != 0) {
            dsp_group_output(s, b, g, 4 * g - k, stage, dst + k, (stage_form & 1) == 0, stage_form > 2);
        } else if (k == 4 * g) {
            sums[k] = s.s0;
            sums[k + 1] = s.s1;
            sums[k + 2] = s.s2;
            sums[k + 3] = s.s3;
        } else {  /* the block's last 1 to 3 channels */
            const int32_t lanes[4] = { s.s0, s.s1, s.s2, s.s3 };
            int32_t lane;
            for (lane = 4 * g - k; lane < 4; ++lane) {
                sums[k + lane] = lanes[lane];
            }
        }
    }
    if (stage_form == 0) {
        msf_output_stage_s8(stage, mode, sums, oc0, n, dst);
    }
}

/* The pixels of a block, in the form stage_form (see dsp_pixel): a 3 x 3 window's offsets set
   once an output row. */
static MSF_ALWAYS_INLINE void dsp_block_pixels(const msf_depthwise_conv2d_params *p, const msf_view *in,
                                               msf_view *out, int32_t r0, int32_t r1, int32_t c0, int32_t c1,
                                               const dsp_block *b, dsp_taps *at, int32_t oc0, int32_t n,
                                               int32_t first_input, const int8_t *pad, int mode, const int spread,
                                               const int stage_form)
{
    const msf_window_shape shape = MSF_WINDOW_SHAPE(p);
    const msf_output_stage stage = MSF_OUTPUT_STAGE(p);
    const int32_t taps = p->kh * p->kw;
    msf_pixels it;
    msf_pixel px;
    int32_t row = r0 - 1;
    msf_pixels_start(&it, &shape, r0, r1, c0, c1);
    while (msf_pixels_next(&it, &px)) {
        int8_t *const dst = msf_at_s8(out, px.r, px.c, oc0);
        if (taps == 9 && px.r != row) {
            row = px.r;
            dsp_row_offsets(in, &px, first_input, at);
        }
        if (taps == 9 && dsp_window_inside(in, &px, at)) {
            dsp_pixel(b, at, 9, n, &stage, mode, oc0, dst, spread, 1, stage_form);
        } else {
            dsp_pixel_taps(p, in, &px, first_input, pad, at);
            dsp_pixel(b, at, taps, n, &stage, mode, oc0, dst, spread, 0, stage_form);
        }
    }
}

/* DEPTHWISE_CONV_2D on the DSP extension, for a multiplier of 1 or a multiple of 4: block of
   MSF_DSP_DEPTHWISE_BLOCK output channels; output pixel; its taps located once (the padding's at
   a copy of the zero point); four output channels at a time; tap. Each block reads only its own
   channels (but the dropped lanes of its last group), and a group's output follows its sums, so
   the `inplace` scheme's order holds within each, as in depthwise_mve. */
static MSF_ALWAYS_INLINE void depthwise_dsp(const msf_depthwise_conv2d_params *p, const msf_view *in,
                                            msf_view *out, int32_t r0, int32_t r1, int32_t c0, int32_t c1,
                                            const int spread)
{
    dsp_block block;
    dsp_taps at;
    int8_t zero_points[MSF_DSP_DEPTHWISE_BLOCK + 8];
    const int8_t *const pad = zero_points + 4;  /* a group may read up to 3 channels before */
    const msf_output_stage stage = MSF_OUTPUT_STAGE(p);
    const int mode = msf_output_stage_mode(&stage, p->out_c);
    const int32_t out_c = p->out_c;
    int32_t oc0;
    msf_fill_s8(zero_points, (int8_t)-p->input_offset, (int32_t)sizeof zero_points);
    for (oc0 = 0; oc0 < out_c; oc0 += MSF_DSP_DEPTHWISE_BLOCK) {
        const int32_t n = out_c - oc0 < MSF_DSP_DEPTHWISE_BLOCK ? out_c - oc0 : MSF_DSP_DEPTHWISE_BLOCK;
        const int32_t first_input = spread ? oc0 / p->depth_multiplier : oc0;
        dsp_block_constants(p, oc0, n, &block);
        if (!block.small || mode == MSF_STAGE_GENERAL) {
            dsp_block_pixels(p, in, out, r0, r1, c0, c1, &block, &at, oc0, n, first_input, pad, mode, spread, 0);
        } else if (mode == MSF_STAGE_RUY) {
            dsp_block_pixels(p, in, out, r0, r1, c0, c1, &block, &at, oc0, n, first_input, pad, mode, spread, 1);
        } else if (mode == MSF_STAGE_DOUBLE) {
            dsp_block_pixels(p, in, out, r0, r1, c0, c1, &block, &at, oc0, n, first_input, pad, mode, spread, 2);
        } else if (mode == MSF_STAGE_RUY_FULL) {
            dsp_block_pixels(p, in, out, r0, r1, c0, c1, &block, &at, oc0, n, first_input, pad, mode, spread, 3);
        } else {
            dsp_block_pixels(p, in, out, r0, r1, c0, c1, &block, &at, oc0, n, first_input, pad, mode, spread, 4);
        }
    }
}

/* depthwise_dsp compiled for each form, so that its loops get the registers. */
static MSF_NOINLINE void depthwise_dsp_one(const msf_depthwise_conv2d_params *p, const msf_view *in, msf_view *out,
                                           int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    depthwise_dsp(p, in, out, r0, r1, c0, c1, 0);
}

static MSF_NOINLINE void depthwise_dsp_spread(const msf_depthwise_conv2d_params *p, const msf_view *in,
                                              msf_view *out, int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    depthwise_dsp(p, in, out, r0, r1, c0, c1, 1);
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
#elif defined(MSF_ARM_DSP)
    if (p->kh == 3 && p->kw == 3) {
        if (p->depth_multiplier % 4 == 0) {
            depthwise_dsp_spread(p, in, out, r0, r1, c0, c1);
            return;
        }
        if (p->depth_multiplier == 1 && p->out_c >= 4 && p->out_c <= MSF_DSP_MAX_CHANNELS
            && (r1 - r0) * (c1 - c0) >= MSF_DSP_MIN_PIXELS) {
            depthwise_dsp_one(p, in, out, r0, r1, c0, c1);
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
