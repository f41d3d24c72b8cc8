/*
 * A ring of the last rows along time (src/msfcnn/ops/time_ring.py): the rows of earlier calls that
 * a window along time still reads, then the call's new rows. Three copies; the rows are contiguous.
 */
#include "time_ring.h"

static void msf_time_ring_bytes(void *state, size_t kept, const uint8_t *in, size_t fresh, uint8_t *out)
{
    if (kept) {
        memcpy(out, state, kept);
    }
    memcpy(out + kept, in, fresh);
    if (kept) {
        memcpy(state, out + fresh, kept);
    }
}

void msf_time_ring_s8(const msf_time_ring_params *p, const int8_t *in, int8_t *out)
{
    msf_time_ring_bytes(p->state, (size_t)p->kept_values, (const uint8_t *)(in + p->skip_values),
                        (size_t)p->new_values, (uint8_t *)out);
}

void msf_time_ring_f32(const msf_time_ring_params *p, const float *in, float *out)
{
    msf_time_ring_bytes(p->state, (size_t)p->kept_values * sizeof(float), (const uint8_t *)(in + p->skip_values),
                        (size_t)p->new_values * sizeof(float), (uint8_t *)out);
}
