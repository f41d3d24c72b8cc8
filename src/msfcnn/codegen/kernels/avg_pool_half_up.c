/*
 * AVERAGE_POOL_2D of uint8 TFLite models over an output region (src/msfcnn/ops/pool2d.py,
 * AvgPool2DHalfUp).
 *
 * TFLite's uint8 average pool sums the in-bounds taps of non-negative uint8 values and divides
 * by their number rounding half up: (sum + count / 2) / count. The graph holds the values as int8
 * (value - 128), whose sum is the uint8 sum - 128 * count: the same quotient is the floor of
 * (sum + count / 2) / count, then the fused activation's clamp. (The int8 pool, pool2d.c, rounds
 * half away from zero instead: the two differ on ties below zero.)
 * Loops (msf_window, window.c): output pixel, its in-bounds taps (a run per tap), channel, tap.
 */
#include "avg_pool_half_up.h"
#include "window.h"

static void sum_taps(const void *params, const msf_runs *taps, int32_t ch0, int32_t n, const int32_t *start,
                     msf_block *acc)
{
    int32_t k, t;
    (void)params;
    for (k = 0; k < n; ++k) {
        int32_t sum = start != NULL ? start[k] : 0;
        for (t = 0; t < taps->count; ++t) {
            sum += ((const int8_t *)taps->src[t])[ch0 + k];
        }
        acc->i32[k] = sum;
    }
}

/* floor(x / d) for d > 0 (C's division truncates toward zero). */
static int32_t floor_div(int32_t x, int32_t d)
{
    return x >= 0 ? x / d : -((-x + d - 1) / d);
}

static void average(const void *params, const msf_pixel *px, int32_t ch0, int32_t n, const msf_block *acc,
                    void *dst)
{
    const msf_avg_pool_half_up_params *p = (const msf_avg_pool_half_up_params *)params;
    const int32_t taps = (px->i_hi - px->i_lo) * (px->j_hi - px->j_lo);
    int32_t k;
    for (k = 0; k < n; ++k) {
        const int32_t v = taps <= 0 ? 0 : floor_div(acc->i32[k] + taps / 2, taps);
        ((int8_t *)dst)[ch0 + k] = msf_clamp_s8(v, 0, p->act_min, p->act_max);
    }
}

void msf_avg_pool_half_up_s8 MSF_REGION_ARGS(msf_avg_pool_half_up_params)
{
    const msf_window_op op = {
        .shape = MSF_WINDOW_SHAPE(p), .channels = p->channels, .element = (int32_t)sizeof(int8_t),
        .tap_values = p->channels, .tap_weights = 0, .merge_taps = 0, .bias = NULL, .accumulate = sum_taps,
        .params = p, .finish = average, .stage = NULL
    };
    msf_window(&op, in, out, r0, r1, c0, c1);
}
