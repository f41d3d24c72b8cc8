/*
 * DEPTHWISE_CONV_2D over an output region (src/msfcnn/ops/depthwise_conv2d.py).
 *
 * int8: TFLite's depthwise kernel accumulates (input - input zero point) * weight in int32 over
 * the taps, adds the bias and requantises per channel with its own MultiplyByQuantizedMultiplier
 * (gemmlowp's doubling high multiply, then a rounding shift: p->rounding = MSF_ROUND_DOUBLE),
 * then adds the output zero point and clamps. Output channel o reads input channel
 * o / depth_multiplier; weights are (1, kh, kw, out_c). Padding (the zero point) is skipped.
 * float: taps accumulated in (row, column) order as the numpy kernel does, then bias, activation.
 *
 * Loops (msf_window, window.c): output pixel; its in-bounds taps located once; block of output
 * channels; with multiplier 1, eight channels at a time in registers (four, a word each, on Arm's
 * DSP extension); tap.
 *
 * The `inplace` scheme relies on that order: with multiplier 1, output pixels go left to right,
 * and a block of output channels is written after its sums, which read only those channels (the
 * DSP tail's word may also read earlier channels, whose lanes it drops). So a row may be written
 * one pixel to the left of an input row it reads: pixel x lands on input pixel x - 1, which no
 * later pixel reads and whose channels of the block the sums have already read.
 */
#include "depthwise_conv2d.h"
#include "dilated.h"
#include "window.h"

#if defined(MSF_ARM_DSP)
/* s + the products of the taps [src, end) for four channels (multiplier 1), from input channel ch
   and the weights at w: per tap one word of four inputs and one of four weights, split into 16-bit
   lanes (inputs offset on the way, SXTAB16) and multiplied lane by lane into four accumulators
   (SMLABB / SMLATT): 14 instructions a tap for four multiply-accumulates, tap addressing and loop
   included, all in registers (eight channels, or two taps an iteration, would spill). */
static inline msf_sums4 four_channels(msf_sums4 s, const void *const *src, const void *const *end,
                                      const int32_t *weight, int32_t ch, const int8_t *w, int16x2_t offset2)
{
    for (; src != end; ++src, ++weight) {
        const uint32_t xv = msf_read_s8x4((const int8_t *)*src + ch), wv = msf_read_s8x4(w + *weight);
        const int16x2_t xa = __sxtab16(offset2, (int8x4_t)xv), xb = msf_sxtab16_odd(offset2, xv);
        const int16x2_t wa = __sxtb16((int8x4_t)wv), wb = msf_sxtb16_odd(wv);
        s.s0 = __smlabb(xa, wa, s.s0);
        s.s1 = __smlabb(xb, wb, s.s1);
        s.s2 = __smlatt(xa, wa, s.s2);
        s.s3 = __smlatt(xb, wb, s.s3);
    }
    return s;
}
#endif

#if defined(MSF_ARMV6M) && MSF_MAX_RUNS <= 31
/* s += the products of four channels ch + [0, 4) (multiplier 1) over the taps (count > 0):
   tap t's inputs at taps->src[t] + ch, its weights at weights + taps->weight[t] + ch, both read
   with the channel as LDRSB's register offset. 30 instructions a tap for four multiply-accumulates,
   where GCC's code for the eight-channel loop below takes 101 for eight on Armv6-M (no immediate
   offset for LDRSB, and twelve live values for eight low registers). The operands take the eight
   low registers and five high ones, as many as GCC gives an asm statement. A tap's weight offset is
   read at a fixed distance from its input pointer (4 * MSF_MAX_RUNS bytes: the arrays of msf_runs,
   within LDR's reach while MSF_MAX_RUNS <= 31). */
