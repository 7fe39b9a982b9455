/*
 * multibox-detection.cu — CUDA kernel of _contrib_MultiBoxDetection: one
 * block per image taking the CPU kernel's steps (multibox-detection.cuh),
 * with __syncthreads between them; per-image scratch in the shared
 * workspace that hy_cuda_prepare_multibox_detection sizes when the plan
 * is built.
 */
#include "kernels/cuda/cuda-kernel.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/multibox-detection.cuh"

extern "C" {
gboolean hy_cuda_prepare_multibox_detection (hy_cuda_ctx *ctx,
    const void *params, const hy_tensor *const *in, int n_in,
    hy_tensor *const *out, int n_out, void **state, size_t *workspace,
    GError **error);
void hy_cuda_multibox_detection (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
}

/* At most this many blocks; each loops over the images. */
#define MBD_MAX_BLOCKS 65535

/* Only the workspace: the kernel keeps the params as its state. */
gboolean
hy_cuda_prepare_multibox_detection (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out,
    void **state, size_t *workspace, GError **error)
{
  const hy_mbd_args a = hy_mbd_plan (
      (const hy_multibox_detection_params *) params, &in[0]->shape);
  *state = (void *) params;
  *workspace = (size_t) a.batch * hy_mbd_scratch_size (&a);
  return TRUE;
}

static __global__ void
detect_kernel (hy_mbd_args a, const float *__restrict__ cls_all,
    const float *__restrict__ loc_all, const float *__restrict__ anchors,
    float *__restrict__ y_all, void *workspace)
{
  __shared__ int64_t count;
  const int t = threadIdx.x, threads = blockDim.x;
  const int64_t na = a.anchors;
  for (int64_t n = blockIdx.x; n < a.batch; n += gridDim.x) {
    const float *cls = cls_all + n * a.classes * na;
    const float *loc = loc_all + n * na * 4;
    float *y = y_all + n * na * 6;
    const hy_mbd_scratch s = hy_cuda_mbd_scratch_at (&a, workspace, n);
    for (int64_t i = t; i < na; i += threads)
      hy_mbd_classify (&a, cls, i, s.rows + i * 6);
    __syncthreads ();
    if (t == 0)
      count = hy_mbd_collect (&a, s.rows, s.idx);
    __syncthreads ();
    for (int64_t e = t; e < na * 6; e += threads)
      y[e] = hy_mbd_out (&a, s.rows, s.idx, count, anchors, loc, e);
    __syncthreads ();
    if (a.nms && count >= 1) {
      for (int64_t e = t; e < count * 6; e += threads)
        s.rows[e] = y[e];
      for (int64_t k = t; k < count; k += threads)
        s.idx[k] = k;
      __syncthreads ();
      for (int64_t run = 1; run < count; run *= 2) {
        for (int64_t lo = (int64_t) t * 2 * run; lo < count;
            lo += (int64_t) threads * 2 * run)
          hy_mbd_merge (s.rows, s.idx, s.tmp, count, run, lo);
        __syncthreads ();
        for (int64_t k = t; k < count; k += threads)
          s.idx[k] = s.tmp[k];
        __syncthreads ();
      }
      const int64_t kept = hy_mbd_kept (&a, count);
      for (int64_t e = t; e < count * 6; e += threads)
        hy_mbd_write_back (s.rows, s.idx, kept, e, y);
      __syncthreads ();
      for (int64_t ref = 0; ref < kept; ref++) {
        if (!(y[ref * 6] < 0)) {
          for (int64_t pos = ref + 1 + t; pos < kept; pos += threads)
            if (hy_mbd_suppresses (&a, y, ref, pos))
              y[pos * 6] = -1.0f;
        }
        __syncthreads ();
      }
    }
    __syncthreads ();           /* count is reused */
  }
}

void
hy_cuda_multibox_detection (hy_cuda_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_mbd_args a = hy_mbd_plan (
      (const hy_multibox_detection_params *) params, &in[0]->shape);
  if (a.batch == 0 || a.anchors == 0)
    return;
  const unsigned blocks = (unsigned) (a.batch < MBD_MAX_BLOCKS
      ? a.batch : MBD_MAX_BLOCKS);
  detect_kernel<<<blocks, HY_CUDA_THREADS, 0, ctx->stream>>> (a,
      in[0]->data, in[1]->data, in[2]->data, out[0]->data, ctx->workspace);
  HY_CUDA_CHECK_LAUNCH (ctx);
}
