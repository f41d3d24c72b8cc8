/* A global average pool over a sliding window, kept as running sums (time_mean.c). */
#ifndef MSF_TIME_MEAN_H
#define MSF_TIME_MEAN_H

#include "msfcnn_common.h"
#include "global_avg_pool.h"

MSF_BEGIN_DECLS

/* State (three of the network's state buffers, in the arena's persistent region): rows, a ring of
   the window's last `window` rows of row_values int8 values each; sums, the int32 sum of each of
   the `channels` channels over those rows; slot, the ring's oldest row. Each of the input's
   new_rows rows replaces the oldest in the ring and in the sums; then the pool's output stage
   (msf_global_avg_pool_finish_s8, its params describing the whole window) writes the output. */
typedef struct {
    msf_global_avg_pool_params pool;
    int8_t *rows;
    int32_t *sums;
    int32_t *slot;
    int32_t row_values, channels, window, new_rows;
} msf_time_mean_params;

void msf_time_mean_s8(const msf_time_mean_params *p, const int8_t *in, int8_t *out);

MSF_END_DECLS

#endif /* MSF_TIME_MEAN_H */
