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

void msf_channel_slice_s8 MSF_REGION_ARGS(msf_channel_slice_params);
void msf_channel_slice_s16 MSF_REGION_ARGS(msf_channel_slice_s16_params);
void msf_channel_slice_f32 MSF_REGION_ARGS(msf_channel_slice_params);

MSF_END_DECLS

#endif /* MSF_CHANNEL_SLICE_H */
