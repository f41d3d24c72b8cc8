/* CONCATENATION (concat.c). */
#ifndef MSF_CONCAT_H
#define MSF_CONCAT_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* CONCATENATION along the channels: channels1 of the first input, then channels2 of the second. */
typedef struct {
    int32_t channels1, channels2;
} msf_concat_params;

void msf_concat_s8 MSF_REGION2_ARGS(msf_concat_params);
void msf_concat_f32 MSF_REGION2_ARGS(msf_concat_params);

MSF_END_DECLS

#endif /* MSF_CONCAT_H */
