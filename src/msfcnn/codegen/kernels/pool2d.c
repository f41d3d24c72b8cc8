/*
 * MAX_POOL_2D and AVERAGE_POOL_2D over an output region (src/msfcnn/ops/pool2d.py).
 *
 * int8 pools work on the raw quantised values (input and output share their quantisation) and
 * end with the fused activation's clamp.
 * - max: padding never wins (TFLite ignores out-of-bounds taps), so only in-bounds taps are read;
 *   the running maximum starts at the type's minimum, as the numpy kernel's padding fill.
 * - average: TFLite's int8 AVERAGE_POOL_2D sums the in-bounds taps in int32 and divides by their
 *   number, rounding half away from zero: (sum +- count / 2) / count with C's truncating division.
 *   ONNX's count_include_pad divides by kh * kw instead.
 * Loops: output pixel, block of channels, kernel row, kernel column, channel of the block.
 */
#include <math.h>

#include "msfcnn_kernels.h"

void msf_max_pool2d_s8(const msf_max_pool2d_params *p, const msf_view *in, msf_view *out,
                       int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    int32_t best[MSF_CHANNEL_BLOCK];
    int32_t r, c, ch0, i, j, k;
    for (r = r0; r < r1; ++r) {
        const int32_t y0 = r * p->stride_h - p->pad_top;
        int32_t i_lo, i_hi;
        msf_tap_range(y0, p->kh, p->in_h, &i_lo, &i_hi);
        for (c = c0; c < c1; ++c) {
            const int32_t x0 = c * p->stride_w - p->pad_left;
            int8_t *dst = msf_at_s8(out, r, c, 0);
            int32_t j_lo, j_hi;
            msf_tap_range(x0, p->kw, p->in_w, &j_lo, &j_hi);
            for (ch0 = 0; ch0 < p->channels; ch0 += MSF_CHANNEL_BLOCK) {
                const int32_t n = p->channels - ch0 < MSF_CHANNEL_BLOCK ? p->channels - ch0 : MSF_CHANNEL_BLOCK;
                for (k = 0; k < n; ++k) {
                    best[k] = -128;
                }
                for (i = i_lo; i < i_hi; ++i) {
                    for (j = j_lo; j < j_hi; ++j) {
                        const int8_t *src = msf_at_s8(in, y0 + i, x0 + j, ch0);
                        for (k = 0; k < n; ++k) {
                            best[k] = src[k] > best[k] ? src[k] : best[k];
                        }
                    }
                }
                for (k = 0; k < n; ++k) {
                    dst[ch0 + k] = msf_clamp_s8(best[k], 0, p->act_min, p->act_max);
                }
            }
        }
    }
}

void msf_max_pool2d_f32(const msf_max_pool2d_params *p, const msf_view *in, msf_view *out,
                        int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    float best[MSF_CHANNEL_BLOCK];
    int32_t r, c, ch0, i, j, k;
    for (r = r0; r < r1; ++r) {
        const int32_t y0 = r * p->stride_h - p->pad_top;
        int32_t i_lo, i_hi;
        msf_tap_range(y0, p->kh, p->in_h, &i_lo, &i_hi);
        for (c = c0; c < c1; ++c) {
            const int32_t x0 = c * p->stride_w - p->pad_left;
            float *dst = msf_at_f32(out, r, c, 0);
            int32_t j_lo, j_hi;
            msf_tap_range(x0, p->kw, p->in_w, &j_lo, &j_hi);
            for (ch0 = 0; ch0 < p->channels; ch0 += MSF_CHANNEL_BLOCK) {
                const int32_t n = p->channels - ch0 < MSF_CHANNEL_BLOCK ? p->channels - ch0 : MSF_CHANNEL_BLOCK;
                for (k = 0; k < n; ++k) {
                    best[k] = -INFINITY;  /* the numpy kernel pads with -inf */
                }
                for (i = i_lo; i < i_hi; ++i) {
                    for (j = j_lo; j < j_hi; ++j) {
                        const float *src = msf_at_f32(in, y0 + i, x0 + j, ch0);
                        for (k = 0; k < n; ++k) {
                            if (src[k] > best[k] || src[k] != src[k]) {  /* a NaN wins, as in np.maximum */
                                best[k] = src[k];
                            }
                        }
                    }
                }
                for (k = 0; k < n; ++k) {
                    dst[ch0 + k] = msf_apply_activation_f32(best[k], p->activation);
                }
            }
        }
    }
}

