/*
 * quantize.c — CPU kernels of _contrib_quantize_v2 and _contrib_dequantize
 * as MXNet 1.9.1's oneDNN build computes them (its mkldnn_quantize_v2 and
 * mkldnn_dequantize): one scale for the tensor, applied by a oneDNN
 * reorder, which rounds to nearest even and saturates.
 */
#include <math.h>

#include "kernels/cpu/cpu-features.h"
#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/quantized/quantize.h"
#include "kernels/cpu/quantized/quantized-common.h"
#include "kernels/params/quantized.h"

void hy_cpu_quantize_v2 (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_dequantize (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

/* x · scale rounded to even and saturated (hy_q_store's steps, written
 * so that gcc vectorises them: rintf is one vector round on the clones'
 * targets), a NaN stored as nan_as, on the pool's threads.
 *
 * Why: MobileNetV3's hard swish and squeeze-excitation quantize every
 * hard sigmoid's output, 29 of these on 112×112 to 1×1 maps, and the
 * scalar loop called rintf per element on one thread.  With
 * elemwise-mul.c's loops likewise, the calls of MobileNetV3-Large's
 * batch-1 forward that are not convolutions took 6.9-8.9 ms of CPU time
 * before and 4.2-4.5 after, the forward 20.6-23.7 and 18.1-18.6
 * (bench --profile -t 2 -n 40, alternated 3 times, Intel Xeon, 2 vCPUs
 * loaded by other builds). */
typedef struct quantize_job {
  const float *x;
  float *q;
  float scale, lo, hi, nan_as;
} quantize_job;

HY_CPU_VECTOR_CLONES static void
quantize_span (const float *x, float *q, int64_t n, float scale, float lo,
    float hi, float nan_as)
{
  for (int64_t i = 0; i < n; i++) {
    const float v = x[i] * scale;
    float r = rintf (v);
    r = r < lo ? lo : r > hi ? hi : r;
    q[i] = v != v ? nan_as : r;
  }
}

static void
quantize_range (void *arg, int64_t begin, int64_t end, int thread)
{
  const quantize_job *j = arg;
  quantize_span (j->x + begin, j->q + begin, end - begin, j->scale, j->lo,
      j->hi, j->nan_as);
}

hy_quantize_steps
hy_quantize_v2_steps (const hy_quantize_params *p, const float *x, int64_t n,
    float *out_min, float *out_max)
{
  float lo = p->min_calib, hi = p->max_calib;
  if (!p->calibrated) {
    /* MXNet finds the data's own range on every call then */
    lo = hi = n > 0 ? x[0] : 0.0f;
    for (int64_t i = 1; i < n; i++) {
      lo = fminf (lo, x[i]);
      hi = fmaxf (hi, x[i]);
    }
  }
  float range;
  if (p->out_uint8) {
    /* uint8 covers [0, max]: what lies below 0 saturates to 0 */
    range = fmaxf (0.0f, hi);
    *out_min = 0.0f;
    *out_max = range;
  } else {
    range = fmaxf (fabsf (lo), fabsf (hi));
    *out_min = -range;
    *out_max = range;
  }
  /* Not hy_q_scale: MXNet's quantize_v2 divides by the range itself, so
   * a range of [0, 0] (a layer dead on the calibration images) gives an
   * infinite scale, and 0 · inf a NaN, which its reorder stores as 127
   * in int8 and as 0 in uint8 (measured: the int8_dead fixtures).  The
   * layers after it multiply their data by 0 then (hy_q_scale). */
  return (hy_quantize_steps) {
    .scale = (p->out_uint8 ? HY_UINT8_RANGE : HY_INT8_RANGE) / range,
    .lo = p->out_uint8 ? 0.0f : -128.0f,
    .hi = p->out_uint8 ? 255.0f : 127.0f,
    .nan_as = p->out_uint8 ? 0.0f : 127.0f,
  };
}

void
hy_cpu_quantize_v2 (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_quantize_params *p = params;
  const float *x = in[0]->data;
  int64_t n = hy_shape_numel (&in[0]->shape);
  const hy_quantize_steps s = hy_quantize_v2_steps (p, x, n, out[1]->data,
      out[2]->data);
  quantize_job j = {
    .x = x, .q = out[0]->data, .scale = s.scale, .lo = s.lo, .hi = s.hi,
    .nan_as = s.nan_as,
  };
  hy_cpu_parallel_for (ctx, n, HY_CPU_MIN_THREAD_FLOATS, quantize_range, &j);
}

void
hy_cpu_dequantize (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_dequantize_params *p = params;
  float step = hy_dequantize_step (p, in[1]->data[0], in[2]->data[0]);
  const float *q = in[0]->data;
  float *y = out[0]->data;
  int64_t n = hy_shape_numel (&in[0]->shape);
  for (int64_t i = 0; i < n; i++)
    y[i] = q[i] * step;
}
