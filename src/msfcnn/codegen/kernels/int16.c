/*
 * 16x8 kernels: int16 activations (symmetric, zero point 0), int8 weights, int64 biases, as
 * TFLite's 16x8 reference kernels compute them (the numpy kernels of src/msfcnn/ops/ with
 * KernelContext.is_int16; docs/numerics.md). Plain loops over the views, with no DSP paths: sums
 * are exact in int64, so any order gives the same result.
 *
 * CONV_2D / DEPTHWISE_CONV_2D sum input x weight in int64, add the int64 bias and requantise with
 * the 64-bit MultiplyByQuantizedMultiplier (MSF_ROUND_WIDE); FULLY_CONNECTED likewise, or with ruy's
 * one rounding (MSF_ROUND_SINGLE) under LiteRT. ADD is the int8 arithmetic with a left shift of
 * 15; pooling and MEAN are the int8 arithmetic with int16 values and clamps. SOFTMAX interpolates
 * two tables (exp and 1 / (1 + x)).
 */
#include <math.h>

#include "dilated.h"
#include "int16.h"
#include "quantize_rounding.h"
#include "window.h"

static int16_t *at_s16(const msf_view *v, int32_t r, int32_t c, int32_t ch)
{
    return (int16_t *)v->base + msf_offset(v, r, c, ch);
}

/* int64 accumulators live in the byte arena at any offset (see msf_load_i32). */
static int64_t load_i64(const void *base, int32_t i)
{
    int64_t value;
    memcpy(&value, (const char *)base + 8 * (ptrdiff_t)i, sizeof value);
    return value;
}

static void store_i64(void *base, int32_t i, int64_t value)
{
    memcpy((char *)base + 8 * (ptrdiff_t)i, &value, sizeof value);
}

static int16_t clamp_s16(int64_t v, int32_t lo, int32_t hi)
{
    return (int16_t)(v < lo ? lo : v > hi ? hi : v);
}

/* TFLite's MultiplyByQuantizedMultiplier(int64_t x, int32_t multiplier, int shift): the
   significand reduced to 16 bits (rounded half up, at most 0x7FFF), then x times it shifted right
   by 15 - shift with one rounding, half up. |x| < 2^47, so the product fits in int64. */
static int64_t mul_wide(int64_t x, int32_t multiplier, int32_t shift)
{
    const int64_t reduced = multiplier < 0x7FFF0000 ? ((int64_t)multiplier + (1 << 15)) >> 16 : 0x7FFF;
    const int32_t total = 15 - shift;
    return asr64(x * reduced + ((int64_t)1 << (total - 1)), total);
}

/* An accumulator to an output value: rescale with `rounding`, clamp. */
static int16_t output_s16(int64_t acc, int32_t multiplier, int32_t shift, int32_t rounding, int32_t lo, int32_t hi)
{
    if (rounding == MSF_ROUND_WIDE) {
        return clamp_s16(mul_wide(acc, multiplier, shift), lo, hi);
    }
    /* FULLY_CONNECTED under LiteRT (MSF_ROUND_SINGLE): a real layer's sums fit in int32 */
    return clamp_s16(msf_mul_by_quantized_mult((int32_t)acc, multiplier, shift, rounding), lo, hi);
}

/* ---- CONV_2D, DEPTHWISE_CONV_2D ------------------------------------------------------------ */

static int64_t conv_sum(const msf_conv2d_s16_params *p, const msf_view *in, const msf_pixel *px, int32_t o)
{
    int64_t acc = p->bias != NULL ? p->bias[o] : 0;
    int32_t i, j, ch;
    for (i = px->i_lo; i < px->i_hi; ++i) {
        for (j = px->j_lo; j < px->j_hi; ++j) {
            const int16_t *src = at_s16(in, px->y0 + i, px->x0 + j, 0);
            const int8_t *w = p->weights + (((ptrdiff_t)o * p->kh + i) * p->kw + j) * p->in_c;
            for (ch = 0; ch < p->in_c; ++ch) {
                acc += (int32_t)src[ch] * w[ch];
            }
        }
    }
    return acc;
}

