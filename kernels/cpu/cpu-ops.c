/*
 * cpu-ops.c — maps op ids to CPU kernels, one per op family (ops.def).
 *
 * Every family's kernel is a strong reference: a family without one fails
 * the link, so an op cannot quietly read as "not implemented".
 */
#include "kernels/cpu/cpu-kernel.h"

#define HY_OP(id, family, name, aliases) \
  extern void hy_cpu_##family (hy_cpu_ctx *, const void *, \
      const hy_tensor *const *, int, hy_tensor *const *, int);
#define HY_OP_KNOWN(id, family, name, aliases)
#include "kernels/ops.def"
#undef HY_OP_KNOWN
#undef HY_OP

static hy_cpu_kernel_fn
kernel_table (hy_op_id op)
{
  switch (op) {
#define HY_OP(id, family, name, aliases) \
    case HY_OP_##id: return hy_cpu_##family;
#define HY_OP_KNOWN(id, family, name, aliases)
#include "kernels/ops.def"
#undef HY_OP_KNOWN
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

