/* MUL and ADD of a map and a constant, MUL of two maps (const_operand.c). */
#ifndef MSF_CONST_OPERAND_H
#define MSF_CONST_OPERAND_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* MUL / ADD of a feature map and a constant of operand_size values: 1 (a scalar) or channels (one
   per channel). MUL: (x + input_offset) * (c + operand_offset) rescaled by output_mult / _shift.
   ADD: as msf_add_params, the constant as the second input. */
typedef struct {
    int32_t channels, operand_size;
    int32_t input_offset, operand_offset;   /* -(zero points) */
    int32_t left_shift;                     /* ADD: 20 */
    int32_t input_mult, input_shift;        /* ADD */
    int32_t operand_mult, operand_shift;    /* ADD */
    int32_t output_mult, output_shift;
    int32_t output_offset;
    int32_t act_min, act_max;
    int32_t rounding;
    int32_t activation;
    const int8_t *operand;
    const float *operand_f32;
} msf_const_operand_params;
typedef msf_const_operand_params msf_mul_const_params;
typedef msf_const_operand_params msf_add_const_params;

/* MUL of two activations: the second at the same position, or (broadcast) one value per channel. */
typedef struct {
    int32_t channels, broadcast;
    int32_t input1_offset, input2_offset;   /* -(zero points) */
    int32_t output_mult, output_shift;
    int32_t output_offset;
    int32_t act_min, act_max;
    int32_t rounding;
    int32_t activation;
} msf_mul_params;

void msf_mul_const_s8 MSF_REGION_ARGS(msf_const_operand_params);
void msf_mul_const_f32 MSF_REGION_ARGS(msf_const_operand_params);
void msf_mul_s8 MSF_REGION2_ARGS(msf_mul_params);
void msf_mul_f32 MSF_REGION2_ARGS(msf_mul_params);
void msf_add_const_s8 MSF_REGION_ARGS(msf_const_operand_params);
void msf_add_const_f32 MSF_REGION_ARGS(msf_const_operand_params);

MSF_END_DECLS

#endif /* MSF_CONST_OPERAND_H */
