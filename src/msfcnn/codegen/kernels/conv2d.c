/*
 * CONV_2D over an output region (src/msfcnn/ops/conv2d.py).
 *
 * int8: TFLite's int8 convolution is im2col + a ruy GEMM of (input - input zero point) by the
 * weights, int32 accumulation, plus the int32 bias, then ruy's output stage: a per-channel
 * MultiplyByQuantizedMultiplier (p->rounding, MSF_ROUND_RUY on x86), the output zero point, and
 * the fused activation's clamp. Padding is the input zero point in TFLite, i.e. it contributes
 * nothing once the offset is added, so padded taps are skipped rather than read.
 *
 * Portable loops: output pixel; its window cut once into runs (window.c); block of output
 * channels; four output channels at a time, each input value loaded and offset once for four
 * multiply-accumulates in registers; run; input values of the run. Weights are (out_c, kh, kw,
 * in_c).
 *
 * On Arm's DSP extension (conv_pairs below): pairs of output pixels; block of output channels;
 * chunk of the pixels' patches, extended to 16-bit lanes once; pairs of output channels; quads of
 * the chunk, two multiply-accumulates an SMLAD. The odd last pixel of a region goes alone, four
 * output channels at a time.
 */
#include "msfcnn_kernels.h"

#if !defined(MSF_ARM_DSP)  /* (the DSP extension's loops are further down) */
/* acc[k] = start[k] + the window's sum for output channel oc0 + k, k < n (start NULL: 0). Four
   output channels at a time: each input value loaded and offset once for four multiply-accumulates
   in registers. */
static void accumulate(const void *params, const msf_runs *runs, int32_t oc0, int32_t n, const int32_t *start,
                       int32_t *acc)
{
    const msf_conv2d_params *p = (const msf_conv2d_params *)params;
    const int32_t patch = p->kh * p->kw * p->in_c;
    const int32_t offset = p->input_offset;
    const int8_t *w = p->weights + (ptrdiff_t)oc0 * patch;
    int32_t k, t, ch;
    for (k = 0; k + 4 <= n; k += 4, w += 4 * patch) {
        int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        if (start != NULL) {
            s0 = start[k];
            s1 = start[k + 1];
            s2 = start[k + 2];
            s3 = start[k + 3];
        }
        for (t = 0; t < runs->count; ++t) {
            const int8_t *x = runs->src[t];
            const int8_t *w0 = w + runs->weight[t], *w1 = w0 + patch, *w2 = w1 + patch, *w3 = w2 + patch;
            const int32_t length = runs->length[t];
            for (ch = 0; ch < length; ++ch) {
                const int32_t v = (int32_t)x[ch] + offset;
                s0 += v * w0[ch];
                s1 += v * w1[ch];
                s2 += v * w2[ch];
                s3 += v * w3[ch];
            }
        }
        acc[k] = s0;
        acc[k + 1] = s1;
        acc[k + 2] = s2;
        acc[k + 3] = s3;
    }
    for (; k < n; ++k, w += patch) {
        int32_t sum = start != NULL ? start[k] : 0;
        for (t = 0; t < runs->count; ++t) {
            const int8_t *x = runs->src[t];
            const int8_t *w0 = w + runs->weight[t];
            const int32_t length = runs->length[t];
            for (ch = 0; ch < length; ++ch) {
                sum += ((int32_t)x[ch] + offset) * w0[ch];
            }
        }
        acc[k] = sum;
    }
}
#endif

#if defined(MSF_ARM_DSP)
/* Values of a pixel's patch (its window's kh * kw * in_c inputs, in the weights' order) that the
   paired loop extends at once: their 16-bit lanes for two pixels take 4 B a value on the stack,
   plus 1 B a value to gather a window's patch (400 + 96 B; 96 holds the expansion layers of
   MobileNetV2 and MCUNet, and a 3x3 stem, in one chunk). Any value >= 4 gives the same results. */
