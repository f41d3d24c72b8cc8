/* A ring of the last rows along time, for a streaming model (time_ring.c). */
#ifndef MSF_TIME_RING_H
#define MSF_TIME_RING_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* The state (kept_values, one of the network's state buffers in the arena's persistent region)
   holds the last rows of the input stream. out = the state's rows, then new_values of the input
   from value skip_values on; the state then keeps the last kept_values of out. Without state
   (kept_values 0, state NULL) it only drops the input's first skip_values. */
typedef struct {
    void *state;
    int32_t kept_values, skip_values, new_values;
} msf_time_ring_params;

void msf_time_ring_s8(const msf_time_ring_params *p, const int8_t *in, int8_t *out);
void msf_time_ring_f32(const msf_time_ring_params *p, const float *in, float *out);

MSF_END_DECLS

#endif /* MSF_TIME_RING_H */
