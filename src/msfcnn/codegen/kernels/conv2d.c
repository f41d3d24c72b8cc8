/*
 * CONV_2D over an output region (src/msfcnn/ops/conv2d.py).
 *
 * int8: TFLite's int8 convolution is im2col + a ruy GEMM of (input - input zero point) by the
 * weights, int32 accumulation, plus the int32 bias, then ruy's output stage: a per-channel
 * MultiplyByQuantizedMultiplier (p->rounding, MSF_ROUND_RUY on x86), the output zero point, and
 * the fused activation's clamp. Padding is the input zero point in TFLite, i.e. it contributes
 * nothing once the offset is added, so padded taps are skipped rather than read.
 *
 * float: the dot product over the in-bounds taps in (row, column, channel) order (zero padding
 * adds nothing), then the bias, then the activation, as the numpy kernel's GEMM + bias +
 * float_activation (whose BLAS sums in its own order: results agree to rounding).
 *
 * Portable loops (msf_window, window.c): output pixel; its window cut once into runs; block of
 * output channels; four output channels at a time, each input value loaded and offset once for
 * four multiply-accumulates in registers; run; input values of the run. Weights are (out_c, kh,
 * kw, in_c).
 *
 * On Arm's DSP extension (conv_pairs below): pairs of output pixels; block of output channels;
 * chunk of the pixels' patches, extended to 16-bit lanes once; pairs of output channels; quads of
 * the chunk, two multiply-accumulates an SMLAD. The odd last pixel of a region goes alone, four
 * output channels at a time.
 */
#include "conv2d.h"
#include "dilated.h"
#include "window.h"

#if defined(MSF_ARMV6M)
/* *s0 .. *s3 += the products of a run's inputs x[0, length), offset, and four output channels'
   weights from w, patch apart: the loop below as Armv6-M runs it best, 16 instructions for an
   input value's four multiply-accumulates, where GCC's code for it takes 25 (LDRSB has only a
   register offset, and a loop of eight pointers and four sums spills). Eight low registers hold
   the five pointers (to the ends of the runs), an index counting up to 0 and two temporaries; the
   sums and the offset stay in high registers, which ADD reaches. */
static inline void run_four_channels(int32_t *s0, int32_t *s1, int32_t *s2, int32_t *s3, const int8_t *x,
                                     const int8_t *w, int32_t patch, int32_t length, int32_t offset)
{
    const int8_t *const x_end = x + length, *const w0 = w + length, *const w1 = w0 + patch;
    const int8_t *const w2 = w1 + patch, *const w3 = w2 + patch;
    int32_t i = -length, v, t;
    if (length <= 0) {
        return;
    }
    __asm__(".syntax unified\n"
            "1:\n\t"
            "ldrsb %[v], [%[x], %[i]]\n\t"
            "add %[v], %[offset]\n\t"
            "ldrsb %[t], [%[w0], %[i]]\n\t"
            "muls %[t], %[v]\n\t"
            "add %[s0], %[t]\n\t"
            "ldrsb %[t], [%[w1], %[i]]\n\t"
            "muls %[t], %[v]\n\t"
            "add %[s1], %[t]\n\t"
            "ldrsb %[t], [%[w2], %[i]]\n\t"
            "muls %[t], %[v]\n\t"
            "add %[s2], %[t]\n\t"
            "ldrsb %[t], [%[w3], %[i]]\n\t"
            "muls %[t], %[v]\n\t"
            "add %[s3], %[t]\n\t"
            "adds %[i], #1\n\t"
            "bne 1b"
            : [s0] "+h"(*s0), [s1] "+h"(*s1), [s2] "+h"(*s2), [s3] "+h"(*s3), [i] "+l"(i), [v] "=&l"(v),
              [t] "=&l"(t)
            : [x] "l"(x_end), [w0] "l"(w0), [w1] "l"(w1), [w2] "l"(w2), [w3] "l"(w3), [offset] "h"(offset)
            : "cc", "memory");
}
#endif

/* (The DSP extension's loops are further down; there this one serves the dilated windows only.)
   acc[k] = start[k] + the window's sum for output channel oc0 + k, k < n (start NULL: 0). Four
   output channels at a time: each input value loaded and offset once for four multiply-accumulates
   in registers. */