static int64_t depthwise_sum(const msf_conv2d_s16_params *p, const msf_view *in, const msf_pixel *px, int32_t o)
{
    int64_t acc = p->bias != NULL ? p->bias[o] : 0;
    const int32_t ch = o / p->depth_multiplier;
    int32_t i, j;
    for (i = px->i_lo; i < px->i_hi; ++i) {
        for (j = px->j_lo; j < px->j_hi; ++j) {
            acc += (int32_t)*at_s16(in, px->y0 + i, px->x0 + j, ch) * p->weights[(i * p->kw + j) * p->out_c + o];
        }
    }
    return acc;
}

/* What a window op computes at one output pixel: all its channels, into dst. */
typedef void (*pixel_fn)(const void *params, const msf_view *in, const msf_pixel *px, int16_t *dst);

/* Every pixel of the output region [r0, r1) x [c0, c1) through `pixel`. */
static void each_pixel(const msf_window_shape *shape, pixel_fn pixel, const void *params, const msf_view *in,
                       msf_view *out, int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    msf_pixels it;
    msf_pixel px;
    msf_pixels_start(&it, shape, r0, r1, c0, c1);
    while (msf_pixels_next(&it, &px)) {
        pixel(params, in, &px, at_s16(out, px.r, px.c, 0));
    }
}

static void conv_pixel(const void *params, const msf_view *in, const msf_pixel *px, int16_t *dst)
{
    const msf_conv2d_s16_params *p = (const msf_conv2d_s16_params *)params;
    int32_t o;
    for (o = 0; o < p->out_c; ++o) {
        dst[o] = output_s16(conv_sum(p, in, px, o), p->mult[o], p->shift[o], p->rounding, p->act_min, p->act_max);
    }
}

static void depthwise_pixel(const void *params, const msf_view *in, const msf_pixel *px, int16_t *dst)
{
    const msf_conv2d_s16_params *p = (const msf_conv2d_s16_params *)params;
    int32_t o;
    for (o = 0; o < p->out_c; ++o) {
        dst[o] = output_s16(depthwise_sum(p, in, px, o), p->mult[o], p->shift[o], p->rounding, p->act_min,
                            p->act_max);
    }
}

void msf_conv2d_s16 MSF_REGION_ARGS(msf_conv2d_s16_params)
{
    const msf_window_shape shape = MSF_WINDOW_SHAPE(p);
    each_pixel(&shape, conv_pixel, p, in, out, r0, r1, c0, c1);
}

void msf_depthwise_conv2d_s16 MSF_REGION_ARGS(msf_depthwise_conv2d_s16_params)
{
    const msf_window_shape shape = MSF_WINDOW_SHAPE(p);
    each_pixel(&shape, depthwise_pixel, p, in, out, r0, r1, c0, c1);
}

/* A dilated window's sum for output channel o at pixel px (its taps' clipping in taps): tap (i, j)
   reads (y0 + i * dilation_h, x0 + j * dilation_w), all in_c channels for a convolution, channel
   o / depth_multiplier for a depthwise one. */
static int64_t dilated_sum(const msf_conv2d_dilated_s16_params *q, const msf_view *in, const msf_pixel *px, int32_t o,
                           int depthwise)
{
    const msf_conv2d_s16_params *p = &q->op;
    const int32_t values = depthwise ? 1 : p->in_c, ch0 = depthwise ? o / p->depth_multiplier : 0;
    int64_t acc = p->bias != NULL ? p->bias[o] : 0;
    int32_t i, j, ch;
    for (i = px->i_lo; i < px->i_hi; ++i) {
        for (j = px->j_lo; j < px->j_hi; ++j) {
            const int16_t *src = at_s16(in, px->y0 + i * q->dilation_h, px->x0 + j * q->dilation_w, ch0);
            const int8_t *w = depthwise ? p->weights + (i * p->kw + j) * p->out_c + o
                                        : p->weights + (((ptrdiff_t)o * p->kh + i) * p->kw + j) * p->in_c;
            for (ch = 0; ch < values; ++ch) {
                acc += (int32_t)src[ch] * w[ch];
            }
        }
    }
    return acc;
}

