/*
 * FULLY_CONNECTED as a streamed tail (src/msfcnn/ops/dense.py).
 *
 * accumulate adds, for a region of the (H, W, C) input, W[u, flat(r, c, ch)] * (x - input zero
 * point) into the int32 accumulator of every unit u, flat(r, c, ch) = (r * in_w + c) * in_c + ch
 * (TFLite flattens NHWC row-major); a vector input is H = W = 1. finish adds the bias and
 * requantises as TFLite's FULLY_CONNECTED on x86: ruy's GEMV output stage (p->rounding =
 * MSF_ROUND_RUY), with per-channel multipliers, or one multiplier when the weights are per-tensor
 * (computed in Python from the float32 product of the scales, as GetQuantizedConvolutionMultipler),
 * then the output zero point and the activation clamp. msf_dense_s8 / _f32 do both at once.
 */
#include "dense.h"
#include "numerics.h"

#if defined(MSF_ARM_MVE)
/* sum over ch < n of (src[ch] + offset) * w[ch] on Helium: sixteen values a VMLADAVA on the int8
   values themselves, plus offset times the weights' sum (VADDVA), the last ones predicated. */
static inline int32_t mve_dot(const int8_t *src, const int8_t *w, int32_t n, int32_t offset)
{
    const int32_t whole = n & ~15;
    int32_t sum = 0, weights = 0, ch;
    for (ch = 0; ch < whole; ch += 16) {
        const int8x16_t wv = vldrbq_s8(w + ch);
        sum = vmladavaq_s8(sum, vldrbq_s8(src + ch), wv);
        weights = vaddvaq_s8(weights, wv);
    }
    if (whole < n) {
        const mve_pred16_t active = vctp8q((uint32_t)(n - whole));
        const int8x16_t wv = vldrbq_z_s8(w + whole, active);
        sum = vmladavaq_s8(sum, vldrbq_z_s8(src + whole, active), wv);
        weights = vaddvaq_s8(weights, wv);
    }
    return sum + offset * weights;
}
#endif

void msf_dense_accumulate_s8(const msf_dense_params *p, const msf_view *in, void *acc,
                             int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    const int32_t in_features = p->in_h * p->in_w * p->in_c;
    int32_t r, c, u;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const int8_t *src = msf_at_s8(in, r, c, 0);
            const int8_t *w = p->weights + (ptrdiff_t)(r * p->in_w + c) * p->in_c;
            for (u = 0; u < p->units; ++u) {
                const int8_t *wu = w + (ptrdiff_t)u * in_features;
#if defined(MSF_ARM_MVE)
                const int32_t sum = mve_dot(src, wu, p->in_c, p->input_offset);
#else
                int32_t sum = 0, ch;
                for (ch = 0; ch < p->in_c; ++ch) {
                    sum += ((int32_t)src[ch] + p->input_offset) * wu[ch];
                }
#endif
                msf_store_i32(acc, u, msf_load_i32(acc, u) + sum);
            }
        }
    }
}

/* Unit u's output from its complete dot product. */
static int8_t finish_one_s8(const msf_dense_params *p, int32_t u, int32_t total)
{
    const int32_t k = p->per_channel ? u : 0;
    if (p->bias != NULL) {
        total += p->bias[u];
    }
    total = msf_mul_by_quantized_mult(total, p->mult[k], p->shift[k], p->rounding);
    return msf_clamp_s8(total, p->output_offset, p->act_min, p->act_max);
}

void msf_dense_finish_s8(const msf_dense_params *p, const void *acc, int8_t *out)
{
    int32_t u;
    for (u = 0; u < p->units; ++u) {
        out[u] = finish_one_s8(p, u, msf_load_i32(acc, u));
    }
}

void msf_dense_s8(const msf_dense_params *p, const msf_view *in, int8_t *out)
{
    const int32_t in_features = p->in_h * p->in_w * p->in_c;
    int32_t r, c, u;
    for (u = 0; u < p->units; ++u) {
        const int8_t *wu = p->weights + (ptrdiff_t)u * in_features;
        int32_t total = 0;
        for (r = 0; r < p->in_h; ++r) {
            for (c = 0; c < p->in_w; ++c, wu += p->in_c) {
                const int8_t *src = msf_at_s8(in, r, c, 0);
#if defined(MSF_ARM_MVE)
                total += mve_dot(src, wu, p->in_c, p->input_offset);
#else
                int32_t ch;
                for (ch = 0; ch < p->in_c; ++ch) {
                    total += ((int32_t)src[ch] + p->input_offset) * wu[ch];
                }
#endif
            }
        }
        out[u] = finish_one_s8(p, u, total);
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

static float finish_one_f32(const msf_dense_params *p, int32_t u, float total)
{
    if (p->bias_f32 != NULL) {
        total += p->bias_f32[u];
    }
    return msf_apply_activation_f32(total, p->activation);
}

void msf_dense_finish_f32(const msf_dense_params *p, const float *acc, float *out)
{
    int32_t u;
    for (u = 0; u < p->units; ++u) {
        out[u] = finish_one_f32(p, u, acc[u]);
    }
}

void msf_dense_f32(const msf_dense_params *p, const msf_view *in, float *out)
{
    const int32_t in_features = p->in_h * p->in_w * p->in_c;
    int32_t r, c, u, ch;
    for (u = 0; u < p->units; ++u) {
        const float *wu = p->weights_f32 + (ptrdiff_t)u * in_features;
        float total = 0.0f;
        for (r = 0; r < p->in_h; ++r) {
            for (c = 0; c < p->in_w; ++c, wu += p->in_c) {
                const float *src = msf_at_f32(in, r, c, 0);
                for (ch = 0; ch < p->in_c; ++ch) {
                    total += src[ch] * wu[ch];
                }
            }
        }
        out[u] = finish_one_f32(p, u, total);
    }
}
