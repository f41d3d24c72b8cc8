/*
 * SVDF, int8 input and output (src/msfcnn/ops/svdf.py), as TFLite's and TFLite Micro's integer
 * kernels compute it. Per call, on the state S (filters x memory, kept between calls):
 *   1. S shifts one step left (the oldest step drops out);
 *   2. S[f][memory - 1] = saturate(rescale1(sum_i weights[f][i] * (in[i] + input_offset)))
 *      (to the state's type, then plus its zero point);
 *   3. out[u] = saturate8(rescale2(bias[u] + sum over the unit's rank filters f of
 *      sum_j weights_time[f][j] * (S[f][j] - state zero point)) + output_offset).
 * Both rescales are MultiplyByQuantizedMultiplier (p->rounding). The fused activation is not
 * applied: neither runtime's integer kernel does.
 */
#include "svdf.h"
#include "numerics.h"

/* Steps 1 and 2 on a state of type T (int16_t or int8_t), saturating to [lo, hi]. */
#define MSF_SVDF_FEED(T, lo, hi)                                                              \
    do {                                                                                      \
        T *state = (T *)p->state;                                                             \
        memmove(state, state + 1, (size_t)(filters * p->memory - 1) * sizeof(T));             \
        for (f = 0; f < filters; ++f) {                                                       \
            const int8_t *w = p->weights + (ptrdiff_t)f * p->n_input;                         \
            int32_t sum = 0, v;                                                               \
            for (i = 0; i < p->n_input; ++i) {                                                \
                sum += w[i] * ((int32_t)in[i] + p->input_offset);                             \
            }                                                                                 \
            v = msf_mul_by_quantized_mult(sum, p->mult1, p->shift1, p->rounding);              \
            v = v < (lo) ? (lo) : v > (hi) ? (hi) : v;                                        \
            state[(ptrdiff_t)f * p->memory + p->memory - 1] = (T)(v + p->state_zero_point);   \
        }                                                                                     \
    } while (0)

/* Step 3's time filter over filter f, on a state and time filter of type T. */
#define MSF_SVDF_TIME(T)                                                                      \
    do {                                                                                      \
        const T *s = (const T *)p->state + (ptrdiff_t)f * p->memory;                          \
        const T *wt = (const T *)p->weights_time + (ptrdiff_t)f * p->memory;                  \
        for (j = 0; j < p->memory; ++j) {                                                     \
            acc += (int32_t)wt[j] * ((int32_t)s[j] - p->state_zero_point);                    \
        }                                                                                     \
    } while (0)

void msf_svdf_s8(const msf_svdf_params *p, const int8_t *in, int8_t *out)
{
    const int32_t filters = p->units * p->rank;
    int32_t f, i, j, u;
    if (p->state_int8) {
        MSF_SVDF_FEED(int8_t, -128, 127);
    } else {
        MSF_SVDF_FEED(int16_t, -32768, 32767);
    }
    for (u = 0; u < p->units; ++u) {
        int32_t acc = p->bias != NULL ? p->bias[u] : 0;
        for (f = u * p->rank; f < (u + 1) * p->rank; ++f) {
            if (p->state_int8) {
                MSF_SVDF_TIME(int8_t);
            } else {
                MSF_SVDF_TIME(int16_t);
            }
        }
        out[u] = msf_clamp_s8(msf_mul_by_quantized_mult(acc, p->mult2, p->shift2, p->rounding),
                              p->output_offset, -128, 127);
    }
}
