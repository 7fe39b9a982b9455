/*
 * elemwise-add.c — CPU kernel of _contrib_quantized_elemwise_add as MXNet
 * 1.9.1's oneDNN build computes it (mkldnn_quantized_elemwise_add.cc):
 * oneDNN's sum with one float scale per input, taking its quantized steps
 * to the calibrated output's, accumulated in float and rounded to nearest
 * even with saturation.  When one input is uint8 and the other int8,
 * MXNet first reorders the uint8 one into int8 already scaled to the
 * output's steps (rounded and saturated there: a uint8 value past 127
 * steps is clipped before the sum) and sums it with a scale of 1.
 */
#include <math.h>
#include <stdint.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/quantized/quantized-common.h"

void hy_cpu_quantized_elemwise_add (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

void
hy_cpu_quantized_elemwise_add (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_quantized_elemwise_add_params *p = params;
  const bool out_uint8 = p->lhs_uint8 && p->rhs_uint8;
  const float lhs_scale = hy_q_scale (p->lhs_uint8, in[2]->data[0],
      in[3]->data[0]);
  const float rhs_scale = hy_q_scale (p->rhs_uint8, in[4]->data[0],
      in[5]->data[0]);
  const float out_scale = hy_q_scale (out_uint8, p->min_calib, p->max_calib);
  const float lhs_mult = out_scale / lhs_scale;
  const float rhs_mult = out_scale / rhs_scale;
  /* which input, if any, MXNet reorders from uint8 to int8 first */
  const bool reorder_lhs = p->lhs_uint8 && !p->rhs_uint8;
  const bool reorder_rhs = p->rhs_uint8 && !p->lhs_uint8;
  const float *a = in[0]->data, *b = in[1]->data;
  float *y = out[0]->data;
  const int64_t n = hy_shape_numel (&out[0]->shape);
  for (int64_t i = 0; i < n; i++) {
    float va = reorder_lhs ? hy_q_store (a[i] * lhs_mult, false)
        : a[i] * lhs_mult;
    float vb = reorder_rhs ? hy_q_store (b[i] * rhs_mult, false)
        : b[i] * rhs_mult;
    y[i] = hy_q_store (va + vb, out_uint8);
  }
  out[1]->data[0] = p->min_calib;
  out[2]->data[0] = p->max_calib;
}
