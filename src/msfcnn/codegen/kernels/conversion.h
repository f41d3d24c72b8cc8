/* DEQUANTIZE and QUANTIZE inside a graph (conversion.c). */
#ifndef MSF_CONVERSION_H
#define MSF_CONVERSION_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* DEQUANTIZE (int8 -> float32) and QUANTIZE (float32 -> int8) inside a graph, at a float island's
   edges (kernels/conversion.c). The interpreter's vector code converts the tensor's first
   vector_end values (in memory order: ((r * width) + c) * channels + ch), its scalar code the
   rest (msf_quantize_f32_one); vector_end is 0 under TFLite Micro's numerics, whose QUANTIZE
   divides by the scale in float32 (float_division 1), where LiteRT's scalar code divides in double. */
typedef struct {
    int32_t width, channels;        /* of the whole tensor */
    int32_t vector_end;
    int32_t float_division;
    float scale;                    /* of the int8 side */
    int32_t zero_point;
} msf_quantize_region_params;
typedef msf_quantize_region_params msf_dequantize_region_params;

void msf_dequantize_region_s8 MSF_REGION_ARGS(msf_dequantize_region_params);
void msf_quantize_region_f32 MSF_REGION_ARGS(msf_quantize_region_params);

MSF_END_DECLS

#endif /* MSF_CONVERSION_H */
