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
 * multiplier 1, eight channels at a time in registers; tap.
 */
#include "msfcnn_kernels.h"

/* acc[k] += the window's sum for output channel oc0 + k, k < n (each run is one tap). */
static void accumulate(const void *params, const msf_runs *taps, int32_t oc0, int32_t n, int32_t *acc)
{
    const msf_depthwise_conv2d_params *p = (const msf_depthwise_conv2d_params *)params;
    const int32_t m = p->depth_multiplier;
    const int32_t offset = p->input_offset;
    const int8_t *w = p->weights + oc0;
    int32_t k, t;
    if (m == 1) {  /* the usual case: output channel oc reads input channel oc; eight at a time */
        for (k = 0; k + 8 <= n; k += 8) {
            int32_t s0 = acc[k], s1 = acc[k + 1], s2 = acc[k + 2], s3 = acc[k + 3];
            int32_t s4 = acc[k + 4], s5 = acc[k + 5], s6 = acc[k + 6], s7 = acc[k + 7];
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
    } else {
        k = 0;
    }
    for (; k < n; ++k) {
        const int32_t ic = (oc0 + k) / m;
        int32_t sum = acc[k];
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
