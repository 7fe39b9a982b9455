/*
 * requantize.c — CPU kernel of _contrib_requantize as MXNet 1.9.1's
 * oneDNN build computes it (mkldnn_requantize-inl.h): int32 steps of the
 * input's range to int8 or uint8 steps of the output's, with one scale for
 * the tensor applied by a oneDNN reorder (rounded to nearest even,
 * saturated).
 *
 * Every step is MXNet's in float32, in its order, so that the scale is
 * the same float:
 *   in_scale  = max(|min_range|, |max_range|) / 2^31
 *   out_scale = 127 (uint8: 255) / real_range
 *   scale     = in_scale · out_scale
 * real_range is max(|min_calib|, |max_calib|), or without a calibration
 * the range the data's largest magnitude stands for: that magnitude, as
 * an int32, times max(|min_range|, |max_range|) / 2^31.  (Not the
 * generic kernel's two steps, dequantize then quantize with round half
 * away from zero: MXNet's CPU runs this one.)
 */
#include <math.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/quantized.h"

void hy_cpu_requantize (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

/* The real range an uncalibrated requantize gives its output.  MXNet
 * scans the int32 data from min = INT32_MAX, max = INT32_MIN, takes the
 * larger magnitude in float and stores it back into an int32: 2^31 (from
 * INT32_MIN, or from no data at all) does not fit, and x86's conversion
 * gives INT32_MIN, so the range comes out negative, as MXNet's does
 * (measured: data holding INT32_MIN reports [+r, -r]). */
static float
own_range (const float *x, int64_t n, float in_range)
{
  float lo = HY_INT32_RANGE, hi = -HY_INT32_RANGE;
  for (int64_t i = 0; i < n; i++) {
    /* fminf/fmaxf skip NaN, which no int32 is */
    lo = fminf (lo, x[i]);
    hi = fmaxf (hi, x[i]);
  }
  float magnitude = fmaxf (fabsf (lo), fabsf (hi));
  if (!(magnitude < HY_INT32_RANGE))
    magnitude = -HY_INT32_RANGE;
  return magnitude * in_range / HY_INT32_RANGE;
}

typedef struct requantize_job {
  const float *x;
  float *q;
  float scale, lo, hi, nan_as;
} requantize_job;

/* x · scale rounded to even and saturated; NaN (0 · inf: a calibrated
 * range of [0, 0]) stored as 127 in int8 and 0 in uint8, as the reorder
 * stores it (measured with MXNet 1.9.1). */
static void
requantize_range (void *arg, int64_t begin, int64_t end, int thread)
{
  const requantize_job *j = arg;
  for (int64_t i = begin; i < end; i++) {
    const float v = j->x[i] * j->scale;
    float r = rintf (v);
    r = r < j->lo ? j->lo : r > j->hi ? j->hi : r;
    j->q[i] = v != v ? j->nan_as : r;
  }
}

void
hy_cpu_requantize (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_requantize_params *p = params;
  const float *x = in[0]->data;
  const int64_t n = hy_shape_numel (&in[0]->shape);
  const float in_range = fmaxf (fabsf (in[1]->data[0]),
      fabsf (in[2]->data[0]));
  const float real_range = p->calibrated
      ? fmaxf (fabsf (p->min_calib), fabsf (p->max_calib))
      : own_range (x, n, in_range);
  out[1]->data[0] = p->out_uint8 ? 0.0f : -real_range;
  out[2]->data[0] = real_range;
  const float in_scale = in_range / HY_INT32_RANGE;
  const float out_scale = (p->out_uint8 ? 255.0f : 127.0f) / real_range;
  requantize_job j = {
    .x = x, .q = out[0]->data, .scale = in_scale * out_scale,
    .lo = p->out_uint8 ? 0.0f : -128.0f,
    .hi = p->out_uint8 ? 255.0f : 127.0f,
    .nan_as = p->out_uint8 ? 0.0f : 127.0f,
  };
  hy_cpu_parallel_for (ctx, n, HY_CPU_MIN_THREAD_FLOATS, requantize_range,
      &j);
}
