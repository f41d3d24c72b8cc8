/*
 * ADD over a region (src/msfcnn/ops/add.py).
 *
 * TFLite's int8 ADD: each input, minus its zero point, is scaled up by 2^left_shift (20) and
 * rescaled with its own multiplier to a common scale (twice the larger input scale); the two are
 * summed in int32 and rescaled to the output, all with TFLite's MultiplyByQuantizedMultiplier
 * (p->rounding = MSF_ROUND_DOUBLE); then the output zero point and the activation clamp.
 * |input - zero point| <= 255, so the scaled values stay below 2^28 and their sum in int32.
 */
#include "add.h"
#include "numerics.h"

#if defined(MSF_ARM_MVE)
/* x / 2^-shift rounded, ties away from zero, for shift <= 0 (msf_rounding_divide_by_pot): VRSHL of
   x - 1 for x < 0. */
static inline int32x4_t mve_divide(int32x4_t x, int32_t shift)
{
    return shift < 0 ? vrshlq_n_s32(vaddq_s32(x, vshrq_n_s32(x, 31)), shift) : x;
}

/* Four channels (partial: those `active` of them) of msf_add_s8 with gemmlowp's rounding and no
   left shift in the multipliers: the doubling high multiplies are VQRDMULH (as numerics.h's
   output stage explains), the shift up by left_shift a VSHL by a register. */
static MSF_ALWAYS_INLINE void mve_add_four(const msf_add_params *p, const int8_t *a, const int8_t *b, int8_t *dst,
                                           mve_pred16_t active, const int partial)
{
    const int32x4_t va = vaddq_n_s32(partial ? vldrbq_z_s32(a, active) : vldrbq_s32(a), p->input1_offset);
    const int32x4_t vb = vaddq_n_s32(partial ? vldrbq_z_s32(b, active) : vldrbq_s32(b), p->input2_offset);
    const int32x4_t sa = mve_divide(vqrdmulhq_n_s32(vshlq_r_s32(va, p->left_shift), p->input1_mult), p->input1_shift);
    const int32x4_t sb = mve_divide(vqrdmulhq_n_s32(vshlq_r_s32(vb, p->left_shift), p->input2_mult), p->input2_shift);
    const int32x4_t sum = mve_divide(vqrdmulhq_n_s32(vaddq_s32(sa, sb), p->output_mult), p->output_shift);
    const int32x4_t v = vminq_s32(vmaxq_s32(vaddq_n_s32(sum, p->output_offset), vdupq_n_s32(p->act_min)),
                                  vdupq_n_s32(p->act_max));
    if (partial) {
        vstrbq_p_s32(dst, v, active);
    } else {
        vstrbq_s32(dst, v);
    }
}

/* msf_add_s8 on Helium, where it applies: pixel by pixel, four channels at a time. */
static void add_mve(const msf_add_params *p, const msf_view *in1, const msf_view *in2, msf_view *out, int32_t r0,
                    int32_t r1, int32_t c0, int32_t c1)
{
    const int32_t n = p->channels, whole = n & ~3;
    int32_t r, c, ch;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const int8_t *a = msf_at_s8(in1, r, c, 0), *b = msf_at_s8(in2, r, c, 0);
            int8_t *dst = msf_at_s8(out, r, c, 0);
            for (ch = 0; ch < whole; ch += 4) {
                mve_add_four(p, a + ch, b + ch, dst + ch, 0, 0);
            }
            if (whole < n) {
                mve_add_four(p, a + whole, b + whole, dst + whole, vctp32q((uint32_t)(n - whole)), 1);
            }
        }
    }
}
#endif

/* msf_mul_by_quantized_mult_double(x, mult, -right) for right >= 0 and |2x| < 2^31, in 32-bit
   arithmetic but for one multiply-accumulate: gemmlowp's doubling high multiply is
   floor((x * mult + 2^30) / 2^31) = floor((2x * mult + 2^31) / 2^32) for either sign of the
   product (numerics.h), the high word of one SMLAL, and its rounding shift, ties away from zero,
   is floor((high + 2^(right - 1) - (high < 0)) / 2^right). Nothing saturates: |high| <= |x|. */
