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

/* a + b * c lane by lane (MVE multiplies vectors without accumulating, but for dot products) */
static inline int32x4_t mla(int32x4_t a, int32x4_t b, int32x4_t c)
{
    return vaddq_s32(a, vmulq_s32(b, c));
}

/* sums[k] = start[k] + sum over the taps t of (x_t[k] + offset) * w_t[k], k < n, for the taps'
   input channels x_t = src[t] and weights w_t = wp[t]: eight channels at a time in two int32
   vectors (the last ones predicated), per tap two loads of inputs and two of weights, each
   sign-extended to 32 bits, and two multiplies and adds (more would spill). with_offset 0: the offset is already in start. */
static MSF_ALWAYS_INLINE void mve_depthwise_sums(int32_t *sums, const int32_t *start, int32_t n,
                                                 const int8_t *const *src, const int8_t *const *wp, int32_t taps,
                                                 int32_t offset, const int with_offset)
{
    int32_t k, t;
    for (k = 0; k < n; k += 8) {
        int32x4_t s0 = vldrwq_s32(start + k), s1 = vldrwq_s32(start + k + 4);
        if (k + 8 <= n) {
            for (t = 0; t < taps; ++t) {
                const int8_t *x = src[t] + k, *wt = wp[t] + k;
                const int32x4_t x0 = vldrbq_s32(x), x1 = vldrbq_s32(x + 4);
                s0 = mla(s0, with_offset ? vaddq_n_s32(x0, offset) : x0, vldrbq_s32(wt));
                s1 = mla(s1, with_offset ? vaddq_n_s32(x1, offset) : x1, vldrbq_s32(wt + 4));
            }
        } else {  /* the last 1 to 7 channels: loads of the channels past n predicated off */
            const mve_pred16_t p0 = vctp32q((uint32_t)(n - k)), p1 = vctp32q((uint32_t)(n - k - 4));
            const int32_t add = with_offset ? offset : 0;
            for (t = 0; t < taps; ++t) {
                const int8_t *x = src[t] + k, *wt = wp[t] + k;
                s0 = mla(s0, vaddq_n_s32(vldrbq_z_s32(x, p0), add), vldrbq_z_s32(wt, p0));
                s1 = mla(s1, vaddq_n_s32(vldrbq_z_s32(x + 4, p1), add), vldrbq_z_s32(wt + 4, p1));
            }
        }
        vstrwq_s32(sums + k, s0);
        vstrwq_s32(sums + k + 4, s1);
    }
}

/* DEPTHWISE_CONV_2D with multiplier 1 on Helium: block of MSF_MVE_BLOCK channels; output pixel;
   the pixel's in-bounds taps located once; eight channels at a time. A window with every tap
   inside the input starts from bias + offset * (the sum of the block's weights over all taps),
   computed once a block, and multiplies the int8 inputs themselves; a clipped window adds the
   offset to each input. The channels of a block read only those channels, so the blocks may go
   one after the other over the region (the `inplace` scheme's order holds within each). */
static void depthwise_mve(const msf_depthwise_conv2d_params *p, const msf_view *in, msf_view *out, int32_t r0,
                          int32_t r1, int32_t c0, int32_t c1)
{
    int32_t bias[MSF_MVE_BLOCK + 7], inside[MSF_MVE_BLOCK + 7], sums[MSF_MVE_BLOCK + 7];  /* + a partial vector */
    const int8_t *src[MSF_MVE_TAPS], *wp[MSF_MVE_TAPS];
    msf_mve_stage block;
    const msf_window_shape shape = MSF_WINDOW_SHAPE(p);
    const msf_output_stage stage = MSF_OUTPUT_STAGE(p);
    const int32_t out_c = p->out_c, offset = p->input_offset, kh = p->kh, kw = p->kw;
    const int mode = msf_output_stage_mode(&stage, out_c);
    msf_pixels it;
    msf_pixel px;
    int32_t oc0, k, i, j;
    for (oc0 = 0; oc0 < out_c; oc0 += MSF_MVE_BLOCK) {
        const int32_t n = out_c - oc0 < MSF_MVE_BLOCK ? out_c - oc0 : MSF_MVE_BLOCK;
        const int8_t *const w = p->weights + oc0;
        for (k = 0; k < n; ++k) {
            int32_t sum = 0;
            for (i = 0; i < kh * kw; ++i) {
                sum += w[(ptrdiff_t)i * out_c + k];
            }
            bias[k] = p->bias != NULL ? p->bias[oc0 + k] : 0;
            inside[k] = bias[k] + offset * sum;
        }
        msf_mve_stage_block(&stage, oc0, n, &block);
        msf_pixels_start(&it, &shape, r0, r1, c0, c1);
        while (msf_pixels_next(&it, &px)) {
            int32_t taps = 0;
            for (i = px.i_lo; i < px.i_hi; ++i) {
                for (j = px.j_lo; j < px.j_hi; ++j, ++taps) {
                    src[taps] = msf_at_s8(in, px.y0 + i, px.x0 + j, oc0);
                    wp[taps] = w + (ptrdiff_t)(i * kw + j) * out_c;
                }
            }
            if (taps == kh * kw) {
                mve_depthwise_sums(sums, inside, n, src, wp, taps, offset, 0);
            } else {
                mve_depthwise_sums(sums, bias, n, src, wp, taps, offset, 1);
            }
            msf_mve_output_stage_s8(&stage, mode, &block, sums, oc0, n, msf_at_s8(out, px.r, px.c, oc0));
        }
    }
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
        depthwise_mve(p, in, out, r0, r1, c0, c1);
        return;
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
