/* The window loop (window.c) that CONV_2D, DEPTHWISE_CONV_2D and the pools share, its pixel
   iterator and the output stage of its int8 ops. */
#ifndef MSF_WINDOW_H
#define MSF_WINDOW_H

#include "numerics.h"

MSF_BEGIN_DECLS

/* ---------------------------------------------------------------------------------------------
 * Windows. Every window kernel (CONV_2D, DEPTHWISE_CONV_2D, MAX_POOL_2D, AVERAGE_POOL_2D, int8 and
 * float32) runs one loop over its output region, msf_window (window.c); an op brings only what it
 * sums over a window and how it turns the sums into output values. The DSP extension's CONV_2D,
 * which works on pairs of pixels, and PAD walk the region with the same pixel iterator.
 * ------------------------------------------------------------------------------------------- */

/* A window op's geometry: output position (r, c) reads the input rows y0 + [0, kh) and columns
   x0 + [0, kw), y0 = r * stride_h - pad_top and x0 = c * stride_w - pad_left; positions outside
   [0, in_h) x [0, in_w) are padding. */
typedef struct {
    int32_t in_h, in_w;
    int32_t kh, kw, stride_h, stride_w, pad_top, pad_left;
} msf_window_shape;

/* The msf_window_shape of a conv, depthwise or pool params struct p, which hold its fields under
   the same names (an initializer). */
#define MSF_WINDOW_SHAPE(p) \
    { (p)->in_h, (p)->in_w, (p)->kh, (p)->kw, (p)->stride_h, (p)->stride_w, (p)->pad_top, (p)->pad_left }

/* An output pixel and its window: the taps (i, j), i in [i_lo, i_hi) and j in [j_lo, j_hi), lie
   inside the input; the others are padding, which no kernel reads. */
typedef struct {
    int32_t r, c;          /* output position */
    int32_t y0, x0;        /* input position of tap (0, 0) */
    int32_t i_lo, i_hi;    /* kernel rows inside the input */
    int32_t j_lo, j_hi;    /* kernel columns inside the input */
} msf_pixel;

/* The pixels of the output region [r0, r1) x [c0, c1), row by row:
       msf_pixels it;
       msf_pixel px;
       msf_pixels_start(&it, &shape, r0, r1, c0, c1);
       while (msf_pixels_next(&it, &px)) { ... px ... }
   A step adds the stride and clips the window's columns; its rows are clipped once per row. What
   a caller does not read of px (the clipping, for a 1x1 convolution without padding) the compiler
   drops where px is a local whose address it does not pass on. */
typedef struct {
    const msf_window_shape *shape;
    int32_t r1, c0, c1;
    int32_t r, c, y0, x0, i_lo, i_hi;  /* the last pixel, and its rows' clipping */
} msf_pixels;

/* The taps [*lo, *hi) of a window of k taps along one axis whose input positions start + tap lie
   inside [0, size). */
static inline void msf_tap_range(int32_t start, int32_t k, int32_t size, int32_t *lo, int32_t *hi)
{
    *lo = start < 0 ? -start : 0;
    *hi = size - start < k ? size - start : k;
}

static inline void msf_pixels_start(msf_pixels *it, const msf_window_shape *shape, int32_t r0, int32_t r1,
                                    int32_t c0, int32_t c1)
{
    it->shape = shape;
    it->r1 = c0 < c1 ? r1 : r0;  /* no columns, no pixels */
    it->c0 = c0;
    it->c1 = c1;
    it->r = r0 - 1;              /* the first step starts row r0 */
    it->c = c1;
    it->y0 = it->x0 = it->i_lo = it->i_hi = 0;
}

