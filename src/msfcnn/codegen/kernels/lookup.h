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

void msf_lookup_s8 MSF_REGION_ARGS(msf_lookup_params);
void msf_lookup_f32 MSF_REGION_ARGS(msf_lookup_params);

MSF_END_DECLS

#endif /* MSF_LOOKUP_H */
