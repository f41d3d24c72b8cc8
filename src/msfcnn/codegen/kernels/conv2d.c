/*
 * CONV_2D over an output region (src/msfcnn/ops/conv2d.py).
 *
 * int8: TFLite's int8 convolution is im2col + a ruy GEMM of (input - input zero point) by the
 * weights, int32 accumulation, plus the int32 bias, then ruy's output stage: a per-channel
 * MultiplyByQuantizedMultiplier (p->rounding, MSF_ROUND_RUY on x86), the output zero point, and
 * the fused activation's clamp. Padding is the input zero point in TFLite, i.e. it contributes
 * nothing once the offset is added, so padded taps are skipped rather than read.
 *
 * Loops: output pixel; its window cut once into runs (window.c); block of output channels; four
 * output channels at a time, each input value loaded and offset once for four multiply-
 * accumulates in registers (on Arm's DSP extension, four input values a word); run; input values
 * of the run. Weights are (out_c, kh, kw, in_c).
 */
#include "msfcnn_kernels.h"

#if defined(MSF_ARM_DSP)
/* acc[k] = start[k] + the window's sum for output channel oc0 + k, k < n (start NULL: 0). Four
   output channels at a time, each word of four input values loaded once, offset and sign-extended
   into two pairs of 16-bit lanes (SXTAB16) and shared by the four channels; per channel a word of
   four weights, extended likewise (SXTB16), and two SMLADs: 16 multiply-accumulates in 23
   instructions. Lanes hold at most |-128 - 127| = 255 (input plus offset) and 127 (weight); the
   products and sums are the portable loop's, in the same int32 arithmetic. A run's last
   length % 4 values take the scalar loop. */
static void accumulate(const void *params, const msf_runs *runs, int32_t oc0, int32_t n, const int32_t *start,
                       int32_t *acc)
{
    const msf_conv2d_params *p = (const msf_conv2d_params *)params;
    const int32_t patch = p->kh * p->kw * p->in_c;
    const int32_t offset = p->input_offset;
    const int16x2_t offset2 = msf_dup16(offset);
    const int8_t *w = p->weights + (ptrdiff_t)oc0 * patch;
    int32_t k, t;
    for (k = 0; k + 4 <= n; k += 4, w += 4 * patch) {
        int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        if (start != NULL) {
            s0 = start[k];
            s1 = start[k + 1];
            s2 = start[k + 2];
            s3 = start[k + 3];
        }
        for (t = 0; t < runs->count; ++t) {
            /* Channels 1 and 3 are read at w0 + patch and w2 + patch: two pointers fewer, which
               keeps the loop in the core's 14 registers. */
            const int8_t *x = runs->src[t];
            const int8_t *w0 = w + runs->weight[t], *w2 = w0 + 2 * patch;
            const int8_t *const end4 = x + (runs->length[t] & ~3);
            int32_t rest;
            while (x != end4) {
                const uint32_t xv = msf_read_s8x4(x);
                const int16x2_t xa = __sxtab16(offset2, (int8x4_t)xv), xb = msf_sxtab16_odd(offset2, xv);
                uint32_t wv;
                x += 4;
                wv = msf_read_s8x4(w0 + patch);
                s1 = __smlad(xa, __sxtb16((int8x4_t)wv), s1);
                s1 = __smlad(xb, msf_sxtb16_odd(wv), s1);
                wv = msf_read_s8x4(w0);
                w0 += 4;
                s0 = __smlad(xa, __sxtb16((int8x4_t)wv), s0);
                s0 = __smlad(xb, msf_sxtb16_odd(wv), s0);
                wv = msf_read_s8x4(w2 + patch);
                s3 = __smlad(xa, __sxtb16((int8x4_t)wv), s3);
                s3 = __smlad(xb, msf_sxtb16_odd(wv), s3);
                wv = msf_read_s8x4(w2);
                w2 += 4;
                s2 = __smlad(xa, __sxtb16((int8x4_t)wv), s2);
                s2 = __smlad(xb, msf_sxtb16_odd(wv), s2);
            }
            for (rest = runs->length[t] & 3; rest > 0; --rest) {  /* (the length read again: a register less in the loop) */
                const int32_t v = (int32_t)*x++ + offset;
                s0 += v * w0[0];
                s1 += v * w0[patch];
                s2 += v * w2[0];
                s3 += v * w2[patch];
                ++w0;
                ++w2;
            }
        }
        acc[k] = s0;
        acc[k + 1] = s1;
        acc[k + 2] = s2;
        acc[k + 3] = s3;
    }
    for (; k < n; ++k, w += patch) {
        int32_t sum = start != NULL ? start[k] : 0;
        for (t = 0; t < runs->count; ++t) {
            const int8_t *x = runs->src[t];
            const int8_t *w0 = w + runs->weight[t];
            const int8_t *const end = x + runs->length[t];
            const int8_t *const end4 = x + (runs->length[t] & ~3);
            while (x != end4) {
                const uint32_t xv = msf_read_s8x4(x), wv = msf_read_s8x4(w0);
                x += 4;
                w0 += 4;
                sum = __smlad(__sxtab16(offset2, (int8x4_t)xv), __sxtb16((int8x4_t)wv), sum);
                sum = __smlad(msf_sxtab16_odd(offset2, xv), msf_sxtb16_odd(wv), sum);
            }
            while (x != end) {
                sum += ((int32_t)*x++ + offset) * *w0++;
            }
        }
        acc[k] = sum;
    }
}
#else
/* acc[k] = start[k] + the window's sum for output channel oc0 + k, k < n (start NULL: 0). Four
   output channels at a time: each input value loaded and offset once for four multiply-accumulates
   in registers. */