#ifndef MSF_POINTWISE_CHUNK
#define MSF_POINTWISE_CHUNK 96
#endif

/* The last `tail` (1 to 3) weights of a run of at least four, at w, as the low bytes of a word
   (the others 0): the word ending with them, shifted right by `cut` = 8 * (4 - tail). Reading
   back into the run, not past its end, never leaves the weights array. */
static inline uint32_t msf_read_s8_tail(const int8_t *w, int32_t tail, int32_t cut)
{
    return msf_read_s8x4(w + tail - 4) >> cut;
}

/* sums[k] and sums[MSF_CHANNEL_BLOCK + k], the accumulators of output channel k for two pixels a
   and b, k < 2 * pairs, = start[k] + the chunk's products, the weights of channel k starting at
   w + k * patch; start is sums itself after the first chunk, the bias or NULL (0) for the first.
   The chunk's quads of input values are in lanes[0, 4 * quads) as (a's even lanes, a's odd lanes,
   b's even, b's odd). Per pair of channels and quad: two weight words extended, eight SMLADs, and
   no input conversion. Not inlined, so that its loop has the registers to itself. */
static MSF_NOINLINE void pointwise_pairs_chunk(int32_t *sums, const int32_t *start, int32_t pairs,
                                               const uint32_t *lanes, int32_t quads, const int8_t *w, int32_t patch)
{
    for (; pairs > 0; --pairs, sums += 2, w += 2 * patch, start = start != NULL ? start + 2 : NULL) {
        const uint32_t *l = lanes;
        const int8_t *w0 = w;
        int32_t a0, a1, b0, b1;
        int32_t q = quads;
        if (start == sums) {  /* a later chunk: the sums so far */
            a0 = sums[0];
            a1 = sums[1];
            b0 = sums[MSF_CHANNEL_BLOCK];
            b1 = sums[MSF_CHANNEL_BLOCK + 1];
        } else if (start != NULL) {  /* the first chunk: the bias */
            a0 = b0 = start[0];
            a1 = b1 = start[1];
        } else {
            a0 = a1 = b0 = b1 = 0;
        }
        /* Two quads an iteration (the loop's own instructions, and the reload of what does not
           fit in the registers, once per eight channels), then an odd one. One lane word is live
           at a time. */
        for (; q >= 2; q -= 2, l += 8, w0 += 8) {
            uint32_t v0 = msf_read_s8x4(w0), v1 = msf_read_s8x4(w0 + patch);
            int16x2_t e0 = __sxtb16((int8x4_t)v0), o0 = msf_sxtb16_odd(v0);
            int16x2_t e1 = __sxtb16((int8x4_t)v1), o1 = msf_sxtb16_odd(v1);
            int16x2_t x = (int16x2_t)l[0];
            a0 = __smlad(x, e0, a0);
            a1 = __smlad(x, e1, a1);
            x = (int16x2_t)l[1];
            a0 = __smlad(x, o0, a0);
            a1 = __smlad(x, o1, a1);
            x = (int16x2_t)l[2];
            b0 = __smlad(x, e0, b0);
            b1 = __smlad(x, e1, b1);
            x = (int16x2_t)l[3];
            b0 = __smlad(x, o0, b0);
            b1 = __smlad(x, o1, b1);
            v0 = msf_read_s8x4(w0 + 4);
            v1 = msf_read_s8x4(w0 + patch + 4);
            e0 = __sxtb16((int8x4_t)v0);
            o0 = msf_sxtb16_odd(v0);
            e1 = __sxtb16((int8x4_t)v1);
            o1 = msf_sxtb16_odd(v1);
            x = (int16x2_t)l[4];
            a0 = __smlad(x, e0, a0);
            a1 = __smlad(x, e1, a1);
            x = (int16x2_t)l[5];
            a0 = __smlad(x, o0, a0);
            a1 = __smlad(x, o1, a1);
            x = (int16x2_t)l[6];
            b0 = __smlad(x, e0, b0);
            b1 = __smlad(x, e1, b1);
            x = (int16x2_t)l[7];
            b0 = __smlad(x, o0, b0);
            b1 = __smlad(x, o1, b1);
        }
        if (q > 0) {
            const uint32_t v0 = msf_read_s8x4(w0), v1 = msf_read_s8x4(w0 + patch);
            const int16x2_t e0 = __sxtb16((int8x4_t)v0), o0 = msf_sxtb16_odd(v0);
            const int16x2_t e1 = __sxtb16((int8x4_t)v1), o1 = msf_sxtb16_odd(v1);
            int16x2_t x = (int16x2_t)l[0];
            a0 = __smlad(x, e0, a0);
            a1 = __smlad(x, e1, a1);
            x = (int16x2_t)l[1];
            a0 = __smlad(x, o0, a0);
            a1 = __smlad(x, o1, a1);
            x = (int16x2_t)l[2];
            b0 = __smlad(x, e0, b0);
            b1 = __smlad(x, e1, b1);
            x = (int16x2_t)l[3];
            b0 = __smlad(x, o0, b0);
            b1 = __smlad(x, o1, b1);
        }
        sums[0] = a0;
        sums[1] = a1;
        sums[MSF_CHANNEL_BLOCK] = b0;
        sums[MSF_CHANNEL_BLOCK + 1] = b1;
    }
}