/* Moves to the next pixel and describes it in px; 0 when the region is done. */
static inline int msf_pixels_next(msf_pixels *it, msf_pixel *px)
{
    const msf_window_shape *s = it->shape;
    if (++it->c < it->c1) {
        it->x0 += s->stride_w;
    } else {
        if (++it->r >= it->r1) {
            return 0;
        }
        it->c = it->c0;
        it->y0 = it->r * s->stride_h - s->pad_top;
        msf_tap_range(it->y0, s->kh, s->in_h, &it->i_lo, &it->i_hi);
        it->x0 = it->c * s->stride_w - s->pad_left;
    }
    px->r = it->r;
    px->c = it->c;
    px->y0 = it->y0;
    px->x0 = it->x0;
    px->i_lo = it->i_lo;
    px->i_hi = it->i_hi;
    msf_tap_range(px->x0, s->kw, s->in_w, &px->j_lo, &px->j_hi);
    return 1;
}

/* Window kernels compute this many channels per pass over a window, with their int32 / float
   accumulators on the stack (4 * MSF_CHANNEL_BLOCK bytes): the address of each input pixel (ring
   arithmetic included) is then computed once per block of channels instead of once per channel,
   and the innermost loops walk contiguous memory. Any value >= 1 gives the same results. */
#ifndef MSF_CHANNEL_BLOCK
#define MSF_CHANNEL_BLOCK 16
#endif

/* An output pixel's window, cut into runs (window.c): stretches whose input values and weights
   are both contiguous. A pixel's runs are gathered into arrays of MSF_MAX_RUNS on the stack
   (12 bytes a run on a 32-bit core: 300 B, the int8 kernels' largest local, which matters on a
   16 KiB board). 25 holds a 5x5 depthwise window (a run per tap) and a convolution's runs (at most
   two per kernel row); a window with more, such as a 7x7 depthwise, is gathered again for each
   block of output channels, a batch at a time (about 1% more instructions on MCUNet's 7x7 layers).
   Any value >= 1 gives the same results. */
#ifndef MSF_MAX_RUNS
#define MSF_MAX_RUNS 25
#endif

typedef struct {
    const void *src[MSF_MAX_RUNS];    /* the run's first input value (channel 0): int8_t or float */
    int32_t weight[MSF_MAX_RUNS];     /* offset of its first weight from output channel 0's first */
    int32_t length[MSF_MAX_RUNS];     /* input values in the run */
    int32_t count;
} msf_runs;

/* A block's accumulators, as the op's element type wants them. */
typedef union {
    int32_t i32[MSF_CHANNEL_BLOCK];   /* int8 ops */
    float f32[MSF_CHANNEL_BLOCK];     /* float ops */
} msf_block;

/* The output stage of CONV_2D and DEPTHWISE_CONV_2D: int8 requantisation (see
   msf_requantize_block_s8), or the float bias and activation. */
typedef struct {
    const int64_t *multiplier;        /* [out_c] */
    const int32_t *right;             /* [out_c] */
    int32_t rounding, output_offset, act_min, act_max;
    const float *bias_f32;            /* may be NULL */
    int32_t activation;               /* MSF_ACT_* */
} msf_output_stage;

/* The msf_output_stage of a conv or depthwise params struct p (an initializer). */
#define MSF_OUTPUT_STAGE(p) \
    { (p)->multiplier, (p)->right, (p)->rounding, (p)->output_offset, (p)->act_min, (p)->act_max, \
      (p)->bias_f32, (p)->activation }

/* acc = start + the window's reduction over `runs` for output channels oc0 + k, k < n. start is
   NULL for a window's first batch, where the op starts from its own value (0, the least value);
   the block's int8 bias (msf_window_op.bias); or acc itself, for the later batches of a window
   gathered in several (integer sums are exact in any order, float sums keep the taps' order). */
typedef void (*msf_accumulate_fn)(const void *params, const msf_runs *runs, int32_t oc0, int32_t n,
                                  const int32_t *start, msf_block *acc);

/* The output values of channels oc0 + k, k < n, of pixel px from their complete acc; dst is the
   pixel's channel 0 in the output. */
typedef void (*msf_finish_fn)(const void *params, const msf_pixel *px, int32_t oc0, int32_t n,
                              const msf_block *acc, void *dst);

