/*
 * Element-wise functions of one value over a region (src/msfcnn/ops/lookup.py): LOGISTIC and
 * HARD_SWISH.
 *
 * int8: the output is table[x + 128], a 256-entry table computed in Python with the
 * interpreter's own arithmetic for the op (logistic.py, hard_swish.py).
 * float: the function itself (p->function, MSF_FN_*).
 */
#include <math.h>

#include "lookup.h"

void msf_lookup_s8(const msf_lookup_params *p, const msf_view *in, msf_view *out,
                   int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    int32_t r, c, ch;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const int8_t *src = msf_at_s8(in, r, c, 0);
            int8_t *dst = msf_at_s8(out, r, c, 0);
            for (ch = 0; ch < p->channels; ++ch) {
                dst[ch] = p->table[(int32_t)src[ch] + 128];
            }
        }
    }
}

static float msf_function_f32(int32_t function, float x)
{
    if (function == MSF_FN_LOGISTIC) {
        return 1.0f / (1.0f + expf(-x));
    }
    return x * (x + 3.0f < 0.0f ? 0.0f : (x + 3.0f > 6.0f ? 6.0f : x + 3.0f)) / 6.0f;
}

void msf_lookup_f32(const msf_lookup_params *p, const msf_view *in, msf_view *out,
                    int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    int32_t r, c, ch;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const float *src = msf_at_f32(in, r, c, 0);
            float *dst = msf_at_f32(out, r, c, 0);
            for (ch = 0; ch < p->channels; ++ch) {
                dst[ch] = msf_function_f32(p->function, src[ch]);
            }
        }
    }
}