static void dilated_pixel(const msf_conv2d_dilated_s16_params *q, const msf_view *in, const msf_pixel *window,
                          int16_t *dst, int depthwise)
{
    const msf_conv2d_s16_params *p = &q->op;
    msf_pixel px = *window;
    int32_t o;
    msf_dilated_tap_range(px.y0, p->kh, q->dilation_h, p->in_h, &px.i_lo, &px.i_hi);
    msf_dilated_tap_range(px.x0, p->kw, q->dilation_w, p->in_w, &px.j_lo, &px.j_hi);
    for (o = 0; o < p->out_c; ++o) {
        dst[o] = output_s16(dilated_sum(q, in, &px, o, depthwise), p->mult[o], p->shift[o], p->rounding, p->act_min,
                            p->act_max);
    }
}

static void dilated_conv_pixel(const void *params, const msf_view *in, const msf_pixel *px, int16_t *dst)
{
    dilated_pixel((const msf_conv2d_dilated_s16_params *)params, in, px, dst, 0);
}

static void dilated_depthwise_pixel(const void *params, const msf_view *in, const msf_pixel *px, int16_t *dst)
{
    dilated_pixel((const msf_conv2d_dilated_s16_params *)params, in, px, dst, 1);
}

/* The pixels of a dilated window op: its window spans the extent. */
static void each_dilated_pixel(const msf_conv2d_dilated_s16_params *q, pixel_fn pixel, const msf_view *in,
                               msf_view *out, int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    const msf_conv2d_s16_params *p = &q->op;
    const msf_window_shape shape = { p->in_h, p->in_w, msf_dilated_extent(p->kh, q->dilation_h),
                                     msf_dilated_extent(p->kw, q->dilation_w), p->stride_h, p->stride_w, p->pad_top,
                                     p->pad_left };
    each_pixel(&shape, pixel, q, in, out, r0, r1, c0, c1);
}

void msf_conv2d_dilated_s16 MSF_REGION_ARGS(msf_conv2d_dilated_s16_params)
{
    each_dilated_pixel(p, dilated_conv_pixel, in, out, r0, r1, c0, c1);
}

void msf_depthwise_conv2d_dilated_s16 MSF_REGION_ARGS(msf_depthwise_conv2d_dilated_s16_params)
{
    each_dilated_pixel(p, dilated_depthwise_pixel, in, out, r0, r1, c0, c1);
}

/* Written over its own input a channel at a time (depth multiplier 1): channel c of every output
   pixel into `plane`, then the plane over channel c of the output, whose input no later channel
   reads. */
void msf_depthwise_conv2d_inplace_s16(const msf_depthwise_conv2d_s16_params *p, const msf_view *in, msf_view *out,
                                      int16_t *plane, int32_t out_h, int32_t out_w)
{
    const msf_window_shape shape = MSF_WINDOW_SHAPE(p);
    int32_t c, k;
    for (c = 0; c < p->out_c; ++c) {
        msf_pixels it;
        msf_pixel px;
        msf_pixels_start(&it, &shape, 0, out_h, 0, out_w);
        for (k = 0; msf_pixels_next(&it, &px); ++k) {
            plane[k] = output_s16(depthwise_sum(p, in, &px, c), p->mult[c], p->shift[c], p->rounding,
                                  p->act_min, p->act_max);
        }
        for (k = 0; k < out_h * out_w; ++k) {
            *at_s16(out, k / out_w, k % out_w, c) = plane[k];
        }
    }
}

/* ---- MAX_POOL_2D, AVERAGE_POOL_2D ---------------------------------------------------------- */

