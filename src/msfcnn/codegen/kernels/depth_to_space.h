/* DEPTH_TO_SPACE (depth_to_space.c). */
#ifndef MSF_DEPTH_TO_SPACE_H
#define MSF_DEPTH_TO_SPACE_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* DEPTH_TO_SPACE: each pixel of block * block * channels into a block x block block of pixels. */
typedef struct {
    int32_t block, channels;  /* channels: the output's */
} msf_depth_to_space_params;
typedef msf_depth_to_space_params msf_depth_to_space_s16_params;  /* 16x8 graphs: the same copy of int16 values */

void msf_depth_to_space_s8 MSF_REGION_ARGS(msf_depth_to_space_params);
void msf_depth_to_space_s16 MSF_REGION_ARGS(msf_depth_to_space_s16_params);
void msf_depth_to_space_f32 MSF_REGION_ARGS(msf_depth_to_space_params);

MSF_END_DECLS

#endif /* MSF_DEPTH_TO_SPACE_H */
