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

void msf_hard_sigmoid_f32 MSF_REGION_ARGS(msf_hard_sigmoid_params);

MSF_END_DECLS

#endif /* MSF_HARD_SIGMOID_H */
