/*
 * backend.h — what the core does with a backend (kernels/backend-impl.h):
 * makes one for a device, runs one op on it, and gives executors one made
 * elsewhere (tests' pretend devices).  Private to the core and its tests.
 */
#ifndef HY_BACKEND_H
#define HY_BACKEND_H

#include "kernels/backend-impl.h"

/* Makes a backend for someone who will own it (a block's executors). */
typedef hy_backend *(*hy_backend_maker) (void *data, GError **error);

/* Runs one op once on `be`: its kernel, prepared, run and released — the
 * one way an op runs outside a plan (imperative forwards, F's imperative
 * calls, constant folding).  Errors name the op; callers add the node. */
gboolean hy_backend_run_op (hy_backend *be, hy_op_id op, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out,
    GError **error);

/* The backend for a device (n_threads: CPU compute threads, <= 0 for the
 * default); NULL with a clear message when that device cannot be used (no
 * CUDA in this build, no GPU, a driver too old). */
hy_backend *hy_backend_new (hy_device device, int n_threads,
    GError **error);
void hy_backend_free (hy_backend *be);

/* An executor on `backend`, which it takes (and frees with itself):
 * hy_executor_new for a backend made elsewhere (tests). */
hy_executor *hy_executor_new_on (const hy_model *model, hy_backend *backend,
    hy_mode mode, GError **error);

hy_backend *hy_executor_backend (hy_executor *exec);

/* Staged inputs (a device frame path writes the input where the plan
 * reads it, instead of uploading a host tensor): hybrid mode on a device
 * only.  hy_executor_device_input plans for the executor's current input
 * shapes (hy_executor_set_input_shape) and returns the device tensor of
 * input i, valid until the shapes or the mode change;
 * hy_executor_forward_staged (hybrid-frame.h) then runs a forward without
 * any upload.  Frame stages (hy_executor_frame_stage_new) ask for it once
 * per plan. */
hy_tensor *hy_executor_device_input (hy_executor *exec, int i,
    GError **error);

#endif /* HY_BACKEND_H */
