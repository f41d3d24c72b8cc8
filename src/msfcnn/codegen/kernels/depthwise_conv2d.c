/*
 * DEPTHWISE_CONV_2D over an output region (src/msfcnn/ops/depthwise_conv2d.py).
 *
 * int8: TFLite's depthwise kernel accumulates (input - input zero point) * weight in int32 over
 * the taps, adds the bias and requantises per channel with its own MultiplyByQuantizedMultiplier
 * (gemmlowp's doubling high multiply, then a rounding shift: p->rounding = MSF_ROUND_DOUBLE),
 * then adds the output zero point and clamps. Output channel o reads input channel
 * o / depth_multiplier; weights are (1, kh, kw, out_c). Padding (the zero point) is skipped.
 *
 * Loops: output pixel, block of output channels, kernel row, kernel column, channel of the block
 * (contiguous weights; input channels advance every depth_multiplier output channels).
 */
#include "msfcnn_kernels.h"

void msf_depthwise_conv2d_s8(const msf_depthwise_conv2d_params *p, const msf_view *in, msf_view *out,
                             int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    const int32_t m = p->depth_multiplier;
    const int32_t offset = p->input_offset;
    int32_t acc[MSF_CHANNEL_BLOCK];
    int32_t r, c, oc0, i, j, k;
    for (r = r0; r < r1; ++r) {
        const int32_t y0 = r * p->stride_h - p->pad_top;
        int32_t i_lo, i_hi;
        msf_tap_range(y0, p->kh, p->in_h, &i_lo, &i_hi);
        for (c = c0; c < c1; ++c) {
            const int32_t x0 = c * p->stride_w - p->pad_left;
            int8_t *dst = msf_at_s8(out, r, c, 0);
            int32_t j_lo, j_hi;
            msf_tap_range(x0, p->kw, p->in_w, &j_lo, &j_hi);
            for (oc0 = 0; oc0 < p->out_c; oc0 += MSF_CHANNEL_BLOCK) {
                const int32_t n = p->out_c - oc0 < MSF_CHANNEL_BLOCK ? p->out_c - oc0 : MSF_CHANNEL_BLOCK;
                for (k = 0; k < n; ++k) {
                    acc[k] = 0;
                }
                for (i = i_lo; i < i_hi; ++i) {
                    for (j = j_lo; j < j_hi; ++j) {
                        const int8_t *src = msf_at_s8(in, y0 + i, x0 + j, 0);
                        const int8_t *w = p->weights + (i * p->kw + j) * p->out_c + oc0;
                        if (m == 1) {  /* the usual case: output channel k reads input channel k */
                            const int8_t *s = src + oc0;
                            for (k = 0; k < n; ++k) {
                                acc[k] += ((int32_t)s[k] + offset) * w[k];
                            }
                        } else {
                            int32_t ic = oc0 / m, phase = oc0 % m;  /* input channel of oc0 + k */
                            for (k = 0; k < n; ++k) {
                                acc[k] += ((int32_t)src[ic] + offset) * w[k];
                                if (++phase == m) {
                                    phase = 0;
                                    ++ic;
                                }
                            }
                        }
                    }
                }
                for (k = 0; k < n; ++k) {
                    const int32_t oc = oc0 + k;
                    int32_t v = acc[k];
                    if (p->bias != NULL) {
                        v += p->bias[oc];
                    }
                    v = msf_mul_by_quantized_mult(v, p->mult[oc], p->shift[oc], p->rounding);
                    dst[oc] = msf_clamp_s8(v, p->output_offset, p->act_min, p->act_max);
                }
            }
        }
    }
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
