/* LiteRT's int8 ADD of a constant (add_const_litert.c). */
#ifndef MSF_ADD_CONST_LITERT_H
#define MSF_ADD_CONST_LITERT_H

#include "add_litert.h"

MSF_BEGIN_DECLS

/* LiteRT's int8 ADD of a constant (add_const_litert.c): the ADD of two maps (the constant as
   input 2), the constant (1 value, or per_channel), the output's width, and where its vector code
   runs: flat positions below vector_end (one value), channels below vector_channels (per channel). */
typedef struct {
    msf_add_params add;
    const int8_t *operand;
    int32_t per_channel;
    int32_t width, vector_end, vector_channels;
} msf_add_const_litert_params;

void msf_add_const_litert_s8(const msf_add_const_litert_params *q, const msf_view *in, msf_view *out,
                             int32_t r0, int32_t r1, int32_t c0, int32_t c1);

MSF_END_DECLS

#endif /* MSF_ADD_CONST_LITERT_H */
