/*
 * cuda-memory.c — device memory and host copies for the CUDA backend.
 *
 * Memory comes from the device's stream-ordered pool (cudaMallocAsync) on
 * the backend's stream, with the pool told to keep what is freed: a
 * plan's arena is allocated once, but imperative mode allocates every
 * output per forward, and the pool makes that cheap after the first.
 * Each entry point makes the backend's device current first: the thread
 * calling may not be the one that made the backend.
 * Copies from and to the host are blocking (the caller owns the host
 * buffer as soon as they return): an asynchronous copy on the stream,
 * then a wait for the stream, which also orders it after every kernel
 * enqueued before.
 */
#include <stdint.h>

#include "kernels/cuda/cuda-memory.h"
#include "kernels/cuda/cuda-object.h"

void *
hy_cuda_backend_alloc (hy_backend *be, size_t bytes, GError **error)
{
  hy_cuda_ctx *ctx = &cuda_backend_of (be)->ctx;
  void *p = NULL;
  be->stats.allocations++;
  HY_CUDA_TRY (cudaSetDevice (ctx->device), error);
  cudaError_t err = cudaMallocAsync (&p, bytes > 0 ? bytes : 1, ctx->stream);
  if (err != cudaSuccess) {
    g_set_error (error, HY_ERROR, HY_ERROR_BACKEND,
        "cuda:%d: cannot allocate %zu bytes of device memory: %s",
        ctx->device, bytes, cudaGetErrorString (err));
    return NULL;
  }
  return p;
}

void
hy_cuda_backend_dealloc (hy_backend *be, void *ptr)
{
  hy_cuda_ctx *ctx = &cuda_backend_of (be)->ctx;
  if (ptr) {
    HY_CUDA_CHECK (ctx, cudaSetDevice (ctx->device));
    HY_CUDA_CHECK (ctx, cudaFreeAsync (ptr, ctx->stream));
  }
}

static gboolean
copy_and_wait (hy_cuda_ctx *ctx, void *dst, const void *src, size_t bytes,
    enum cudaMemcpyKind kind, GError **error)
{
  if (bytes == 0)
    return TRUE;
  HY_CUDA_CHECK (ctx, cudaSetDevice (ctx->device));
  HY_CUDA_CHECK (ctx, cudaMemcpyAsync (dst, src, bytes, kind, ctx->stream));
  HY_CUDA_CHECK (ctx, cudaStreamSynchronize (ctx->stream));
  return hy_cuda_ctx_take_error (ctx, error);
}

gboolean
hy_cuda_backend_upload (hy_backend *be, void *dst, const void *src,
    size_t bytes, GError **error)
{
  be->stats.uploads++;
  be->stats.upload_bytes += (gint64) bytes;
  return copy_and_wait (&cuda_backend_of (be)->ctx, dst, src, bytes,
      cudaMemcpyHostToDevice, error);
}

gboolean
hy_cuda_backend_download (hy_backend *be, void *dst, const void *src,
    size_t bytes, GError **error)
{
  be->stats.downloads++;
  be->stats.download_bytes += (gint64) bytes;
  return copy_and_wait (&cuda_backend_of (be)->ctx, dst, src, bytes,
      cudaMemcpyDeviceToHost, error);
}

gboolean
hy_cuda_backend_reserve_workspace (cuda_backend *cb, size_t bytes,
    GError **error)
{
  hy_cuda_ctx *ctx = &cb->ctx;
  if (bytes <= ctx->workspace_size)
    return TRUE;
  void *p = NULL;
  HY_CUDA_TRY (cudaMalloc (&p, bytes), error);
  cb->base.stats.allocations++;
  if (ctx->workspace)
    g_ptr_array_add (cb->old_workspaces, ctx->workspace);
  ctx->workspace = p;
  ctx->workspace_size = bytes;
  return TRUE;
}
