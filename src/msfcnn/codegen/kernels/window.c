/*
 * The loop every window kernel runs: CONV_2D (on cores without Arm's DSP extension),
 * DEPTHWISE_CONV_2D, MAX_POOL_2D and AVERAGE_POOL_2D, int8 and float32.
 *
 * Pixel by pixel over the output region (msf_pixels: the window clipped at the input's borders),
 * the pixel's window is located once and cut into runs: stretches whose input values and weights
 * are both contiguous. For a convolution, a kernel row's in-bounds taps when the input stores its
 * columns side by side (split in two where a column ring wraps), else a single tap; for a
 * depthwise convolution, whose weights interleave the channels of consecutive taps, and for a
 * pool, always a single tap. Locating a tap costs ring arithmetic (divisions); done once per
 * pixel, it is shared by every output channel. Then, per block of output channels, the op's
 * accumulate reduces the runs and the output stage (the op's finish, or the convolutions'
 * requantisation or bias and activation) writes the block.
 */
#include "window.h"

/* Where gathering stopped: kernel row i, column j. */
typedef struct {
    int32_t i, j;
} cursor;

/* Stores one run; returns 0 when the arrays are already full. */
static int add_run(msf_runs *runs, const char *src, int32_t weight, int32_t length)
{
    if (runs->count == MSF_MAX_RUNS) {
        return 0;
    }
    runs->src[runs->count] = src;
    runs->weight[runs->count] = weight;
    runs->length[runs->count] = length;
    ++runs->count;
    return 1;
}

/* Gathers the runs of pixel px's window from the cursor on, as many as fit, and advances the
   cursor; returns 1 if some are left over. */
static int32_t gather_runs(const msf_window_op *op, const msf_pixel *px, const msf_view *in, cursor *at,
                           msf_runs *runs)
{
    /* Everything the loops read is copied into locals first: the stores into `runs` could alias
       the structs' int32 fields, and would make the compiler reload them at every tap. Strides in
       bytes, so that int8 and float maps are addressed alike. */
    const int32_t tap_values = op->tap_values, tap_weights = op->tap_weights, kw = op->shape.kw;
    const int32_t y0 = px->y0, x0 = px->x0, i_hi = px->i_hi, j_lo = px->j_lo, j_hi = px->j_hi;
    const int32_t ring = in->col_ring, col_stride = in->col_stride * op->element;
    const int32_t row_stride = in->row_stride * op->element;
    const int merge = op->merge_taps && in->col_stride == tap_values;
    int32_t i = at->i, j = at->j;
    runs->count = 0;
    for (; i < i_hi; ++i, j = j_lo) {
        const char *row = (const char *)in->base + (ptrdiff_t)msf_stored_row(in, y0 + i) * row_stride;
        int32_t col = msf_stored_col(in, x0 + j);  /* stored column of tap j */
        int32_t weight = (i * kw + j) * tap_weights;
        if (!merge) {  /* a run per tap */
            for (; j < j_hi; ++j, weight += tap_weights) {
                if (!add_run(runs, row + (ptrdiff_t)col * col_stride, weight, tap_values)) {
                    break;
                }
                if (++col == ring) {
                    col = 0;
                }
            }
        } else {  /* the rest of the row, up to where a column ring wraps */
            while (j < j_hi) {
                int32_t taps = j_hi - j;
                if (ring > 0 && taps > ring - col) {
                    taps = ring - col;
                }
                if (!add_run(runs, row + (ptrdiff_t)col * col_stride, weight, taps * tap_values)) {
                    break;
                }
                j += taps;
                weight += taps * tap_weights;
                col += taps;
                if (col == ring) {
                    col = 0;
                }
            }
        }
        if (j < j_hi) {  /* the arrays are full */
            at->i = i;
            at->j = j;
            return 1;
        }
    }
    at->i = i;
    at->j = j;
    return 0;
}

/* A window of more runs than fit, for the block of channels [oc0, oc0 + n): gathered again from
   the start, a batch at a time, and all batches but the last accumulated into acc; the last is
   left in runs. Returns where the last batch's sums start (acc). */
