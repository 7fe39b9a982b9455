/*
 * batch-norm.c — CPU kernel of _contrib_quantized_batch_norm as MXNet
 * 1.9.1's oneDNN build computes it (mkldnn_quantized_batch_norm.cc).
 *
 * MXNet folds the statistics and both ranges into one scale and shift per
 * channel, in float, with 1/sqrt(var + eps) taken in double as its code
 * does, then hands them to oneDNN's int8 BatchNorm as gamma and beta with
 * a mean of 0 and a variance of 1.  That primitive still divides by
 * sqrt(1 + eps), so the scale is a hair below what the folding meant: it
 * is reproduced here, or values near a rounding tie would land one step
 * off.  uint8 data is first reordered to int8 (times 127.5 / 255.5,
 * rounded), as MXNet does, since the primitive takes int8 only.
 */
#include <math.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/quantized/quantized-common.h"

void hy_cpu_quantized_batch_norm (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

void
hy_cpu_quantized_batch_norm (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_quantized_batch_norm_params *p = params;
  const hy_shape *s = &in[0]->shape;
  const int axis = p->bn.axis < 0 ? p->bn.axis + s->ndim : p->bn.axis;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; d++)
    outer *= s->dims[d];
  for (int d = axis + 1; d < s->ndim; d++)
    inner *= s->dims[d];
  const int64_t channels = s->dims[axis];
  const float *gamma = in[1]->data, *beta = in[2]->data;
  const float *mean = in[3]->data, *var = in[4]->data;
  const float max_abs_data = fmaxf (fabsf (in[5]->data[0]),
      fabsf (in[6]->data[0]));
  const float max_abs_out = fmaxf (fabsf (p->min_calib),
      fabsf (p->max_calib));
  const float u8_to_s8 = HY_INT8_RANGE / HY_UINT8_RANGE;
  /* oneDNN's own division by sqrt(variance + epsilon), variance 1 */
  const float primitive_div = sqrtf (1.0f + (float) p->eps);
  for (int64_t c = 0; c < channels; c++) {
    const float invstd = (float) (1.0 / sqrt ((double) var[c] + p->eps));
    const float scale = gamma[c] * invstd * max_abs_data / max_abs_out;
    const float shift = (beta[c] - mean[c] * gamma[c] * invstd)
        * HY_INT8_RANGE / max_abs_out;
    const float sm = scale / primitive_div;
    for (int64_t o = 0; o < outer; o++) {
      const float *x = in[0]->data + (o * channels + c) * inner;
      float *y = out[0]->data + (o * channels + c) * inner;
      for (int64_t i = 0; i < inner; i++) {
        float q = p->in_uint8 ? hy_q_store (x[i] * u8_to_s8, false) : x[i];
        y[i] = hy_q_store (fmaf (sm, q, shift), false);
      }
    }
  }
  out[1]->data[0] = p->min_calib;
  out[2]->data[0] = p->max_calib;
}
