/*
 * UNIDIRECTIONAL_SEQUENCE_LSTM as ops/lstm.py: int8 bit-exact, with LiteRT's or TFLite Micro's
 * integer LSTM (p->tflm); float32 in the numpy kernel's order of operations, with float_math.h's
 * logistic and tanh (within a few ulp of the C library's that the numpy kernel calls). The int16
 * gate functions are the twins of ops/lstm_fixed.py: gemmlowp's fixed-point logistic and tanh on
 * int16 (LiteRT) and TFLite's reference int16 LOGISTIC / TANH (TFLite Micro).
 */
#include <stdint.h>
#include <string.h>

#include "float_math.h"
#include "lstm.h"
#include "numerics.h"

#define I16_MIN (-32768)
#define I16_MAX 32767

/* An int value cast to int16 (wrapping, as gemmlowp's int16 arithmetic stores it), without the
   implementation-defined conversion. */
static int32_t wrap16(int32_t x)
{
    int32_t low = x & 0xFFFF;
    return low >= 0x8000 ? low - 0x10000 : low;
}

static int32_t clamp16(int64_t x)
{
    return x < I16_MIN ? I16_MIN : x > I16_MAX ? I16_MAX : (int32_t)x;
}

/* gemmlowp's SaturatingRoundingDoublingHighMul on int16 */
static int32_t mul16(int32_t a, int32_t b)
{
    int32_t ab = a * b;
    if (a == I16_MIN && b == I16_MIN) {
        return I16_MAX;
    }
    return wrap16((ab + (ab >= 0 ? (1 << 14) : 1 - (1 << 14))) / (1 << 15));
}

static int32_t shift_left16(int32_t x, int32_t exponent)
{
    int32_t threshold = (1 << (15 - exponent)) - 1;
    if (exponent == 0) {
        return x;
    }
    return x > threshold ? I16_MAX : x < -threshold ? I16_MIN : wrap16(x * (1 << exponent));
}

static int32_t divide_pot(int32_t x, int32_t exponent)
{
    return (int32_t)rdbpot64(x, exponent);
}

/* gemmlowp's int32 constants rounded to int16 */
#define C_EXP_MINUS_EIGHTH 28918   /* 1895147668 */
#define C_ONE_THIRD 10923          /* 715827883 */
#define C_48_OVER_17 23130         /* 1515870810 */
#define C_NEG_32_OVER_17 (-15420)  /* -1010580540 */

static const int32_t exp_barrel[7] = {25520, 19875, 12055, 4435, 600, 11, 0};  /* exp(-2^k), k = -2..4 */

static int32_t exp_on_quarter(int32_t a)
{
    int32_t x = wrap16(a + (1 << 12));
    int32_t x2 = mul16(x, x);
    int32_t x3 = mul16(x2, x);
    int32_t x4 = mul16(x2, x2);
    int32_t poly = divide_pot(wrap16(mul16(wrap16(divide_pot(x4, 2) + x3), C_ONE_THIRD) + x2), 1);
    return clamp16(C_EXP_MINUS_EIGHTH + mul16(C_EXP_MINUS_EIGHTH, wrap16(x + poly)));
}

static int32_t exp_on_negative(int32_t a, int32_t integer_bits)
{
    int32_t fractional = 15 - integer_bits;
    int32_t quarter = 1 << (fractional - 2);
    int32_t reduced = wrap16((a & (quarter - 1)) - quarter);
    int32_t result = exp_on_quarter(shift_left16(reduced, integer_bits));
    int32_t remainder = wrap16(reduced - a);
    int32_t k;
    for (k = 0; k < 7; ++k) {
        int32_t exponent = k - 2;
        if (integer_bits > exponent && (remainder & (1 << (fractional + exponent)))) {
            result = mul16(result, exp_barrel[k]);
        }
    }
    if (integer_bits > 5 && a < (int32_t)rdbpot64(-((int64_t)1 << (36 - integer_bits)), 16)) {
        result = 0;
    }
    return a == 0 ? I16_MAX : result;
}

/* 1 / (1 + a) for a in (0, 1) as gemmlowp's Newton-Raphson, Q2.13 */
static int32_t newton_reciprocal(int32_t a)
{
    int32_t total = a + I16_MAX;
    int32_t half = wrap16((total + (total >= 0 ? 1 : -1)) / 2);
    int32_t x = wrap16(C_48_OVER_17 + mul16(half, C_NEG_32_OVER_17));
    int32_t i;
    for (i = 0; i < 3; ++i) {
        int32_t error = wrap16((1 << 13) - mul16(half, x));
        x = wrap16(x + shift_left16(mul16(x, error), 2));
    }
    return x;
}

