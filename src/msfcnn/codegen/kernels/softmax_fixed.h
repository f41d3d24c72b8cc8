/*
 * TFLite's reference integer SOFTMAX of one int8 row (softmax_wide.c, softmax_tflm.c): the exps of
 * max - x come from a table in Q0.31, summed in Q12.19 (each shifted right by 12, rounding); the
 * sum's reciprocal is formed as gemmlowp's GetReciprocal does (the sum shifted to its leading one,
 * 1 / (1 + the rest) by Newton-Raphson in Q2.29). Each output is then an exp times that
 * reciprocal, shifted right (rounding) to the output's bits.
 */
#ifndef MSF_SOFTMAX_FIXED_H
#define MSF_SOFTMAX_FIXED_H

#include "msfcnn_common.h"
#include "numerics.h"

/* a + b as gemmlowp's int32 fixed-point addition: wrapping */
static inline int32_t msf_wrapping_add(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* gemmlowp's SaturatingRoundingMultiplyByPOT with a positive exponent: a saturating left shift */
static inline int32_t msf_saturating_shift_left(int32_t x, int32_t exponent)
{
    const int32_t threshold = (int32_t)((1u << (31 - exponent)) - 1u);
    return x > threshold ? MSF_INT32_MAX : x < -threshold ? MSF_INT32_MIN : (int32_t)((uint32_t)x << exponent);
}

/* gemmlowp's one_over_one_plus_x_for_x_in_0_1 on Q0.31 */
static inline int32_t msf_one_over_one_plus_x(int32_t a)
{
    const int64_t sum = (int64_t)a + MSF_INT32_MAX;
    const int32_t half_denominator = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
    int32_t x = msf_wrapping_add(1515870810, msf_saturating_rounding_doubling_high_mul(half_denominator, -1010580540));
    int32_t i;
    for (i = 0; i < 3; ++i) {
        const int32_t error = msf_wrapping_add(1 << 29, -msf_saturating_rounding_doubling_high_mul(half_denominator, x));
        x = msf_wrapping_add(x, msf_saturating_shift_left(msf_saturating_rounding_doubling_high_mul(x, error), 2));
    }
    return msf_saturating_shift_left(x, 1);
}

static inline int32_t msf_leading_zeros(uint32_t x)
{
    int32_t n = 0;
    while (n < 32 && !(x & 0x80000000u)) {
        x <<= 1;
        ++n;
    }
    return n;
}

/* The row's reciprocal of the sum of its exps, in Q0.31; *bits_over_unit: the sum's bits above 1 */
static inline int32_t msf_softmax_fixed_scale(const int32_t *exp_fixed, const int8_t *x, int32_t depth, int32_t max,
                                              int32_t *bits_over_unit)
{
    int32_t i, sum = 0, headroom;
    for (i = 0; i < depth; ++i) {
        const int32_t e = exp_fixed[max - x[i]];
        if (e != 0) {
            sum += msf_rounding_divide_by_pot(e, 12);
        }
    }
    headroom = msf_leading_zeros((uint32_t)sum);
    *bits_over_unit = 12 - headroom;
    return msf_one_over_one_plus_x((int32_t)(((uint32_t)sum << headroom) - 0x80000000u));
}

#endif /* MSF_SOFTMAX_FIXED_H */
