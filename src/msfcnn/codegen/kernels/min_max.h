/* MAXIMUM and MINIMUM (min_max.c). */
#ifndef MSF_MIN_MAX_H
#define MSF_MIN_MAX_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* MAXIMUM / MINIMUM (min_max.c, ops/min_max.py): of two maps, or (the _const kernels) of a map
   and operand_size values (1, or one per channel; float graphs: operand_f32). No arithmetic:
   int8 inputs and output share one quantisation. */
typedef struct {
    int32_t channels, maximum;              /* 1: MAXIMUM, 0: MINIMUM */
    int32_t operand_size;
    const int8_t *operand;
    const float *operand_f32;
} msf_min_max_params;
typedef msf_min_max_params msf_min_max_const_params;

void msf_min_max_s8 MSF_REGION2_ARGS(msf_min_max_params);
void msf_min_max_f32 MSF_REGION2_ARGS(msf_min_max_params);
void msf_min_max_const_s8 MSF_REGION_ARGS(msf_min_max_params);
void msf_min_max_const_f32 MSF_REGION_ARGS(msf_min_max_params);

MSF_END_DECLS

#endif /* MSF_MIN_MAX_H */
