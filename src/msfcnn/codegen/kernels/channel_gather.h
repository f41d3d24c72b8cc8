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

void msf_channel_gather_s8(const msf_channel_gather_params *p, const msf_view *in, msf_view *out,
                           int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_channel_gather_s16(const msf_channel_gather_s16_params *p, const msf_view *in, msf_view *out,
                            int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_channel_gather_f32(const msf_channel_gather_params *p, const msf_view *in, msf_view *out,
                            int32_t r0, int32_t r1, int32_t c0, int32_t c1);

MSF_END_DECLS

#endif /* MSF_CHANNEL_GATHER_H */
