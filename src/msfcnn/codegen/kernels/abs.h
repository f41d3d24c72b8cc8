/* ABS (abs.c). */
#ifndef MSF_ABS_H
#define MSF_ABS_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* ABS: |x - input zero point|, rescaled when the scales differ, plus the output zero point. */
typedef struct {
    int32_t channels;
    int32_t input_zero_point, output_zero_point;
    int32_t rescale; /* 0: equal scales, no multiplication */
    int32_t multiplier, shift;
} msf_abs_params;
typedef msf_abs_params msf_abs_s16_params; /* 16x8 graphs: the same fields */

void msf_abs_s8 MSF_REGION_ARGS(msf_abs_params);

void msf_abs_s16 MSF_REGION_ARGS(msf_abs_s16_params);

MSF_END_DECLS

#endif /* MSF_ABS_H */
