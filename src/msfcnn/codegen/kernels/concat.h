/* CONCATENATION (concat.c). */
#ifndef MSF_CONCAT_H
#define MSF_CONCAT_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* CONCATENATION along the channels: channels1 of the first input, then channels2 of the second. */
typedef struct {
    int32_t channels1, channels2;
} msf_concat_params;

void msf_concat_s8(const msf_concat_params *p, const msf_view *in1, const msf_view *in2, msf_view *out,
                   int32_t r0, int32_t r1, int32_t c0, int32_t c1);
void msf_concat_f32(const msf_concat_params *p, const msf_view *in1, const msf_view *in2, msf_view *out,
                    int32_t r0, int32_t r1, int32_t c0, int32_t c1);

MSF_END_DECLS

#endif /* MSF_CONCAT_H */