static MSF_NOINLINE const int32_t *all_but_last_batch(const msf_window_op *op, const msf_pixel *px,
                                                      const msf_view *in, int32_t oc0, int32_t n,
                                                      const int32_t *start, msf_runs *runs, msf_block *acc)
{
    cursor at;
    at.i = px->i_lo;
    at.j = px->j_lo;
    while (gather_runs(op, px, in, &at, runs)) {
        op->accumulate(op->params, runs, oc0, n, start, acc);
        start = acc->i32;
    }
    return start;
}

/* The float convolutions' output stage: the bias after the window's sum, then the activation, as
   the numpy kernels' GEMM + bias + float_activation. */
static void finish_f32(const msf_output_stage *stage, int32_t oc0, int32_t n, const float *acc, float *dst)
{
    int32_t k;
    for (k = 0; k < n; ++k) {
        float v = acc[k];
        if (stage->bias_f32 != NULL) {
            v += stage->bias_f32[oc0 + k];
        }
        dst[k] = msf_apply_activation_f32(v, stage->activation);
    }
}

/* The loop, compiled twice (`requantize` and, with it, `element` are constants): for the int8
   convolutions, with their requantisation inline, and for the other ops, with their finish or the
   float output stage. */
static MSF_ALWAYS_INLINE void window_loop(const msf_window_op *op, const msf_view *in, msf_view *out,
                                          int32_t r0, int32_t r1, int32_t c0, int32_t c1, const int requantize,
                                          const int32_t element)
{
    msf_runs runs;  /* the only large local (12 B a run on a 32-bit core): one set, reused */
    msf_block acc;
    msf_pixels it;
    msf_pixel px;
    const int mode = requantize ? msf_output_stage_mode(op->stage, op->channels) : MSF_STAGE_GENERAL;
    const int pointwise = op->shape.kh == 1 && op->shape.kw == 1 && op->merge_taps;
    msf_pixels_start(&it, &op->shape, r0, r1, c0, c1);
    while (msf_pixels_next(&it, &px)) {
        char *dst = (char *)out->base + msf_offset(out, px.r, px.c, 0) * element;
        int32_t more = 0, oc0;
        if (pointwise) {  /* a 1x1 convolution: the pixel's channels are the one run, unless padding */
            runs.count = px.i_lo < px.i_hi && px.j_lo < px.j_hi;
            runs.src[0] = runs.count ? (const char *)in->base + msf_offset(in, px.y0, px.x0, 0) * element : NULL;
            runs.weight[0] = 0;
            runs.length[0] = op->tap_values;
        } else {
            cursor at;
            at.i = px.i_lo;
            at.j = px.j_lo;
            more = gather_runs(op, &px, in, &at, &runs);
        }
        for (oc0 = 0; oc0 < op->channels; oc0 += MSF_CHANNEL_BLOCK) {
            const int32_t n = op->channels - oc0 < MSF_CHANNEL_BLOCK ? op->channels - oc0 : MSF_CHANNEL_BLOCK;
            const int32_t *start = op->bias != NULL ? op->bias + oc0 : NULL;
            if (more) {
                start = all_but_last_batch(op, &px, in, oc0, n, start, &runs, &acc);
            }
            op->accumulate(op->params, &runs, oc0, n, start, &acc);
            if (requantize) {
                msf_output_stage_s8(op->stage, mode, acc.i32, oc0, n, (int8_t *)dst + oc0);
            } else if (op->finish != NULL) {
                op->finish(op->params, &px, oc0, n, &acc, dst);
            } else {
                finish_f32(op->stage, oc0, n, acc.f32, (float *)(void *)dst + oc0);
            }
        }
    }
}

void msf_window(const msf_window_op *op, const msf_view *in, msf_view *out,
                int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    if (op->finish == NULL && op->element == (int32_t)sizeof(int8_t)) {
        window_loop(op, in, out, r0, r1, c0, c1, 1, sizeof(int8_t));
    } else {
        window_loop(op, in, out, r0, r1, c0, c1, 0, op->element);
    }
}
