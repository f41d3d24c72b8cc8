/*
 * Element-wise functions of one value over a region (src/msfcnn/ops/lookup.py): LOGISTIC and
 * HARD_SWISH.
 *
 * int8: the output is table[x + 128], a 256-entry table computed in Python with the
 * interpreter's own arithmetic for the op (logistic.py, hard_swish.py).
 * float: the function itself (p->function, MSF_FN_*).
 */
#include "float_math.h"
#include "lookup.h"

void msf_lookup_s8 MSF_REGION_ARGS(msf_lookup_params)
{
    MSF_EACH_VALUE(s8, s8, p->channels, {
        dst[ch] = p->table[(int32_t)src[ch] + 128];
    });
}

static float msf_function_f32(int32_t function, float x)
{
    if (function == MSF_FN_LOGISTIC) {
        return msf_logisticf(x);
    }
    return x * (x + 3.0f < 0.0f ? 0.0f : (x + 3.0f > 6.0f ? 6.0f : x + 3.0f)) / 6.0f;
}

void msf_lookup_f32 MSF_REGION_ARGS(msf_lookup_params)
{
    MSF_EACH_VALUE(f32, f32, p->channels, {
        dst[ch] = msf_function_f32(p->function, src[ch]);
    });
}
