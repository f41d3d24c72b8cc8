/*
 * CONV_2D over an output region (src/msfcnn/ops/conv2d.py).
 *
 * int8: TFLite's int8 convolution is im2col + a ruy GEMM of (input - input zero point) by the
 * weights, int32 accumulation, plus the int32 bias, then ruy's output stage: a per-channel
 * MultiplyByQuantizedMultiplier (p->rounding, MSF_ROUND_RUY on x86), the output zero point, and
 * the fused activation's clamp. Padding is the input zero point in TFLite, i.e. it contributes
 * nothing once the offset is added, so padded taps are skipped rather than read.
 *
 * The loops run output pixel, output channel, kernel row, kernel column, input channel: the
 * innermost loop walks contiguous input channels and contiguous weights (layout
 * (out_c, kh, kw, in_c)).
 */
#include "msfcnn_kernels.h"

void msf_conv2d_s8(const msf_conv2d_params *p, const msf_view *in, msf_view *out,
                   int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    const int32_t patch = p->kh * p->kw * p->in_c;
    int32_t r, c, oc, i, j, ch;
    for (r = r0; r < r1; ++r) {
        const int32_t y0 = r * p->stride_h - p->pad_top;
        int32_t i_lo, i_hi;
        msf_tap_range(y0, p->kh, p->in_h, &i_lo, &i_hi);
        for (c = c0; c < c1; ++c) {
            const int32_t x0 = c * p->stride_w - p->pad_left;
            int8_t *dst = msf_at_s8(out, r, c, 0);
            int32_t j_lo, j_hi;
            msf_tap_range(x0, p->kw, p->in_w, &j_lo, &j_hi);
            for (oc = 0; oc < p->out_c; ++oc) {
                const int8_t *w = p->weights + (ptrdiff_t)oc * patch;
                int32_t acc = 0;
                for (i = i_lo; i < i_hi; ++i) {
                    for (j = j_lo; j < j_hi; ++j) {
                        const int8_t *src = msf_at_s8(in, y0 + i, x0 + j, 0);
                        const int8_t *wt = w + (i * p->kw + j) * p->in_c;
                        for (ch = 0; ch < p->in_c; ++ch) {
                            acc += ((int32_t)src[ch] + p->input_offset) * wt[ch];
                        }
                    }
                }
                if (p->bias != NULL) {
                    acc += p->bias[oc];
                }
                acc = msf_mul_by_quantized_mult(acc, p->mult[oc], p->shift[oc], p->rounding);
                dst[oc] = msf_clamp_s8(acc, p->output_offset, p->act_min, p->act_max);
            }
        }
    }
}

void msf_conv2d_f32(const msf_conv2d_params *p, const msf_view *in, msf_view *out,
                    int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    /* float: the dot product over the in-bounds taps (zero padding adds nothing), then the
       bias, then the activation, as the numpy kernel's GEMM + bias + float_activation. */
    const int32_t patch = p->kh * p->kw * p->in_c;
    int32_t r, c, oc, i, j, ch;
    for (r = r0; r < r1; ++r) {
        const int32_t y0 = r * p->stride_h - p->pad_top;
        int32_t i_lo, i_hi;
        msf_tap_range(y0, p->kh, p->in_h, &i_lo, &i_hi);
        for (c = c0; c < c1; ++c) {
            const int32_t x0 = c * p->stride_w - p->pad_left;
            float *dst = msf_at_f32(out, r, c, 0);
            int32_t j_lo, j_hi;
            msf_tap_range(x0, p->kw, p->in_w, &j_lo, &j_hi);
            for (oc = 0; oc < p->out_c; ++oc) {
                const float *w = p->weights_f32 + (ptrdiff_t)oc * patch;
                float acc = 0.0f;
                for (i = i_lo; i < i_hi; ++i) {
                    for (j = j_lo; j < j_hi; ++j) {
                        const float *src = msf_at_f32(in, y0 + i, x0 + j, 0);
                        const float *wt = w + (i * p->kw + j) * p->in_c;
                        for (ch = 0; ch < p->in_c; ++ch) {
                            acc += src[ch] * wt[ch];
                        }
                    }
                }
                if (p->bias_f32 != NULL) {
                    acc += p->bias_f32[oc];
                }
                dst[oc] = msf_apply_activation_f32(acc, p->activation);
            }
        }
    }
}
