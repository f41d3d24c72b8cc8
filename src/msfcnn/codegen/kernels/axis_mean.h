/* MEAN over H or W (axis_mean.c). */
#ifndef MSF_AXIS_MEAN_H
#define MSF_AXIS_MEAN_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* MEAN over H, W or both, keeping the reduced axes: output (r, c) reads input rows [r, r + kh) x
   columns [c, c + kw) (kh = in_h or 1, kw = in_w or 1). int8: reference QuantizedMeanOrSum
   (mult / shift fold 1/count in; the sum minus input_zero_point * count; gemmlowp rounding). */
typedef struct {
    int32_t in_h, in_w, channels;
    int32_t kh, kw;
    int32_t mult, shift;
    int32_t input_zero_point;
    int32_t output_offset;
} msf_axis_mean_params;

void msf_axis_mean_s8 MSF_REGION_ARGS(msf_axis_mean_params);
void msf_axis_mean_f32 MSF_REGION_ARGS(msf_axis_mean_params);

MSF_END_DECLS

#endif /* MSF_AXIS_MEAN_H */
