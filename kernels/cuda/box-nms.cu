/*
 * box-nms.cu — CUDA kernel of _contrib_box_nms: one block per batch
 * taking the CPU kernel's steps (box-nms.cuh), with __syncthreads between
 * them; per-batch scratch in the shared workspace that
 * hy_cuda_prepare_box_nms sizes when the plan is built.
 */
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/box-nms.cuh"

extern "C" {
gboolean hy_cuda_prepare_box_nms (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out,
    void **state, size_t *workspace, GError **error);
void hy_cuda_box_nms (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
}

/* At most this many blocks; each loops over the batches. */
#define NMS_MAX_BLOCKS 65535

/* Only the workspace: the kernel keeps the params as its state. */
gboolean
hy_cuda_prepare_box_nms (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out,
    void **state, size_t *workspace, GError **error)
{
  const hy_nms_args a = hy_nms_plan (
      (const hy_box_nms_params *) params, &in[0]->shape);
  *state = (void *) params;
  *workspace = (size_t) a.batches * hy_nms_scratch_size (&a);
  return TRUE;
}

static __global__ void
nms_kernel (hy_nms_args a, const float *__restrict__ xs,
    float *__restrict__ ys, void *workspace)
{
  __shared__ int64_t count, kept;
  const int t = threadIdx.x, threads = blockDim.x;
  for (int64_t b = blockIdx.x; b < a.batches; b += gridDim.x) {
    const float *x = xs + b * a.n * a.width;
    float *y = ys + b * a.n * a.width;
    const hy_nms_scratch s = hy_cuda_nms_scratch_at (&a, workspace, b);
    if (t == 0)
      count = hy_nms_collect (&a, x, s.idx);
    __syncthreads ();
    for (int64_t run = 1; run < count; run *= 2) {
      for (int64_t lo = (int64_t) t * 2 * run; lo < count;
          lo += (int64_t) threads * 2 * run)
        hy_nms_merge (&a, x, s.idx, s.tmp, count, run, lo);
      __syncthreads ();
      for (int64_t k = t; k < count; k += threads)
        s.idx[k] = s.tmp[k];
      __syncthreads ();
    }
    const int64_t m = count < a.topk ? count : a.topk;
    for (int64_t k = t; k < m; k += threads)
      s.area[k] = hy_nms_area (&a, x, s.idx, k);
    __syncthreads ();
    for (int64_t ref = 0; ref < m; ref++) {
      if (s.idx[ref] >= 0) {
        for (int64_t pos = ref + 1 + t; pos < m; pos += threads)
          if (hy_nms_suppresses (&a, x, s.idx, s.area, ref, pos))
            s.idx[pos] = -1;
      }
      __syncthreads ();
    }
    if (t == 0)
      kept = hy_nms_pack (s.idx, m, s.tmp);
    __syncthreads ();
    for (int64_t e = t; e < a.n * a.width; e += threads)
      y[e] = hy_nms_out (&a, x, s.tmp, kept, e);
    __syncthreads ();           /* count and kept are reused */
  }
}

void
hy_cuda_box_nms (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_nms_args a = hy_nms_plan (
      (const hy_box_nms_params *) params, &in[0]->shape);
  if (a.batches == 0)
    return;
  if (a.topk == 0) {
    hy_cuda_copy_floats (ctx, out[0]->data, in[0]->data,
        hy_shape_numel (&in[0]->shape));
    return;
  }
  const unsigned blocks = (unsigned) (a.batches < NMS_MAX_BLOCKS
      ? a.batches : NMS_MAX_BLOCKS);
  nms_kernel<<<blocks, HY_CUDA_THREADS, 0, ctx->stream>>> (a, in[0]->data,
      out[0]->data, ctx->workspace);
  HY_CUDA_CHECK_LAUNCH (ctx);
}