static void accumulate(const void *params, const msf_runs *runs, int32_t oc0, int32_t n, const int32_t *start,
                       msf_block *block)
{
    const msf_conv2d_params *p = (const msf_conv2d_params *)params;
    const int32_t patch = p->kh * p->kw * p->in_c;
    const int32_t offset = p->input_offset;
    const int8_t *w = p->weights + (ptrdiff_t)oc0 * patch;
    int32_t *acc = block->i32;
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
            const int8_t *x = (const int8_t *)runs->src[t];
#if defined(MSF_ARMV6M)
            run_four_channels(&s0, &s1, &s2, &s3, x, w + runs->weight[t], patch, runs->length[t], offset);
#else
            const int8_t *w0 = w + runs->weight[t], *w1 = w0 + patch, *w2 = w1 + patch, *w3 = w2 + patch;
            const int32_t length = runs->length[t];
            for (ch = 0; ch < length; ++ch) {
                const int32_t v = (int32_t)x[ch] + offset;
                s0 += v * w0[ch];
                s1 += v * w1[ch];
                s2 += v * w2[ch];
                s3 += v * w3[ch];
            }
#endif
        }
        acc[k] = s0;
        acc[k + 1] = s1;
        acc[k + 2] = s2;
        acc[k + 3] = s3;
    }
    for (; k < n; ++k, w += patch) {
        int32_t sum = start != NULL ? start[k] : 0;
        for (t = 0; t < runs->count; ++t) {
            const int8_t *x = (const int8_t *)runs->src[t];
            const int8_t *w0 = w + runs->weight[t];
            const int32_t length = runs->length[t];
            for (ch = 0; ch < length; ++ch) {
                sum += ((int32_t)x[ch] + offset) * w0[ch];
            }
        }
        acc[k] = sum;
    }
}

/* float: acc = (start NULL: 0, else acc) + the window's products, run by run in the window's order. */
static void accumulate_f32(const void *params, const msf_runs *runs, int32_t oc0, int32_t n, const int32_t *start,
                           msf_block *acc)
{
    const msf_conv2d_params *p = (const msf_conv2d_params *)params;
    const int32_t patch = p->kh * p->kw * p->in_c;
    const float *w = p->weights_f32 + (ptrdiff_t)oc0 * patch;
    int32_t k, t, ch;
    for (k = 0; k < n; ++k, w += patch) {
        float sum = start == NULL ? 0.0f : acc->f32[k];
        for (t = 0; t < runs->count; ++t) {
            const float *x = (const float *)runs->src[t];
            const float *w0 = w + runs->weight[t];
            const int32_t length = runs->length[t];
            for (ch = 0; ch < length; ++ch) {
                sum += x[ch] * w0[ch];
            }
        }
        acc->f32[k] = sum;
    }
}

/* The convolution through msf_window: a kernel row's taps one run where the input stores them side
   by side, the weights of consecutive taps in_c apart. (Inlined into each caller: the op's
   description then sits in the caller's stack frame, not in one more.) */
static MSF_ALWAYS_INLINE void convolution(const msf_conv2d_params *p, const msf_view *in, msf_view *out,
                                          int32_t r0, int32_t r1, int32_t c0, int32_t c1, int32_t element,
                                          msf_accumulate_fn multiply_accumulate, const int32_t dilation_h,
                                          const int32_t dilation_w)
{
    const msf_output_stage stage = MSF_OUTPUT_STAGE(p);
    const msf_window_op op = {
        .shape = MSF_WINDOW_SHAPE(p), .channels = p->out_c, .element = element, .tap_values = p->in_c,
        .tap_weights = p->in_c, .merge_taps = 1, .bias = element == (int32_t)sizeof(int8_t) ? p->bias : NULL,
        .accumulate = multiply_accumulate, .finish = NULL, .stage = &stage, .params = p
    };
    if (dilation_h == 1 && dilation_w == 1) {  /* (constants: the plain kernels have no test here) */
        msf_window(&op, in, out, r0, r1, c0, c1);
    } else {  /* the window spans its extent, a run per tap (dilated.c) */
        msf_window_op dilated = op;
        dilated.shape.kh = msf_dilated_extent(p->kh, dilation_h);
        dilated.shape.kw = msf_dilated_extent(p->kw, dilation_w);
        msf_window_dilated(&dilated, dilation_h, dilation_w, in, out, r0, r1, c0, c1);
    }
}

#if defined(MSF_ARM_DSP)
/* Values of a pixel's patch (its window's kh * kw * in_c inputs, in the weights' order) that the
   paired loop extends at once: their 16-bit lanes for two pixels take 4 B a value on the stack,
   plus 1 B a value to gather a window's patch (400 + 96 B; 96 holds the expansion layers of
   MobileNetV2 and MCUNet, and a 3x3 stem, in one chunk). Any value >= 4 gives the same results. */
#ifndef MSF_POINTWISE_CHUNK
#define MSF_POINTWISE_CHUNK 96
#endif

