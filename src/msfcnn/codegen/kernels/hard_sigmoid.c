/*
 * HardSigmoid over a region (src/msfcnn/ops/hard_sigmoid.py), float32 only:
 * y = max(0, min(1, alpha * x + beta)), in float as onnxruntime computes it.
 */
#include "hard_sigmoid.h"

void msf_hard_sigmoid_f32 MSF_REGION_ARGS(msf_hard_sigmoid_params)
{
    MSF_EACH_VALUE(f32, f32, p->channels, {
        const float y = p->alpha * src[ch] + p->beta;
        dst[ch] = y < 0.0f ? 0.0f : (y > 1.0f ? 1.0f : y);
    });
}
