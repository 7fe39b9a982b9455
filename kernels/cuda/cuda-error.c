/*
 * cuda-error.c — a context's record of its first failed CUDA, cuBLAS or
 * cuDNN call: kernels record it (HY_CUDA_TRY, cuda-kernel.h) and never fail
 * out loud; the backend turns it into the forward's error once the stream
 * has finished.  Likewise for a kernel's refusal of its input's values
 * (refusal.h), which the device records itself.
 */
#include <stdio.h>

#include "hybrid.h"
#include "kernels/cuda/cuda-kernel.h"

void
hy_cuda_ctx_fail (hy_cuda_ctx *ctx, const char *what, const char *msg,
    const char *file, int line)
{
  if (ctx->error[0])
    return;                     /* the first failure explains the rest */
  snprintf (ctx->error, sizeof ctx->error, "%s failed at %s:%d: %s", what,
      file, line, msg ? msg : "unknown error");
}

gboolean
hy_cuda_ctx_take_error (hy_cuda_ctx *ctx, GError **error)
{
  if (!ctx->error[0])
    return TRUE;
  g_set_error (error, HY_ERROR, HY_ERROR_BACKEND, "cuda:%d: %s",
      ctx->device, ctx->error);
  ctx->error[0] = '\0';
  return FALSE;
}

gboolean
hy_cuda_ctx_take_refusal (hy_cuda_ctx *ctx, int *call, GError **error)
{
  /* Written by the device; the stream has finished. */
  volatile hy_cuda_refusal *r = ctx->refusal;
  if (!r || r->kind == HY_CUDA_REFUSAL_NONE)
    return TRUE;
  hy_cuda_refusal copy = {
    .kind = r->kind, .call = r->call, .value = r->value, .axis = r->axis,
    .size = r->size, .column = r->column,
  };
  r->kind = HY_CUDA_REFUSAL_NONE;
  char message[256];
  hy_cuda_refusal_message (&copy, message, sizeof message);
  g_set_error (error, HY_ERROR, HY_ERROR_INVALID, "%s", message);
  *call = copy.call;
  return FALSE;
}
