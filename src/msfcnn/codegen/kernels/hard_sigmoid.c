/*
 * HardSigmoid over a region (src/msfcnn/ops/hard_sigmoid.py), float32 only:
 * y = max(0, min(1, alpha * x + beta)), in float as onnxruntime computes it.
 */
#include "hard_sigmoid.h"

void msf_hard_sigmoid_f32(const msf_hard_sigmoid_params *p, const msf_view *in, msf_view *out,
                          int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    int32_t r, c, ch;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const float *src = msf_at_f32(in, r, c, 0);
            float *dst = msf_at_f32(out, r, c, 0);
            for (ch = 0; ch < p->channels; ++ch) {
                const float y = p->alpha * src[ch] + p->beta;
                dst[ch] = y < 0.0f ? 0.0f : (y > 1.0f ? 1.0f : y);
            }
        }
    }
}