static inline void four_channels(msf_sums4 *s, const msf_runs *taps, const int8_t *weights, int32_t ch,
                                 int32_t offset)
{
    const void *const *src = taps->src, *const *const end = taps->src + taps->count;
    const int8_t *x, *w;
    int32_t v, t;
    __asm__(".syntax unified\n"
            "1:\n\t"
            "ldr %[x], [%[src]]\n\t"
            "ldr %[w], [%[src], %[gap]]\n\t"
            "adds %[w], %[w], %[weights]\n\t"
            "ldrsb %[v], [%[x], %[ch]]\n\t"
            "adds %[v], %[v], %[offset]\n\t"
            "ldrsb %[t], [%[w], %[ch]]\n\t"
            "muls %[t], %[v]\n\t"
            "add %[s0], %[t]\n\t"
            "adds %[ch], #1\n\t"
            "ldrsb %[v], [%[x], %[ch]]\n\t"
            "adds %[v], %[v], %[offset]\n\t"
            "ldrsb %[t], [%[w], %[ch]]\n\t"
            "muls %[t], %[v]\n\t"
            "add %[s1], %[t]\n\t"
            "adds %[ch], #1\n\t"
            "ldrsb %[v], [%[x], %[ch]]\n\t"
            "adds %[v], %[v], %[offset]\n\t"
            "ldrsb %[t], [%[w], %[ch]]\n\t"
            "muls %[t], %[v]\n\t"
            "add %[s2], %[t]\n\t"
            "adds %[ch], #1\n\t"
            "ldrsb %[v], [%[x], %[ch]]\n\t"
            "adds %[v], %[v], %[offset]\n\t"
            "ldrsb %[t], [%[w], %[ch]]\n\t"
            "muls %[t], %[v]\n\t"
            "add %[s3], %[t]\n\t"
            "subs %[ch], #3\n\t"
            "adds %[src], #4\n\t"
            "cmp %[src], %[end]\n\t"
            "bne 1b"
            : [s0] "+h"(s->s0), [s1] "+h"(s->s1), [s2] "+h"(s->s2), [s3] "+h"(s->s3), [src] "+l"(src), [ch] "+l"(ch),
              [x] "=&l"(x), [w] "=&l"(w), [v] "=&l"(v), [t] "=&l"(t)
            : [end] "h"(end), [weights] "l"(weights), [offset] "l"(offset),
              [gap] "i"((int32_t)((const char *)taps->weight - (const char *)taps->src))
            : "cc", "memory");
}
#endif

/* acc = start + the window's sum for output channels oc0 + k, k < n (start NULL: 0; each run is
   one tap). */
static void accumulate(const void *params, const msf_runs *taps, int32_t oc0, int32_t n, const int32_t *start,
                       msf_block *block)
{
    const msf_depthwise_conv2d_params *p = (const msf_depthwise_conv2d_params *)params;
    const int32_t m = p->depth_multiplier;
    const int32_t offset = p->input_offset;
    const int8_t *w = p->weights + oc0;
    int32_t *acc = block->i32;
    int32_t k = 0, t;
#if defined(MSF_ARM_DSP)
    if (m == 1) {  /* four channels at a time */
        const int16x2_t offset2 = msf_dup16(offset);
        const void *const *const src = taps->src, *const *const end = taps->src + taps->count;
        for (; k + 4 <= n; k += 4) {
            const msf_sums4 s = four_channels(msf_sums4_start(start != NULL ? start + k : NULL), src, end,
                                              taps->weight, oc0 + k, w + k, offset2);
            acc[k] = s.s0;
            acc[k + 1] = s.s1;
            acc[k + 2] = s.s2;
            acc[k + 3] = s.s3;
        }
        if (k < n && oc0 + n >= 4) {
            /* The last 1 to 3 channels: the four channels that end with them, from 0 (the first
               may lie before the block), of which the last n - k are kept. Words are read in
               bounds, and the scalar loop below is left for layers of fewer than four channels. */
            const int32_t first = oc0 + n - 4;
            const msf_sums4 s = four_channels(msf_sums4_start(NULL), src, end, taps->weight, first,
                                              p->weights + first, offset2);
            const int32_t sums[4] = { s.s0, s.s1, s.s2, s.s3 };
            for (; k < n; ++k) {
                acc[k] = (start != NULL ? start[k] : 0) + sums[k - (n - 4)];
            }
        }
    }
#elif defined(MSF_ARMV6M) && MSF_MAX_RUNS <= 31
    if (m == 1 && taps->count > 0) {  /* four channels at a time */
        for (; k + 4 <= n; k += 4) {
            msf_sums4 s = msf_sums4_start(start != NULL ? start + k : NULL);
            four_channels(&s, taps, p->weights, oc0 + k, offset);
            acc[k] = s.s0;
            acc[k + 1] = s.s1;
            acc[k + 2] = s.s2;
            acc[k + 3] = s.s3;
        }
    }
#else
    if (m == 1) {  /* the usual case: output channel oc reads input channel oc; eight at a time */
        for (; k + 8 <= n; k += 8) {
            int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
            if (start != NULL) {
                s0 = start[k];
                s1 = start[k + 1];
                s2 = start[k + 2];
                s3 = start[k + 3];
                s4 = start[k + 4];
                s5 = start[k + 5];
                s6 = start[k + 6];
                s7 = start[k + 7];
            }
            for (t = 0; t < taps->count; ++t) {
                const int8_t *x = (const int8_t *)taps->src[t] + oc0 + k;
                const int8_t *wt = w + taps->weight[t] + k;
                s0 += ((int32_t)x[0] + offset) * wt[0];
                s1 += ((int32_t)x[1] + offset) * wt[1];
                s2 += ((int32_t)x[2] + offset) * wt[2];
                s3 += ((int32_t)x[3] + offset) * wt[3];
                s4 += ((int32_t)x[4] + offset) * wt[4];
                s5 += ((int32_t)x[5] + offset) * wt[5];
                s6 += ((int32_t)x[6] + offset) * wt[6];
                s7 += ((int32_t)x[7] + offset) * wt[7];
            }
            acc[k] = s0;
            acc[k + 1] = s1;
            acc[k + 2] = s2;
            acc[k + 3] = s3;
            acc[k + 4] = s4;
            acc[k + 5] = s5;
            acc[k + 6] = s6;
            acc[k + 7] = s7;
        }
    }
#endif
    for (; k < n; ++k) {
        const int32_t ic = (oc0 + k) / m;
        int32_t sum = start != NULL ? start[k] : 0;
        for (t = 0; t < taps->count; ++t) {
            sum += ((int32_t)((const int8_t *)taps->src[t])[ic] + offset) * w[taps->weight[t] + k];
        }
        acc[k] = sum;
    }
}

