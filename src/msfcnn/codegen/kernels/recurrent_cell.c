/* ONNX's GRU and RNN one step at a time (recurrent_cell.h): the kind's step function on the
   state's h. One definition for both kinds, which differ only in their params and step. */
#include <string.h>

#include "recurrent_cell.h"

#define MSF_FLOAT_CELL(kind)                                                                    \
    void msf_##kind##_cell_start_f32(const msf_##kind##_params *p, void *state)                 \
    {                                                                                           \
        memset(state, 0, (size_t)p->units * sizeof(float)); /* all-zero bits: 0.0f */           \
    }                                                                                           \
    const float *msf_##kind##_cell_f32(const msf_##kind##_params *p, const float *x, void *state, \
                                       void *temp)                                              \
    {                                                                                           \
        msf_##kind##_step_f32(p, x, (float *)state, (float *)temp);                             \
        return (const float *)state;                                                            \
    }                                                                                           \
    const float *msf_##kind##_cell_output_f32(const msf_##kind##_params *p, const void *state)  \
    {                                                                                           \
        (void)p;                                                                                \
        return (const float *)state;                                                            \
    }

MSF_FLOAT_CELL(gru)
MSF_FLOAT_CELL(rnn)