static void pool_pixel(const void *params, const msf_view *in, const msf_pixel *px, int16_t *dst)
{
    const msf_pool2d_params *p = (const msf_pool2d_params *)params;
    const int32_t taps = (px->i_hi - px->i_lo) * (px->j_hi - px->j_lo);
    const int32_t count = p->count_include_pad ? p->kh * p->kw : taps;
    int32_t ch, i, j;
    for (ch = 0; ch < p->channels; ++ch) {
        int32_t acc = p->max ? -32768 : 0;
        for (i = px->i_lo; i < px->i_hi; ++i) {
            for (j = px->j_lo; j < px->j_hi; ++j) {
                const int32_t v = *at_s16(in, px->y0 + i, px->x0 + j, ch);
                acc = p->max ? (v > acc ? v : acc) : acc + v;
            }
        }
        if (!p->max) {  /* the quotient rounded half away from zero */
            acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
        }
        dst[ch] = clamp_s16(acc, p->act_min, p->act_max);
    }
}

void msf_pool2d_s16 MSF_REGION_ARGS(msf_pool2d_params)
{
    const msf_window_shape shape = MSF_WINDOW_SHAPE(p);
    each_pixel(&shape, pool_pixel, p, in, out, r0, r1, c0, c1);
}

/* ---- ADD ------------------------------------------------------------------------------------ */

/* An input rescaled to the common scale (2^15 x twice the larger input scale). */
static int32_t add_input(int32_t v, int32_t offset, const msf_add_params *p, int32_t mult, int32_t shift)
{
    return msf_mul_by_quantized_mult((v + offset) * (1 << p->left_shift), mult, shift, p->rounding);
}

void msf_add_s16 MSF_REGION2_ARGS(msf_add_params)
{
    int32_t r, c, ch;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const int16_t *a = at_s16(in1, r, c, 0), *b = at_s16(in2, r, c, 0);
            int16_t *dst = at_s16(out, r, c, 0);
            for (ch = 0; ch < p->channels; ++ch) {
                const int32_t sum = add_input(a[ch], p->input1_offset, p, p->input1_mult, p->input1_shift)
                                  + add_input(b[ch], p->input2_offset, p, p->input2_mult, p->input2_shift);
                dst[ch] = clamp_s16((int64_t)msf_mul_by_quantized_mult(sum, p->output_mult, p->output_shift,
                                                                       p->rounding) + p->output_offset,
                                    p->act_min, p->act_max);
            }
        }
    }
}

/* ---- MEAN over H and W, AVERAGE_POOL_2D of one window --------------------------------------- */

/* Channel ch summed over rows [r0, r1) x columns [c0, c1), clipped to the pool's window. */
static int64_t channel_sum(const msf_global_avg_pool_params *p, const msf_view *in, int32_t ch,
                           int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    int64_t total = 0;
    int32_t r, c;
    r1 = r1 < p->win_h ? r1 : p->win_h;  /* a pool's window may leave the last rows or columns out */
    c1 = c1 < p->win_w ? c1 : p->win_w;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            total += *at_s16(in, r, c, ch);
        }
    }
    return total;
}

void msf_global_avg_pool_accumulate_s16(const msf_global_avg_pool_params *p, const msf_view *in,
                                        void *acc, int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    int32_t ch;
    for (ch = 0; ch < p->channels; ++ch) {
        store_i64(acc, ch, load_i64(acc, ch) + channel_sum(p, in, ch, r0, r1, c0, c1));
    }
}

/* The mean of a channel from its complete sum (below 2^31 for any map of up to 2^16 pixels). */
static int16_t mean_one_s16(const msf_global_avg_pool_params *p, int64_t total)
{
    int64_t v;
    if (p->pool) {  /* AVERAGE_POOL_2D: the quotient rounded half away from zero */
        v = total > 0 ? (total + p->count / 2) / p->count : (total - p->count / 2) / p->count;
        return clamp_s16(v, p->act_min, p->act_max);
    }
    /* the reference QuantizedMeanOrSum (16x8 MEAN runs it under LiteRT too) */
    v = msf_mul_by_quantized_mult((int32_t)(total - (int64_t)p->input_zero_point * p->count), p->mult, p->shift,
                                  MSF_ROUND_DOUBLE);
    return clamp_s16(v + p->output_offset, -32768, 32767);
}