/* sums as in pointwise_pairs_chunk, += a partial quad: the lanes (a's even, a's odd, b's even,
   b's odd) of the chunk's last `tail` (1 to 3) values and zeros, and the last `tail` weights of
   each channel's chunk, the first channel's at w, after at least four others. */
static MSF_NOINLINE void pointwise_pairs_tail(int32_t *sums, int32_t pairs, const uint32_t *lanes, int32_t tail,
                                              const int8_t *w, int32_t patch)
{
    const int32_t cut = 8 * (4 - tail);
    const int16x2_t ae = (int16x2_t)lanes[0], ao = (int16x2_t)lanes[1];
    const int16x2_t be = (int16x2_t)lanes[2], bo = (int16x2_t)lanes[3];
    for (; pairs > 0; --pairs, sums += 2, w += 2 * patch) {
        const uint32_t v0 = msf_read_s8_tail(w, tail, cut), v1 = msf_read_s8_tail(w + patch, tail, cut);
        const int16x2_t e0 = __sxtb16((int8x4_t)v0), o0 = msf_sxtb16_odd(v0);
        const int16x2_t e1 = __sxtb16((int8x4_t)v1), o1 = msf_sxtb16_odd(v1);
        sums[0] = __smlad(ao, o0, __smlad(ae, e0, sums[0]));
        sums[1] = __smlad(ao, o1, __smlad(ae, e1, sums[1]));
        sums[MSF_CHANNEL_BLOCK] = __smlad(bo, o0, __smlad(be, e0, sums[MSF_CHANNEL_BLOCK]));
        sums[MSF_CHANNEL_BLOCK + 1] = __smlad(bo, o1, __smlad(be, e1, sums[MSF_CHANNEL_BLOCK + 1]));
    }
}

/* The same for one output channel (the last of an odd count). */
static void pointwise_one_chunk(int32_t *sums, const uint32_t *lanes, int32_t quads, int32_t tail, const int8_t *w)
{
    const uint32_t *const end = lanes + 4 * (quads + (tail > 0));
    int32_t a0 = sums[0], b0 = sums[MSF_CHANNEL_BLOCK];
    for (; lanes != end; lanes += 4, w += 4) {
        const uint32_t v0 = lanes + 4 == end && tail > 0 ? msf_read_s8_tail(w, tail, 8 * (4 - tail)) : msf_read_s8x4(w);
        const int16x2_t e0 = __sxtb16((int8x4_t)v0), o0 = msf_sxtb16_odd(v0);
        a0 = __smlad((int16x2_t)lanes[0], e0, a0);
        a0 = __smlad((int16x2_t)lanes[1], o0, a0);
        b0 = __smlad((int16x2_t)lanes[2], e0, b0);
        b0 = __smlad((int16x2_t)lanes[3], o0, b0);
    }
    sums[0] = a0;
    sums[MSF_CHANNEL_BLOCK] = b0;
}