static int32_t gemmlowp_tanh16(int32_t a, int32_t integer_bits)
{
    int32_t n = a < 0 ? a : wrap16(-a);
    int32_t t = shift_left16(wrap16(newton_reciprocal(exp_on_negative(n, integer_bits + 1)) - (1 << 13)), 2);
    return a == 0 ? 0 : a < 0 ? wrap16(-t) : t;
}

static int32_t gemmlowp_logistic16(int32_t a)
{
    int32_t magnitude = a > 0 ? a : wrap16(-a);
    int32_t positive = shift_left16(newton_reciprocal(exp_on_negative(wrap16(-magnitude), 3)), 1);
    return a == 0 ? 16384 : a > 0 ? positive : wrap16(I16_MAX - positive);
}

/* TFLite's reference int16 LOGISTIC / TANH with input multiplier 3 << shift (or 3 and a right
   shift), linear interpolation in the sigmoid table. */
static int32_t scaled_input(int32_t x, int32_t multiplier, int32_t left_shift)
{
    if (multiplier == 0) {
        return x * (3 << left_shift);
    }
    return (int32_t)asr64((int64_t)x * multiplier + (left_shift > 0 ? 1 << (left_shift - 1) : 0), left_shift);
}

static int32_t tflm_logistic16(const int32_t *table, int32_t x)
{
    int32_t value = scaled_input(x, 0, 0);
    uint32_t magnitude = (uint32_t)(value < 0 ? -value : value);
    uint32_t index = magnitude >> 9, result;
    if (index >= 255) {
        result = 0x7FFFu << 10;
    } else {
        uint32_t lower = (uint32_t)table[index], upper = (uint32_t)table[index + 1];
        result = (lower << 9) + (magnitude & 0x1FFu) * (upper - lower);  /* interpolated */
    }
    result = value >= 0 ? result + (1u << 9) : (1u << 25) - result + (1u << 9) - 1u;
    return wrap16((int32_t)(result >> 10));
}

static int32_t tflm_tanh16(const int32_t *table, int32_t x, int32_t multiplier, int32_t left_shift)
{
    int32_t value = scaled_input(x, multiplier, left_shift);
    uint32_t magnitude = (uint32_t)(value < 0 ? -value : value);
    uint32_t index = magnitude >> 8;
    int32_t result;
    if (index >= 255) {
        result = 0xFFFF << 8;
    } else {
        uint32_t lower = (uint32_t)table[index], upper = (uint32_t)table[index + 1];
        result = (int32_t)((lower << 8) + (magnitude & 0xFFu) * (upper - lower));
    }
    result = value >= 0 ? result - (1 << 23) + (1 << 7) : -result + (1 << 23) + (1 << 7) - 1;
    return wrap16((int32_t)asr64(result, 8));
}

/* One gate's pre-activation (Q3.12) for unit u: the input and recurrent matmuls, each rescaled. */
static int32_t gate_input(const msf_lstm_params *p, int32_t gate, int32_t u, const int8_t *x, const int8_t *h)
{
    const int8_t *wx = p->weights + ((size_t)gate * (size_t)p->units + (size_t)u) * (size_t)p->features;
    const int8_t *wh = p->recurrent + ((size_t)gate * (size_t)p->units + (size_t)u) * (size_t)p->units;
    int32_t ax = p->bias_x[gate * p->units + u], ah = p->bias_h[gate * p->units + u], k, a, b;
    for (k = 0; k < p->features; ++k) {
        ax += (int32_t)wx[k] * x[k];
    }
    for (k = 0; k < p->units; ++k) {
        ah += (int32_t)wh[k] * h[k];
    }
    a = clamp16(msf_mul_by_quantized_mult_double(ax, p->mult[gate], p->shift[gate]));
    b = msf_mul_by_quantized_mult_double(ah, p->mult[4 + gate], p->shift[4 + gate]);
    return clamp16((int64_t)a + (p->tflm ? clamp16(b) : b));
}

static int32_t tflm_mul16(int32_t a, int32_t b, int32_t multiplier, int32_t shift)
{
    return clamp16(msf_mul_by_quantized_mult_double(a * b, multiplier, shift));
}

