/*
 * Standalone RELU / RELU6 over a region (src/msfcnn/ops/activation.py).
 *
 * TFLite's int8 RELU kernels requantise from the input's to the output's scale with its
 * MultiplyByQuantizedMultiplier (multiplier from float32(in_scale / out_scale), rounding
 * MSF_ROUND_DOUBLE), add the output zero point, then clamp to the activation's range.
 */
#include "activation.h"
#include "numerics.h"

void msf_activation_s8(const msf_activation_params *p, const msf_view *in, msf_view *out,
                       int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    int32_t r, c, ch;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const int8_t *src = msf_at_s8(in, r, c, 0);
            int8_t *dst = msf_at_s8(out, r, c, 0);
            for (ch = 0; ch < p->channels; ++ch) {
                const int32_t v = msf_mul_by_quantized_mult((int32_t)src[ch] + p->input_offset,
                                                            p->mult, p->shift, p->rounding);
                dst[ch] = msf_clamp_s8(v, p->output_offset, p->act_min, p->act_max);
            }
        }
    }
}

void msf_activation_f32(const msf_activation_params *p, const msf_view *in, msf_view *out,
                        int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    int32_t r, c, ch;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const float *src = msf_at_f32(in, r, c, 0);
            float *dst = msf_at_f32(out, r, c, 0);
            for (ch = 0; ch < p->channels; ++ch) {
                dst[ch] = msf_apply_activation_f32(src[ch], p->activation);
            }
        }
    }
}