/* One pixel (a region's odd last one): sums[k] = start[k] + the chunk's products for output
   channel k < n (start NULL: 0; start may be sums), from a's lanes only (lanes[4q], lanes[4q + 1]),
   the partial quad included. Four output channels at a time: per quad the two lane words are
   read once for four weight words, 16 multiply-accumulates in about 22 instructions. */
static MSF_NOINLINE void single_chunk(int32_t *sums, const int32_t *start, int32_t n, const uint32_t *lanes,
                                      int32_t quads, int32_t tail, const int8_t *w, int32_t patch)
{
    const int32_t cut = 8 * (4 - tail);
    const uint32_t *const end = lanes + 4 * quads;
    int32_t k = 0;
    for (; k + 4 <= n; k += 4, w += 4 * patch) {
        const uint32_t *l = lanes;
        const int8_t *w0 = w, *w2 = w + 2 * patch;
        int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        if (start != NULL) {
            s0 = start[k];
            s1 = start[k + 1];
            s2 = start[k + 2];
            s3 = start[k + 3];
        }
        for (; l != end; l += 4, w0 += 4, w2 += 4) {
            const int16x2_t xa = (int16x2_t)l[0], xb = (int16x2_t)l[1];
            uint32_t v = msf_read_s8x4(w0);
            s0 = __smlad(xb, msf_sxtb16_odd(v), __smlad(xa, __sxtb16((int8x4_t)v), s0));
            v = msf_read_s8x4(w0 + patch);
            s1 = __smlad(xb, msf_sxtb16_odd(v), __smlad(xa, __sxtb16((int8x4_t)v), s1));
            v = msf_read_s8x4(w2);
            s2 = __smlad(xb, msf_sxtb16_odd(v), __smlad(xa, __sxtb16((int8x4_t)v), s2));
            v = msf_read_s8x4(w2 + patch);
            s3 = __smlad(xb, msf_sxtb16_odd(v), __smlad(xa, __sxtb16((int8x4_t)v), s3));
        }
        if (tail > 0) {
            const int16x2_t xa = (int16x2_t)l[0], xb = (int16x2_t)l[1];
            uint32_t v = msf_read_s8_tail(w0, tail, cut);
            s0 = __smlad(xb, msf_sxtb16_odd(v), __smlad(xa, __sxtb16((int8x4_t)v), s0));
            v = msf_read_s8_tail(w0 + patch, tail, cut);
            s1 = __smlad(xb, msf_sxtb16_odd(v), __smlad(xa, __sxtb16((int8x4_t)v), s1));
            v = msf_read_s8_tail(w2, tail, cut);
            s2 = __smlad(xb, msf_sxtb16_odd(v), __smlad(xa, __sxtb16((int8x4_t)v), s2));
            v = msf_read_s8_tail(w2 + patch, tail, cut);
            s3 = __smlad(xb, msf_sxtb16_odd(v), __smlad(xa, __sxtb16((int8x4_t)v), s3));
        }
        sums[k] = s0;
        sums[k + 1] = s1;
        sums[k + 2] = s2;
        sums[k + 3] = s3;
    }
    for (; k < n; ++k, w += patch) {
        const uint32_t *l = lanes;
        const int8_t *w0 = w;
        int32_t s0 = start != NULL ? start[k] : 0;
        for (; l != end; l += 4, w0 += 4) {
            const uint32_t v = msf_read_s8x4(w0);
            s0 = __smlad((int16x2_t)l[1], msf_sxtb16_odd(v), __smlad((int16x2_t)l[0], __sxtb16((int8x4_t)v), s0));
        }
        if (tail > 0) {
            const uint32_t v = msf_read_s8_tail(w0, tail, cut);
            s0 = __smlad((int16x2_t)l[1], msf_sxtb16_odd(v), __smlad((int16x2_t)l[0], __sxtb16((int8x4_t)v), s0));
        }
        sums[k] = s0;
    }
}