/* Two pixels' (a, b) sums of two output channels, (a0, a1, b0, b1), from and to where sums[0],
   sums[1], sums[MSF_CHANNEL_BLOCK] and sums[MSF_CHANNEL_BLOCK + 1] hold them. */
static inline msf_sums4 load_pair(const int32_t *sums)
{
    const msf_sums4 s = { sums[0], sums[1], sums[MSF_CHANNEL_BLOCK], sums[MSF_CHANNEL_BLOCK + 1] };
    return s;
}

static inline void store_pair(int32_t *sums, msf_sums4 s)
{
    sums[0] = s.s0;
    sums[1] = s.s1;
    sums[MSF_CHANNEL_BLOCK] = s.s2;
    sums[MSF_CHANNEL_BLOCK + 1] = s.s3;
}

/* A quad's weight word at w: its four weights, or (partial) the last `tail` (1 to 3) weights of a
   run of at least four as the low bytes of a word (the others 0): the word ending with them,
   shifted right by cut = 8 * (4 - tail). Reading back into the run, not past its end, never
   leaves the weights array. Callers pass partial as a constant. */
static inline uint32_t weight_word(const int8_t *w, int32_t tail, int32_t cut, const int partial)
{
    return partial ? msf_read_s8x4(w + tail - 4) >> cut : msf_read_s8x4(w);
}

/* s + a quad of two pixels times two output channels: the quad's lanes l = (a's even values, a's
   odd, b's even, b's odd), the channels' weight words v0 and v1, extended once for both pixels;
   eight SMLADs, one lane word live at a time. */
static inline msf_sums4 pair_quad(msf_sums4 s, const uint32_t *l, uint32_t v0, uint32_t v1)
{
    const int16x2_t e0 = __sxtb16((int8x4_t)v0), o0 = msf_sxtb16_odd(v0);
    const int16x2_t e1 = __sxtb16((int8x4_t)v1), o1 = msf_sxtb16_odd(v1);
    int16x2_t x = (int16x2_t)l[0];
    s.s0 = __smlad(x, e0, s.s0);
    s.s1 = __smlad(x, e1, s.s1);
    x = (int16x2_t)l[1];
    s.s0 = __smlad(x, o0, s.s0);
    s.s1 = __smlad(x, o1, s.s1);
    x = (int16x2_t)l[2];
    s.s2 = __smlad(x, e0, s.s2);
    s.s3 = __smlad(x, e1, s.s3);
    x = (int16x2_t)l[3];
    s.s2 = __smlad(x, o0, s.s2);
    s.s3 = __smlad(x, o1, s.s3);
    return s;
}

/* sum + a quad of one pixel (lanes l[0], its even values, and l[1], its odd) times one weight word. */
static inline int32_t quad_dot(int32_t sum, const uint32_t *l, uint32_t v)
{
    return __smlad((int16x2_t)l[1], msf_sxtb16_odd(v), __smlad((int16x2_t)l[0], __sxtb16((int8x4_t)v), sum));
}

/* s + a quad of one pixel times four output channels, whose weight words are at w0, w0 + patch,
   w2 and w2 + patch. */
static inline msf_sums4 single_quad(msf_sums4 s, const uint32_t *l, const int8_t *w0, const int8_t *w2,
                                    int32_t patch, int32_t tail, int32_t cut, const int partial)
{
    s.s0 = quad_dot(s.s0, l, weight_word(w0, tail, cut, partial));
    s.s1 = quad_dot(s.s1, l, weight_word(w0 + patch, tail, cut, partial));
    s.s2 = quad_dot(s.s2, l, weight_word(w2, tail, cut, partial));
    s.s3 = quad_dot(s.s3, l, weight_word(w2 + patch, tail, cut, partial));
    return s;
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
        int32_t q = quads;
        msf_sums4 s = { 0, 0, 0, 0 };
        if (start == sums) {  /* a later chunk: the sums so far */
            s = load_pair(sums);
        } else if (start != NULL) {  /* the first chunk: the bias */
            s.s0 = s.s2 = start[0];
            s.s1 = s.s3 = start[1];
        }
        /* Two quads an iteration (the loop's own instructions, and the reload of what does not
           fit in the registers, once per eight channels), then an odd one. */
        for (; q >= 2; q -= 2, l += 8, w0 += 8) {
            s = pair_quad(s, l, msf_read_s8x4(w0), msf_read_s8x4(w0 + patch));
            s = pair_quad(s, l + 4, msf_read_s8x4(w0 + 4), msf_read_s8x4(w0 + patch + 4));
        }
        if (q > 0) {
            s = pair_quad(s, l, msf_read_s8x4(w0), msf_read_s8x4(w0 + patch));
        }
        store_pair(sums, s);
    }
}

