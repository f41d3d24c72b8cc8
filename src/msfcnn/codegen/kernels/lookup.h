/* LOGISTIC and HARD_SWISH (lookup.c). */
#ifndef MSF_LOOKUP_H
#define MSF_LOOKUP_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* LOGISTIC / HARD_SWISH. int8: out = table[in + 128]; float: the function (MSF_FN_*). */
enum { MSF_FN_LOGISTIC = 0, MSF_FN_HARD_SWISH = 1 };
typedef struct {
    int32_t channels;
    int32_t function;               /* float graphs: MSF_FN_* */
    const int8_t *table;            /* int8: [256] */
} msf_lookup_params;

void msf_lookup_s8(const msf_lookup_params *p, const msf_view *in, msf_view *out,
                   int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_lookup_f32(const msf_lookup_params *p, const msf_view *in, msf_view *out,
                    int32_t r0, int32_t r1, int32_t c0, int32_t c1);

MSF_END_DECLS

#endif /* MSF_LOOKUP_H */