/* Patch positions [pos, pos + len) of col, which holds the positions [ch0, ch0 + m): copied from
   src, or (src NULL) the zero point, which is 0 once offset; positions outside the chunk skipped. */
static inline void put_patch(int8_t *col, int32_t ch0, int32_t m, int32_t pos, const int8_t *src, int32_t len,
                             int8_t zero_point)
{
    const int32_t lo = pos > ch0 ? pos : ch0, hi = pos + len < ch0 + m ? pos + len : ch0 + m;
    if (lo >= hi) {
        return;
    }
    if (src == NULL) {
        msf_fill_s8(col + (lo - ch0), zero_point, hi - lo);
    } else {
        msf_copy_s8(col + (lo - ch0), src + (lo - pos), hi - lo);
    }
}

/* The patch values [ch0, ch0 + m) of the output pixel whose window starts at input (y0, x0), into
   col: kernel row by kernel row, a row's in-bounds taps in one copy where the input stores them
   side by side (else tap by tap), padding as the zero point. */
static void gather_patch(const msf_conv2d_params *p, const msf_view *in, int32_t y0, int32_t x0, int32_t ch0,
                         int32_t m, int8_t *col)
{
    const int32_t in_c = p->in_c, kw = p->kw, row_len = kw * in_c;
    const int32_t ring = in->col_ring, col_stride = in->col_stride;
    const int8_t zero_point = (int8_t)-p->input_offset;
    int32_t i_lo, i_hi, j_lo, j_hi, i, j;
    msf_tap_range(y0, p->kh, p->in_h, &i_lo, &i_hi);
    msf_tap_range(x0, kw, p->in_w, &j_lo, &j_hi);
    if (ch0 == 0 && m == p->kh * row_len && i_lo == 0 && i_hi == p->kh && j_lo == 0 && j_hi == kw && col_stride == in_c
        && (ring == 0 || msf_stored_col(in, x0) + kw <= ring)) {
        /* the usual case, without clipping: the whole patch, no padding, each kernel row in one piece */
        const int32_t stored = msf_stored_col(in, x0);
        for (i = 0; i < p->kh; ++i, col += row_len) {
            msf_copy_s8(col, (const int8_t *)in->base + (ptrdiff_t)msf_stored_row(in, y0 + i) * in->row_stride
                             + (ptrdiff_t)stored * in_c, row_len);
        }
        return;
    }
    for (i = 0; i < p->kh; ++i) {
        const int32_t base = i * row_len;
        const int8_t *row;
        int32_t stored;
        if (base >= ch0 + m || base + row_len <= ch0) {
            continue;  /* not in this chunk */
        }
        if (i < i_lo || i >= i_hi || j_lo >= j_hi) {
            put_patch(col, ch0, m, base, NULL, row_len, zero_point);
            continue;
        }
        put_patch(col, ch0, m, base, NULL, j_lo * in_c, zero_point);
        put_patch(col, ch0, m, base + j_hi * in_c, NULL, (kw - j_hi) * in_c, zero_point);
        row = (const int8_t *)in->base + (ptrdiff_t)msf_stored_row(in, y0 + i) * in->row_stride;
        stored = msf_stored_col(in, x0 + j_lo);
        if (col_stride == in_c && (ring == 0 || stored + (j_hi - j_lo) <= ring)) {
            put_patch(col, ch0, m, base + j_lo * in_c, row + (ptrdiff_t)stored * in_c, (j_hi - j_lo) * in_c, zero_point);
        } else {
            for (j = j_lo; j < j_hi; ++j) {
                put_patch(col, ch0, m, base + j * in_c, row + (ptrdiff_t)stored * col_stride, in_c, zero_point);
                if (++stored == ring) {
                    stored = 0;
                }
            }
        }
    }
}

