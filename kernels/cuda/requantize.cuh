/*
 * requantize.cuh — the element functions of the CUDA _contrib_requantize
 * kernel (requantize.cu), apart so that tests/cuda/emulate-requantize.cu
 * can run them on the host against the CPU kernel
 * (kernels/cpu/quantized/requantize.c), bit for bit.
 *
 * The arithmetic is the CPU's (MXNet's oneDNN requantize) step for step
 * in float32: in_scale = max(|min_range|, |max_range|) / 2^31, out_scale
 * = 127 (uint8: 255) / real_range, their product the one scale; rint
 * (ties to even) and saturation, NaN stored as 127 (int8) or 0 (uint8).
 * Each step is one IEEE operation with no add to contract into an FMA,
 * and the build has no fast-math (-prec-div on by default), so the device
 * rounds as the host does.
 *
 * Without a calibration the real range is the one the data's largest
 * magnitude stands for: a one-block reduction finds the smallest and
 * largest value from MXNet's starting points (2^31 and -2^31, the int32
 * limits as floats), so an empty tensor and INT32_MIN give MXNet's
 * negative range as the CPU does.  Min and max are exact and skip NaN
 * (fminf, fmaxf), so the order of the reduction changes nothing.
 *
 * The ranges live in device memory (inputs 1 and 2, outputs 1 and 2):
 * every element reads them there, no copy to the host.
 */
#ifndef HY_CUDA_REQUANTIZE_CUH
#define HY_CUDA_REQUANTIZE_CUH

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernels/cuda/launch.cuh"
#include "kernels/params/quantized.h"
#include "hybrid-tensor.h"

typedef struct hy_cuda_requantize_args {
  const float *x;
  const float *in_min, *in_max; /* the int32 data's range, one each */
  float *q;
  float *out_min, *out_max;     /* one element each */
  bool out_uint8, calibrated;
  float min_calib, max_calib;
} hy_cuda_requantize_args;

static inline hy_cuda_requantize_args
hy_cuda_requantize_plan (const hy_requantize_params *p,
    const hy_tensor *const *in, hy_tensor *const *out)
{
  hy_cuda_requantize_args a = {
    in[0]->data, in[1]->data, in[2]->data, out[0]->data, out[1]->data,
    out[2]->data, p->out_uint8, p->calibrated, p->min_calib, p->max_calib,
  };
  return a;
}

/* Where each thread's running min and max start: MXNet's int32 limits. */
HY_CUDA_HD void
hy_cuda_requantize_start (float *lo, float *hi)
{
  *lo = HY_INT32_RANGE;
  *hi = -HY_INT32_RANGE;
}

HY_CUDA_HD void
hy_cuda_requantize_fold (float *lo, float *hi, float v)
{
  *lo = fminf (*lo, v);
  *hi = fmaxf (*hi, v);
}

/* The reduction's step: partial j folded into partial i. */
HY_CUDA_HD void
hy_cuda_requantize_merge (float *lo, float *hi, unsigned i, unsigned j)
{
  lo[i] = fminf (lo[i], lo[j]);
  hi[i] = fmaxf (hi[i], hi[j]);
}

/* The int32 data's range as one magnitude. */
HY_CUDA_HD float
hy_cuda_requantize_in_range (const hy_cuda_requantize_args *a)
{
  return fmaxf (fabsf (a->in_min[0]), fabsf (a->in_max[0]));
}

/* Writes out_min and out_max from the calibration, or from the data's
 * smallest and largest value: the larger magnitude stored back into
 * MXNet's int32, where 2^31 does not fit and x86 gives INT32_MIN. */
HY_CUDA_HD void
hy_cuda_requantize_finish (const hy_cuda_requantize_args *a, float lo,
    float hi)
{
  float real;
  if (a->calibrated) {
    real = fmaxf (fabsf (a->min_calib), fabsf (a->max_calib));
  } else {
    float magnitude = fmaxf (fabsf (lo), fabsf (hi));
    if (!(magnitude < HY_INT32_RANGE))
      magnitude = -HY_INT32_RANGE;
    real = magnitude * hy_cuda_requantize_in_range (a) / HY_INT32_RANGE;
  }
  a->out_min[0] = a->out_uint8 ? 0.0f : -real;
  a->out_max[0] = real;
}

/* One int32 step x (held as a float) at the output range `real`. */
HY_CUDA_HD float
hy_cuda_requantize_op (bool out_uint8, float in_range, float real, float x)
{
  const float in_scale = in_range / HY_INT32_RANGE;
  const float out_scale = (out_uint8 ? 255.0f : 127.0f) / real;
  const float v = x * (in_scale * out_scale);
  const float lo = out_uint8 ? 0.0f : -128.0f;
  const float hi = out_uint8 ? 255.0f : 127.0f;
  float r = rintf (v);
  r = r < lo ? lo : r > hi ? hi : r;
  return v != v ? (out_uint8 ? 0.0f : 127.0f) : r;
}

/* Element i, once out_max holds the output range. */
HY_CUDA_HD float
hy_cuda_requantize_at (const hy_cuda_requantize_args *a, int64_t i)
{
  return hy_cuda_requantize_op (a->out_uint8, hy_cuda_requantize_in_range (a),
      a->out_max[0], a->x[i]);
}

#endif /* HY_CUDA_REQUANTIZE_CUH */
