/*
 * cuda-object.h — the CUDA backend's object, which its C files share
 * (cuda-backend.c makes it and runs calls; cuda-memory.c and
 * frame-stage.c use its stream and workspace).  It has no functions of
 * its own, so every file that reads the object points here and none back.
 * Nothing outside kernels/cuda includes it: the core sees the backend
 * through kernels/backend-impl.h.
 */
#ifndef HY_CUDA_OBJECT_H
#define HY_CUDA_OBJECT_H

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

#endif /* HY_CUDA_OBJECT_H */
