/*
 * A global average pool over a sliding window, kept as running sums (src/msfcnn/ops/time_mean.py):
 * integer sums are exact in any order, so each new row is added and the window's oldest
 * subtracted, instead of summing the whole window on every call.
 */
#include "time_mean.h"

void msf_time_mean_s8(const msf_time_mean_params *p, const int8_t *in, int8_t *out)
{
    int32_t r, i, ch;
    int32_t *sums = p->sums;
    for (r = 0; r < p->new_rows; ++r) {
        int8_t *old = p->rows + (size_t)*p->slot * (size_t)p->row_values;
        const int8_t *src = in + (size_t)r * (size_t)p->row_values;
        for (i = 0, ch = 0; i < p->row_values; ++i) {
            sums[ch] += (int32_t)src[i] - (int32_t)old[i];
            old[i] = src[i];
            if (++ch == p->channels) {
                ch = 0;
            }
        }
        *p->slot = *p->slot + 1 == p->window ? 0 : *p->slot + 1;
    }
    msf_global_avg_pool_finish_s8(&p->pool, sums, out);
}
