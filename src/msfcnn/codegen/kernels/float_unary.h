/* ONNX float unary functions (float_unary.c). */
#ifndef MSF_FLOAT_UNARY_H
#define MSF_FLOAT_UNARY_H

#include "msfcnn_common.h"

MSF_BEGIN_DECLS

/* ONNX LeakyRelu / Tanh / Elu in float32 graphs (int8 graphs use tables: msf_lookup). */
enum { MSF_UNARY_LEAKY_RELU = 0, MSF_UNARY_TANH = 1, MSF_UNARY_ELU = 2 };
typedef struct {
    int32_t channels;
    int32_t function;               /* MSF_UNARY_* */
    float alpha;                    /* LeakyRelu's slope, Elu's scale */
} msf_float_unary_params;

void msf_float_unary_f32 MSF_REGION_ARGS(msf_float_unary_params);

MSF_END_DECLS

#endif /* MSF_FLOAT_UNARY_H */