void msf_global_avg_pool_finish_s16(const msf_global_avg_pool_params *p, const void *acc, int16_t *out)
{
    int32_t ch;
    for (ch = 0; ch < p->channels; ++ch) {
        out[ch] = mean_one_s16(p, load_i64(acc, ch));
    }
}

void msf_global_avg_pool_s16(const msf_global_avg_pool_params *p, const msf_view *in, int16_t *out)
{
    int32_t ch;
    for (ch = 0; ch < p->channels; ++ch) {
        out[ch] = mean_one_s16(p, channel_sum(p, in, ch, 0, p->win_h, 0, p->win_w));
    }
}

/* ---- FULLY_CONNECTED ------------------------------------------------------------------------ */

/* Unit u's dot product over the input rows [r0, r1) x columns [c0, c1) (all channels). */
static int64_t unit_sum(const msf_dense_s16_params *p, const msf_view *in, int32_t u,
                        int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    const int8_t *wu = p->weights + (ptrdiff_t)u * p->in_h * p->in_w * p->in_c;
    int64_t total = 0;
    int32_t r, c, ch;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const int16_t *src = at_s16(in, r, c, 0);
            const int8_t *w = wu + (ptrdiff_t)(r * p->in_w + c) * p->in_c;
            for (ch = 0; ch < p->in_c; ++ch) {
                total += (int32_t)src[ch] * w[ch];
            }
        }
    }
    return total;
}

static int16_t dense_one_s16(const msf_dense_s16_params *p, int32_t u, int64_t total)
{
    const int32_t k = p->per_channel ? u : 0;
    if (p->bias != NULL) {
        total += p->bias[u];
    }
    return output_s16(total, p->mult[k], p->shift[k], p->rounding, p->act_min, p->act_max);
}

void msf_dense_accumulate_s16(const msf_dense_s16_params *p, const msf_view *in, void *acc,
                              int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    int32_t u;
    for (u = 0; u < p->units; ++u) {
        store_i64(acc, u, load_i64(acc, u) + unit_sum(p, in, u, r0, r1, c0, c1));
    }
}

void msf_dense_finish_s16(const msf_dense_s16_params *p, const void *acc, int16_t *out)
{
    int32_t u;
    for (u = 0; u < p->units; ++u) {
        out[u] = dense_one_s16(p, u, load_i64(acc, u));
    }
}

void msf_dense_s16(const msf_dense_s16_params *p, const msf_view *in, int16_t *out)
{
    int32_t u;
    for (u = 0; u < p->units; ++u) {
        out[u] = dense_one_s16(p, u, unit_sum(p, in, u, 0, p->in_h, 0, p->in_w));
    }
}

/* ---- SOFTMAX -------------------------------------------------------------------------------- */

/* generic_int16_table_lookup: 512 segments of 128 values, linear between two entries. */
static int32_t lookup_s16(const int16_t *table, int32_t value)
{
    const int32_t index = 256 + (int32_t)asr64(value, 7);
    const int32_t base = table[index], slope = table[index + 1] - base;
    return base + (int32_t)asr64((int64_t)slope * (value & 0x7F) + 64, 7);
}

static int32_t clamp16(int32_t v)
{
    return v < -32768 ? -32768 : v > 32767 ? 32767 : v;
}

