/*
 * TRANSPOSE_CONV over an output region (src/msfcnn/ops/transpose_conv.py). The runtimes scatter
 * each input pixel's products into a buffer of the output's size; integer sums are exact in any
 * order, so this kernel gathers them instead, with no buffer: output pixel (oy, ox) finds the taps
 * that reach it (tap (i, j) when oy + pad_top - i is a multiple of stride_h whose quotient is an
 * input row, and likewise for the column), and each output channel sums them over the input
 * channels. Then the bias and the output stage: int8, TFLite's per-channel requantisation
 * (LiteRT's vector code rounding the first vector_channels channels as ruy); 16x8, the 64-bit
 * MultiplyByQuantizedMultiplier; float, the activation (sums in another order than the runtimes':
 * results agree to rounding).
 *
 * Loops: output pixel; its reaching taps found (tap by tap); output channel; reaching tap; input
 * channel.
 */
#include "transpose_conv.h"

#include "numerics.h"

/* The geometry both params structs hold. */
typedef struct {
    int32_t in_h, in_w, in_c, kh, kw, stride_h, stride_w, pad_top, pad_left;
} geometry;

#define GEOMETRY(p) { (p)->in_h, (p)->in_w, (p)->in_c, (p)->kh, (p)->kw, (p)->stride_h, (p)->stride_w, \
                      (p)->pad_top, (p)->pad_left }

/* One output pixel's reaching taps: their input pixels' offsets (in elements) and their weights'
   offsets in an output channel's (kh, kw, in_c) weights. */
typedef struct {
    ptrdiff_t src[MSF_TRANSPOSE_CONV_TAPS];
    int32_t weight[MSF_TRANSPOSE_CONV_TAPS];
    int32_t count;
} taps;

static void reaching(const geometry *g, const msf_view *in, int32_t oy, int32_t ox, taps *t)
{
    int32_t i, j;
    t->count = 0;
    for (i = 0; i < g->kh; ++i) {
        const int32_t v = oy + g->pad_top - i;
        if (v < 0 || v % g->stride_h != 0 || v / g->stride_h >= g->in_h) {
            continue;
        }
        for (j = 0; j < g->kw; ++j) {
            const int32_t u = ox + g->pad_left - j;
            if (u >= 0 && u % g->stride_w == 0 && u / g->stride_w < g->in_w) {
                t->src[t->count] = msf_offset(in, v / g->stride_h, u / g->stride_w, 0);
                t->weight[t->count++] = (i * g->kw + j) * g->in_c;
            }
        }
    }
}

/* One output pixel, all its channels, from its reaching taps (each element type's arithmetic). */
typedef void (*pixel_fn)(const void *params, const msf_view *in, void *dst, const taps *t);

static void each_pixel(const void *params, const geometry *g, pixel_fn pixel, int32_t element, const msf_view *in,
                       msf_view *out, int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    taps t;
    int32_t r, c;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            reaching(g, in, r, c, &t);
            pixel(params, in, (char *)out->base + msf_offset(out, r, c, 0) * element, &t);
        }
    }
}

static void pixel_s8(const void *params, const msf_view *in, void *dst, const taps *t)
{
    const msf_transpose_conv_params *q = (const msf_transpose_conv_params *)params;
    const msf_conv2d_params *p = &q->conv;
    const int32_t in_c = p->in_c, patch = p->kh * p->kw * in_c, offset = p->input_offset;
    int32_t o, n, k;
    for (o = 0; o < p->out_c; ++o) {
        const int8_t *w = p->weights + (ptrdiff_t)o * patch;
        int32_t acc = p->bias != NULL ? p->bias[o] : 0;
        for (n = 0; n < t->count; ++n) {
            const int8_t *x = (const int8_t *)in->base + t->src[n], *wt = w + t->weight[n];
            for (k = 0; k < in_c; ++k) {
                acc += ((int32_t)x[k] + offset) * wt[k];
            }
        }
        msf_requantize_block_s8(&acc, 1, p->multiplier + o, p->right + o,
                                o < q->vector_channels ? MSF_ROUND_RUY : p->rounding, p->output_offset, p->act_min,
                                p->act_max, (int8_t *)dst + o);
    }
}

static void pixel_f32(const void *params, const msf_view *in, void *dst, const taps *t)
{
    const msf_conv2d_params *p = &((const msf_transpose_conv_params *)params)->conv;
    const int32_t in_c = p->in_c, patch = p->kh * p->kw * in_c;
    int32_t o, n, k;
    for (o = 0; o < p->out_c; ++o) {
        const float *w = p->weights_f32 + (ptrdiff_t)o * patch;
        float acc = 0.0f;
        for (n = 0; n < t->count; ++n) {
            const float *x = (const float *)in->base + t->src[n], *wt = w + t->weight[n];
            for (k = 0; k < in_c; ++k) {
                acc += x[k] * wt[k];
            }
        }
        ((float *)dst)[o] = msf_apply_activation_f32(acc + (p->bias_f32 != NULL ? p->bias_f32[o] : 0.0f),
                                                     p->activation);
    }
}

/* TFLite's MultiplyByQuantizedMultiplier(int64_t x, int32_t multiplier, int shift), as int16.c's:
   the significand cut to 16 bits (rounded half up, at most 0x7FFF), then one rounding shift; and
   the clamp. */
static int16_t output_s16(int64_t acc, int32_t multiplier, int32_t shift, int32_t lo, int32_t hi)
{
    const int64_t reduced = multiplier < 0x7FFF0000 ? ((int64_t)multiplier + (1 << 15)) >> 16 : 0x7FFF;
    const int32_t total = 15 - shift;
    const int64_t v = asr64(acc * reduced + ((int64_t)1 << (total - 1)), total);
    return (int16_t)(v < lo ? lo : v > hi ? hi : v);
}

static void pixel_s16(const void *params, const msf_view *in, void *dst, const taps *t)
{
    const msf_transpose_conv_s16_params *p = (const msf_transpose_conv_s16_params *)params;
    const int32_t in_c = p->in_c, patch = p->kh * p->kw * in_c;
    int32_t o, n, k;
    for (o = 0; o < p->out_c; ++o) {
        const int8_t *w = p->weights + (ptrdiff_t)o * patch;
        int64_t acc = p->bias != NULL ? p->bias[o] : 0;
        for (n = 0; n < t->count; ++n) {
            const int16_t *x = (const int16_t *)in->base + t->src[n];
            for (k = 0; k < in_c; ++k) {
                acc += (int32_t)x[k] * w[t->weight[n] + k];
            }
        }
        ((int16_t *)dst)[o] = output_s16(acc, p->mult[o], p->shift[o], p->act_min, p->act_max);
    }
}

void msf_transpose_conv_s8 MSF_REGION_ARGS(msf_transpose_conv_params)
{
    const geometry g = GEOMETRY(&p->conv);
    each_pixel(p, &g, pixel_s8, (int32_t)sizeof(int8_t), in, out, r0, r1, c0, c1);
}

void msf_transpose_conv_f32 MSF_REGION_ARGS(msf_transpose_conv_params)
{
    const geometry g = GEOMETRY(&p->conv);
    each_pixel(p, &g, pixel_f32, (int32_t)sizeof(float), in, out, r0, r1, c0, c1);
}

void msf_transpose_conv_s16 MSF_REGION_ARGS(msf_transpose_conv_s16_params)
{
    const geometry g = GEOMETRY(p);
    each_pixel(p, &g, pixel_s16, (int32_t)sizeof(int16_t), in, out, r0, r1, c0, c1);
}
