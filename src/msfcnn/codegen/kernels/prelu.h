/* PRELU (prelu.c). */
#ifndef MSF_PRELU_H
#define MSF_PRELU_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* PRELU: one alpha per channel. int8: v = in - input zero point, rescaled by (pos_mult, pos_shift)
   if v >= 0, else v * (alpha + alpha_offset) by (neg_mult, neg_shift); plus output_offset. */
typedef struct {
    int32_t channels;
    int32_t input_offset, alpha_offset, output_offset;
    int32_t pos_mult, pos_shift;
    int32_t neg_mult, neg_shift;
    const int8_t *alpha;            /* int8: [channels] */
    const float *alpha_f32;         /* float: [channels] */
} msf_prelu_params;
typedef msf_prelu_params msf_prelu_s16_params;  /* 16x8 graphs: int16 values, int8 alphas */

void msf_prelu_s8 MSF_REGION_ARGS(msf_prelu_params);
void msf_prelu_s16 MSF_REGION_ARGS(msf_prelu_s16_params);
void msf_prelu_f32 MSF_REGION_ARGS(msf_prelu_params);

MSF_END_DECLS

#endif /* MSF_PRELU_H */
