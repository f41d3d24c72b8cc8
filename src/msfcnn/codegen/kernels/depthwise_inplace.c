/*
 * DEPTHWISE_CONV_2D written over input it no longer reads, one channel at a time (the `inplace`
 * scheme, src/msfcnn/schedule/schemes/inplace.py; TinyEngine's in-place depthwise convolution):
 * a whole map over itself, or, inside a row stream, a row over a dead row of its input's ring.
 *
 * With a depth multiplier of 1, output channel c reads only input channel c. Channel by channel,
 * output rows [r0, r1) of channel c are computed into `plane` ((r1 - r0) x out_w values), then the
 * plane overwrites channel c of the output, whose bytes no computation reads any more: the
 * channel's own input was read whole into the plane's values first.
 *
 * One channel at a time, the regular kernel would locate every window once per channel and run
 * without its multi-channel loops (4 to 10 times its instructions on a Cortex-M4). So the channel
 * has a loop of its own: the channel's taps are copied out of the (kh, kw, C) weights once, the
 * input rows a row of outputs reads are located once per output row (ring arithmetic included),
 * and a tap is a load, a load and a multiply-accumulate. Numerics are the regular kernel's: int8
 * sums (input - zero point) x weight in int32 (an order-free sum), adds the bias and requantises
 * with msf_requantize_block_s8; float accumulates taps in (row, column) order, then bias and
 * activation, as the numpy kernel does.
 *
 * The input view may be a ring of rows, not of columns (the scheme never streams it by columns).
 */
#include "msfcnn_kernels.h"

/* Channel c's taps, as (kh, kw), out of the (1, kh, kw, C) weights. */
static void channel_taps(const msf_depthwise_conv2d_params *p, int32_t c, void *taps, size_t element)
{
    const int32_t n = p->kh * p->kw;
    int32_t t;
    for (t = 0; t < n; ++t) {
        if (element == sizeof(int8_t)) {
            ((int8_t *)taps)[t] = p->weights[t * p->out_c + c];
        } else {
            ((float *)taps)[t] = p->weights_f32[t * p->out_c + c];
        }
    }
}

/* The input rows output row r reads, from y0 = r * stride - pad, at rows[i] for i in [i_lo, i_hi):
   each points at column 0, channel c, of that input row. */
static void window_rows(const msf_depthwise_conv2d_params *p, const msf_view *in, int32_t c, int32_t r,
                        size_t element, const char **rows, int32_t *i_lo, int32_t *i_hi)
{
    const int32_t y0 = r * p->stride_h - p->pad_top;
    int32_t i;
    msf_tap_range(y0, p->kh, p->in_h, i_lo, i_hi);
    for (i = *i_lo; i < *i_hi; ++i) {
        const ptrdiff_t first = (ptrdiff_t)msf_stored_row(in, y0 + i) * in->row_stride
                              - (ptrdiff_t)in->col_origin * in->col_stride + c;
        rows[i] = (const char *)in->base + first * (ptrdiff_t)element;
    }
}

static void channel_s8(const msf_depthwise_conv2d_params *p, const msf_view *in, int32_t c, int8_t *plane,
                       int32_t r0, int32_t r1, int32_t out_w)
{
    int8_t taps[MSF_INPLACE_MAX_TAPS];
    const char *rows[MSF_INPLACE_MAX_TAPS];
    const int32_t kw = p->kw, step = in->col_stride, offset = p->input_offset;
    const int32_t bias = p->bias != NULL ? p->bias[c] : 0;
    int32_t r, x, i, j, i_lo, i_hi, j_lo, j_hi;
    channel_taps(p, c, taps, sizeof(int8_t));
    for (r = r0; r < r1; ++r) {
        window_rows(p, in, c, r, sizeof(int8_t), rows, &i_lo, &i_hi);
        for (x = 0; x < out_w; ++x) {
            const int32_t x0 = x * p->stride_w - p->pad_left;
            int32_t acc = bias;
            msf_tap_range(x0, kw, p->in_w, &j_lo, &j_hi);
            for (i = i_lo; i < i_hi; ++i) {
                const int8_t *src = (const int8_t *)rows[i] + (ptrdiff_t)(x0 + j_lo) * step;
                const int8_t *w = taps + i * kw;
                for (j = j_lo; j < j_hi; ++j, src += step) {
                    acc += ((int32_t)*src + offset) * w[j];
                }
            }
            msf_requantize_block_s8(&acc, 1, p->multiplier + c, p->right + c, p->rounding, p->output_offset,
                                    p->act_min, p->act_max, plane++);
        }
    }
}

static void channel_f32(const msf_depthwise_conv2d_params *p, const msf_view *in, int32_t c, float *plane,
                        int32_t r0, int32_t r1, int32_t out_w)
{
    float taps[MSF_INPLACE_MAX_TAPS];
    const char *rows[MSF_INPLACE_MAX_TAPS];
    const int32_t kw = p->kw, step = in->col_stride;
    int32_t r, x, i, j, i_lo, i_hi, j_lo, j_hi;
    channel_taps(p, c, taps, sizeof(float));
    for (r = r0; r < r1; ++r) {
        window_rows(p, in, c, r, sizeof(float), rows, &i_lo, &i_hi);
        for (x = 0; x < out_w; ++x) {
            const int32_t x0 = x * p->stride_w - p->pad_left;
            float acc = 0.0f;
            msf_tap_range(x0, kw, p->in_w, &j_lo, &j_hi);
            for (i = i_lo; i < i_hi; ++i) {
                const float *src = (const float *)rows[i] + (ptrdiff_t)(x0 + j_lo) * step;
                const float *w = taps + i * kw;
                for (j = j_lo; j < j_hi; ++j, src += step) {
                    acc += *src * w[j];
                }
            }
            if (p->bias_f32 != NULL) {
                acc += p->bias_f32[c];
            }
            *plane++ = msf_apply_activation_f32(acc, p->activation);
        }
    }
}

void msf_depthwise_conv2d_inplace_s8(const msf_depthwise_conv2d_params *p, const msf_view *in, msf_view *out,
                                     int8_t *plane, int32_t r0, int32_t r1, int32_t out_w)
{
    int32_t c, r, x;
    for (c = 0; c < p->out_c; ++c) {
        const int8_t *value = plane;
        channel_s8(p, in, c, plane, r0, r1, out_w);
        for (r = r0; r < r1; ++r) {
            for (x = 0; x < out_w; ++x) {
                *msf_at_s8(out, r, x, c) = *value++;
            }
        }
    }
}

void msf_depthwise_conv2d_inplace_f32(const msf_depthwise_conv2d_params *p, const msf_view *in, msf_view *out,
                                      float *plane, int32_t r0, int32_t r1, int32_t out_w)
{
    int32_t c, r, x;
    for (c = 0; c < p->out_c; ++c) {
        const float *value = plane;
        channel_f32(p, in, c, plane, r0, r1, out_w);
        for (r = r0; r < r1; ++r) {
            for (x = 0; x < out_w; ++x) {
                *msf_at_f32(out, r, x, c) = *value++;
            }
        }
    }
}
