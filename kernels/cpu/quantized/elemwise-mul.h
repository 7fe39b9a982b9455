/*
 * elemwise-mul.h — _contrib_quantized_elemwise_mul's arithmetic, shared
 * by its planes kernel (elemwise-mul.c) and the one on values held as
 * bytes (qelementwise-bytes.c), so that both store the same integers.
 */
#ifndef HY_CPU_QUANTIZED_ELEMWISE_MUL_H
#define HY_CPU_QUANTIZED_ELEMWISE_MUL_H

#include <math.h>
#include <stdint.h>

#include "hybrid-tensor.h"
#include "kernels/params/quantized.h"

/* What static_cast<int8_t> of a float gives on x86 (cvttss2si, then the
 * low byte), without the undefined behaviour of writing it so in C: a
 * value beyond int32 (or NaN) converts to INT32_MIN, whose low byte is
 * 0.  Written as a select before the conversion, so that gcc vectorises
 * it. */
static inline int8_t
hy_qmul_cast_to_int8 (float v)
{
  const float in_range = fabsf (v) < 2147483648.0f ? v : 0.0f;
  return (int8_t) (uint8_t) ((uint32_t) (int32_t) in_range & 0xffu);
}

/* The one float the int8 product is multiplied by: both inputs' steps to
 * the output's (or to real units with a float output), as MXNet 1.9.1
 * computes it.  in: the call's inputs (lhs, rhs, then their ranges). */
float hy_qmul_scale (const hy_quantized_elemwise_mul_params *p,
    const hy_tensor *const *in);

#endif /* HY_CPU_QUANTIZED_ELEMWISE_MUL_H */