/* CONV_2D on the DSP extension, two output pixels at a time (the region's pixels taken in pairs
   in row-major order, so that a one-column region pairs its rows; an odd last pixel is the
   caller's). A pixel's patch is its kh * kw * in_c inputs in the weights' order (for a 1x1
   convolution without padding, its input channels in place; otherwise gathered, padding as the
   zero point), so that every output channel is one dot product of patch length. Per pair of
   pixels, each chunk of the two patches is offset and extended to 16-bit lanes once, and every
   pair of output channels then reads it: 16 multiply-accumulates in about 20 instructions, where
   the per-pixel loop, which extends each weight word for one pixel only, takes 28. */
static inline void conv_pairs(const msf_conv2d_params *p, const msf_view *in, msf_view *out,
                              int32_t r0, int32_t r1, int32_t c0, int32_t c1, const int direct)
{
    uint32_t lanes[MSF_POINTWISE_CHUNK + 4];  /* + a partial quad */
    int8_t col[MSF_POINTWISE_CHUNK];
    int32_t sums[2 * MSF_CHANNEL_BLOCK];  /* pixel a's accumulators, then pixel b's */
    int32_t tails[2][4];                  /* the chunk's last m % 4 values of a and b, offset, then 0 */
    const int32_t out_c = p->out_c, offset = p->input_offset, patch = p->kh * p->kw * p->in_c;
    const int one_chunk = patch <= MSF_POINTWISE_CHUNK;
    const int16x2_t offset2 = msf_dup16(offset);
    const int fast = msf_output_stage_is_fast(p->rounding, p->right, out_c);
    const int32_t pixels = (r1 - r0) * (c1 - c0);
    int32_t i, r = r0, c = c0, oc0, ch0, k, q, t;
    for (i = 0; i < pixels; i += 2) {
        const int two = i + 1 < pixels;  /* else the odd last pixel, alone */
        int32_t ya, xa, yb = 0, xb = 0;
        int8_t *da, *db = NULL;
        ya = r * p->stride_h - p->pad_top;
        xa = c * p->stride_w - p->pad_left;
        da = msf_at_s8(out, r, c, 0);
        if (++c == c1) {
            c = c0;
            ++r;
        }
        if (two) {
            yb = r * p->stride_h - p->pad_top;
            xb = c * p->stride_w - p->pad_left;
            db = msf_at_s8(out, r, c, 0);
            if (++c == c1) {
                c = c0;
                ++r;
            }
        }
        for (oc0 = 0; oc0 < out_c; oc0 += MSF_CHANNEL_BLOCK) {
            const int32_t n = out_c - oc0 < MSF_CHANNEL_BLOCK ? out_c - oc0 : MSF_CHANNEL_BLOCK;
            const int8_t *const w = p->weights + (ptrdiff_t)oc0 * patch;
            for (ch0 = 0; ch0 < patch; ch0 += MSF_POINTWISE_CHUNK) {
                const int32_t m = patch - ch0 < MSF_POINTWISE_CHUNK ? patch - ch0 : MSF_POINTWISE_CHUNK;
                const int32_t quads = m >> 2;
                /* the last m % 4 values: a partial quad of lanes after four values or more, else
                   one by one */
                const int32_t tail = quads > 0 ? m & 3 : 0, singles = quads > 0 ? 0 : m;
                if (oc0 == 0 || !one_chunk) {  /* the lanes of this chunk (one chunk: kept for every block) */
                    int32_t pixel;
                    for (pixel = 0; pixel < 1 + two; ++pixel) {
                        const int8_t *x;
                        uint32_t *l = lanes + 2 * pixel;
                        if (direct) {
                            x = msf_at_s8(in, pixel ? yb : ya, pixel ? xb : xa, ch0);
                        } else {
                            gather_patch(p, in, pixel ? yb : ya, pixel ? xb : xa, ch0, m, col);
                            x = col;
                        }
                        for (q = 0; q < quads; ++q, l += 4) {
                            const uint32_t v = msf_read_s8x4(x + 4 * q);
                            l[0] = (uint32_t)__sxtab16(offset2, (int8x4_t)v);
                            l[1] = (uint32_t)msf_sxtab16_odd(offset2, v);
                        }
                        for (t = 0; t < 4; ++t) {
                            tails[pixel][t] = t < (m & 3) ? (int32_t)x[4 * quads + t] + offset : 0;
                        }
                        l[0] = ((uint32_t)tails[pixel][0] & 0xffffu) | (uint32_t)tails[pixel][2] << 16;
                        l[1] = ((uint32_t)tails[pixel][1] & 0xffffu) | (uint32_t)tails[pixel][3] << 16;
                    }
                }
                if (!two) {
                    single_chunk(sums, ch0 > 0 ? sums : p->bias != NULL ? p->bias + oc0 : NULL, n, lanes, quads, tail,
                                 w + ch0, patch);
                    for (t = 0; t < singles; ++t) {
                        const int8_t *wt = w + ch0 + t;
                        for (k = 0; k < n; ++k, wt += patch) {
                            sums[k] += tails[0][t] * *wt;
                        }
                    }
                    continue;
                }
                /* the first chunk starts from the bias (start moves along it), the others from sums */
                pointwise_pairs_chunk(sums, ch0 > 0 ? sums : p->bias != NULL ? p->bias + oc0 : NULL, n >> 1, lanes,
                                      quads, w + ch0, patch);
                if (tail > 0) {
                    pointwise_pairs_tail(sums, n >> 1, lanes + 4 * quads, tail, w + ch0 + 4 * quads, patch);
                }
                if (n & 1) {
                    if (ch0 == 0) {
                        sums[n - 1] = sums[MSF_CHANNEL_BLOCK + n - 1] = p->bias != NULL ? p->bias[oc0 + n - 1] : 0;
                    }
                    pointwise_one_chunk(sums + n - 1, lanes, quads, tail, w + (ptrdiff_t)(n - 1) * patch + ch0);
                }
                for (t = 0; t < singles; ++t) {
                    const int8_t *wt = w + ch0 + t;
                    for (k = 0; k < n; ++k, wt += patch) {
                        sums[k] += tails[0][t] * *wt;
                        sums[MSF_CHANNEL_BLOCK + k] += tails[1][t] * *wt;
                    }
                }
            }
            if (!two) {
                if (fast) {
                    msf_requantize_block_fast_s8(sums, n, p->multiplier + oc0, p->right + oc0, p->rounding,
                                                 p->output_offset, p->act_min, p->act_max, da + oc0);
                } else {
                    msf_requantize_block_s8(sums, n, p->multiplier + oc0, p->right + oc0, p->rounding,
                                            p->output_offset, p->act_min, p->act_max, da + oc0);
                }
            } else if (fast) {
                msf_requantize_pair_fast_s8(sums, sums + MSF_CHANNEL_BLOCK, n, p->multiplier + oc0, p->right + oc0,
                                            p->rounding, p->output_offset, p->act_min, p->act_max, da + oc0,
                                            db + oc0);
            } else {
                msf_requantize_block_s8(sums, n, p->multiplier + oc0, p->right + oc0, p->rounding,
                                        p->output_offset, p->act_min, p->act_max, da + oc0);
                msf_requantize_block_s8(sums + MSF_CHANNEL_BLOCK, n, p->multiplier + oc0, p->right + oc0,
                                        p->rounding, p->output_offset, p->act_min, p->act_max, db + oc0);
            }
        }
    }
}

