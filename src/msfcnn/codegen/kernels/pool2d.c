/*
 * MAX_POOL_2D and AVERAGE_POOL_2D over an output region (src/msfcnn/ops/pool2d.py).
 *
 * int8 pools work on the raw quantised values (input and output share their quantisation) and
 * end with the fused activation's clamp.
 * - max: padding never wins (TFLite ignores out-of-bounds taps), so only in-bounds taps are read;
 *   the running maximum starts at the type's minimum, as the numpy kernel's padding fill.
 * - average: TFLite's int8 AVERAGE_POOL_2D sums the in-bounds taps in int32 and divides by their
 *   number, rounding half away from zero: (sum +- count / 2) / count with C's truncating division.
 *   ONNX's count_include_pad divides by kh * kw instead.
 * float: the maximum (a NaN wins, as in np.maximum) or the in-bounds taps summed in (row, column)
 * order and divided by the count in float32, then the activation.
 * Loops (msf_window, window.c): output pixel, its in-bounds taps located once (a run per tap), block
 * of channels, channel, tap. One reduction and one output step serve the four kernels, compiled
 * for each (max or average, int8 or float) from constant flags.
 */
#include <math.h>

#include "pool2d.h"
#include "window.h"

/* What the hooks are told: the params, and the element type. */
typedef struct {
    const msf_pool2d_params *p;
    int is_float;
} pool_kind;

/* acc = the window's maximum (max) or sum for channels ch0 + k, k < n, continued from acc (start
   not NULL) or started from the least value or 0. int8 values in int32; float values in float,
   where a NaN wins the maximum, as in np.maximum. */
static MSF_ALWAYS_INLINE void reduce(const msf_runs *taps, int32_t ch0, int32_t n, const int32_t *start,
                                     msf_block *acc, const int max, const int is_float)
{
    int32_t k, t;
    for (k = 0; k < n; ++k) {
        int32_t i = max ? -128 : 0;
        float f = max ? -INFINITY : 0.0f;  /* the numpy kernel pads with -inf */
        if (start != NULL && is_float) {
            f = acc->f32[k];
        } else if (start != NULL) {
            i = acc->i32[k];
        }
        for (t = 0; t < taps->count; ++t) {
            if (is_float) {
                const float v = ((const float *)taps->src[t])[ch0 + k];
                f = !max ? f + v : v > f || v != v ? v : f;
            } else {
                const int32_t v = ((const int8_t *)taps->src[t])[ch0 + k];
                i = !max ? i + v : v > i ? v : i;
            }
        }
        if (is_float) {
            acc->f32[k] = f;
        } else {
            acc->i32[k] = i;
        }
    }
}

static void accumulate(const void *params, const msf_runs *taps, int32_t ch0, int32_t n, const int32_t *start,
                       msf_block *acc)
{
    const pool_kind *kind = (const pool_kind *)params;
    if (kind->is_float) {
        if (kind->p->max) {
            reduce(taps, ch0, n, start, acc, 1, 1);
        } else {
            reduce(taps, ch0, n, start, acc, 0, 1);
        }
    } else if (kind->p->max) {
        reduce(taps, ch0, n, start, acc, 1, 0);
    } else {
        reduce(taps, ch0, n, start, acc, 0, 0);
    }
}

/* The output values of channels ch0 + k from the complete acc: the maximum, or the sum divided by
   the taps counted (int8: rounding half away from zero); then the int8 clamp or the float
   activation. */
static MSF_ALWAYS_INLINE void output(const msf_pool2d_params *p, const msf_pixel *px, int32_t ch0, int32_t n,
                                     const msf_block *acc, void *dst, const int max, const int is_float)
{
    /* the taps an average divides by */
    const int32_t taps = p->count_include_pad ? p->kh * p->kw : (px->i_hi - px->i_lo) * (px->j_hi - px->j_lo);
    int32_t k;
    for (k = 0; k < n; ++k) {
        if (is_float) {
            const float v = max ? acc->f32[k] : acc->f32[k] / (float)taps;
            ((float *)dst)[ch0 + k] = msf_apply_activation_f32(v, p->activation);
        } else {
            const int32_t sum = acc->i32[k];
            int32_t v = sum;
            if (!max) {
                v = taps <= 0 ? 0 : sum >= 0 ? (sum + taps / 2) / taps : -((-sum + taps / 2) / taps);
            }
            ((int8_t *)dst)[ch0 + k] = msf_clamp_s8(v, 0, p->act_min, p->act_max);
        }
    }
}

static void finish(const void *params, const msf_pixel *px, int32_t ch0, int32_t n, const msf_block *acc, void *dst)
{
    const pool_kind *kind = (const pool_kind *)params;
    if (kind->is_float) {
        if (kind->p->max) {
            output(kind->p, px, ch0, n, acc, dst, 1, 1);
        } else {
            output(kind->p, px, ch0, n, acc, dst, 0, 1);
        }
    } else if (kind->p->max) {
        output(kind->p, px, ch0, n, acc, dst, 1, 0);
    } else {
        output(kind->p, px, ch0, n, acc, dst, 0, 0);
    }
}

/* Either pool, either element type: a run per tap, each reading every channel of its pixel.
   (Inlined into each caller, as conv2d.c's convolution.) */
static MSF_ALWAYS_INLINE void pool(const msf_pool2d_params *p, const msf_view *in, msf_view *out, int32_t r0,
                                   int32_t r1, int32_t c0, int32_t c1, const int is_float)
{
    const pool_kind kind = { p, is_float };
    const msf_window_op op = {
        .shape = MSF_WINDOW_SHAPE(p), .channels = p->channels,
        .element = is_float ? (int32_t)sizeof(float) : (int32_t)sizeof(int8_t), .tap_values = p->channels,
        .tap_weights = 0, .merge_taps = 0, .bias = NULL, .accumulate = accumulate, .params = &kind,
        .finish = finish, .stage = NULL
    };
    msf_window(&op, in, out, r0, r1, c0, c1);
}

void msf_pool2d_s8 MSF_REGION_ARGS(msf_pool2d_params)
{
    pool(p, in, out, r0, r1, c0, c1, 0);
}

void msf_pool2d_f32 MSF_REGION_ARGS(msf_pool2d_params)
{
    pool(p, in, out, r0, r1, c0, c1, 1);
}
