/*
 * quantize.cuh — the element functions of the CUDA _contrib_quantize_v2
 * and _contrib_dequantize kernels (quantize.cu), apart so that
 * tests/cuda/emulate-quantize.cu can run them on the host against the CPU
 * kernels (kernels/cpu/quantized/quantize.c), bit for bit.
 *
 * The arithmetic is the CPU's step for step, in float32: the range is
 * max(|min|, |max|) (uint8: max(0, max)), the scale 127.5 or 255.5 divided
 * by it (a range of [0, 0] gives inf, and 0 · inf a NaN, stored as 127 in
 * int8 and 0 in uint8, as MXNet's reorder does), then rint (ties to even)
 * and saturation.  Each step is one IEEE operation, so the device (no
 * fast-math, -prec-div on by default) rounds as the host does.
 *
 * The range lives in device memory (out[2] for quantize, inputs 1 and 2
 * for dequantize), so every element reads it there: no copy to the host,
 * and an uncalibrated quantize finds its range on the device first.
 */
#ifndef HY_CUDA_QUANTIZE_CUH
#define HY_CUDA_QUANTIZE_CUH

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernels/cuda/launch.cuh"
#include "kernels/params/quantized.h"
#include "hybrid-tensor.h"

/* One more value into a running min and max that start as NaN: fminf
 * and fmaxf skip NaN, so the result is the CPU's (x[0] then fminf over
 * the rest) in any order — NaN only when every value is NaN. */
HY_CUDA_HD void
hy_cuda_quantize_fold (float *lo, float *hi, float v)
{
  *lo = fminf (*lo, v);
  *hi = fmaxf (*hi, v);
}

/* The reduction's step: partial j folded into partial i. */
HY_CUDA_HD void
hy_cuda_quantize_merge (float *lo, float *hi, unsigned i, unsigned j)
{
  lo[i] = fminf (lo[i], lo[j]);
  hi[i] = fmaxf (hi[i], hi[j]);
}

/* The output range quantize_v2 reports for data in [lo, hi]. */
HY_CUDA_HD void
hy_cuda_quantize_bounds (bool out_uint8, float lo, float hi, float *out_min,
    float *out_max)
{
  if (out_uint8) {
    *out_min = 0.0f;
    *out_max = fmaxf (0.0f, hi);
  } else {
    const float range = fmaxf (fabsf (lo), fabsf (hi));
    *out_min = -range;
    *out_max = range;
  }
}

/* x quantized at `range` (the reported max): x · scale rounded to even
 * and saturated, NaN stored as 127 (int8) or 0 (uint8). */
HY_CUDA_HD float
hy_cuda_quantize_op (bool out_uint8, float range, float x)
{
  const float scale = (out_uint8 ? HY_UINT8_RANGE : HY_INT8_RANGE) / range;
  const float lo = out_uint8 ? 0.0f : -128.0f;
  const float hi = out_uint8 ? 255.0f : 127.0f;
  const float v = x * scale;
  float r = rintf (v);
  r = r < lo ? lo : r > hi ? hi : r;
  return v != v ? (out_uint8 ? 0.0f : 127.0f) : r;
}

typedef struct hy_cuda_quantize_args {
  const float *x;
  float *q;
  float *out_min, *out_max;     /* one element each */
  bool out_uint8, calibrated;
  float min_calib, max_calib;
} hy_cuda_quantize_args;

static inline hy_cuda_quantize_args
hy_cuda_quantize_plan (const hy_quantize_params *p, const hy_tensor *x,
    hy_tensor *const *out)
{
  hy_cuda_quantize_args a = {
    x->data, out[0]->data, out[1]->data, out[2]->data, p->out_uint8,
    p->calibrated, p->min_calib, p->max_calib,
  };
  return a;
}

/* Writes out_min and out_max: the calibrated range, or the data's own
 * [lo, hi] as the reduction found it (no data: the CPU's [0, 0]). */
HY_CUDA_HD void
hy_cuda_quantize_finish (const hy_cuda_quantize_args *a, int64_t n, float lo,
    float hi)
{
  float min = a->min_calib, max = a->max_calib;
  if (!a->calibrated) {
    min = n > 0 ? lo : 0.0f;
    max = n > 0 ? hi : 0.0f;
  }
  hy_cuda_quantize_bounds (a->out_uint8, min, max, a->out_min, a->out_max);
}

/* Element i of the quantized data, once out_max holds the range. */
HY_CUDA_HD float
hy_cuda_quantize_at (const hy_cuda_quantize_args *a, int64_t i)
{
  return hy_cuda_quantize_op (a->out_uint8, a->out_max[0], a->x[i]);
}

/* The real value of step q at the range [min, max]: q · range / 127.5
 * (or 255.5), the step computed as the CPU computes it. */
HY_CUDA_HD float
hy_cuda_dequantize_op (bool in_uint8, float min, float max, float q)
{
  const float step = fmaxf (fabsf (min), fabsf (max))
      / (in_uint8 ? HY_UINT8_RANGE : HY_INT8_RANGE);
  return q * step;
}

typedef struct hy_cuda_dequantize_args {
  const float *q, *min, *max;
  float *y;
  bool in_uint8;
} hy_cuda_dequantize_args;

static inline hy_cuda_dequantize_args
hy_cuda_dequantize_plan (const hy_dequantize_params *p,
    const hy_tensor *const *in, hy_tensor *y)
{
  hy_cuda_dequantize_args a = {
    in[0]->data, in[1]->data, in[2]->data, y->data, p->in_uint8,
  };
  return a;
}

HY_CUDA_HD float
hy_cuda_dequantize_at (const hy_cuda_dequantize_args *a, int64_t i)
{
  return hy_cuda_dequantize_op (a->in_uint8, a->min[0], a->max[0], a->q[i]);
}

#endif /* HY_CUDA_QUANTIZE_CUH */
