/*
 * elemwise-mul.c — CPU kernel of _contrib_quantized_elemwise_mul as MXNet
 * 1.9.1 computes it (quantized_elemwise_mul.cc; no oneDNN kernel): the
 * product of the two int8 values times one float scale, which takes both
 * inputs' steps to the output's.  With a calibrated output MXNet casts
 * that to int8 in C++: truncated toward zero and, beyond int8, wrapped
 * (the low byte of the int32 conversion), not saturated; a value beyond
 * int32 converts to INT32_MIN, whose low byte is 0.  Both are kept, or a
 * value past the calibrated range would differ from MXNet's.
 */
#include <math.h>
#include <stdint.h>

#include "kernels/cpu/cpu-features.h"
#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/quantized/elemwise-mul.h"
#include "kernels/cpu/quantized/quantized-common.h"

void hy_cpu_quantized_elemwise_mul (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

/* The loops over a range of elements, on the pool's threads, in the
 * vector clones.  Why:
 * MobileNetV3's 20 hard swishes and 8 squeeze-excitation products run
 * here, on maps of up to 112×112×16, as one loop on one thread
 * (quantize.c has the figures). */
typedef struct mul_job {
  const float *a, *b;
  float *y;
  float scale;
  bool float_output;
} mul_job;

HY_CPU_VECTOR_CLONES static void
mul_to_float (const float *a, const float *b, float *y, int64_t n,
    float scale)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = a[i] * b[i] * scale;
}

HY_CPU_VECTOR_CLONES static void
mul_to_int8 (const float *a, const float *b, float *y, int64_t n,
    float scale)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = hy_qmul_cast_to_int8 (a[i] * b[i] * scale);
}

static void
mul_range (void *arg, int64_t begin, int64_t end, int thread)
{
  const mul_job *j = arg;
  if (j->float_output)
    mul_to_float (j->a + begin, j->b + begin, j->y + begin, end - begin,
        j->scale);
  else
    mul_to_int8 (j->a + begin, j->b + begin, j->y + begin, end - begin,
        j->scale);
}

float
hy_qmul_scale (const hy_quantized_elemwise_mul_params *p,
    const hy_tensor *const *in)
{
  const float lhs_scale = HY_INT8_RANGE / fmaxf (fabsf (in[2]->data[0]),
      fabsf (in[3]->data[0]));
  const float rhs_scale = HY_INT8_RANGE / fmaxf (fabsf (in[4]->data[0]),
      fabsf (in[5]->data[0]));
  /* MXNet: 1.0 / lhs_scale / rhs_scale, in double, stored as float */
  if (p->float_output)
    return (float) (1.0 / lhs_scale / rhs_scale);
  const float out_data_scale = HY_INT8_RANGE / fmaxf (fabsf (p->min_calib),
      fabsf (p->max_calib));
  return out_data_scale / lhs_scale / rhs_scale;
}

void
hy_cpu_quantized_elemwise_mul (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_quantized_elemwise_mul_params *p = params;
  /* MXNet multiplies in int32; the product of two int8 values is exact in
   * float too, and a hostile non-integer input cannot overflow a cast */
  const int64_t n = hy_shape_numel (&out[0]->shape);
  mul_job j = {
    .a = in[0]->data, .b = in[1]->data, .y = out[0]->data,
    .scale = hy_qmul_scale (p, in), .float_output = p->float_output,
  };
  hy_cpu_parallel_for (ctx, n, HY_CPU_MIN_THREAD_FLOATS, mul_range, &j);
  if (p->float_output)
    return;
  out[1]->data[0] = p->min_calib;
  out[2]->data[0] = p->max_calib;
}