/* conv_pairs compiled twice, so that each form's loops get the registers: a 1x1 convolution
   without padding reads its patch (the pixel's channels) in place, the others gather it. */
static MSF_NOINLINE void conv_pairs_direct(const msf_conv2d_params *p, const msf_view *in, msf_view *out,
                                           int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    conv_pairs(p, in, out, r0, r1, c0, c1, 1);
}

static MSF_NOINLINE void conv_pairs_gathered(const msf_conv2d_params *p, const msf_view *in, msf_view *out,
                                             int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    conv_pairs(p, in, out, r0, r1, c0, c1, 0);
}
#endif

void msf_conv2d_s8(const msf_conv2d_params *p, const msf_view *in, msf_view *out,
                   int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
#if defined(MSF_ARM_DSP)
    if (r0 < r1 && c0 < c1) {
        if (p->kh == 1 && p->kw == 1 && p->pad_top == 0 && p->pad_left == 0) {
            conv_pairs_direct(p, in, out, r0, r1, c0, c1);
        } else {
            conv_pairs_gathered(p, in, out, r0, r1, c0, c1);
        }
    }
#else
    msf_window_op op;
    MSF_WINDOW_OP_FROM_PARAMS(op, p);
    op.tap_values = p->in_c;
    op.tap_weights = p->in_c;
    op.merge_taps = 1;
    op.accumulate = accumulate;
    msf_window_s8(&op, in, out, r0, r1, c0, c1);
#endif
}

