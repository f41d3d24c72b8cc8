/* ADD of two maps (add.c). */
#ifndef MSF_ADD_H
#define MSF_ADD_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* ADD (TFLite int8: both inputs scaled by 2^left_shift, brought to twice the larger input scale,
   summed, rescaled to the output). */
typedef struct {
    int32_t channels;
    int32_t input1_offset, input2_offset;   /* -(zero points) */
    int32_t left_shift;                     /* 20 */
    int32_t input1_mult, input1_shift;
    int32_t input2_mult, input2_shift;
    int32_t output_mult, output_shift;
    int32_t output_offset;
    int32_t act_min, act_max;
    int32_t rounding;
    int32_t activation;
} msf_add_params;

void msf_add_s8 MSF_REGION2_ARGS(msf_add_params);
void msf_add_f32 MSF_REGION2_ARGS(msf_add_params);

MSF_END_DECLS

#endif /* MSF_ADD_H */
