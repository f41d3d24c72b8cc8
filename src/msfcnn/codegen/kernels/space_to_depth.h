/* SPACE_TO_DEPTH (space_to_depth.c). */
#ifndef MSF_SPACE_TO_DEPTH_H
#define MSF_SPACE_TO_DEPTH_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* SPACE_TO_DEPTH: each block x block block of pixels into one pixel of block * block * channels. */
typedef struct {
    int32_t block, channels;
} msf_space_to_depth_params;
typedef msf_space_to_depth_params msf_space_to_depth_s16_params;  /* 16x8 graphs: the same copy of int16 values */

void msf_space_to_depth_s8 MSF_REGION_ARGS(msf_space_to_depth_params);
void msf_space_to_depth_s16 MSF_REGION_ARGS(msf_space_to_depth_s16_params);
void msf_space_to_depth_f32 MSF_REGION_ARGS(msf_space_to_depth_params);

MSF_END_DECLS

#endif /* MSF_SPACE_TO_DEPTH_H */
