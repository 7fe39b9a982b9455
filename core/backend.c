/*
 * backend.c — picks the backend for a device, and runs one op on one.
 */
#include "core/backend.h"
#include "core/cuda-module.h"
#include "core/op.h"

#include <string.h>

hy_backend *
hy_backend_new (hy_device device, int n_threads, GError **error)
{
  if (device.kind == HY_DEVICE_CPU)
    return hy_cpu_backend_new (n_threads, error);
  return hy_cuda_module_backend_new (device.index, error);
}

void
hy_backend_free (hy_backend *be)
{
  if (be)
    be->iface->free (be);
}

gboolean
hy_backend_run_op (hy_backend *be, hy_op_id op, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out,
    GError **error)
{
  hy_kernel_ptr fn = be->iface->kernel_for (op);
  if (!fn) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "the %s backend has no kernel for op %s", be->iface->name,
        hy_op_info_get (op)->name);
    return FALSE;
  }
  /* One step: every input already has the value it keeps throughout.
   * On the stack: an imperative step allocates nothing for it. */
  const int words = hy_const_bits_words (n_in);
  uint32_t *all_const = g_newa (uint32_t, MAX (words, 1));
  memset (all_const, 0xff, (size_t) MAX (words, 1) * sizeof *all_const);
  hy_call call = {
    .fn = fn, .params = params, .in = in, .out = out,
    .n_in = n_in, .n_out = n_out, .op = op, .const_inputs = all_const,
  };
  if (be->iface->prepare_call && !be->iface->prepare_call (be, &call, error))
    return FALSE;
  gboolean ok = be->iface->run (be, &call, 1, NULL, error);
  if (be->iface->release_call)
    be->iface->release_call (be, &call);
  return ok;
}
