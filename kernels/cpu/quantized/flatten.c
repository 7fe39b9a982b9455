/*
 * flatten.c — CPU kernel of _contrib_quantized_flatten: the values and
 * their range pass through unchanged, only the shape is new.
 */
#include <string.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/quantized.h"

void hy_cpu_quantized_flatten (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

void
hy_cpu_quantized_flatten (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  if (out[0]->data != in[0]->data)
    memcpy (out[0]->data, in[0]->data,
        (size_t) hy_shape_numel (&in[0]->shape) * sizeof (float));
  out[1]->data[0] = in[1]->data[0];
  out[2]->data[0] = in[2]->data[0];
}
