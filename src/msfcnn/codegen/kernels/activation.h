/* Standalone RELU / RELU6 (activation.c). */
#ifndef MSF_ACTIVATION_H
#define MSF_ACTIVATION_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* Standalone RELU / RELU6: requantise, then clamp. */
typedef struct {
    int32_t channels;
    int32_t input_offset, output_offset;
    int32_t mult, shift;
    int32_t act_min, act_max;
    int32_t rounding;
    int32_t activation;
} msf_activation_params;

void msf_activation_s8 MSF_REGION_ARGS(msf_activation_params);
void msf_activation_f32 MSF_REGION_ARGS(msf_activation_params);

MSF_END_DECLS

#endif /* MSF_ACTIVATION_H */