void msf_conv2d_f32(const msf_conv2d_params *p, const msf_view *in, msf_view *out,
                    int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    /* float: the dot product over the in-bounds taps in (row, column, channel) order (zero
       padding adds nothing), then the bias, then the activation, as the numpy kernel's GEMM +
       bias + float_activation (whose BLAS sums in its own order: results agree to rounding). */
    const int32_t patch = p->kh * p->kw * p->in_c;
    float acc[MSF_CHANNEL_BLOCK];
    int32_t r, c, oc0, i, j, k, ch;
    for (r = r0; r < r1; ++r) {
        const int32_t y0 = r * p->stride_h - p->pad_top;
        int32_t i_lo, i_hi;
        msf_tap_range(y0, p->kh, p->in_h, &i_lo, &i_hi);
        for (c = c0; c < c1; ++c) {
            const int32_t x0 = c * p->stride_w - p->pad_left;
            float *dst = msf_at_f32(out, r, c, 0);
            int32_t j_lo, j_hi;
            msf_tap_range(x0, p->kw, p->in_w, &j_lo, &j_hi);
            for (oc0 = 0; oc0 < p->out_c; oc0 += MSF_CHANNEL_BLOCK) {
                const int32_t n = p->out_c - oc0 < MSF_CHANNEL_BLOCK ? p->out_c - oc0 : MSF_CHANNEL_BLOCK;
                for (k = 0; k < n; ++k) {
                    acc[k] = 0.0f;
                }
                for (i = i_lo; i < i_hi; ++i) {
                    for (j = j_lo; j < j_hi; ++j) {
                        const float *src = msf_at_f32(in, y0 + i, x0 + j, 0);
                        const float *w = p->weights_f32 + ((ptrdiff_t)oc0 * p->kh * p->kw + i * p->kw + j) * p->in_c;
                        for (k = 0; k < n; ++k, w += patch) {
                            for (ch = 0; ch < p->in_c; ++ch) {
                                acc[k] += src[ch] * w[ch];
                            }
                        }
                    }
                }
                for (k = 0; k < n; ++k) {
                    float v = acc[k];
                    if (p->bias_f32 != NULL) {
                        v += p->bias_f32[oc0 + k];
                    }
                    dst[oc0 + k] = msf_apply_activation_f32(v, p->activation);
                }
            }
        }
    }
}
