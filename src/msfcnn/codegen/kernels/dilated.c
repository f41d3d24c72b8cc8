/*
 * The window loop of the dilated CONV_2D and DEPTHWISE_CONV_2D (conv2d.c and depthwise_conv2d.c
 * bring their accumulate; ops/base.py's Window.dilations): msf_window's loop (window.c) with a run
 * per tap at stride d, in a file of its own so that the undilated kernels compile as calibrated.
 */
#include "dilated.h"

/* A dilated window's geometry in taps. */
typedef struct {
    int32_t kh, kw, dilation_h, dilation_w;
} taps;

/* The runs of px's in-bounds taps from tap (*i, *j) on, as many as fit; returns 1 if some are left
   over (and where, in *i, *j). Tap (i, j) reads (y0 + i * dilation_h, x0 + j * dilation_w); its
   weights start (i * kw + j) * tap_weights on. */
static int32_t gather(const msf_window_op *op, const taps *t, const msf_pixel *px, const msf_view *in, int32_t *i,
                      int32_t *j, msf_runs *runs)
{
    const int32_t col_stride = in->col_stride * op->element, row_stride = in->row_stride * op->element;
    runs->count = 0;
    for (; *i < px->i_hi; ++*i, *j = px->j_lo) {
        const char *row = (const char *)in->base + (ptrdiff_t)msf_stored_row(in, px->y0 + *i * t->dilation_h) * row_stride;
        for (; *j < px->j_hi; ++*j) {
            if (runs->count == MSF_MAX_RUNS) {
                return 1;
            }
            runs->src[runs->count] = row + (ptrdiff_t)msf_stored_col(in, px->x0 + *j * t->dilation_w) * col_stride;
            runs->weight[runs->count] = (*i * t->kw + *j) * op->tap_weights;
            runs->length[runs->count] = op->tap_values;
            ++runs->count;
        }
    }
    return 0;
}

/* The output stage of channels [oc0, oc0 + n) of a pixel whose channel 0 is at dst. */
static void output_stage(const msf_window_op *op, const msf_pixel *px, int32_t oc0, int32_t n, const msf_block *acc,
                         char *dst)
{
    const msf_output_stage *s = op->stage;
    int32_t k;
    if (op->finish != NULL) {
        op->finish(op->params, px, oc0, n, acc, dst);
    } else if (op->element == (int32_t)sizeof(int8_t)) {
        msf_output_stage_s8(s, msf_output_stage_mode(s, op->channels), acc->i32, oc0, n, (int8_t *)dst + oc0);
    } else {  /* float: the bias after the window's sum, then the activation */
        for (k = 0; k < n; ++k) {
            const float v = acc->f32[k] + (s->bias_f32 != NULL ? s->bias_f32[oc0 + k] : 0.0f);
            ((float *)(void *)dst)[oc0 + k] = msf_apply_activation_f32(v, s->activation);
        }
    }
}

void msf_window_dilated(const msf_window_op *op, int32_t dilation_h, int32_t dilation_w, const msf_view *in,
                        msf_view *out, int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    msf_runs runs;
    msf_block acc;
    msf_pixels it;
    msf_pixel px;
    taps t;
    t.kh = (op->shape.kh - 1) / dilation_h + 1;
    t.kw = (op->shape.kw - 1) / dilation_w + 1;
    t.dilation_h = dilation_h;
    t.dilation_w = dilation_w;
    msf_pixels_start(&it, &op->shape, r0, r1, c0, c1);
    while (msf_pixels_next(&it, &px)) {
        char *dst = (char *)out->base + msf_offset(out, px.r, px.c, 0) * op->element;
        int32_t i, j, more, oc0;
        msf_dilated_tap_range(px.y0, t.kh, dilation_h, op->shape.in_h, &px.i_lo, &px.i_hi);
        msf_dilated_tap_range(px.x0, t.kw, dilation_w, op->shape.in_w, &px.j_lo, &px.j_hi);
        i = px.i_lo;
        j = px.j_lo;
        more = gather(op, &t, &px, in, &i, &j, &runs);
        for (oc0 = 0; oc0 < op->channels; oc0 += MSF_CHANNEL_BLOCK) {
            const int32_t n = op->channels - oc0 < MSF_CHANNEL_BLOCK ? op->channels - oc0 : MSF_CHANNEL_BLOCK;
            const int32_t *start = op->bias != NULL ? op->bias + oc0 : NULL;
            if (more) {  /* the window again from its start, all batches but the last accumulated */
                i = px.i_lo;
                j = px.j_lo;
                while (gather(op, &t, &px, in, &i, &j, &runs)) {
                    op->accumulate(op->params, &runs, oc0, n, start, &acc);
                    start = acc.i32;
                }
            }
            op->accumulate(op->params, &runs, oc0, n, start, &acc);
            output_stage(op, &px, oc0, n, &acc, dst);
        }
    }
}
