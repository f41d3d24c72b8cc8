/*
 * CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED with asymmetric weights: the layers of uint8
 * TFLite models (src/msfcnn/ops/weight_offset.py).
 *
 * TFLite's uint8 kernels sum (input + input offset) * (weight + weight offset), the offsets being
 * the negated zero points. The graph holds uint8 tensors as int8 (value - 128, zero point - 128),
 * and the weights are stored the same way, so each product here is
 * (x + input_offset) * (w + weight_offset) on int8 values, with the same integers as TFLite's.
 * Padding is the input zero point, which contributes nothing: padded taps are skipped, as in the
 * int8 kernels. The output stage (bias, one multiplier for every channel in uint8 models, output
 * offset, clamp) is the int8 ops' own (msf_window's stage; msf_mul_by_quantized_mult for dense).
 *
 * Loops: as the int8 kernels' portable loops (msf_window, window.c), one output channel at a time;
 * the weights are offset as they are read.
 */
#include "weight_offset.h"
#include "window.h"

/* The runs' sum of (x + input_offset) times the weight offset: what the offset adds to every
   output channel's sum, sum (x + io) * (w + wo) = sum (x + io) * w + wo * sum (x + io). */
static int32_t offset_term(const msf_runs *runs, int32_t input_offset, int32_t weight_offset)
{
    int32_t total = 0, t, ch;
    for (t = 0; t < runs->count; ++t) {
        const int8_t *x = (const int8_t *)runs->src[t];
        for (ch = 0; ch < runs->length[t]; ++ch) {
            total += (int32_t)x[ch] + input_offset;
        }
    }
    return total * weight_offset;
}

/* CONV_2D: acc[k] = start[k] + the window's sum for output channel oc0 + k (runs of taps whose
   inputs and weights lie side by side): the int8 products, four output channels a pass (each
   input loaded and offset once), plus the offset term, computed once for all the channels. */
static void conv_accumulate(const void *params, const msf_runs *runs, int32_t oc0, int32_t n,
                            const int32_t *start, msf_block *block)
{
    const msf_conv2d_wofs_params *q = (const msf_conv2d_wofs_params *)params;
    const msf_conv2d_params *p = &q->base;
    const int32_t patch = p->kh * p->kw * p->in_c;
    const int32_t term = offset_term(runs, p->input_offset, q->weight_offset);
    int32_t k = 0, j, t, ch;
    for (; k < n; k += 4) {
        const int32_t m = n - k < 4 ? n - k : 4;  /* channels this pass */
        const int8_t *w[4];
        int32_t s[4] = { 0, 0, 0, 0 };
        for (j = 0; j < 4; ++j) {
            w[j] = p->weights + (ptrdiff_t)(oc0 + k + (j < m ? j : 0)) * patch;
        }
        for (t = 0; t < runs->count; ++t) {
            const int8_t *x = (const int8_t *)runs->src[t];
            const int32_t at = runs->weight[t];
            for (ch = 0; ch < runs->length[t]; ++ch) {
                const int32_t v = (int32_t)x[ch] + p->input_offset;
                s[0] += v * w[0][at + ch];
                s[1] += v * w[1][at + ch];
                s[2] += v * w[2][at + ch];
                s[3] += v * w[3][at + ch];
            }
        }
        for (j = 0; j < m; ++j) {
            block->i32[k + j] = (start != NULL ? start[k + j] : 0) + s[j] + term;
        }
    }
}

/* The int8 window op of a conv (merge_taps 1: a kernel row's taps one run) or a depthwise conv
   over the region, with the op's output stage. */
static MSF_ALWAYS_INLINE void offset_window(const void *params, const msf_window_shape *shape, int32_t channels,
                                            int32_t tap_values, int32_t tap_weights, int merge_taps,
                                            const int32_t *bias, const msf_output_stage *stage,
                                            msf_accumulate_fn accumulate, const msf_view *in, msf_view *out,
                                            int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    const msf_window_op op = {
        .shape = *shape, .channels = channels, .element = (int32_t)sizeof(int8_t), .tap_values = tap_values,
        .tap_weights = tap_weights, .merge_taps = merge_taps, .bias = bias, .accumulate = accumulate,
        .finish = NULL, .stage = stage, .params = params
    };
    msf_window(&op, in, out, r0, r1, c0, c1);
}

