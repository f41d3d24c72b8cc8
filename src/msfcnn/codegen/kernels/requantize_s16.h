/* QUANTIZE int16 -> int8 (requantize_s16.c). */
#ifndef MSF_REQUANTIZE_S16_H
#define MSF_REQUANTIZE_S16_H

#include "requantize.h"

MSF_BEGIN_DECLS

/* int16 -> int8: the int8 QUANTIZE's parameters. */
typedef msf_requantize_params msf_requantize_s16_params;

void msf_requantize_s16 MSF_REGION_ARGS(msf_requantize_s16_params);

MSF_END_DECLS

#endif /* MSF_REQUANTIZE_S16_H */