static inline int32_t add_rescale(int32_t twice_x, int32_t mult, int32_t right)
{
    const int32_t high = MSF_HIGH_MUL_ADD(twice_x, mult, (int64_t)1 << 31);
    return right > 0 ? msf_asr32(high + ((int32_t)1 << (right - 1)) - (high < 0), right) : high;
}

/* msf_add_s8 with gemmlowp's rounding where every multiplier shifts right and left_shift <= 20 (TFLite
   sets 20): |input - zero point| <= 255, so the doubled scaled inputs stay below 2^29 and the doubled
   sum below 2^30, and add_rescale applies. The parameters are read into locals once: the int8 stores
   could alias them. */
static void add_gemmlowp(const msf_add_params *p, const msf_view *in1, const msf_view *in2, msf_view *out, int32_t r0,
                         int32_t r1, int32_t c0, int32_t c1)
{
    const int32_t n = p->channels, up = p->left_shift + 1, offset1 = p->input1_offset, offset2 = p->input2_offset;
    const int32_t mult1 = p->input1_mult, right1 = -p->input1_shift, mult2 = p->input2_mult, right2 = -p->input2_shift;
    const int32_t mult_out = p->output_mult, right_out = -p->output_shift, zero_point = p->output_offset;
    const int32_t lo = p->act_min - zero_point, hi = p->act_max - zero_point;
    int32_t r, c, ch;
    for (r = r0; r < r1; ++r) {
        for (c = c0; c < c1; ++c) {
            const int8_t *a = msf_at_s8(in1, r, c, 0), *b = msf_at_s8(in2, r, c, 0);
            int8_t *dst = msf_at_s8(out, r, c, 0);
            for (ch = 0; ch < n; ++ch) {
                /* multiplications, not shifts: the values may be negative */
                const int32_t sa = add_rescale(((int32_t)a[ch] + offset1) * ((int32_t)1 << up), mult1, right1);
                const int32_t sb = add_rescale(((int32_t)b[ch] + offset2) * ((int32_t)1 << up), mult2, right2);
                const int32_t v = add_rescale((sa + sb) * 2, mult_out, right_out);
                dst[ch] = (int8_t)((v < lo ? lo : v > hi ? hi : v) + zero_point);
            }
        }
    }
}

void msf_add_s8 MSF_REGION2_ARGS(msf_add_params)
{
#if defined(MSF_ARM_MVE)
    if (p->rounding == MSF_ROUND_DOUBLE && p->input1_shift <= 0 && p->input2_shift <= 0 && p->output_shift <= 0) {
        add_mve(p, in1, in2, out, r0, r1, c0, c1);
        return;
    }
#endif
    if (p->rounding == MSF_ROUND_DOUBLE && p->input1_shift <= 0 && p->input2_shift <= 0 && p->output_shift <= 0
        && p->left_shift <= 20) {
        add_gemmlowp(p, in1, in2, out, r0, r1, c0, c1);
        return;
    }
    const int32_t scale_up = (int32_t)1 << p->left_shift;
    MSF_EACH_VALUE2(s8, msf_at_s8(in2, r, c, 0), p->channels, {
        /* multiplications, not shifts: the shifted values may be negative */
        const int32_t va = ((int32_t)a[ch] + p->input1_offset) * scale_up;
        const int32_t vb = ((int32_t)b[ch] + p->input2_offset) * scale_up;
        const int32_t sa = msf_mul_by_quantized_mult(va, p->input1_mult, p->input1_shift, p->rounding);
        const int32_t sb = msf_mul_by_quantized_mult(vb, p->input2_mult, p->input2_shift, p->rounding);
        const int32_t sum = msf_mul_by_quantized_mult(sa + sb, p->output_mult, p->output_shift, p->rounding);
        dst[ch] = msf_clamp_s8(sum, p->output_offset, p->act_min, p->act_max);
    });
}

void msf_add_f32 MSF_REGION2_ARGS(msf_add_params)
{
    MSF_EACH_VALUE2(f32, msf_at_f32(in2, r, c, 0), p->channels, {
        dst[ch] = msf_apply_activation_f32(a[ch] + b[ch], p->activation);
    });
}