/* float: acc = (start NULL: 0, else acc) + the taps' products, tap by tap in the window's order. */
static void accumulate_f32(const void *params, const msf_runs *taps, int32_t oc0, int32_t n, const int32_t *start,
                           msf_block *acc)
{
    const msf_depthwise_conv2d_params *p = (const msf_depthwise_conv2d_params *)params;
    const int32_t m = p->depth_multiplier;
    const float *w = p->weights_f32 + oc0;
    int32_t k, t;
    for (k = 0; k < n; ++k) {
        const int32_t ic = (oc0 + k) / m;
        float sum = start == NULL ? 0.0f : acc->f32[k];
        for (t = 0; t < taps->count; ++t) {
            sum += ((const float *)taps->src[t])[ic] * w[taps->weight[t] + k];
        }
        acc->f32[k] = sum;
    }
}

/* Both element types: a run per tap, the weights of consecutive taps out_c apart. (Inlined into
   each caller, as conv2d.c's convolution.) */
static MSF_ALWAYS_INLINE void depthwise(const msf_depthwise_conv2d_params *p, const msf_view *in, msf_view *out,
                                        int32_t r0, int32_t r1, int32_t c0, int32_t c1, int32_t element,
                                        msf_accumulate_fn multiply_accumulate, const int32_t dilation_h,
                                        const int32_t dilation_w)
{
    const msf_output_stage stage = MSF_OUTPUT_STAGE(p);
    const msf_window_op op = {
        .shape = MSF_WINDOW_SHAPE(p), .channels = p->out_c, .element = element, .tap_values = 1,
        .tap_weights = p->out_c, .merge_taps = 0, .bias = element == (int32_t)sizeof(int8_t) ? p->bias : NULL,
        .accumulate = multiply_accumulate, .finish = NULL, .stage = &stage, .params = p
    };
    if (dilation_h == 1 && dilation_w == 1) {  /* (constants: the plain kernels have no test here) */
        msf_window(&op, in, out, r0, r1, c0, c1);
    } else {  /* the window spans its extent; still a run per tap */
        msf_window_op dilated = op;
        dilated.shape.kh = msf_dilated_extent(p->kh, dilation_h);
        dilated.shape.kw = msf_dilated_extent(p->kw, dilation_w);
        msf_window_dilated(&dilated, dilation_h, dilation_w, in, out, r0, r1, c0, c1);
    }
}

void msf_depthwise_conv2d_s8 MSF_REGION_ARGS(msf_depthwise_conv2d_params)
{
    depthwise(p, in, out, r0, r1, c0, c1, sizeof(int8_t), accumulate, 1, 1);
}

void msf_depthwise_conv2d_f32 MSF_REGION_ARGS(msf_depthwise_conv2d_params)
{
    depthwise(p, in, out, r0, r1, c0, c1, sizeof(float), accumulate_f32, 1, 1);
}

void msf_depthwise_conv2d_dilated_s8 MSF_REGION_ARGS(msf_depthwise_conv2d_dilated_params)
{
    depthwise(&p->op, in, out, r0, r1, c0, c1, sizeof(int8_t), accumulate, p->dilation_h, p->dilation_w);
}

void msf_depthwise_conv2d_dilated_f32 MSF_REGION_ARGS(msf_depthwise_conv2d_dilated_params)
{
    depthwise(&p->op, in, out, r0, r1, c0, c1, sizeof(float), accumulate_f32, p->dilation_h, p->dilation_w);
}
