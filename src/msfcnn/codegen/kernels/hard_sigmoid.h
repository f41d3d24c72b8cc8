/* HardSigmoid (hard_sigmoid.c). */
#ifndef MSF_HARD_SIGMOID_H
#define MSF_HARD_SIGMOID_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* HardSigmoid (ONNX, float only): out = max(0, min(1, alpha * in + beta)). */
typedef struct {
    int32_t channels;
    float alpha, beta;
} msf_hard_sigmoid_params;

void msf_hard_sigmoid_f32(const msf_hard_sigmoid_params *p, const msf_view *in, msf_view *out,
                          int32_t r0, int32_t r1, int32_t c0, int32_t c1);

MSF_END_DECLS

#endif /* MSF_HARD_SIGMOID_H */
