/*
 * roi-align.cu — CUDA kernel of _contrib_ROIAlign: one thread per output
 * element (roi-align.cuh), so no scratch for the taps the CPU kernel
 * precomputes per ROI.
 */
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/roi-align.cuh"

extern "C" void hy_cuda_roi_align (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

static __global__ void
roi_align_kernel (hy_cuda_roi_args a, const float *__restrict__ x,
    const float *__restrict__ rois, float *__restrict__ y, int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    y[i] = hy_cuda_roi_one (&a, x, rois, i);
}

extern "C" void
hy_cuda_roi_align (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const int64_t n = hy_shape_numel (&out[0]->shape);
  if (n == 0)
    return;
  const hy_cuda_roi_args a = hy_cuda_roi_plan (
      (const hy_roi_align_params *) params, &in[0]->shape, &out[0]->shape);
  roi_align_kernel<<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS, 0,
      ctx->stream>>> (a, in[0]->data, in[1]->data, out[0]->data, n);
  HY_CUDA_CHECK_LAUNCH (ctx);
}
