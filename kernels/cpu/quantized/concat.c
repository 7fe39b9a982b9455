/*
 * concat.c — CPU kernel of _contrib_quantized_concat, as MXNet's oneDNN
 * build computes it (mkldnn_quantized_concat.cc): the output's range is
 * [min(0, every min), max(0, every max)], and an input whose scale is not
 * the output's is rescaled by out_scale / in_scale in float and rounded to
 * nearest even with saturation to the output's dtype (oneDNN's reorder
 * with an output scale).  An input of the output's scale is copied as is.
 */
#include <stdint.h>
#include <string.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/quantized/quantized-common.h"

void hy_cpu_quantized_concat (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

void
hy_cpu_quantized_concat (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_quantized_concat_params *p = params;
  const int n = p->concat.num_args;
  const hy_shape *os = &out[0]->shape;
  float lo = 0.0f, hi = 0.0f;   /* MXNet starts both at 0 */
  for (int k = 0; k < n; k++) {
    float mn = in[n + 2 * k]->data[0], mx = in[n + 2 * k + 1]->data[0];
    if (mn < lo)
      lo = mn;
    if (mx > hi)
      hi = mx;
  }
  const float out_scale = hy_q_scale (p->out_uint8, lo, hi);
  int axis = p->concat.dim < 0 ? p->concat.dim + os->ndim : p->concat.dim;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; d++)
    outer *= os->dims[d];
  for (int d = axis + 1; d < os->ndim; d++)
    inner *= os->dims[d];
  const int64_t out_row = os->dims[axis] * inner;
  int64_t at = 0;               /* where input k's block starts in a row */
  for (int k = 0; k < n; k++) {
    const bool k_uint8 = (p->in_uint8 >> k) & 1;
    const float in_scale = hy_q_scale (k_uint8, in[n + 2 * k]->data[0],
        in[n + 2 * k + 1]->data[0]);
    const float rescale = out_scale / in_scale;
    const int64_t row = in[k]->shape.dims[axis] * inner;
    for (int64_t o = 0; o < outer; o++) {
      const float *x = in[k]->data + o * row;
      float *y = out[0]->data + o * out_row + at;
      if (in_scale == out_scale)
        memcpy (y, x, (size_t) row * sizeof (float));
      else
        for (int64_t i = 0; i < row; i++)
          y[i] = hy_q_store (x[i] * rescale, p->out_uint8);
    }
    at += row;
  }
  out[1]->data[0] = lo;
  out[2]->data[0] = hi;
}
