/* LiteRT's int8 ADD (add_litert.c). */
#ifndef MSF_ADD_LITERT_H
#define MSF_ADD_LITERT_H

#include "add.h"

MSF_BEGIN_DECLS

/* The ADDs whose values depend on their place in the whole tensor, LiteRT's int8 ADD
   (add_litert.c) and uint8 ADD (add_uint8.c): the ADD's params, the output's width (to place a
   region's values in the whole tensor) and where the interpreter's vector code ends (flat
   positions below it; the scalar code from there on). */
typedef struct {
    msf_add_params base;
    int32_t width, vector_end;
} msf_add_blocks_params;
typedef msf_add_blocks_params msf_add_litert_params;

/* One output value of a vector code, from the two inputs minus their zero points. */
typedef int8_t (*msf_add_value_fn)(const msf_add_params *p, int32_t a, int32_t b);

int32_t msf_high_mul_half_up(int32_t x, int32_t multiplier);  /* vqrdmulh, multiplier > 0 */
int32_t msf_wrap_int16(int32_t x);                            /* x narrowed to int16, wrapping */
int8_t msf_add_scalar_value(const msf_add_params *p, int32_t a, int32_t b);  /* add.c's value */
void msf_add_blocks_s8(const msf_add_blocks_params *q, msf_add_value_fn vector, const msf_view *in1,
                       const msf_view *in2, msf_view *out, int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_add_litert_s8(const msf_add_litert_params *q, const msf_view *in1, const msf_view *in2, msf_view *out,
                       int32_t r0, int32_t r1, int32_t c0, int32_t c1);
int8_t msf_add_litert_value(const msf_add_params *p, int32_t a, int32_t b);  /* the vector code's value */
int8_t msf_add_litert_output(const msf_add_params *p, int32_t sum);  /* its output from the rescaled sum */

MSF_END_DECLS

#endif /* MSF_ADD_LITERT_H */