void msf_avg_pool2d_s8(const msf_avg_pool2d_params *p, const msf_view *in, msf_view *out,
                       int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    int32_t sum[MSF_CHANNEL_BLOCK];
    int32_t r, c, ch0, i, j, k;
    for (r = r0; r < r1; ++r) {
        const int32_t y0 = r * p->stride_h - p->pad_top;
        int32_t i_lo, i_hi;
        msf_tap_range(y0, p->kh, p->in_h, &i_lo, &i_hi);
        for (c = c0; c < c1; ++c) {
            const int32_t x0 = c * p->stride_w - p->pad_left;
            int8_t *dst = msf_at_s8(out, r, c, 0);
            int32_t j_lo, j_hi, count;
            msf_tap_range(x0, p->kw, p->in_w, &j_lo, &j_hi);
            count = p->count_include_pad ? p->kh * p->kw : (i_hi - i_lo) * (j_hi - j_lo);
            for (ch0 = 0; ch0 < p->channels; ch0 += MSF_CHANNEL_BLOCK) {
                const int32_t n = p->channels - ch0 < MSF_CHANNEL_BLOCK ? p->channels - ch0 : MSF_CHANNEL_BLOCK;
                for (k = 0; k < n; ++k) {
                    sum[k] = 0;
                }
                for (i = i_lo; i < i_hi; ++i) {
                    for (j = j_lo; j < j_hi; ++j) {
                        const int8_t *src = msf_at_s8(in, y0 + i, x0 + j, ch0);
                        for (k = 0; k < n; ++k) {
                            sum[k] += src[k];
                        }
                    }
                }
                for (k = 0; k < n; ++k) {
                    int32_t mean = 0;
                    if (count > 0) {
                        mean = sum[k] >= 0 ? (sum[k] + count / 2) / count : -((-sum[k] + count / 2) / count);
                    }
                    dst[ch0 + k] = msf_clamp_s8(mean, 0, p->act_min, p->act_max);
                }
            }
        }
    }
}

void msf_avg_pool2d_f32(const msf_avg_pool2d_params *p, const msf_view *in, msf_view *out,
                        int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    /* float: the in-bounds taps summed in (row, column) order, divided by the count in float32. */
    float sum[MSF_CHANNEL_BLOCK];
    int32_t r, c, ch0, i, j, k;
    for (r = r0; r < r1; ++r) {
        const int32_t y0 = r * p->stride_h - p->pad_top;
        int32_t i_lo, i_hi;
        msf_tap_range(y0, p->kh, p->in_h, &i_lo, &i_hi);
        for (c = c0; c < c1; ++c) {
            const int32_t x0 = c * p->stride_w - p->pad_left;
            float *dst = msf_at_f32(out, r, c, 0);
            int32_t j_lo, j_hi, count;
            msf_tap_range(x0, p->kw, p->in_w, &j_lo, &j_hi);
            count = p->count_include_pad ? p->kh * p->kw : (i_hi - i_lo) * (j_hi - j_lo);
            for (ch0 = 0; ch0 < p->channels; ch0 += MSF_CHANNEL_BLOCK) {
                const int32_t n = p->channels - ch0 < MSF_CHANNEL_BLOCK ? p->channels - ch0 : MSF_CHANNEL_BLOCK;
                for (k = 0; k < n; ++k) {
                    sum[k] = 0.0f;
                }
                for (i = i_lo; i < i_hi; ++i) {
                    for (j = j_lo; j < j_hi; ++j) {
                        const float *src = msf_at_f32(in, y0 + i, x0 + j, ch0);
                        for (k = 0; k < n; ++k) {
                            sum[k] += src[k];
                        }
                    }
                }
                for (k = 0; k < n; ++k) {
                    dst[ch0 + k] = msf_apply_activation_f32(sum[k] / (float)count, p->activation);
                }
            }
        }
    }
}