static void accumulate(const void *params, const msf_runs *runs, int32_t oc0, int32_t n, const int32_t *start,
                       int32_t *acc)
{
    const msf_conv2d_params *p = (const msf_conv2d_params *)params;
    const int32_t patch = p->kh * p->kw * p->in_c;
    const int32_t offset = p->input_offset;
    const int8_t *w = p->weights + (ptrdiff_t)oc0 * patch;
    int32_t k, t, ch;
    for (k = 0; k + 4 <= n; k += 4, w += 4 * patch) {
        int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        if (start != NULL) {
            s0 = start[k];
            s1 = start[k + 1];
            s2 = start[k + 2];
            s3 = start[k + 3];
        }
        for (t = 0; t < runs->count; ++t) {
            const int8_t *x = runs->src[t];
            const int8_t *w0 = w + runs->weight[t], *w1 = w0 + patch, *w2 = w1 + patch, *w3 = w2 + patch;
            const int32_t length = runs->length[t];
            for (ch = 0; ch < length; ++ch) {
                const int32_t v = (int32_t)x[ch] + offset;
                s0 += v * w0[ch];
                s1 += v * w1[ch];
                s2 += v * w2[ch];
                s3 += v * w3[ch];
            }
        }
        acc[k] = s0;
        acc[k + 1] = s1;
        acc[k + 2] = s2;
        acc[k + 3] = s3;
    }
    for (; k < n; ++k, w += patch) {
        int32_t sum = start != NULL ? start[k] : 0;
        for (t = 0; t < runs->count; ++t) {
            const int8_t *x = runs->src[t];
            const int8_t *w0 = w + runs->weight[t];
            const int32_t length = runs->length[t];
            for (ch = 0; ch < length; ++ch) {
                sum += ((int32_t)x[ch] + offset) * w0[ch];
            }
        }
        acc[k] = sum;
    }
}
#endif

void msf_conv2d_s8(const msf_conv2d_params *p, const msf_view *in, msf_view *out,
                   int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    msf_window_op op;
    MSF_WINDOW_OP_FROM_PARAMS(op, p);
    op.tap_values = p->in_c;
    op.tap_weights = p->in_c;
    op.merge_taps = 1;
    op.accumulate = accumulate;
    msf_window_s8(&op, in, out, r0, r1, c0, c1);
}

void msf_conv2d_f32(const msf_conv2d_params *p, const msf_view *in, msf_view *out,
                    int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    /* float: the dot product over the in-bounds taps in (row, column, channel) order (zero
       padding adds nothing), then the bias, then the activation, as the numpy kernel's GEMM +
       bias + float_activation (whose BLAS sums in its own order: results agree to rounding). */
    const int32_t patch = p->kh * p->kw * p->in_c;
    float acc[MSF_CHANNEL_BLOCK];
    int32_t r, c, oc0, i, j, k, ch;
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
                        const float *w = p->weights_f32 + ((ptrdiff_t)oc0 * p->kh * p->kw + i * p->kw + j) * p->in_c;
                        for (k = 0; k < n; ++k, w += patch) {
                            for (ch = 0; ch < p->in_c; ++ch) {
                                acc[k] += src[ch] * w[ch];
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
