/*
 * DEPTH_TO_SPACE over an output region (src/msfcnn/ops/depth_to_space.py): output pixel (r, c) is
 * the input pixel (r / b, c / b)'s channels ((r % b) * b + c % b) * C + [0, C), C the output's
 * channels. Values are copied as they are (input and output share their quantisation), as `elem`
 * bytes: one kernel for int8, int16 and float maps.
 */
#include <string.h>

#include "depth_to_space.h"

static void msf_depth_to_space(const msf_depth_to_space_params *p, const msf_view *in, msf_view *out,
                               int32_t r0, int32_t r1, int32_t c0, int32_t c1, int32_t elem)
{
    const msf_view from = msf_bytes_view(in, elem), to = msf_bytes_view(out, elem);
    const int32_t b = p->block;
    const size_t pixel = (size_t)p->channels * (size_t)elem;
    int32_t r, c;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const int32_t first = ((r % b) * b + c % b) * p->channels * elem;
            memcpy((char *)to.base + msf_offset(&to, r, c, 0),
                   (const char *)from.base + msf_offset(&from, r / b, c / b, first), pixel);
        }
    }
}

/* msf_depth_to_space_s8, msf_depth_to_space_s16 and msf_depth_to_space_f32 */
MSF_BYTE_COPY_KERNELS(depth_to_space)
