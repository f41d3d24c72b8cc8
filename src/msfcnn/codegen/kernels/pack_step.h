/* One step of a PACK of an unrolled recurrent layer's hidden states (pack_step.c). */
#ifndef MSF_PACK_STEP_H
#define MSF_PACK_STEP_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* The step's `size` values go to values [offset, offset + size) of a stack of `total`. */
typedef struct {
    int32_t offset, size, total;
} msf_pack_step_params;
typedef msf_pack_step_params msf_pack_first_params;

void msf_pack_first_s8 MSF_REGION_ARGS(msf_pack_first_params);
void msf_pack_first_f32 MSF_REGION_ARGS(msf_pack_first_params);
void msf_pack_step_s8 MSF_REGION2_ARGS(msf_pack_step_params);
void msf_pack_step_f32 MSF_REGION2_ARGS(msf_pack_step_params);

MSF_END_DECLS

#endif /* MSF_PACK_STEP_H */
