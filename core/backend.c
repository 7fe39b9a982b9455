/*
 * backend.c — picks the backend for a device.
 */
#include "backend.h"

hy_backend *
hy_backend_new (hy_device device, GError **error)
{
  if (device.kind == HY_DEVICE_CPU)
    return hy_cpu_backend_new (error);
  if (!hy_cuda_backend_new) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "device cuda:%d: this build has no CUDA backend (configure with "
        "nvcc and cuDNN present, -Dcuda=enabled)", device.index);
    return NULL;
  }
  return hy_cuda_backend_new (device.index, error);
}

void
hy_backend_free (hy_backend *be)
{
  if (be)
    be->iface->free (be);
}