void msf_lstm_step_s8(const msf_lstm_params *p, const int8_t *x, int8_t *h, int16_t *c, int16_t *gates)
{
    const int32_t n = p->units;
    int32_t u, g;
    for (g = 0; g < 4; ++g) {  /* every gate reads the old h: all of them before h changes */
        for (u = 0; u < n; ++u) {
            int32_t pre = gate_input(p, g, u, x, h), out;
            if (p->tflm) {
                out = g == 2 ? tflm_tanh16(p->sigmoid_table, pre, 0, 0) : tflm_logistic16(p->sigmoid_table, pre);
            } else {
                out = g == 2 ? gemmlowp_tanh16(pre, 3) : gemmlowp_logistic16(pre);
            }
            gates[g * n + u] = (int16_t)out;
        }
    }
    for (u = 0; u < n; ++u) {
        int32_t i = gates[u], f = gates[n + u], cg = gates[2 * n + u], o = gates[3 * n + u], cell, t;
        if (p->tflm) {
            int32_t tanh_shift = 15 + p->cell_log2 - 3;
            cell = clamp16((int64_t)tflm_mul16(f, c[u], 1 << 30, -14) + tflm_mul16(i, cg, p->ig_mult, p->ig_shift));
            if (p->cell_clip_q > 0) {
                cell = cell > p->cell_clip_q ? p->cell_clip_q : cell < -p->cell_clip_q ? -p->cell_clip_q : cell;
            }
            t = tanh_shift >= 0 ? tflm_tanh16(p->sigmoid_table, cell, 0, tanh_shift)
                                : tflm_tanh16(p->sigmoid_table, cell, 3, -tanh_shift);
        } else {
            cell = clamp16((int64_t)wrap16((int32_t)rdbpot64((int64_t)f * c[u], 15))
                           + wrap16((int32_t)rdbpot64((int64_t)i * cg, 30 + p->cell_log2)));
            if (p->cell_clip_q > 0) {
                cell = cell > p->cell_clip_q ? p->cell_clip_q : cell < -p->cell_clip_q ? -p->cell_clip_q : cell;
            }
            t = gemmlowp_tanh16(cell, 15 + p->cell_log2);
        }
        c[u] = (int16_t)cell;
        h[u] = msf_clamp_s8(msf_mul_by_quantized_mult_double(o * t, p->h_mult, p->h_shift), p->h_zero, -128, 127);
    }
}

void msf_lstm_step_f32(const msf_lstm_params *p, const float *x, float *h, float *c, float *gates)
{
    const int32_t n = p->units;
    int32_t u, g, k;
    for (g = 0; g < 4; ++g) {
        for (u = 0; u < n; ++u) {
            const float *wx = p->weights_f32 + ((size_t)g * (size_t)n + (size_t)u) * (size_t)p->features;
            const float *wh = p->recurrent_f32 + ((size_t)g * (size_t)n + (size_t)u) * (size_t)n;
            float acc = p->bias_f32[g * n + u];
            for (k = 0; k < p->features; ++k) {
                acc += wx[k] * x[k];
            }
            for (k = 0; k < n; ++k) {
                acc += wh[k] * h[k];
            }
            gates[g * n + u] = g == 2 ? msf_tanhf(acc) : msf_logisticf(acc);
        }
    }
    for (u = 0; u < n; ++u) {
        float cell = gates[n + u] * c[u] + gates[u] * gates[2 * n + u];
        if (p->cell_clip > 0.0f) {
            cell = cell > p->cell_clip ? p->cell_clip : cell < -p->cell_clip ? -p->cell_clip : cell;
        }
        c[u] = cell;
        h[u] = gates[3 * n + u] * msf_tanhf(cell);
    }
}

void msf_lstm_s8(const msf_lstm_params *p, const int8_t *in, int8_t *out, void *workspace)
{
    /* Lstm.workspace_views: c and the gates (int16) from the first even address, h in the last
       units bytes of the 11 * units + 1. */
    unsigned char *base = (unsigned char *)workspace;
    const size_t n = (size_t)p->units;
    int16_t *c = (int16_t *)(void *)(base + ((uintptr_t)base & 1u));
    int16_t *gates = c + n;
    int8_t *h = (int8_t *)(base + 10 * n + 1);
    int32_t t;
    memset(h, p->hidden_zero, n);  /* the hidden state starts at its zero point: real 0 */
    memset(c, 0, 2 * n);
    for (t = 0; t < p->steps; ++t) {
        msf_lstm_step_s8(p, in + (size_t)t * (size_t)p->features, h, c, gates);
        if (p->return_sequences) {
            memcpy(out + (size_t)t * n, h, n);
        }
    }
    if (!p->return_sequences) {
        memcpy(out, h, n);
    }
}

void msf_lstm_f32(const msf_lstm_params *p, const float *in, float *out, void *workspace)
{
    const size_t n = (size_t)p->units;
    float *h = (float *)workspace;  /* h, c and the gates in a row (Lstm.workspace_views) */
    float *c = h + n;
    float *gates = c + n;
    int32_t t;
    memset(h, 0, 2 * n * sizeof(float));  /* all-zero bits: 0.0f in IEEE single precision */
    for (t = 0; t < p->steps; ++t) {
        msf_lstm_step_f32(p, in + (size_t)t * (size_t)p->features, h, c, gates);
        if (p->return_sequences) {
            memcpy(out + (size_t)t * n, h, n * sizeof(float));
        }
    }
    if (!p->return_sequences) {
        memcpy(out, h, n * sizeof(float));
    }
}