typedef struct {
    msf_window_shape shape;
    int32_t channels;            /* output channels */
    int32_t element;             /* bytes a value: sizeof(int8_t) or sizeof(float) */
    int32_t tap_values;          /* input values a tap reads (conv: in_c; depthwise: 1; pools: all) */
    int32_t tap_weights;         /* weights between consecutive taps (conv: in_c; depthwise: out_c) */
    int merge_taps;              /* a row's taps may form one run (conv: weights follow the inputs) */
    const int32_t *bias;         /* int8: the sums' start, or NULL */
    msf_accumulate_fn accumulate;
    const void *params;          /* the op's params struct, for its accumulate and finish */
    msf_finish_fn finish;        /* NULL: `stage` */
    const msf_output_stage *stage;
} msf_window_op;

void msf_window(const msf_window_op *op, const msf_view *in, msf_view *out,
                int32_t r0, int32_t r1, int32_t c0, int32_t c1);

/* How a kernel call runs the output stage of its blocks, chosen once per call
   (msf_output_stage_mode): msf_requantize_block_s8, or the fast loop for one rounding, clamping
   to the activation's range or (FULL) to the whole of int8. Each is its own loop, so that a block
   pays one dispatch and no test inside. */
enum { MSF_STAGE_GENERAL, MSF_STAGE_RUY, MSF_STAGE_RUY_FULL, MSF_STAGE_DOUBLE, MSF_STAGE_DOUBLE_FULL };

static inline int msf_output_stage_mode(const msf_output_stage *s, int32_t channels)
{
    const int full = s->act_min == -128 && s->act_max == 127;
    if (!msf_output_stage_is_fast(s->rounding, s->right, channels)) {
        return MSF_STAGE_GENERAL;
    }
    if (s->rounding == MSF_ROUND_RUY) {
        return full ? MSF_STAGE_RUY_FULL : MSF_STAGE_RUY;
    }
    return full ? MSF_STAGE_DOUBLE_FULL : MSF_STAGE_DOUBLE;
}

/* The output stage of the n channels from oc0 on, into dst[0, n). */
static inline void msf_output_stage_s8(const msf_output_stage *s, int mode, const int32_t *acc, int32_t oc0,
                                       int32_t n, int8_t *dst)
{
    const int64_t *multiplier = s->multiplier + oc0;
    const int32_t *right = s->right + oc0;
    switch (mode) {
    case MSF_STAGE_RUY_FULL:
        msf_requantize_fast_loop(acc, n, multiplier, right, MSF_ROUND_RUY, s->output_offset, -128, 127, dst, 1);
        break;
    case MSF_STAGE_RUY:
        msf_requantize_fast_loop(acc, n, multiplier, right, MSF_ROUND_RUY, s->output_offset, s->act_min, s->act_max,
                                 dst, 0);
        break;
    case MSF_STAGE_DOUBLE_FULL:
        msf_requantize_fast_loop(acc, n, multiplier, right, MSF_ROUND_DOUBLE, s->output_offset, -128, 127, dst, 1);
        break;
    case MSF_STAGE_DOUBLE:
        msf_requantize_fast_loop(acc, n, multiplier, right, MSF_ROUND_DOUBLE, s->output_offset, s->act_min,
                                 s->act_max, dst, 0);
        break;
    default:
        msf_requantize_block_s8(acc, n, multiplier, right, s->rounding, s->output_offset, s->act_min, s->act_max, dst);
        break;
    }
}

#if defined(MSF_ARM_MVE)
/* Output channels a Helium kernel takes at a time (a multiple of 4): each block's per-pixel costs
   (addresses, loop set-up) are spread over this many; 16 B of stack a channel. */
#ifndef MSF_MVE_BLOCK
#define MSF_MVE_BLOCK 64
#endif

/* A block's output stage on Helium (up to MSF_MVE_BLOCK channels from oc0): each channel's
   multiplier as int32 and its right shift negated, as VRSHL takes it, set once a block and call. */
typedef struct {
    int32_t multiplier[MSF_MVE_BLOCK], shift[MSF_MVE_BLOCK];
} msf_mve_stage;

