/*
 * shape.cu — CUDA kernels of the shape-only ops and transpose.
 *
 * _copy, Dropout, BlockGrad, Flatten, Reshape, expand_dims and squeeze keep
 * the bytes in order: one device-to-device copy when the output has its
 * own buffer, nothing when the planner ran them in place.
 *
 * transpose is a strided gather (shape.cuh) whose walk has already been
 * simplified, so a permutation that moves nothing is a plain copy.
 */
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/shape.cuh"

extern "C" {
void hy_cuda_identity (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_flatten (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_reshape (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_expand_dims (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_squeeze (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cuda_transpose (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
}

static void
copy_tensor (hy_cuda_ctx *ctx, const hy_tensor *src, hy_tensor *dst)
{
  hy_cuda_copy_floats (ctx, dst->data, src->data,
      hy_shape_numel (&dst->shape));
}

extern "C" void
hy_cuda_identity (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  copy_tensor (ctx, in[0], out[0]);
}

extern "C" void
hy_cuda_flatten (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  copy_tensor (ctx, in[0], out[0]);
}

extern "C" void
hy_cuda_reshape (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  copy_tensor (ctx, in[0], out[0]);
}

extern "C" void
hy_cuda_expand_dims (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  copy_tensor (ctx, in[0], out[0]);
}

extern "C" void
hy_cuda_squeeze (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  copy_tensor (ctx, in[0], out[0]);
}

extern "C" void
hy_cuda_transpose (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  if (hy_shape_numel (&out[0]->shape) == 0)
    return;
  const hy_cuda_strided_args w = hy_cuda_transpose_walk (
      (const hy_transpose_params *) params, &in[0]->shape);
  hy_cuda_strided_gather (ctx, &w, in[0], out[0]);
}
