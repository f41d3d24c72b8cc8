/*
 * The windows of int8 CONV_2D and DEPTHWISE_CONV_2D, cut into runs once per output pixel.
 *
 * A run is a stretch of a window whose input values and weights are both contiguous: for a
 * convolution, a kernel row's in-bounds taps when the input stores its columns side by side
 * (split in two where a column ring wraps), else a single tap; for a depthwise convolution,
 * whose weights interleave the channels of consecutive taps, always a single tap. Locating a tap
 * costs ring arithmetic (divisions); done once per pixel, it is shared by every output channel.
 * msf_window_s8 is the pixel loop both kernels run, each with its own accumulate.
 */
#include "msfcnn_kernels.h"

/* Stores one run; returns 0 when the arrays are already full. */
static int add_run(msf_runs *runs, const int8_t *src, int32_t weight, int32_t length)
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

int32_t msf_gather_runs(const msf_window *win, const msf_view *in, msf_window_cursor *at, msf_runs *runs)
{
    /* Everything the loops read is copied into locals first: the stores into `runs` could alias
       the structs' int32 fields, and would make the compiler reload them at every tap. */
    const int32_t tap_values = win->tap_values, tap_weights = win->tap_weights, j_lo = win->j_lo, j_hi = win->j_hi;
    const int32_t ring = in->col_ring, col_stride = in->col_stride;
    const int merge = win->merge_taps && col_stride == tap_values;
    int32_t i = at->i, j = at->j;
    runs->count = 0;
    for (; i < win->i_hi; ++i, j = j_lo) {
        const int8_t *row = (const int8_t *)in->base + (ptrdiff_t)msf_stored_row(in, win->y0 + i) * in->row_stride;
        int32_t col = msf_stored_col(in, win->x0 + j);  /* stored column of tap j */
        int32_t weight = (i * win->kw + j) * tap_weights;
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

void msf_window_s8(const msf_window_op *op, const msf_view *in, msf_view *out,
                   int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    msf_window win;
    msf_runs runs;  /* the only large local (12 B a run on a 32-bit core): one set, reused */
    int32_t acc[MSF_CHANNEL_BLOCK];
    int32_t r, c, oc0;
    const int pointwise = op->kh == 1 && op->kw == 1 && op->merge_taps;
    const int fast = msf_output_stage_is_fast(op->rounding, op->right, op->out_c);
    win.kw = op->kw;
    win.tap_values = op->tap_values;
    win.tap_weights = op->tap_weights;
    win.merge_taps = op->merge_taps;
    for (r = r0; r < r1; ++r) {
        win.y0 = r * op->stride_h - op->pad_top;
        msf_tap_range(win.y0, op->kh, op->in_h, &win.i_lo, &win.i_hi);
        for (c = c0; c < c1; ++c) {
            int8_t *dst = msf_at_s8(out, r, c, 0);
            int32_t more = 0;
            win.x0 = c * op->stride_w - op->pad_left;
            msf_tap_range(win.x0, op->kw, op->in_w, &win.j_lo, &win.j_hi);
            if (pointwise) {  /* a 1x1 convolution: the pixel's channels are the one run, unless padding */
                runs.count = win.i_lo < win.i_hi && win.j_lo < win.j_hi;
                runs.src[0] = runs.count ? msf_at_s8(in, win.y0, win.x0, 0) : NULL;
                runs.weight[0] = 0;
                runs.length[0] = op->tap_values;
            } else {
                msf_window_cursor at;
                at.i = win.i_lo;
                at.j = win.j_lo;
                more = msf_gather_runs(&win, in, &at, &runs);
            }
            for (oc0 = 0; oc0 < op->out_c; oc0 += MSF_CHANNEL_BLOCK) {
                const int32_t n = op->out_c - oc0 < MSF_CHANNEL_BLOCK ? op->out_c - oc0 : MSF_CHANNEL_BLOCK;
                const int32_t *start = op->bias != NULL ? op->bias + oc0 : NULL;
                if (more) {  /* a window of more runs than fit: gathered again, a batch at a time, per block */
                    msf_window_cursor at;
                    at.i = win.i_lo;
                    at.j = win.j_lo;
                    while (msf_gather_runs(&win, in, &at, &runs)) {
                        op->accumulate(op->params, &runs, oc0, n, start, acc);
                        start = acc;
                    }
                }
                op->accumulate(op->params, &runs, oc0, n, start, acc);
                if (fast) {
                    msf_requantize_block_fast_s8(acc, n, op->multiplier + oc0, op->right + oc0, op->rounding,
                                                 op->output_offset, op->act_min, op->act_max, dst + oc0);
                } else {
                    msf_requantize_block_s8(acc, n, op->multiplier + oc0, op->right + oc0, op->rounding,
                                            op->output_offset, op->act_min, op->act_max, dst + oc0);
                }
            }
        }
    }
}
