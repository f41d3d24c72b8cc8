/* The out-of-line arithmetic routines msfcnn provides for the LX106 (arith.c, softfloat.c), under
   the names GCC calls them by. */
#ifndef MSFCNN_LX106_ARITH_H
#define MSFCNN_LX106_ARITH_H

#include <stdint.h>

typedef union {
    uint64_t whole;
    struct { uint32_t low, high; } half;  /* the core is little-endian */
} Words;

uint64_t __umulsidi3(uint32_t a, uint32_t b);
int64_t __muldi3(int64_t a, int64_t b);
uint32_t __udivsi3(uint32_t n, uint32_t d);
uint32_t __umodsi3(uint32_t n, uint32_t d);
int32_t __divsi3(int32_t n, int32_t d);
uint64_t __udivdi3(uint64_t n, uint64_t d);
uint64_t __umoddi3(uint64_t n, uint64_t d);
int64_t __divdi3(int64_t n, int64_t d);
int64_t __moddi3(int64_t n, int64_t d);
float __addsf3(float a, float b);
float __subsf3(float a, float b);
float __mulsf3(float a, float b);
float __floatsisf(int32_t i);

#endif
