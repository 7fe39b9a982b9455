/*
 * cpu-backend.c — maps op ids to CPU kernels.
 *
 * Kernels are declared weak so that a family whose file is not linked in
 * reads as "not implemented" (NULL) rather than as a link error; the core
 * turns that into a clear "op X has no CPU kernel" message.
 */
#include <stdlib.h>
#include <string.h>

#include "cpu-kernel.h"

#define HY_OP(id, family, name, aliases) \
  extern void hy_cpu_##family (hy_cpu_ctx *, const void *, \
      const hy_tensor *const *, int, hy_tensor *const *, int) \
      __attribute__ ((weak));
#include "ops.def"
#undef HY_OP

static hy_cpu_kernel_fn
kernel_table (hy_op_id op)
{
  switch (op) {
#define HY_OP(id, family, name, aliases) \
    case HY_OP_##id: return hy_cpu_##family;
#include "ops.def"
#undef HY_OP
    default:
      return NULL;
  }
}

hy_cpu_kernel_fn
hy_cpu_kernel_for (hy_op_id op)
{
  if ((int) op < 0 || op >= HY_OP_COUNT)
    return NULL;
  return kernel_table (op);
}

void *
hy_cpu_workspace (hy_cpu_ctx *ctx, size_t size)
{
  if (size <= ctx->workspace_size)
    return ctx->workspace;
  free (ctx->workspace);
  /* Round up so small growth steps do not reallocate every time. */
  size_t rounded = (size + 4095) & ~(size_t) 4095;
  ctx->workspace = aligned_alloc (64, rounded);
  if (!ctx->workspace)
    abort ();                   /* out of memory: an engine invariant */
  ctx->workspace_size = rounded;
  return ctx->workspace;
}

void
hy_cpu_ctx_clear (hy_cpu_ctx *ctx)
{
  free (ctx->workspace);
  memset (ctx, 0, sizeof *ctx);
}
