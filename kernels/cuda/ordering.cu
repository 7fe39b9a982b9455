/*
 * ordering.cu — CUDA kernel of topk, sort and argsort: one thread per row
 * running the CPU kernel's libstdc++ steps for MXNet's tie order
 * (kernels/ordering-common.h), the rows' positions in the shared
 * workspace that hy_cuda_prepare_ordering sizes when the plan is built.
 */
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/ordering.cuh"

extern "C" {
gboolean hy_cuda_prepare_ordering (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out,
    void **state, size_t *workspace, GError **error);
void hy_cuda_ordering (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
}

/* Only the workspace: the kernel keeps the params as its state (nothing
 * to release). */
gboolean
hy_cuda_prepare_ordering (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out,
    void **state, size_t *workspace, GError **error)
{
  const hy_order_args a = hy_order_plan (
      (const hy_ordering_params *) params, &in[0]->shape);
  *state = (void *) params;
  *workspace = hy_cuda_order_workspace (&a);
  return TRUE;
}

static __global__ void
order_kernel (hy_order_args a, const float *__restrict__ x,
    float *y0, float *y1, int64_t *pos)
{
  HY_CUDA_GRID_LOOP (r, a.rows)
    hy_order_one_row (&a, x, y0, y1, pos + r * a.n, r);
}

void
hy_cuda_ordering (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_order_args a = hy_order_plan (
      (const hy_ordering_params *) params, &in[0]->shape);
  if (a.rows == 0 || a.n == 0)
    return;
  order_kernel<<<hy_cuda_blocks (ctx, a.rows), HY_CUDA_THREADS, 0,
      ctx->stream>>> (a, in[0]->data, out[0]->data,
      n_out > 1 ? out[1]->data : NULL, (int64_t *) ctx->workspace);
  HY_CUDA_CHECK_LAUNCH (ctx);
}
