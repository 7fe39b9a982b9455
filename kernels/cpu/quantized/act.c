/*
 * act.c — CPU kernel of _contrib_quantized_act: ReLU on int8 values,
 * whose range passes through unchanged (MXNet's oneDNN kernel copies the
 * input's min and max).
 */
#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/quantized.h"

void hy_cpu_quantized_act (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

void
hy_cpu_quantized_act (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const float *x = in[0]->data;
  float *y = out[0]->data;
  int64_t n = hy_shape_numel (&in[0]->shape);
  for (int64_t i = 0; i < n; i++)
    y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  out[1]->data[0] = in[1]->data[0];
  out[2]->data[0] = in[2]->data[0];
}
