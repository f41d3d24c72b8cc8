/*
 * MEAN over H and W (global average pool) as a streamed tail (src/msfcnn/ops/global_avg_pool.py).
 *
 * accumulate adds a region of the (H, W, C) input into per-channel int32 sums of the raw int8
 * values; finish turns the complete sums into the output vector. The interpreter runs one of two
 * int8 kernels, and so does finish (p->keepdims):
 * - keep_dims (optimized_integer_ops::Mean): one multiplier folding in_scale / (count * out_scale),
 *   set up in float32, and a float32-derived bias standing for the zero points (p->output_offset).
 *   Channels are processed 16 at a time by NEON code (run through NEON_2_SSE on x86), whose
 *   requantisation rounds ties up like ruy, and the remaining channels by scalar code rounding
 *   away from zero: channels below p->vector_channels use MSF_ROUND_RUY, the rest MSF_ROUND_DOUBLE.
 * - otherwise (reference QuantizedMeanOrSum): the exact correction sum - in_zp * count, then
 *   in_scale / out_scale with 1/count folded in by an integer division (p->mult, p->shift),
 *   MSF_ROUND_DOUBLE, plus the output zero point.
 * - AVERAGE_POOL_2D with one window over the whole map (p->pool): the quotient of the raw sum
 *   rounded half away from zero, then the pool's fused activation (float: divided, activated).
 * msf_global_avg_pool_s8 / _f32 sum and finish at once, channel by channel (int8: four channels at a
 * time), without an accumulator.
 */
#include "global_avg_pool.h"
#include "numerics.h"

void msf_global_avg_pool_accumulate_s8(const msf_global_avg_pool_params *p, const msf_view *in,
                                       void *acc, int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    int32_t r, c, ch;
    r1 = r1 < p->win_h ? r1 : p->win_h;  /* a pool's window may leave the last rows or columns out */
    c1 = c1 < p->win_w ? c1 : p->win_w;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const int8_t *src = msf_at_s8(in, r, c, 0);
            for (ch = 0; ch < p->channels; ++ch) {
                msf_store_i32(acc, ch, msf_load_i32(acc, ch) + src[ch]);
            }
        }
    }
}

/* The mean of channel ch from its complete sum. */
static int8_t finish_one_s8(const msf_global_avg_pool_params *p, int32_t ch, int32_t total)
{
    int32_t v;
    if (p->pool) {  /* AVERAGE_POOL_2D: raw values, the quotient rounded half away from zero */
        v = total > 0 ? (total + p->count / 2) / p->count : (total - p->count / 2) / p->count;
        return (int8_t)(v < p->act_min ? p->act_min : v > p->act_max ? p->act_max : v);
    }
    if (p->keepdims) {
        const int32_t rounding = ch < p->vector_channels ? MSF_ROUND_RUY : MSF_ROUND_DOUBLE;
        v = msf_mul_by_quantized_mult(total, p->mult, p->shift, rounding);
    } else {
        v = msf_mul_by_quantized_mult(total - p->input_zero_point * p->count, p->mult, p->shift, MSF_ROUND_DOUBLE);
    }
    return msf_clamp_s8(v, p->output_offset, -128, 127);
}

void msf_global_avg_pool_finish_s8(const msf_global_avg_pool_params *p, const void *acc, int8_t *out)
{
    int32_t ch;
    for (ch = 0; ch < p->channels; ++ch) {
        out[ch] = finish_one_s8(p, ch, msf_load_i32(acc, ch));
    }
}

void msf_global_avg_pool_s8(const msf_global_avg_pool_params *p, const msf_view *in, int8_t *out)
{
    int32_t r, c, ch;
    /* four channels at a time, their sums in registers: a pixel's address is found once for four values */
    for (ch = 0; ch + 4 <= p->channels; ch += 4) {
        int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (r = 0; r < p->win_h; ++r) {
            for (c = 0; c < p->win_w; ++c) {
                const int8_t *src = msf_at_s8(in, r, c, ch);
                s0 += src[0];
                s1 += src[1];
                s2 += src[2];
                s3 += src[3];
            }
        }
        out[ch] = finish_one_s8(p, ch, s0);
        out[ch + 1] = finish_one_s8(p, ch + 1, s1);
        out[ch + 2] = finish_one_s8(p, ch + 2, s2);
        out[ch + 3] = finish_one_s8(p, ch + 3, s3);
    }
    for (; ch < p->channels; ++ch) {
        int32_t total = 0;
        for (r = 0; r < p->win_h; ++r) {
            for (c = 0; c < p->win_w; ++c) {
                total += *msf_at_s8(in, r, c, ch);
            }
        }
        out[ch] = finish_one_s8(p, ch, total);
    }
}

void msf_global_avg_pool_accumulate_f32(const msf_global_avg_pool_params *p, const msf_view *in,
                                        float *acc, int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    int32_t r, c, ch;
    r1 = r1 < p->win_h ? r1 : p->win_h;
    c1 = c1 < p->win_w ? c1 : p->win_w;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const float *src = msf_at_f32(in, r, c, 0);
            for (ch = 0; ch < p->channels; ++ch) {
                acc[ch] += src[ch];
            }
        }
    }
}

void msf_global_avg_pool_finish_f32(const msf_global_avg_pool_params *p, const float *acc, float *out)
{
    int32_t ch;
    for (ch = 0; ch < p->channels; ++ch) {
        out[ch] = msf_apply_activation_f32(acc[ch] / (float)p->count, p->activation);
    }
}

void msf_global_avg_pool_f32(const msf_global_avg_pool_params *p, const msf_view *in, float *out)
{
    int32_t r, c, ch;
    for (ch = 0; ch < p->channels; ++ch) {
        float total = 0.0f;
        for (r = 0; r < p->win_h; ++r) {
            for (c = 0; c < p->win_w; ++c) {
                total += *msf_at_f32(in, r, c, ch);
            }
        }
        out[ch] = msf_apply_activation_f32(total / (float)p->count, p->activation);
    }
}