/* sums as in pointwise_pairs_chunk, += a partial quad: the lanes (a's even, a's odd, b's even,
   b's odd) of the chunk's last `tail` (1 to 3) values and zeros, and the last `tail` weights of
   each channel's chunk, the first channel's at w, after at least four others. */
static MSF_NOINLINE void pointwise_pairs_tail(int32_t *sums, int32_t pairs, const uint32_t *lanes, int32_t tail,
                                              const int8_t *w, int32_t patch)
{
    const int32_t cut = 8 * (4 - tail);
    const uint32_t l[4] = { lanes[0], lanes[1], lanes[2], lanes[3] };  /* in registers, as sums is stored */
    for (; pairs > 0; --pairs, sums += 2, w += 2 * patch) {
        store_pair(sums, pair_quad(load_pair(sums), l, weight_word(w, tail, cut, 1),
                                   weight_word(w + patch, tail, cut, 1)));
    }
}

/* The same for one output channel (the last of an odd count), whole quads and partial: a pair of
   channels of which the second is the first again, and dropped (the compiler drops its work). */
static void pointwise_one_chunk(int32_t *sums, const uint32_t *lanes, int32_t quads, int32_t tail, const int8_t *w)
{
    const int32_t cut = 8 * (4 - tail);
    msf_sums4 s = { 0, 0, 0, 0 };
    int32_t q;
    s.s0 = sums[0];
    s.s2 = sums[MSF_CHANNEL_BLOCK];
    for (q = 0; q < quads; ++q, lanes += 4, w += 4) {
        const uint32_t v = msf_read_s8x4(w);
        s = pair_quad(s, lanes, v, v);
    }
    if (tail > 0) {
        const uint32_t v = weight_word(w, tail, cut, 1);
        s = pair_quad(s, lanes, v, v);
    }
    sums[0] = s.s0;
    sums[MSF_CHANNEL_BLOCK] = s.s2;
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
        msf_sums4 s = msf_sums4_start(start != NULL ? start + k : NULL);
        for (; l != end; l += 4, w0 += 4, w2 += 4) {
            s = single_quad(s, l, w0, w2, patch, 0, 0, 0);
        }
        if (tail > 0) {
            s = single_quad(s, l, w0, w2, patch, tail, cut, 1);
        }
        sums[k] = s.s0;
        sums[k + 1] = s.s1;
        sums[k + 2] = s.s2;
        sums[k + 3] = s.s3;
    }
    for (; k < n; ++k, w += patch) {
        const uint32_t *l = lanes;
        const int8_t *w0 = w;
        int32_t s0 = start != NULL ? start[k] : 0;
        for (; l != end; l += 4, w0 += 4) {
            s0 = quad_dot(s0, l, msf_read_s8x4(w0));
        }
        if (tail > 0) {
            s0 = quad_dot(s0, l, weight_word(w0, tail, cut, 1));
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

/* The patch values [ch0, ch0 + m) of output pixel px into col: kernel row by kernel row, a row's
   in-bounds taps in one copy where the input stores them side by side (else tap by tap), padding
   as the zero point. */
static void gather_patch(const msf_conv2d_params *p, const msf_view *in, const msf_pixel *px, int32_t ch0, int32_t m,
                         int8_t *col)
{
    const int32_t in_c = p->in_c, kh = p->kh, kw = p->kw, row_len = kw * in_c;
    const int32_t ring = in->col_ring, col_stride = in->col_stride;
    const int32_t y0 = px->y0, x0 = px->x0, i_lo = px->i_lo, i_hi = px->i_hi, j_lo = px->j_lo, j_hi = px->j_hi;
    const int8_t zero_point = (int8_t)-p->input_offset;
    int32_t i, j;
    if (ch0 == 0 && m == kh * row_len && i_lo == 0 && i_hi == kh && j_lo == 0 && j_hi == kw && col_stride == in_c
        && (ring == 0 || msf_stored_col(in, x0) + kw <= ring)) {
        /* the usual case, without clipping: the whole patch, no padding, each kernel row in one piece */
        const int32_t stored = msf_stored_col(in, x0);
        for (i = 0; i < kh; ++i, col += row_len) {
            msf_copy_s8(col, (const int8_t *)in->base + (ptrdiff_t)msf_stored_row(in, y0 + i) * in->row_stride
                             + (ptrdiff_t)stored * in_c, row_len);
        }
        return;
    }
    for (i = 0; i < kh; ++i) {
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
   in row-major order, so that a one-column region pairs its rows; an odd last pixel goes alone).
   A pixel's patch is its kh * kw * in_c inputs in the weights' order (for a 1x1 convolution
   without padding, its input channels in place; otherwise gathered, padding as the zero point),
   so that every output channel is one dot product of patch length. Per pair of pixels, each chunk
   of the two patches is offset and extended to 16-bit lanes once, and every pair of output
   channels then reads it: 16 multiply-accumulates in about 20 instructions, where the per-pixel
   loop, which extends each weight word for one pixel only, takes 28. */
static inline void conv_pairs(const msf_conv2d_params *p, const msf_view *in, msf_view *out,
                              int32_t r0, int32_t r1, int32_t c0, int32_t c1, const int direct)
{
    uint32_t lanes[MSF_POINTWISE_CHUNK + 4];  /* + a partial quad */
    int8_t col[MSF_POINTWISE_CHUNK];
    int32_t sums[2 * MSF_CHANNEL_BLOCK];  /* pixel a's accumulators, then pixel b's */
    int32_t tails[2][4];                  /* the chunk's last m % 4 values of a and b, offset, then 0 */
    const msf_window_shape shape = MSF_WINDOW_SHAPE(p);
    const int32_t out_c = p->out_c, offset = p->input_offset, patch = p->kh * p->kw * p->in_c;
    const int one_chunk = patch <= MSF_POINTWISE_CHUNK;
    const int16x2_t offset2 = msf_dup16(offset);
    int mode;
    msf_pixels it;
    msf_pixel pixel[2];                   /* a and b */
    int32_t oc0, ch0, k, q, t, x;
    {
        const msf_output_stage stage = MSF_OUTPUT_STAGE(p);
        mode = msf_output_stage_mode(&stage, out_c);
    }
    msf_pixels_start(&it, &shape, r0, r1, c0, c1);
    /* The iterator is read once a pixel: in registers it would take those that the output
       stage's loop below needs at every channel. */
    MSF_IN_MEMORY(it);
    while (msf_pixels_next(&it, &pixel[0])) {
        const int32_t two = msf_pixels_next(&it, &pixel[1]);  /* else the odd last pixel, alone */
        int8_t *const da = msf_at_s8(out, pixel[0].r, pixel[0].c, 0);
        int8_t *const db = two ? msf_at_s8(out, pixel[1].r, pixel[1].c, 0) : NULL;
        for (oc0 = 0; oc0 < out_c; oc0 += MSF_CHANNEL_BLOCK) {
            const int32_t n = out_c - oc0 < MSF_CHANNEL_BLOCK ? out_c - oc0 : MSF_CHANNEL_BLOCK;
            const int8_t *const w = p->weights + (ptrdiff_t)oc0 * patch;
            for (ch0 = 0; ch0 < patch; ch0 += MSF_POINTWISE_CHUNK) {
                const int32_t m = patch - ch0 < MSF_POINTWISE_CHUNK ? patch - ch0 : MSF_POINTWISE_CHUNK;
                const int32_t quads = m >> 2;
                /* the last m % 4 values: a partial quad of lanes after four values or more, else
                   one by one */
                const int32_t tail = quads > 0 ? m & 3 : 0, singles = quads > 0 ? 0 : m;
                /* the first chunk starts from the bias, the others from sums */
                const int32_t *const start = ch0 > 0 ? sums : p->bias != NULL ? p->bias + oc0 : NULL;
                if (oc0 == 0 || !one_chunk) {  /* the lanes of this chunk (one chunk: kept for every block) */
                    for (x = 0; x <= two; ++x) {
                        const int8_t *v;
                        uint32_t *l = lanes + 2 * x;
                        if (direct) {
                            /* (constant indices: the pixels' clipping, unused here, is dropped) */
                            v = msf_at_s8(in, x ? pixel[1].y0 : pixel[0].y0, x ? pixel[1].x0 : pixel[0].x0, ch0);
                        } else {
                            gather_patch(p, in, &pixel[x], ch0, m, col);
                            v = col;
                        }
                        for (q = 0; q < quads; ++q, l += 4) {
                            const uint32_t word = msf_read_s8x4(v + 4 * q);
                            l[0] = (uint32_t)__sxtab16(offset2, (int8x4_t)word);
                            l[1] = (uint32_t)msf_sxtab16_odd(offset2, word);
                        }
                        for (t = 0; t < 4; ++t) {
                            tails[x][t] = t < (m & 3) ? (int32_t)v[4 * quads + t] + offset : 0;
                        }
                        l[0] = ((uint32_t)tails[x][0] & 0xffffu) | (uint32_t)tails[x][2] << 16;
                        l[1] = ((uint32_t)tails[x][1] & 0xffffu) | (uint32_t)tails[x][3] << 16;
                    }
                }
                if (!two) {
                    single_chunk(sums, start, n, lanes, quads, tail, w + ch0, patch);
                } else {
                    pointwise_pairs_chunk(sums, start, n >> 1, lanes, quads, w + ch0, patch);
                    if (tail > 0) {
                        pointwise_pairs_tail(sums, n >> 1, lanes + 4 * quads, tail, w + ch0 + 4 * quads, patch);
                    }
                    if (n & 1) {
                        if (ch0 == 0) {
                            sums[n - 1] = sums[MSF_CHANNEL_BLOCK + n - 1] = p->bias != NULL ? p->bias[oc0 + n - 1] : 0;
                        }
                        pointwise_one_chunk(sums + n - 1, lanes, quads, tail, w + (ptrdiff_t)(n - 1) * patch + ch0);
                    }
                }
                for (t = 0; t < singles; ++t) {  /* a chunk of fewer than four values */
                    for (x = 0; x <= two; ++x) {
                        const int8_t *wt = w + ch0 + t;
                        for (k = 0; k < n; ++k, wt += patch) {
                            sums[x * MSF_CHANNEL_BLOCK + k] += tails[x][t] * *wt;
                        }
                    }
                }
            }
            /* With ruy's rounding, the two pixels' values of a channel are requantised together
               (its multiplier, shift and rounding constant read once); otherwise one after the
               other. The output stage's fields are read where they are used, so that the loops
               have the registers. */
            if (two && mode == MSF_STAGE_RUY_FULL) {
                msf_requantize_pair_loop(sums, sums + MSF_CHANNEL_BLOCK, n, p->multiplier + oc0, p->right + oc0,
                                         p->output_offset, -128, 127, da + oc0, db + oc0, 1);
            } else if (two && mode == MSF_STAGE_RUY) {
                msf_requantize_pair_loop(sums, sums + MSF_CHANNEL_BLOCK, n, p->multiplier + oc0, p->right + oc0,
                                         p->output_offset, p->act_min, p->act_max, da + oc0, db + oc0, 0);
            } else {
                const msf_output_stage stage = MSF_OUTPUT_STAGE(p);
                msf_output_stage_s8(&stage, mode, sums, oc0, n, da + oc0);
                if (two) {
                    msf_output_stage_s8(&stage, mode, sums + MSF_CHANNEL_BLOCK, oc0, n, db + oc0);
                }
            }
        }
    }
}

#if defined(MSF_ARM_MVE)
/* Patch values (kh * kw * in_c) up to which the Helium loop gathers a pixel's patch onto the stack;
   a longer gathered patch takes the DSP loop. */
#ifndef MSF_MVE_PATCH
#define MSF_MVE_PATCH 512
#endif

/* sum_i w[i] over a weight row of `patch` values, 16 a vector, the last ones predicated. */
static inline int32_t mve_weight_sum(const int8_t *w, int32_t patch)
{
    const int32_t whole = patch & ~15;
    int32_t sum = 0, i;
    for (i = 0; i < whole; i += 16) {
        sum = vaddvaq_s8(sum, vldrbq_s8(w + i));
    }
    if (whole < patch) {
        sum = vaddvaq_s8(sum, vldrbq_z_s8(w + whole, vctp8q((uint32_t)(patch - whole))));
    }
    return sum;
}

/* sums[k] = start[k] + sum_i v[i] * w[k * patch + i] for k < n, a patch of at most 16 values in
   one vector (full: exactly 16, no predicate): per output channel a load and a VMLADAVA. */
static inline void mve_dot_short(int32_t *sums, const int32_t *start, int32_t n, const int8_t *v, const int8_t *w,
                                 int32_t patch, const int full)
{
    const mve_pred16_t active = vctp8q((uint32_t)patch);
    const int8x16_t x = full ? vldrbq_s8(v) : vldrbq_z_s8(v, active);
    int32_t k;
    for (k = 0; k < n; ++k, w += patch) {
        sums[k] = vmladavaq_s8(start[k], x, full ? vldrbq_s8(w) : vldrbq_z_s8(w, active));
    }
}

/* The same for a patch of 17 to 32 values, held in two vectors for the pixel (the second
   predicated): per output channel two loads and two VMLADAVAs. */
static inline void mve_dot_two(int32_t *sums, const int32_t *start, int32_t n, const int8_t *v, const int8_t *w,
                               int32_t patch)
{
    const mve_pred16_t active = vctp8q((uint32_t)(patch - 16));
    const int8x16_t x0 = vldrbq_s8(v), x1 = vldrbq_z_s8(v + 16, active);
    int32_t k;
    for (k = 0; k < n; ++k, w += patch) {
        sums[k] = vmladavaq_s8(vmladavaq_s8(start[k], x0, vldrbq_s8(w)), x1, vldrbq_z_s8(w + 16, active));
    }
}

/* The same for a longer patch: four output channels at a time, each 16 patch values loaded once
   for their four weight vectors and four VMLADAVAs; the last values of the patch (exact: none)
   predicated. */
static inline void mve_dot_rows(int32_t *sums, const int32_t *start, int32_t n, const int8_t *v, const int8_t *w,
                                int32_t patch, const int exact)
{
    const int32_t chunks = patch >> 4, rest = patch & 15;
    const mve_pred16_t last = vctp8q((uint32_t)rest);
    int32_t k = 0, i;
    for (; k + 4 <= n; k += 4, w += 4 * patch) {
        const int8_t *x = v, *w0 = w, *w1 = w + patch, *w2 = w1 + patch, *w3 = w2 + patch;
        int32_t s0 = start[k], s1 = start[k + 1], s2 = start[k + 2], s3 = start[k + 3];
        for (i = chunks; i > 0; --i, x += 16, w0 += 16, w1 += 16, w2 += 16, w3 += 16) {
            const int8x16_t x16 = vldrbq_s8(x);
            s0 = vmladavaq_s8(s0, x16, vldrbq_s8(w0));
            s1 = vmladavaq_s8(s1, x16, vldrbq_s8(w1));
            s2 = vmladavaq_s8(s2, x16, vldrbq_s8(w2));
            s3 = vmladavaq_s8(s3, x16, vldrbq_s8(w3));
        }
        if (!exact) {
            const int8x16_t x16 = vldrbq_z_s8(x, last);
            s0 = vmladavaq_s8(s0, x16, vldrbq_z_s8(w0, last));
            s1 = vmladavaq_s8(s1, x16, vldrbq_z_s8(w1, last));
            s2 = vmladavaq_s8(s2, x16, vldrbq_z_s8(w2, last));
            s3 = vmladavaq_s8(s3, x16, vldrbq_z_s8(w3, last));
        }
        sums[k] = s0;
        sums[k + 1] = s1;
        sums[k + 2] = s2;
        sums[k + 3] = s3;
    }
    for (; k < n; ++k, w += patch) {
        int32_t s0 = start[k];
        for (i = 0; i < patch; i += 16) {
            const mve_pred16_t active = vctp8q((uint32_t)(patch - i));
            s0 = vmladavaq_s8(s0, vldrbq_z_s8(v + i, active), vldrbq_z_s8(w + i, active));
        }
        sums[k] = s0;
    }
}

/* CONV_2D on Helium, output pixel by output pixel within blocks of MSF_MVE_BLOCK output channels. The input
   offset is folded into each channel's start, bias + offset * sum_i w[i] (computed once a block
   and call), so that the dot products run on the int8 values themselves: sum_i (v[i] + offset) *
   w[i] = sum_i v[i] * w[i] + offset * sum_i w[i], exactly, in int32. A 1x1 convolution without
   padding reads its patch (the pixel's channels) in place (col NULL); the others gather it into
   col (patch <= MSF_MVE_PATCH). */
static MSF_ALWAYS_INLINE void conv_mve(const msf_conv2d_params *p, const msf_view *in, msf_view *out, int32_t r0, int32_t r1,
                            int32_t c0, int32_t c1, int8_t *col)
{
    int32_t start[MSF_MVE_BLOCK], sums[MSF_MVE_BLOCK];
    msf_mve_stage block;
    const msf_window_shape shape = MSF_WINDOW_SHAPE(p);
    const msf_output_stage stage = MSF_OUTPUT_STAGE(p);
    const int32_t out_c = p->out_c, patch = p->kh * p->kw * p->in_c;
    const int mode = msf_output_stage_mode(&stage, out_c);
    msf_pixels it;
    msf_pixel px;
    int32_t oc0, k;
    for (oc0 = 0; oc0 < out_c; oc0 += MSF_MVE_BLOCK) {
        const int32_t n = out_c - oc0 < MSF_MVE_BLOCK ? out_c - oc0 : MSF_MVE_BLOCK;
        const int8_t *const w = p->weights + (ptrdiff_t)oc0 * patch;
        for (k = 0; k < n; ++k) {
            start[k] = (p->bias != NULL ? p->bias[oc0 + k] : 0)
                       + p->input_offset * mve_weight_sum(w + (ptrdiff_t)k * patch, patch);
        }
        msf_mve_stage_block(&stage, oc0, n, &block);
        msf_pixels_start(&it, &shape, r0, r1, c0, c1);
        while (msf_pixels_next(&it, &px)) {
            const int8_t *v;
            if (col == NULL) {  /* direct */
                v = msf_at_s8(in, px.y0, px.x0, 0);
            } else {
                gather_patch(p, in, &px, 0, patch, col);
                v = col;
            }
            if (patch == 16) {
                mve_dot_short(sums, start, n, v, w, patch, 1);
            } else if (patch < 16) {
                mve_dot_short(sums, start, n, v, w, patch, 0);
            } else if (patch <= 32 && (patch & 15) != 0) {
                mve_dot_two(sums, start, n, v, w, patch);
            } else if ((patch & 15) == 0) {
                mve_dot_rows(sums, start, n, v, w, patch, 1);
            } else {
                mve_dot_rows(sums, start, n, v, w, patch, 0);
            }
            msf_mve_output_stage_s8(&stage, mode, &block, sums, oc0, n, msf_at_s8(out, px.r, px.c, oc0));
        }
    }
}

static MSF_NOINLINE void conv_mve_direct(const msf_conv2d_params *p, const msf_view *in, msf_view *out,
                                         int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    conv_mve(p, in, out, r0, r1, c0, c1, NULL);
}

static MSF_NOINLINE void conv_mve_gathered(const msf_conv2d_params *p, const msf_view *in, msf_view *out,
                                           int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    int8_t col[MSF_MVE_PATCH];
    conv_mve(p, in, out, r0, r1, c0, c1, col);
}
#endif

/* conv_pairs compiled twice, so that each form's loops get the registers: a 1x1 convolution
   without padding reads its patch (the pixel's channels) in place, the others gather it. */
#if !defined(MSF_ARM_MVE)
static MSF_NOINLINE void conv_pairs_direct(const msf_conv2d_params *p, const msf_view *in, msf_view *out,
                                           int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    conv_pairs(p, in, out, r0, r1, c0, c1, 1);
}
#endif

static MSF_NOINLINE void conv_pairs_gathered(const msf_conv2d_params *p, const msf_view *in, msf_view *out,
                                             int32_t r0, int32_t r1, int32_t c0, int32_t c1)
{
    conv_pairs(p, in, out, r0, r1, c0, c1, 0);
}
#endif

void msf_conv2d_s8 MSF_REGION_ARGS(msf_conv2d_params)
{
#if defined(MSF_ARM_MVE)
    if (p->kh == 1 && p->kw == 1 && p->pad_top == 0 && p->pad_left == 0) {
        conv_mve_direct(p, in, out, r0, r1, c0, c1);
    } else if (p->kh * p->kw * p->in_c <= MSF_MVE_PATCH) {
        conv_mve_gathered(p, in, out, r0, r1, c0, c1);
    } else {
        conv_pairs_gathered(p, in, out, r0, r1, c0, c1);
    }
#elif defined(MSF_ARM_DSP)
    if (p->kh == 1 && p->kw == 1 && p->pad_top == 0 && p->pad_left == 0) {
        conv_pairs_direct(p, in, out, r0, r1, c0, c1);
    } else {
        conv_pairs_gathered(p, in, out, r0, r1, c0, c1);
    }
#else
    convolution(p, in, out, r0, r1, c0, c1, sizeof(int8_t), accumulate, 1, 1);
#endif
}

void msf_conv2d_f32 MSF_REGION_ARGS(msf_conv2d_params)
{
    convolution(p, in, out, r0, r1, c0, c1, sizeof(float), accumulate_f32, 1, 1);
}

/* A dilated window, on any core through msf_window_dilated: the DSP extension's paired loop, whose
   patch gather is the undilated window's, is left as it was calibrated. */
void msf_conv2d_dilated_s8 MSF_REGION_ARGS(msf_conv2d_dilated_params)
{
    convolution(&p->op, in, out, r0, r1, c0, c1, sizeof(int8_t), accumulate, p->dilation_h, p->dilation_w);
}

void msf_conv2d_dilated_f32 MSF_REGION_ARGS(msf_conv2d_dilated_params)
{
    convolution(&p->op, in, out, r0, r1, c0, c1, sizeof(float), accumulate_f32, p->dilation_h, p->dilation_w);
}