static inline void msf_mve_stage_block(const msf_output_stage *s, int32_t oc0, int32_t n, msf_mve_stage *block)
{
    static const uint32_t low_words[4] = { 0, 2, 4, 6 };  /* of four int64 multipliers */
    const uint32x4_t offsets = vldrwq_u32(low_words);
    int32_t k;
    for (k = 0; k < n; k += 4) {  /* four channels a vector, those past n not read */
        const mve_pred16_t active = vctp32q((uint32_t)(n - k));
        vstrwq_s32(block->multiplier + k, vldrwq_gather_shifted_offset_z_s32(
                                              (const int32_t *)(const void *)(s->multiplier + oc0 + k), offsets, active));
        vstrwq_s32(block->shift + k, vnegq_s32(vldrwq_z_s32(s->right + oc0 + k, active)));
    }
}

/* The fast modes of the output stage (ruy's or gemmlowp's rounding, every channel shifting right:
   msf_requantize_fast_loop) for four channels a vector (msf_mve_shift, then msf_mve_requantize),
   and its loop over a block (msf_mve_requantize_loop), equal to the scalar loop:
   - the high part floor((acc * mult + 2^30) / 2^31) is VQRDMULH (which saturates only for
     INT32_MIN x INT32_MIN, and a multiplier is never negative);
   - ruy's rounding right shift, floor((high + half) / 2^right), is VRSHL by -right;
   - gemmlowp's (ties away from zero) is VRSHL of high - 1 when high < 0: high + (high >> 31);
   then the zero point and the clamp in 32 bits (|high| < 2^31 and right >= 1: no overflow). acc
   and the block's arrays are read in whole vectors (MSF_MVE_BLOCK is a multiple of 4); the
   bytes past n are not stored. */
static inline int32x4_t msf_mve_shift(int32x4_t acc, int32x4_t multiplier, int32x4_t shift, const int away)
{
    int32x4_t x = vqrdmulhq_s32(acc, multiplier);
    if (away) {
        x = vaddq_s32(x, vshrq_n_s32(x, 31));
    }
    return vrshlq_s32(x, shift);
}

static inline int32x4_t msf_mve_requantize(int32x4_t acc, int32x4_t multiplier, int32x4_t shift,
                                           int32_t zero_point, int32x4_t low, int32x4_t high, const int away)
{
    return vminq_s32(vmaxq_s32(vaddq_n_s32(msf_mve_shift(acc, multiplier, shift, away), zero_point), low), high);
}

static inline void msf_mve_requantize_loop(const int32_t *acc, int32_t n, const msf_mve_stage *block,
                                           int32_t zero_point, int32_t lo, int32_t hi, int8_t *dst, const int away)
{
    const int32x4_t low = vdupq_n_s32(lo), high = vdupq_n_s32(hi);
    int32_t k;
    for (k = 0; k < n; k += 4) {
        const int32x4_t x = msf_mve_requantize(vldrwq_s32(acc + k), vldrwq_s32(block->multiplier + k),
                                               vldrwq_s32(block->shift + k), zero_point, low, high, away);
        if (k + 4 <= n) {
            vstrbq_s32(dst + k, x);
        } else {
            vstrbq_p_s32(dst + k, x, vctp32q((uint32_t)(n - k)));
        }
    }
}

/* msf_output_stage_s8 with the fast modes on Helium (block: msf_mve_stage_block of the same oc0, n). */
static inline void msf_mve_output_stage_s8(const msf_output_stage *s, int mode, const msf_mve_stage *block,
                                           const int32_t *acc, int32_t oc0, int32_t n, int8_t *dst)
{
    if (mode == MSF_STAGE_RUY || mode == MSF_STAGE_RUY_FULL) {
        msf_mve_requantize_loop(acc, n, block, s->output_offset, s->act_min, s->act_max, dst, 0);
    } else if (mode == MSF_STAGE_DOUBLE || mode == MSF_STAGE_DOUBLE_FULL) {
        msf_mve_requantize_loop(acc, n, block, s->output_offset, s->act_min, s->act_max, dst, 1);
    } else {
        msf_output_stage_s8(s, mode, acc, oc0, n, dst);
    }
}
#endif

MSF_END_DECLS

#endif /* MSF_WINDOW_H */
