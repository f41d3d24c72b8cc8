/*
 * CONV_2D over an output region (src/msfcnn/ops/conv2d.py).
 *
 * int8: TFLite's int8 convolution is im2col + a ruy GEMM of (input - input zero point) by the
 * weights, int32 accumulation, plus the int32 bias, then ruy's output stage: a per-channel
 * MultiplyByQuantizedMultiplier (p->rounding, MSF_ROUND_RUY on x86), the output zero point, and
 * the fused activation's clamp. Padding is the input zero point in TFLite, i.e. it contributes
 * nothing once the offset is added, so padded taps are skipped rather than read.
 *
 * Loops: output pixel, block of output channels, kernel row, kernel column, channel of the
 * block, input channel. The innermost loop walks contiguous input channels and contiguous
 * weights (layout (out_c, kh, kw, in_c)); each input pixel's address is computed once per block.
 */
#include "msfcnn_kernels.h"

void msf_conv2d_s8(const msf_conv2d_params *p, const msf_view *in, msf_view *out,
                   int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    const int32_t patch = p->kh * p->kw * p->in_c;  /* weights per output channel */
    const int32_t offset = p->input_offset;
    const int contiguous = in->col_ring == 0 && in->col_stride == p->in_c;
    int32_t acc[MSF_CHANNEL_BLOCK];
    int32_t r, c, oc0, i, j, k, ch;
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
                    /* Where the input's columns are contiguous (not a column ring), a kernel row's
                       in-bounds taps are one run of (j_hi - j_lo) * in_c values, as are their
                       weights: one inner loop instead of one per tap, which matters when in_c is
                       small (a first layer's 3 channels). Integer sums are exact in any order. */
                    const int32_t run = contiguous ? (j_hi - j_lo) * p->in_c : p->in_c;
                    const int32_t taps = contiguous ? 1 : j_hi - j_lo;
                    for (j = 0; j < taps; ++j) {
                        const int8_t *src = msf_at_s8(in, y0 + i, x0 + j_lo + j, 0);
                        const int8_t *w = p->weights + ((ptrdiff_t)oc0 * p->kh * p->kw + i * p->kw + j_lo + j) * p->in_c;
                        for (k = 0; k < n; ++k, w += patch) {
                            int32_t sum = 0;
                            for (ch = 0; ch < run; ++ch) {
                                sum += ((int32_t)src[ch] + offset) * w[ch];
                            }
                            acc[k] += sum;
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
