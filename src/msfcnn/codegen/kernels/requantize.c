/*
 * QUANTIZE int8 -> int8 over a region (src/msfcnn/ops/requantize.py).
 *
 * TFLite's Requantize: (x - input zero point) rescaled with its MultiplyByQuantizedMultiplier
 * (MSF_ROUND_DOUBLE), plus the output zero point, saturated to int8. Float graphs: a copy.
 */
#include "requantize.h"
#include "numerics.h"

void msf_requantize_s8(const msf_requantize_params *p, const msf_view *in, msf_view *out,
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
                dst[ch] = msf_clamp_s8(v, p->output_offset, -128, 127);
            }
        }
    }
}

void msf_requantize_f32(const msf_requantize_params *p, const msf_view *in, msf_view *out,
                        int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    int32_t r, c;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            /* the output is the input itself (written in place) or apart from it */
            msf_copy_f32(msf_at_f32(out, r, c, 0), msf_at_f32(in, r, c, 0), p->channels);
        }
    }
}
