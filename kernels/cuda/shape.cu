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
#include "cuda-kernel.h"
#include "launch.cuh"
#include "shape.cuh"

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
copy_floats (hy_cuda_ctx *ctx, float *dst, const float *src, int64_t n)
{
  if (dst != src && n > 0)
    HY_CUDA_CHECK (ctx, cudaMemcpyAsync (dst, src, (size_t) n * sizeof (float),
            cudaMemcpyDeviceToDevice, ctx->stream));
}

static void
copy_tensor (hy_cuda_ctx *ctx, const hy_tensor *src, hy_tensor *dst)
{
  copy_floats (ctx, dst->data, src->data, hy_shape_numel (&dst->shape));
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

static __global__ void
gather_kernel (hy_cuda_strided_args w, const float *__restrict__ x,
    float *__restrict__ y, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    y[i] = x[hy_cuda_strided_src (&w, i)];
}

extern "C" void
hy_cuda_transpose (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_transpose_params *p = (const hy_transpose_params *) params;
  const int64_t n = hy_shape_numel (&out[0]->shape);
  if (n == 0)
    return;
  const hy_cuda_strided_args w = hy_cuda_transpose_walk (p, &in[0]->shape);
  if (hy_cuda_strided_contiguous (&w)) {
    copy_floats (ctx, out[0]->data, in[0]->data + w.base, n);
    return;
  }
  gather_kernel<<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS, 0,
      ctx->stream>>> (w, in[0]->data, out[0]->data, n);
  HY_CUDA_CHECK_LAUNCH (ctx);
}
