/*
 * FULLY_CONNECTED as a streamed tail (src/msfcnn/ops/dense.py).
 *
 * accumulate adds, for a region of the (H, W, C) input, W[u, flat(r, c, ch)] * (x - input zero
 * point) into the int32 accumulator of every unit u, flat(r, c, ch) = (r * in_w + c) * in_c + ch
 * (TFLite flattens NHWC row-major); a vector input is H = W = 1. finish adds the bias and
 * requantises as TFLite's FULLY_CONNECTED on x86: ruy's GEMV output stage (p->rounding =
 * MSF_ROUND_RUY), with per-channel multipliers, or one multiplier when the weights are per-tensor
 * (computed in Python from the float32 product of the scales, as GetQuantizedConvolutionMultipler),
 * then the output zero point and the activation clamp.
 */
#include "msfcnn_kernels.h"

void msf_dense_accumulate_s8(const msf_dense_params *p, const msf_view *in, int32_t *acc,
                             int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    const int32_t in_features = p->in_h * p->in_w * p->in_c;
    int32_t r, c, u, ch;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const int8_t *src = msf_at_s8(in, r, c, 0);
            const int8_t *w = p->weights + (ptrdiff_t)(r * p->in_w + c) * p->in_c;
            for (u = 0; u < p->units; ++u) {
                const int8_t *wu = w + (ptrdiff_t)u * in_features;
                int32_t sum = 0;
                for (ch = 0; ch < p->in_c; ++ch) {
                    sum += ((int32_t)src[ch] + p->input_offset) * wu[ch];
                }
                acc[u] += sum;
            }
        }
    }
}

void msf_dense_finish_s8(const msf_dense_params *p, const int32_t *acc, int8_t *out)
{
    int32_t u;
    for (u = 0; u < p->units; ++u) {
        const int32_t k = p->per_channel ? u : 0;
        int32_t v = acc[u];
        if (p->bias != NULL) {
            v += p->bias[u];
        }
        v = msf_mul_by_quantized_mult(v, p->mult[k], p->shift[k], p->rounding);
        out[u] = msf_clamp_s8(v, p->output_offset, p->act_min, p->act_max);
    }
}

void msf_dense_accumulate_f32(const msf_dense_params *p, const msf_view *in, float *acc,
                              int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    const int32_t in_features = p->in_h * p->in_w * p->in_c;
    int32_t r, c, u, ch;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const float *src = msf_at_f32(in, r, c, 0);
            const float *w = p->weights_f32 + (ptrdiff_t)(r * p->in_w + c) * p->in_c;
            for (u = 0; u < p->units; ++u) {
                const float *wu = w + (ptrdiff_t)u * in_features;
                float sum = 0.0f;
                for (ch = 0; ch < p->in_c; ++ch) {
                    sum += src[ch] * wu[ch];
                }
                acc[u] += sum;
            }
        }
    }
}

void msf_dense_finish_f32(const msf_dense_params *p, const float *acc, float *out)
{
    int32_t u;
    for (u = 0; u < p->units; ++u) {
        float v = acc[u];
        if (p->bias_f32 != NULL) {
            v += p->bias_f32[u];
        }
        out[u] = msf_apply_activation_f32(v, p->activation);
    }
}
