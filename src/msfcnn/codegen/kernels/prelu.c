/*
 * PRELU over a region (src/msfcnn/ops/prelu.py): x if x >= 0, else alpha[c] * x, one constant
 * alpha per channel.
 *
 * int8: TFLite's reference Prelu. v = x - input zero point; v >= 0 is rescaled by (pos_mult,
 * pos_shift), v < 0 times (alpha - alpha zero point) by (neg_mult, neg_shift), both with TFLite's
 * MultiplyByQuantizedMultiplier (double rounding); plus the output zero point, saturated to int8.
 * float: the same choice in float32.
 */
#include "msfcnn_kernels.h"

void msf_prelu_s8(const msf_prelu_params *p, const msf_view *in, msf_view *out,
                  int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    int32_t r, c, ch;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const int8_t *src = msf_at_s8(in, r, c, 0);
            int8_t *dst = msf_at_s8(out, r, c, 0);
            for (ch = 0; ch < p->channels; ++ch) {
                const int32_t v = (int32_t)src[ch] + p->input_offset;
                const int32_t scaled = v >= 0
                    ? msf_mul_by_quantized_mult_double(v, p->pos_mult, p->pos_shift)
                    : msf_mul_by_quantized_mult_double(v * ((int32_t)p->alpha[ch] + p->alpha_offset),
                                                       p->neg_mult, p->neg_shift);
                dst[ch] = msf_clamp_s8(scaled, p->output_offset, -128, 127);
            }
        }
    }
}

void msf_prelu_f32(const msf_prelu_params *p, const msf_view *in, msf_view *out,
                   int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    int32_t r, c, ch;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const float *src = msf_at_f32(in, r, c, 0);
            float *dst = msf_at_f32(out, r, c, 0);
            for (ch = 0; ch < p->channels; ++ch) {
                dst[ch] = src[ch] >= 0.0f ? src[ch] : src[ch] * p->alpha_f32[ch];
            }
        }
    }
}
