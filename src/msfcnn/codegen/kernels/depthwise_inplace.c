/*
 * DEPTHWISE_CONV_2D written over its own input, one channel at a time (the `inplace` scheme's
 * one-op form, src/msfcnn/schedule/schemes/inplace.py; TinyEngine's in-place depthwise
 * convolution). In a row stream the scheme needs no kernel of its own: it runs the regular one
 * (see kernels/depthwise_conv2d.c).
 *
 * With a depth multiplier of 1, output channel c reads only input channel c. Channel by channel,
 * output channel c is computed into `plane` (out_h x out_w values), then the
 * plane overwrites channel c of the output, whose bytes no computation reads any more: the
 * channel's own input was read whole into the plane's values first.
 *
 * One channel at a time, the regular kernel would locate every window once per channel and run
 * without its multi-channel loops (4 to 10 times its instructions on a Cortex-M4). So the channel
 * has a loop of its own: the channel's taps are copied out of the (kh, kw, C) weights once, the
 * input rows a row of outputs reads are located once per output row (ring arithmetic included),
 * and a tap is a load, a load and a multiply-accumulate (kernel rows of up to seven taps unrolled;
 * the input zero point's share of a window wholly inside the input added once). Numerics are the regular kernel's: int8
 * sums (input - zero point) x weight in int32 (an order-free sum), adds the bias and requantises
 * with msf_requantize_block_s8; float accumulates taps in (row, column) order, then bias and
 * activation, as the numpy kernel does.
 *
 */
#include "depthwise_inplace.h"
#include "window.h"

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

/* Channel c's output stage: msf_requantize_block_s8 for one channel, taken apart once per channel
   so that the value loop runs the 32-bit form (msf_requantize_fast_loop's arithmetic) inline. */
typedef struct {
    const msf_depthwise_conv2d_params *p;
    int32_t c, fast, ruy, multiplier, shift;
    int64_t round, round_negative;
} channel_stage;

static channel_stage stage_of(const msf_depthwise_conv2d_params *p, int32_t c)
{
    channel_stage st;
    st.p = p;
    st.c = c;
    st.fast = msf_output_stage_is_fast(p->rounding, p->right + c, 1);
    st.ruy = p->rounding == MSF_ROUND_RUY;
    st.multiplier = (int32_t)p->multiplier[c];
    st.shift = p->right[c] - 1;
    st.round = st.fast ? msf_output_rounding[p->right[c]] : 0;
    st.round_negative = st.fast ? msf_output_rounding_negative[p->right[c]] : 0;
    return st;
}

static inline void store_s8(const channel_stage *st, int32_t acc, int8_t *dst)
{
    const msf_depthwise_conv2d_params *p = st->p;
    if (st->fast) {
        const int64_t round = st->ruy || acc >= 0 ? st->round : st->round_negative;
        const int32_t high = (int32_t)asr64((int64_t)acc * st->multiplier + round, 32);
        const int32_t v = msf_asr32(high, st->shift) + p->output_offset;
        *dst = (int8_t)(v < p->act_min ? p->act_min : v > p->act_max ? p->act_max : v);
    } else {
        msf_requantize_block_s8(&acc, 1, p->multiplier + st->c, p->right + st->c, p->rounding, p->output_offset,
                                p->act_min, p->act_max, dst);
    }
}

/* acc + the kernel row's sum over taps 0..kw-1 (inputs `step` apart, zero point excluded): up to
   seven taps unrolled, each a load, a load and a multiply-accumulate. */
static inline int32_t row_sum(const int8_t *src, int32_t step, const int8_t *w, int32_t kw, int32_t acc)
{
    int32_t j;
    switch (kw) {
    case 7:
        acc += src[6 * step] * w[6];
        /* fall through */
    case 6:
        acc += src[5 * step] * w[5];
        /* fall through */
    case 5:
        acc += src[4 * step] * w[4];
        /* fall through */
    case 4:
        acc += src[3 * step] * w[3];
        /* fall through */
    case 3:
        acc += src[2 * step] * w[2];
        /* fall through */
    case 2:
        acc += src[step] * w[1];
        /* fall through */
    case 1:
        return acc + src[0] * w[0];
    default:
        for (j = 0; j < kw; ++j) {
            acc += src[j * step] * w[j];
        }
        return acc;
    }
}

/* Output columns [x_lo, x_hi) of a row whose windows lie wholly inside the input (kh full rows at
   rows[0..kh)): the zero point's share of each sum is added once (`base`). */
static void inner_s8(const msf_depthwise_conv2d_params *p, const channel_stage *st, const char *const *rows,
                     const int8_t *taps, int32_t base, int32_t step, int32_t x_lo, int32_t x_hi, int8_t *dst)
{
    const int32_t kh = p->kh, kw = p->kw, stride = p->stride_w * step;
    const ptrdiff_t first = (ptrdiff_t)(x_lo * p->stride_w - p->pad_left) * step;
    int32_t x, i;
    if (kh == 3 && kw == 3) {  /* most depthwise layers: the whole window unrolled, no row loop */
        const int8_t *s0 = (const int8_t *)rows[0] + first, *s1 = (const int8_t *)rows[1] + first;
        const int8_t *s2 = (const int8_t *)rows[2] + first;
        for (x = x_lo; x < x_hi; ++x, s0 += stride, s1 += stride, s2 += stride) {
            const int32_t acc = base + s0[0] * taps[0] + s0[step] * taps[1] + s0[2 * step] * taps[2]
                              + s1[0] * taps[3] + s1[step] * taps[4] + s1[2 * step] * taps[5]
                              + s2[0] * taps[6] + s2[step] * taps[7] + s2[2 * step] * taps[8];
            store_s8(st, acc, dst++);
        }
        return;
    }
    for (x = x_lo; x < x_hi; ++x) {
        const ptrdiff_t at = first + (ptrdiff_t)(x - x_lo) * stride;
        int32_t acc = base;
        for (i = 0; i < kh; ++i) {
            acc = row_sum((const int8_t *)rows[i] + at, step, taps + i * kw, kw, acc);
        }
        store_s8(st, acc, dst++);
    }
}

