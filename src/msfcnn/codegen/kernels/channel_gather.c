/*
 * A channel gather over a region (src/msfcnn/ops/channel_gather.py): output channel k of each
 * pixel is the input pixel's channel indices[k] (ShuffleNet's channel shuffle), copied as it is
 * (the importers require one quantisation on both sides), as `elem` bytes: one kernel for int8,
 * int16 and float maps. The output never lies over the input (the op is never written over it).
 */
#include <string.h>

#include "channel_gather.h"

static void msf_channel_gather(const msf_channel_gather_params *p, const msf_view *in, msf_view *out,
                               int32_t r0, int32_t r1, int32_t c0, int32_t c1, int32_t elem)
{
    /* byte views: offsets count bytes */
    const msf_view from = msf_bytes_view(in, elem), to = msf_bytes_view(out, elem);
    int32_t r, c, k;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            char *dst = (char *)to.base + msf_offset(&to, r, c, 0);
            const char *src = (const char *)from.base + msf_offset(&from, r, c, 0);
            for (k = 0; k < p->channels; ++k) {
                memcpy(dst + (ptrdiff_t)k * elem, src + (ptrdiff_t)p->indices[k] * elem, (size_t)elem);
            }
        }
    }
}

/* msf_channel_gather_s8, msf_channel_gather_s16 and msf_channel_gather_f32 */
MSF_BYTE_COPY_KERNELS(channel_gather)
