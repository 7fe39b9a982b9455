/*
 * quantize.h — _contrib_quantize_v2's and _contrib_dequantize's
 * arithmetic, shared by their planes kernels (quantize.c) and the ones
 * on values held as bytes (qelementwise-bytes.c), so that both store the
 * same integers.
 */
#ifndef HY_CPU_QUANTIZED_QUANTIZE_H
#define HY_CPU_QUANTIZED_QUANTIZE_H

#include <math.h>
#include <stdint.h>

#include "kernels/cpu/quantized/quantized-common.h"
#include "kernels/params/quantized.h"

/* One forward's quantize_v2: x · scale rounded to even and saturated to
 * [lo, hi], a NaN stored as nan_as. */
typedef struct hy_quantize_steps {
  float scale, lo, hi, nan_as;
} hy_quantize_steps;

/* The steps for data x (n floats, read only when the op is not
 * calibrated), the output's range written to *out_min, *out_max. */
hy_quantize_steps hy_quantize_v2_steps (const hy_quantize_params *p,
    const float *x, int64_t n, float *out_min, float *out_max);

/* One value quantized (the vector loops' steps, hy_q_store's order). */
static inline float
hy_quantize_one (float x, const hy_quantize_steps *s)
{
  const float v = x * s->scale;
  float r = rintf (v);
  r = r < s->lo ? s->lo : r > s->hi ? s->hi : r;
  return v != v ? s->nan_as : r;
}

/* Dequantize's real units per step, range / 127.5 (or 255.5), as MXNet
 * hands oneDNN's reorder its output scale. */
static inline float
hy_dequantize_step (const hy_dequantize_params *p, float min, float max)
{
  return fmaxf (fabsf (min), fabsf (max))
      / (p->in_uint8 ? HY_UINT8_RANGE : HY_INT8_RANGE);
}

#endif /* HY_CPU_QUANTIZED_QUANTIZE_H */
