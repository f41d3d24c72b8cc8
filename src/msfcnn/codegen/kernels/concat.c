/*
 * CONCATENATION along the channels over a region (src/msfcnn/ops/concat.py): each output pixel
 * is the first input's channels1 values followed by the second's channels2, copied as they are
 * (int8 inputs share the output's quantisation), as bytes: one kernel for int8 and float.
 */
#include <string.h>

#include "concat.h"

static void msf_concat(const msf_concat_params *p, const msf_view *in1, const msf_view *in2, msf_view *out,
                       int32_t r0, int32_t r1, int32_t c0, int32_t c1, int32_t elem)
{
    const msf_view a = msf_bytes_view(in1, elem);
    const msf_view b = msf_bytes_view(in2, elem);
    const msf_view o = msf_bytes_view(out, elem);
    const size_t n1 = (size_t)p->channels1 * (size_t)elem, n2 = (size_t)p->channels2 * (size_t)elem;
    int32_t r, c;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            char *dst = (char *)o.base + msf_offset(&o, r, c, 0);
            /* memmove: the output may be written over an input by an in-place schedule */
            memmove(dst, (const char *)a.base + msf_offset(&a, r, c, 0), n1);
            memmove(dst + n1, (const char *)b.base + msf_offset(&b, r, c, 0), n2);
        }
    }
}

void msf_concat_s8 MSF_REGION2_ARGS(msf_concat_params)
{
    msf_concat(p, in1, in2, out, r0, r1, c0, c1, 1);
}

void msf_concat_f32 MSF_REGION2_ARGS(msf_concat_params)
{
    msf_concat(p, in1, in2, out, r0, r1, c0, c1, (int32_t)sizeof(float));
}
