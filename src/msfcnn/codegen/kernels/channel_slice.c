/*
 * A slice of the channels over a region (src/msfcnn/ops/channel_slice.py): each output pixel is
 * the input pixel's channels [begin, begin + channels), copied as they are (the importers require
 * one quantisation on both sides), as bytes: one kernel for int8, int16 and float maps.
 */
#include <string.h>

#include "channel_slice.h"

static void msf_channel_slice(const msf_channel_slice_params *p, const msf_view *in, msf_view *out,
                              int32_t r0, int32_t r1, int32_t c0, int32_t c1, int32_t elem)
{
    /* byte views: offsets count bytes, the first kept channel's bytes included */
    const msf_view from = msf_bytes_view(in, elem), to = msf_bytes_view(out, elem);
    const int32_t first = p->begin * elem;
    const size_t bytes = (size_t)p->channels * (size_t)elem;
    int32_t r, c;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {  /* memmove: the output may lie over the consumed input */
            memmove((char *)to.base + msf_offset(&to, r, c, 0), (const char *)from.base + msf_offset(&from, r, c, first),
                    bytes);
        }
    }
}

/* msf_channel_slice_s8, msf_channel_slice_s16 and msf_channel_slice_f32 */
MSF_BYTE_COPY_KERNELS(channel_slice)
