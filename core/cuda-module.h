/*
 * cuda-module.h — the core's way to the CUDA backend, which lives in a
 * module of its own opened on first use (cuda-module.c says why).
 * Private to the core.
 */
#ifndef HY_CUDA_MODULE_H
#define HY_CUDA_MODULE_H

#include "kernels/backend-impl.h"

/* The module's file name, looked for beside libhybrid.so. */
#define HY_CUDA_MODULE_NAME "libhybrid-cuda.so"

/* The CUDA backend on GPU `index`; NULL with a message saying why not (no
 * CUDA in this build, no driver, the module would not load, no such
 * GPU). */
hy_backend *hy_cuda_module_backend_new (int index, GError **error);

/* Why GPU `index` cannot be used, or NULL when it can (g_free it). */
char *hy_cuda_module_unavailable_reason (int index);

/* TRUE when this machine or build offers no GPU at all (see
 * hy_device_no_gpu); a module that fails to load is not that. */
gboolean hy_cuda_module_no_gpu (void);

#endif /* HY_CUDA_MODULE_H */
