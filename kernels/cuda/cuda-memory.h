/*
 * cuda-memory.h — device memory and blocking host copies for the CUDA
 * backend (cuda-memory.c): the backend's alloc/dealloc/upload/download
 * entries, and the one workspace every call of every plan shares.
 */
#ifndef HY_CUDA_MEMORY_H
#define HY_CUDA_MEMORY_H

#include "kernels/cuda/cuda-object.h"

void *hy_cuda_backend_alloc (hy_backend *be, size_t bytes, GError **error);
void hy_cuda_backend_dealloc (hy_backend *be, void *ptr);
gboolean hy_cuda_backend_upload (hy_backend *be, void *dst, const void *src,
    size_t bytes, GError **error);
gboolean hy_cuda_backend_download (hy_backend *be, void *dst,
    const void *src, size_t bytes, GError **error);
/* Makes the shared workspace at least `bytes`. */
gboolean hy_cuda_backend_reserve_workspace (cuda_backend *cb, size_t bytes,
    GError **error);

#endif /* HY_CUDA_MEMORY_H */