/* Output column x of a row with its window cut by padding: the taps in bounds, each
   (input - zero point) x weight. */
static int32_t border_sum_s8(const msf_depthwise_conv2d_params *p, const char *const *rows, const int8_t *taps,
                             int32_t bias, int32_t step, int32_t i_lo, int32_t i_hi, int32_t x)
{
    const int32_t kw = p->kw, x0 = x * p->stride_w - p->pad_left;
    int32_t acc = bias, i, j, j_lo, j_hi;
    msf_tap_range(x0, kw, p->in_w, &j_lo, &j_hi);
    for (i = i_lo; i < i_hi; ++i) {
        const int8_t *src = (const int8_t *)rows[i] + (ptrdiff_t)(x0 + j_lo) * step;
        const int8_t *w = taps + i * kw;
        for (j = j_lo; j < j_hi; ++j, src += step) {
            acc += ((int32_t)*src + p->input_offset) * w[j];
        }
    }
    return acc;
}

static void channel_s8(const msf_depthwise_conv2d_params *p, const msf_view *in, int32_t c, int8_t *plane,
                       int32_t out_h, int32_t out_w)
{
    int8_t taps[MSF_INPLACE_MAX_TAPS];
    const char *rows[MSF_INPLACE_MAX_TAPS];
    const int32_t step = in->col_stride, bias = p->bias != NULL ? p->bias[c] : 0;
    const channel_stage st = stage_of(p, c);
    int32_t r, x, i, i_lo, i_hi, weights = 0;
    /* Output columns whose windows lie inside the input's columns. */
    int32_t x_lo = (p->pad_left + p->stride_w - 1) / p->stride_w;
    int32_t x_hi = p->in_w - p->kw + p->pad_left >= 0 ? (p->in_w - p->kw + p->pad_left) / p->stride_w + 1 : 0;
    x_hi = x_hi < out_w ? x_hi : out_w;
    x_lo = x_lo < x_hi ? x_lo : x_hi;
    channel_taps(p, c, taps, sizeof(int8_t));
    for (i = 0; i < p->kh * p->kw; ++i) {
        weights += taps[i];
    }
    for (r = 0; r < out_h; ++r, plane += out_w) {
        window_rows(p, in, c, r, sizeof(int8_t), rows, &i_lo, &i_hi);
        if (i_lo == 0 && i_hi == p->kh) {
            inner_s8(p, &st, rows, taps, bias + p->input_offset * weights, step, x_lo, x_hi, plane + x_lo);
            for (x = 0; x < x_lo; ++x) {
                store_s8(&st, border_sum_s8(p, rows, taps, bias, step, i_lo, i_hi, x), plane + x);
            }
            x = x_hi;
        } else {
            x = 0;
        }
        for (; x < out_w; ++x) {
            store_s8(&st, border_sum_s8(p, rows, taps, bias, step, i_lo, i_hi, x), plane + x);
        }
    }
}

static void channel_f32(const msf_depthwise_conv2d_params *p, const msf_view *in, int32_t c, float *plane,
                        int32_t out_h, int32_t out_w)
{
    float taps[MSF_INPLACE_MAX_TAPS];
    const char *rows[MSF_INPLACE_MAX_TAPS];
    const int32_t kw = p->kw, step = in->col_stride;
    int32_t r, x, i, j, i_lo, i_hi, j_lo, j_hi;
    channel_taps(p, c, taps, sizeof(float));
    for (r = 0; r < out_h; ++r) {
        window_rows(p, in, c, r, sizeof(float), rows, &i_lo, &i_hi);
        for (x = 0; x < out_w; ++x) {
            const int32_t x0 = x * p->stride_w - p->pad_left;
            float acc = 0.0f;
            msf_tap_range(x0, kw, p->in_w, &j_lo, &j_hi);
            for (i = i_lo; i < i_hi; ++i) {
                const float *src = (const float *)(const void *)rows[i] + (ptrdiff_t)(x0 + j_lo) * step;
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
                                     int8_t *plane, int32_t out_h, int32_t out_w)
{
    int32_t c, r, x;
    for (c = 0; c < p->out_c; ++c) {
        const int8_t *value = plane;
        channel_s8(p, in, c, plane, out_h, out_w);
        for (r = 0; r < out_h; ++r) {
            int8_t *dst = msf_at_s8(out, r, 0, c);
            for (x = 0; x < out_w; ++x) {
                dst[x * out->col_stride] = *value++;
            }
        }
    }
}

void msf_depthwise_conv2d_inplace_f32(const msf_depthwise_conv2d_params *p, const msf_view *in, msf_view *out,
                                      float *plane, int32_t out_h, int32_t out_w)
{
    int32_t c, r, x;
    for (c = 0; c < p->out_c; ++c) {
        const float *value = plane;
        channel_f32(p, in, c, plane, out_h, out_w);
        for (r = 0; r < out_h; ++r) {
            float *dst = msf_at_f32(out, r, 0, c);
            for (x = 0; x < out_w; ++x) {
                dst[x * out->col_stride] = *value++;
            }
        }
    }
}