void msf_conv2d_wofs_s8(const msf_conv2d_wofs_params *q, const msf_view *in, msf_view *out,
                        int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    const msf_conv2d_params *p = &q->base;
    offset_window(q, &(const msf_window_shape)MSF_WINDOW_SHAPE(p), p->out_c, p->in_c, p->in_c, 1, p->bias,
                  &(const msf_output_stage)MSF_OUTPUT_STAGE(p), conv_accumulate, in, out, r0, r1, c0, c1);
}

/* DEPTHWISE_CONV_2D: a run per tap; output channel o reads input channel o / depth_multiplier. */
static void depthwise_accumulate(const void *params, const msf_runs *taps, int32_t oc0, int32_t n,
                                 const int32_t *start, msf_block *block)
{
    const msf_depthwise_conv2d_wofs_params *q = (const msf_depthwise_conv2d_wofs_params *)params;
    const msf_depthwise_conv2d_params *p = &q->base;
    int32_t k, t;
    for (k = 0; k < n; ++k) {
        const int32_t oc = oc0 + k, ic = oc / p->depth_multiplier;
        int32_t sum = start != NULL ? start[k] : 0;
        for (t = 0; t < taps->count; ++t) {
            const int32_t x = ((const int8_t *)taps->src[t])[ic];
            sum += (x + p->input_offset) * ((int32_t)p->weights[taps->weight[t] + oc] + q->weight_offset);
        }
        block->i32[k] = sum;
    }
}

void msf_depthwise_conv2d_wofs_s8(const msf_depthwise_conv2d_wofs_params *q, const msf_view *in, msf_view *out,
                                  int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    const msf_depthwise_conv2d_params *p = &q->base;
    offset_window(q, &(const msf_window_shape)MSF_WINDOW_SHAPE(p), p->out_c, 1, p->out_c, 0, p->bias,
                  &(const msf_output_stage)MSF_OUTPUT_STAGE(p), depthwise_accumulate, in, out, r0, r1, c0, c1);
}

/* FULLY_CONNECTED: unit u's sum over the input pixels [r0, r1) x [c0, c1), all channels. */
static int32_t dense_sum(const msf_dense_wofs_params *q, const msf_view *in, int32_t u,
                         int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    const msf_dense_params *p = &q->base;
    const int8_t *wu = p->weights + (ptrdiff_t)u * p->in_h * p->in_w * p->in_c;
    int32_t sum = 0, r, c, ch;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const int8_t *src = msf_at_s8(in, r, c, 0);
            const int8_t *w = wu + (ptrdiff_t)(r * p->in_w + c) * p->in_c;
            for (ch = 0; ch < p->in_c; ++ch) {
                sum += ((int32_t)src[ch] + p->input_offset) * ((int32_t)w[ch] + q->weight_offset);
            }
        }
    }
    return sum;
}

void msf_dense_wofs_accumulate_s8(const msf_dense_wofs_params *q, const msf_view *in, void *acc,
                                  int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    int32_t u;
    for (u = 0; u < q->base.units; ++u) {
        msf_store_i32(acc, u, msf_load_i32(acc, u) + dense_sum(q, in, u, r0, r1, c0, c1));
    }
}

/* Unit u's output from its complete sum: bias, requantisation, output offset, clamp. */
static int8_t dense_output(const msf_dense_params *p, int32_t u, int32_t total)
{
    const int32_t k = p->per_channel ? u : 0;
    total += p->bias != NULL ? p->bias[u] : 0;
    return msf_clamp_s8(msf_mul_by_quantized_mult(total, p->mult[k], p->shift[k], p->rounding),
                        p->output_offset, p->act_min, p->act_max);
}

void msf_dense_wofs_finish_s8(const msf_dense_wofs_params *q, const void *acc, int8_t *out)
{
    int32_t u;
    for (u = 0; u < q->base.units; ++u) {
        out[u] = dense_output(&q->base, u, msf_load_i32(acc, u));
    }
}

void msf_dense_wofs_s8(const msf_dense_wofs_params *q, const msf_view *in, int8_t *out)
{
    int32_t u;
    for (u = 0; u < q->base.units; ++u) {
        out[u] = dense_output(&q->base, u, dense_sum(q, in, u, 0, q->base.in_h, 0, q->base.in_w));
    }
}
