/*
 * softmax.cu — CUDA kernel of softmax, log_softmax, SoftmaxActivation and
 * SoftmaxOutput: one thread per softmax row (softmax.cuh), which keeps the
 * CPU's arithmetic and order; a classifier's rows of 1000 are short work.
 * The output may be the input, so the pointers are not restrict.
 */
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/softmax.cuh"

extern "C" void hy_cuda_softmax (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

static __global__ void
softmax_kernel (hy_cuda_softmax_args m, const float *x, float *y, int64_t rows)
{
  HY_CUDA_GRID_LOOP (r, rows)
    hy_cuda_softmax_row (&m, x, y, r);
}

extern "C" void
hy_cuda_softmax (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  if (hy_shape_numel (&in[0]->shape) == 0)
    return;
  int64_t rows;
  const hy_cuda_softmax_args m = hy_cuda_softmax_plan (
      (const hy_softmax_params *) params, &in[0]->shape, &rows);
  softmax_kernel<<<hy_cuda_blocks (ctx, rows), HY_CUDA_THREADS, 0,
      ctx->stream>>> (m, in[0]->data, out[0]->data, rows);
  HY_CUDA_CHECK_LAUNCH (ctx);
}
