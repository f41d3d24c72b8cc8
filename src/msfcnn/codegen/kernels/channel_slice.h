/* Channel slices (channel_slice.c). */
#ifndef MSF_CHANNEL_SLICE_H
#define MSF_CHANNEL_SLICE_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* A slice of the channels (SPLIT, SPLIT_V, SLICE, STRIDED_SLICE): channels [begin, begin + channels). */
typedef struct {
    int32_t begin, channels;
} msf_channel_slice_params;
typedef msf_channel_slice_params msf_channel_slice_s16_params;  /* 16x8 graphs: the same copy of int16 values */

void msf_channel_slice_s8(const msf_channel_slice_params *p, const msf_view *in, msf_view *out,
                          int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_channel_slice_s16(const msf_channel_slice_s16_params *p, const msf_view *in, msf_view *out,
                           int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_channel_slice_f32(const msf_channel_slice_params *p, const msf_view *in, msf_view *out,
                           int32_t r0, int32_t r1, int32_t c0, int32_t c1);

MSF_END_DECLS

#endif /* MSF_CHANNEL_SLICE_H */
