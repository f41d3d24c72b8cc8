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

void msf_depth_to_space_s8(const msf_depth_to_space_params *p, const msf_view *in, msf_view *out,
                           int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_depth_to_space_s16(const msf_depth_to_space_s16_params *p, const msf_view *in, msf_view *out,
                            int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_depth_to_space_f32(const msf_depth_to_space_params *p, const msf_view *in, msf_view *out,
                            int32_t r0, int32_t r1, int32_t c0, int32_t c1);

MSF_END_DECLS

#endif /* MSF_DEPTH_TO_SPACE_H */
