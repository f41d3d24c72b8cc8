/* MAX_POOL_2D and AVERAGE_POOL_2D (pool2d.c). */
#ifndef MSF_POOL2D_H
#define MSF_POOL2D_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* MAX_POOL_2D and AVERAGE_POOL_2D, one kernel (input and output share their quantisation in int8). */
typedef struct {
    int32_t in_h, in_w, channels;
    int32_t kh, kw, stride_h, stride_w, pad_top, pad_left;
    int32_t max;                    /* 1: the maximum; 0: the average */
    int32_t count_include_pad;      /* avg: divide by kh * kw instead of the in-bounds taps */
    int32_t act_min, act_max;
    int32_t activation;
} msf_pool2d_params;

void msf_pool2d_s8 MSF_REGION_ARGS(msf_pool2d_params);
void msf_pool2d_f32 MSF_REGION_ARGS(msf_pool2d_params);

MSF_END_DECLS

#endif /* MSF_POOL2D_H */
