/* Integer arithmetic that GCC calls out of line on an Xtensa LX106 and that Debian's lx106 libgcc
   leaves out (the ESP8266's boot ROM provides it on the chip), written for msfcnn. The core
   multiplies 32 x 32 -> 32 bits in one instruction (MULL) but has no high-half multiply and no
   divide, so 64-bit products are built from 16-bit halves and division shifts and subtracts.
   Nothing here may use `/`, `%` or a 64 x 64 multiply, which would call these very functions. */
#include <stdint.h>

#include "arith.h"

uint64_t __udivmoddi4(uint64_t n, uint64_t d, uint64_t *remainder);  /* libgcc has it */

/* 32 x 32 -> 64 bits, unsigned: four 16 x 16 -> 32 products and their carries. */
uint64_t __umulsidi3(uint32_t a, uint32_t b)
{
    const uint32_t a_low = a & 0xffffu, a_high = a >> 16, b_low = b & 0xffffu, b_high = b >> 16;
    const uint32_t low = a_low * b_low, cross_1 = a_low * b_high, cross_2 = a_high * b_low;
    const uint32_t cross = cross_1 + cross_2, cross_carry = cross < cross_1;
    Words product;
    product.half.low = low + (cross << 16);
    product.half.high = a_high * b_high + (cross >> 16) + (cross_carry << 16) + (product.half.low < low);
    return product.whole;
}

/* 64 x 64 -> 64 bits (two's complement, so signed and unsigned alike). */
int64_t __muldi3(int64_t a, int64_t b)
{
    Words x, y, product;
    x.whole = (uint64_t)a;
    y.whole = (uint64_t)b;
    product.whole = __umulsidi3(x.half.low, y.half.low);
    product.half.high += x.half.low * y.half.high + x.half.high * y.half.low;
    return (int64_t)product.whole;
}

/* Restoring division, one quotient bit per step (d == 0 gives all ones, as no caller divides by 0). */
static uint32_t divide(uint32_t n, uint32_t d, uint32_t *remainder)
{
    uint32_t quotient = 0, rest = 0;
    int bit;
    for (bit = 31; bit >= 0; --bit) {
        rest = (rest << 1) | ((n >> bit) & 1u);
        if (rest >= d) {
            rest -= d;
            quotient |= 1u << bit;
        }
    }
    *remainder = rest;
    return quotient;
}

uint32_t __udivsi3(uint32_t n, uint32_t d)
{
    uint32_t rest;
    return divide(n, d, &rest);
}

uint32_t __umodsi3(uint32_t n, uint32_t d)
{
    uint32_t rest;
    divide(n, d, &rest);
    return rest;
}

/* C's division truncates toward zero: divide the magnitudes, then set the sign. */
int32_t __divsi3(int32_t n, int32_t d)
{
    const uint32_t n_size = n < 0 ? 0u - (uint32_t)n : (uint32_t)n, d_size = d < 0 ? 0u - (uint32_t)d : (uint32_t)d;
    uint32_t rest;
    const uint32_t quotient = divide(n_size, d_size, &rest);
    return (int32_t)((n < 0) != (d < 0) ? 0u - quotient : quotient);
}

/* 64-bit division (picolibc's printf of a number, the 16x8 MEAN's rounded average): libgcc's own
   unsigned routine does the work. */
uint64_t __udivdi3(uint64_t n, uint64_t d)
{
    return __udivmoddi4(n, d, 0);
}

uint64_t __umoddi3(uint64_t n, uint64_t d)
{
    uint64_t rest;
    __udivmoddi4(n, d, &rest);
    return rest;
}

/* Signed 64-bit division truncates toward zero, as __divsi3 does: divide the magnitudes. */
int64_t __divdi3(int64_t n, int64_t d)
{
    const uint64_t n_size = n < 0 ? 0u - (uint64_t)n : (uint64_t)n, d_size = d < 0 ? 0u - (uint64_t)d : (uint64_t)d;
    const uint64_t quotient = __udivmoddi4(n_size, d_size, 0);
    return (int64_t)((n < 0) != (d < 0) ? 0u - quotient : quotient);
}

/* The remainder takes the dividend's sign. */
int64_t __moddi3(int64_t n, int64_t d)
{
    const uint64_t n_size = n < 0 ? 0u - (uint64_t)n : (uint64_t)n, d_size = d < 0 ? 0u - (uint64_t)d : (uint64_t)d;
    uint64_t rest;
    __udivmoddi4(n_size, d_size, &rest);
    return (int64_t)(n < 0 ? 0u - rest : rest);
}
