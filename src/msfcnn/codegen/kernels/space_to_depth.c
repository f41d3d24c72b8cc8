/*
 * SPACE_TO_DEPTH over an output region (src/msfcnn/ops/space_to_depth.py): output pixel (r, c)
 * holds the input's b x b block at rows r * b + [0, b), columns c * b + [0, b), pixel (di, dj) of it
 * in output channels (di * b + dj) * C + [0, C). Values are copied as they are (input and output
 * share their quantisation), as `elem` bytes: one kernel for int8, int16 and float maps.
 */
#include <string.h>

#include "space_to_depth.h"

static void msf_space_to_depth(const msf_space_to_depth_params *p, const msf_view *in, msf_view *out,
                               int32_t r0, int32_t r1, int32_t c0, int32_t c1, int32_t elem)
{
    /* byte views: offsets count bytes */
    const msf_view from = msf_bytes_view(in, elem), to = msf_bytes_view(out, elem);
    const int32_t b = p->block;
    const size_t pixel = (size_t)p->channels * (size_t)elem;
    int32_t r, c, di, dj;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            char *dst = (char *)to.base + msf_offset(&to, r, c, 0);
            for (di = 0; di < b; ++di) {
                for (dj = 0; dj < b; ++dj) {
                    memcpy(dst, (const char *)from.base + msf_offset(&from, r * b + di, c * b + dj, 0), pixel);
                    dst += pixel;
                }
            }
        }
    }
}

/* msf_space_to_depth_s8, msf_space_to_depth_s16 and msf_space_to_depth_f32 */
MSF_BYTE_COPY_KERNELS(space_to_depth)
