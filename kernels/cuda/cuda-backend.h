/*
 * cuda-backend.h — the CUDA backend's object, shared by its C files
 * (cuda-backend.c: set-up, calls, CUDA graphs; cuda-memory.c: memory and
 * copies).  Nothing outside kernels/cuda includes it: the core sees the
 * backend through kernels/backend-impl.h.
 */
#ifndef HY_CUDA_BACKEND_H
#define HY_CUDA_BACKEND_H

#include "kernels/backend-impl.h"
#include "kernels/cuda/cuda-kernel.h"

typedef struct cuda_backend {
  hy_backend base;
  hy_cuda_ctx ctx;
  /* Workspaces outgrown by later plans; kept until the backend goes, as
   * CUDA graphs recorded earlier still point into them. */
  GPtrArray *old_workspaces;
  void *cublas_workspace;       /* makes cuBLAS capturable (no allocation) */
  gboolean graphs;              /* record plans as CUDA graphs */
} cuda_backend;

static inline cuda_backend *
cuda_backend_of (hy_backend *be)
{
  return (cuda_backend *) be;
}

/* cuda-memory.c */
void *hy_cuda_backend_alloc (hy_backend *be, size_t bytes, GError **error);
void hy_cuda_backend_dealloc (hy_backend *be, void *ptr);
gboolean hy_cuda_backend_upload (hy_backend *be, void *dst, const void *src,
    size_t bytes, GError **error);
gboolean hy_cuda_backend_download (hy_backend *be, void *dst,
    const void *src, size_t bytes, GError **error);
/* Makes the shared workspace at least `bytes`. */
gboolean hy_cuda_backend_reserve_workspace (cuda_backend *cb, size_t bytes,
    GError **error);

#endif /* HY_CUDA_BACKEND_H */
