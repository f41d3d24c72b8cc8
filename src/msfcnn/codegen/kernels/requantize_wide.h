/* QUANTIZE int16 -> int32 (requantize_wide.c): the last op of TFLite Micro's keyword models. */
#ifndef MSF_REQUANTIZE_WIDE_H
#define MSF_REQUANTIZE_WIDE_H

#include "requantize.h"

MSF_BEGIN_DECLS

/* int16 -> int32: the QUANTIZE's parameters, the output saturated to int32. */
typedef msf_requantize_params msf_requantize_wide_s16_params;

void msf_requantize_wide_s16 MSF_REGION_ARGS(msf_requantize_wide_s16_params);

MSF_END_DECLS

#endif /* MSF_REQUANTIZE_WIDE_H */
