/* Channel gathers (channel_gather.c). */
#ifndef MSF_CHANNEL_GATHER_H
#define MSF_CHANNEL_GATHER_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* A gather of the channels (ShuffleNet's channel shuffle): output channel k is input channel indices[k]. */
typedef struct {
    int32_t channels;
    const int32_t *indices;
} msf_channel_gather_params;
typedef msf_channel_gather_params msf_channel_gather_s16_params;  /* 16x8 graphs: the same copy of int16 values */

void msf_channel_gather_s8 MSF_REGION_ARGS(msf_channel_gather_params);
void msf_channel_gather_s16 MSF_REGION_ARGS(msf_channel_gather_s16_params);
void msf_channel_gather_f32 MSF_REGION_ARGS(msf_channel_gather_params);

MSF_END_DECLS

#endif /* MSF_CHANNEL_GATHER_H */
