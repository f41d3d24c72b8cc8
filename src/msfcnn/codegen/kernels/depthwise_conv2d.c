/*
 * DEPTHWISE_CONV_2D over an output region (src/msfcnn/ops/depthwise_conv2d.py).
 *
 * int8: TFLite's depthwise kernel accumulates (input - input zero point) * weight in int32 over
 * the taps, adds the bias and requantises per channel with its own MultiplyByQuantizedMultiplier
 * (gemmlowp's doubling high multiply, then a rounding shift: p->rounding = MSF_ROUND_DOUBLE),
 * then adds the output zero point and clamps. Output channel o reads input channel
 * o / depth_multiplier; weights are (1, kh, kw, out_c). Padding (the zero point) is skipped.
 *
 * Loops: output pixel; its in-bounds taps located once (window.c); block of output channels; with
 * multiplier 1, eight channels at a time in registers (four, a word each, on Arm's DSP
 * extension); tap.
 */
#include "msfcnn_kernels.h"

/* acc[k] = start[k] + the window's sum for output channel oc0 + k, k < n (start NULL: 0; each run
   is one tap). */
static void accumulate(const void *params, const msf_runs *taps, int32_t oc0, int32_t n, const int32_t *start,
                       int32_t *acc)
{
    const msf_depthwise_conv2d_params *p = (const msf_depthwise_conv2d_params *)params;
    const int32_t m = p->depth_multiplier;
    const int32_t offset = p->input_offset;
    const int8_t *w = p->weights + oc0;
    int32_t k = 0, t;
#if defined(MSF_ARM_DSP)
    /* Multiplier 1, four channels at a time: per tap one word of four inputs and one of four
       weights, split into 16-bit lanes (inputs offset on the way, SXTAB16) and multiplied lane by
       lane into four accumulators (SMLABB / SMLATT): 14 instructions a tap for four multiply-
       accumulates, tap addressing and loop included, all in registers (eight channels, or two
       taps an iteration, would spill). */
    if (m == 1) {
        const int16x2_t offset2 = msf_dup16(offset);
        const int8_t *const *const src_end = taps->src + taps->count;
        for (; k + 4 <= n; k += 4) {
            const int32_t ch = oc0 + k;
            const int8_t *const wk = w + k;
            const int8_t *const *src = taps->src;
            const int32_t *weight = taps->weight;
            int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            if (start != NULL) {
                s0 = start[k];
                s1 = start[k + 1];
                s2 = start[k + 2];
                s3 = start[k + 3];
            }
            for (; src != src_end; ++src, ++weight) {
                const uint32_t xv = msf_read_s8x4(*src + ch), wv = msf_read_s8x4(wk + *weight);
                const int16x2_t xa = __sxtab16(offset2, (int8x4_t)xv), xb = msf_sxtab16_odd(offset2, xv);
                const int16x2_t wa = __sxtb16((int8x4_t)wv), wb = msf_sxtb16_odd(wv);
                s0 = __smlabb(xa, wa, s0);
                s1 = __smlabb(xb, wb, s1);
                s2 = __smlatt(xa, wa, s2);
                s3 = __smlatt(xb, wb, s3);
            }
            acc[k] = s0;
            acc[k + 1] = s1;
            acc[k + 2] = s2;
            acc[k + 3] = s3;
        }
        if (k < n && oc0 + n >= 4) {
            /* The last 1 to 3 channels: the four channels that end with them, from 0 (the first
               may lie before the block), of which the last n - k are kept. Words are read in
               bounds, and the scalar loop below is left for layers of fewer than four channels. */
            const int32_t first = oc0 + n - 4;
            const int8_t *const wk = p->weights + first;
            const int8_t *const *src = taps->src;
            const int32_t *weight = taps->weight;
            int32_t sums[4] = { 0, 0, 0, 0 };
            for (; src != src_end; ++src, ++weight) {
                const uint32_t xv = msf_read_s8x4(*src + first), wv = msf_read_s8x4(wk + *weight);
                const int16x2_t xa = __sxtab16(offset2, (int8x4_t)xv), xb = msf_sxtab16_odd(offset2, xv);
                const int16x2_t wa = __sxtb16((int8x4_t)wv), wb = msf_sxtb16_odd(wv);
                sums[0] = __smlabb(xa, wa, sums[0]);
                sums[1] = __smlabb(xb, wb, sums[1]);
                sums[2] = __smlatt(xa, wa, sums[2]);
                sums[3] = __smlatt(xb, wb, sums[3]);
            }
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
                const int8_t *x = taps->src[t] + oc0 + k;
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
            sum += ((int32_t)taps->src[t][ic] + offset) * w[taps->weight[t] + k];
        }
        acc[k] = sum;
    }
}

void msf_depthwise_conv2d_s8(const msf_depthwise_conv2d_params *p, const msf_view *in, msf_view *out,
                             int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    msf_window_op op;
    MSF_WINDOW_OP_FROM_PARAMS(op, p);
    op.tap_values = 1;
    op.tap_weights = p->out_c;
    op.merge_taps = 0;
    op.accumulate = accumulate;
    msf_window_s8(&op, in, out, r0, r1, c0, c1);
}

void msf_depthwise_conv2d_f32(const msf_depthwise_conv2d_params *p, const msf_view *in, msf_view *out,
                              int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    /* float: taps accumulated in (row, column) order as the numpy kernel does, bias, activation. */
    const int32_t m = p->depth_multiplier;
    float acc[MSF_CHANNEL_BLOCK];
    int32_t r, c, oc0, i, j, k;
    for (r = r0; r < r1; ++r) {
        const int32_t y0 = r * p->stride_h - p->pad_top;
        int32_t i_lo, i_hi;
        msf_tap_range(y0, p->kh, p->in_h, &i_lo, &i_hi);
        for (c = c0; c < c1; ++c) {
            const int32_t x0 = c * p->stride_w - p->pad_left;
            float *dst = msf_at_f32(out, r, c, 0);
            int32_t j_lo, j_hi;
            msf_tap_range(x0, p->kw, p->in_w, &j_lo, &j_hi);
            for (oc0 = 0; oc0 < p->out_c; oc0 += MSF_CHANNEL_BLOCK) {
                const int32_t n = p->out_c - oc0 < MSF_CHANNEL_BLOCK ? p->out_c - oc0 : MSF_CHANNEL_BLOCK;
                for (k = 0; k < n; ++k) {
                    acc[k] = 0.0f;
                }
                for (i = i_lo; i < i_hi; ++i) {
                    for (j = j_lo; j < j_hi; ++j) {
                        const float *src = msf_at_f32(in, y0 + i, x0 + j, 0);
                        const float *w = p->weights_f32 + (i * p->kw + j) * p->out_c + oc0;
                        int32_t ic = oc0 / m, phase = oc0 % m;
                        for (k = 0; k < n; ++k) {
                            acc[k] += src[ic] * w[k];
                            if (++phase == m) {
                                phase = 0;
                                ++ic;
                            }
                        }
                    }
                }
                for (k = 0; k < n; ++k) {
                    float v = acc[k];
                    if (p->bias_f32 != NULL) {
                        v += p->bias_f32[oc0 + k];
                    }
                    dst[oc0 + k] = msf_apply_activation_f32(v, p->activation);
                }
            }
        }
    }
}
