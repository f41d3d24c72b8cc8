/* QUANTIZE int8 -> int8 (requantize.c). */
#ifndef MSF_REQUANTIZE_H
#define MSF_REQUANTIZE_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* QUANTIZE int8 -> int8 (float graphs: a copy). */
typedef struct {
    int32_t channels;
    int32_t input_offset, output_offset;
    int32_t mult, shift;
    int32_t rounding;
} msf_requantize_params;

void msf_requantize_s8 MSF_REGION_ARGS(msf_requantize_params);

void msf_requantize_f32 MSF_REGION_ARGS(msf_requantize_params);

MSF_END_DECLS

#endif /* MSF_REQUANTIZE_H */
