/* SUB and SQUARED_DIFFERENCE (sub.c). */
#ifndef MSF_SUB_H
#define MSF_SUB_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* SUB and SQUARED_DIFFERENCE (sub.c, ops/sub.py): ADD's arithmetic, each input entering as
   sign * rescale((q + offset) * 2^left_shift, mult, shift), the subtrahend's sign -1; the
   difference squared (square) before the output rescale. Of two maps (msf_sub_*), or of a map
   (input1) and a constant (msf_sub_const_*), whose term comes from operand[] (its sign included;
   one value, or one per channel). float: in1 - in2, or in2 - in1 (reversed; the constant is in2,
   from operand_f32), squared or not. */
typedef struct {
    int32_t channels, reversed, square, operand_size;
    int32_t input1_offset, input1_mult, input1_shift, input1_sign;
    int32_t input2_offset, input2_mult, input2_shift, input2_sign;
    int32_t left_shift;                     /* 20 (SQUARED_DIFFERENCE: 7) */
    int32_t output_mult, output_shift, output_offset;
    int32_t act_min, act_max;
    int32_t rounding;
    int32_t activation;
    const int32_t *operand;
    const float *operand_f32;
} msf_sub_params;
typedef msf_sub_params msf_sub_const_params;

void msf_sub_s8 MSF_REGION2_ARGS(msf_sub_params);
void msf_sub_f32 MSF_REGION2_ARGS(msf_sub_params);
void msf_sub_const_s8 MSF_REGION_ARGS(msf_sub_params);
void msf_sub_const_f32 MSF_REGION_ARGS(msf_sub_params);

MSF_END_DECLS

#endif /* MSF_SUB_H */
