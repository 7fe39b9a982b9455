/*
 * pool.c — CPU kernel of _contrib_quantized_pooling: the float pooling on
 * the quantized integers (held as floats), whose range passes through.
 * Max pooling of integers is an integer; oneDNN's average pooling of int8
 * and uint8 rounds its mean to the nearest integer, ties to even.
 */
#include <math.h>
#include <string.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/quantized.h"

void hy_cpu_quantized_pooling (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_pooling (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

void
hy_cpu_quantized_pooling (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_quantized_pool_params *p = params;
  hy_cpu_pooling (ctx, &p->pool, in, 1, out, 1);
  if (p->pool.pool_type == HY_POOL_AVG) {
    float *y = out[0]->data;
    int64_t n = hy_shape_numel (&out[0]->shape);
    for (int64_t i = 0; i < n; i++)
      y[i] = rintf (y[i]);
  }
  out[1]->data[0] = in[1]->data[0];
  out[2]->data[0] = in[2]->data[0];
}