static void softmax_row_s16(const msf_softmax_s16_params *p, const int16_t *in, int16_t *out)
{
    int32_t j, max = -32768, sum = 0, headroom = 0, right;
    int32_t shifted, reciprocal;
    for (j = 0; j < p->depth; ++j) {
        max = in[j] > max ? in[j] : max;
    }
    for (j = 0; j < p->depth; ++j) {  /* exp(x - max) in Q0.15, kept in out until the sum is known */
        const int32_t scaled = msf_mul_by_quantized_mult(in[j] - max, p->input_mult, p->input_shift,
                                                         MSF_ROUND_DOUBLE);
        out[j] = (int16_t)lookup_s16(p->exp_lut, clamp16(scaled + 32767));
        sum += out[j];
    }
    while (headroom < 32 && !((uint32_t)sum & (0x80000000u >> headroom))) {
        ++headroom;  /* leading zeros of the (positive) sum */
    }
    shifted = (int32_t)((((int64_t)sum << (headroom - 1)) + (1 << 13)) >> 14);
    reciprocal = lookup_s16(p->reciprocal_lut, clamp16(shifted - ((1 << 15) + (1 << 16))));
    right = 31 - headroom;
    for (j = 0; j < p->depth; ++j) {
        const int64_t v = ((int64_t)out[j] * reciprocal + ((int64_t)1 << (right - 1))) >> right;
        out[j] = (int16_t)(v < 0 ? 0 : v > 32767 ? 32767 : v);
    }
}

void msf_softmax_s16(const msf_softmax_s16_params *p, const int16_t *in, int16_t *out)
{
    int32_t i;
    for (i = 0; i < p->outer; ++i) {
        softmax_row_s16(p, in + (ptrdiff_t)i * p->depth, out + (ptrdiff_t)i * p->depth);
    }
}

/* ---- QUANTIZE / DEQUANTIZE at float32 edges -------------------------------------------------- */

/* `rounded` plus the zero point, saturated to int16. Beyond int64 (and NaN) the numpy kernel's
   conversion gives INT64_MIN, which the zero point leaves at the low end or wraps to the high.
   The bounds (+-2^63, +-1e6) are exact in float too. */
static int16_t saturate_s16(msf_quantize_real rounded, int32_t zero_point)
{
    if (!(rounded > (msf_quantize_real)-0x1p63 && rounded < (msf_quantize_real)0x1p63)) {
        return zero_point < 0 ? 32767 : -32768;
    }
    rounded = rounded > (msf_quantize_real)1.0e6 ? (msf_quantize_real)1.0e6
              : rounded < (msf_quantize_real)-1.0e6 ? (msf_quantize_real)-1.0e6 : rounded;
    return clamp_s16((int64_t)(int32_t)rounded + zero_point, -32768, 32767);
}

/* As msf_quantize_f32_one rounds (quantize_rounding.h: without double where it runs in software). */
int16_t msf_quantize_f32_s16_one(float x, float scale, int32_t zero_point, int vector)
{
    if (vector) {  /* x * float32(1 / scale), rounded half to even */
        return saturate_s16(msf_round_half_even(x * (1.0f / scale)), zero_point);
    }
#ifdef MSF_QUANTIZE_IN_FLOAT
    return saturate_s16(msf_divided_half_away(x, scale), zero_point);
#else  /* x / scale in double, rounded half away from zero */
    return saturate_s16(msf_round_half_away((double)x / (double)scale), zero_point);
#endif
}

float msf_dequantize_s16_one(int16_t q, float scale, int32_t zero_point, int vector)
{
    const float value = (float)q, zero = (float)zero_point;
    if (vector) {  /* q * scale - zero_point * scale, three float32 roundings */
        const float a = value * scale, b = zero * scale;
        return a - b;
    }
    return (value - zero) * scale;
}

void msf_quantize_f32_s16(const float *in, int16_t *out, int32_t n, float scale, int32_t zero_point)
{
    const int32_t vector_end = n / 8 * 8;
    int32_t i;
    for (i = 0; i < n; ++i) {
        out[i] = msf_quantize_f32_s16_one(in[i], scale, zero_point, i < vector_end);
    }
}

void msf_dequantize_s16(const int16_t *in, float *out, int32_t n, float scale, int32_t zero_point)
{
    const int32_t vector_end = n / 8 * 8;
    int32_t i;
    for (i = 0; i < n; ++i) {
        out[i] = msf_dequantize_s16_one(in[i], scale, zero_point, i < vector_end);
    }
}
