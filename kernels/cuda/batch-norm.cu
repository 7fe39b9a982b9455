/*
 * batch-norm.cu — BatchNorm at inference on CUDA: one grid-stride pass
 * over the element function of batch-norm.cuh (which the host emulation
 * test runs too), plus MXNet's "mean" and "var" outputs when asked for.
 * The output may be the input.
 */
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/batch-norm.cuh"

extern "C" void hy_cuda_batch_norm (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

__global__ static void
batch_norm_kernel (hy_cuda_batch_norm_args a, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    a.o[i] = hy_cuda_batch_norm_at (&a, i);
}

/* o[c] = 1 / sqrt(var[c] + eps) over the channels. */
__global__ static void
inv_std_kernel (hy_cuda_batch_norm_args a, float *o, int64_t channels)
{
  HY_CUDA_GRID_LOOP (c, channels)
    o[c] = hy_cuda_batch_norm_inv_std (&a, c);
}

void
hy_cuda_batch_norm (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_cuda_batch_norm_args a = hy_cuda_batch_norm_plan (
      (const hy_batch_norm_params *) params, in, out[0]);
  const int64_t n = hy_shape_numel (&in[0]->shape);
  if (n > 0) {
    batch_norm_kernel<<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS, 0,
        ctx->stream>>> (a, n);
    HY_CUDA_CHECK_LAUNCH (ctx);
  }

  if (n_out >= 3 && a.channels > 0) {
    /* MXNet's inference "mean" and "var" outputs: the moving mean and the
     * inverse standard deviation. */
    HY_CUDA_CHECK (ctx, cudaMemcpyAsync (out[1]->data, a.mean,
            (size_t) a.channels * sizeof (float), cudaMemcpyDeviceToDevice,
            ctx->stream));
    inv_std_kernel<<<hy_cuda_blocks (ctx, a.channels), HY_CUDA_THREADS, 0,
        ctx->stream>>> (a, out[2]->data, a.channels);
    HY_CUDA_CHECK_LAUNCH (ctx);
  }
}
