/*
 * cuda-ops.c — maps op ids to CUDA kernels, as cpu-ops.c does for the CPU:
 * every family's kernel is a strong reference, so a missing one fails the
 * link.  A family with plan-time set-up also defines
 * hy_cuda_prepare_<family> and hy_cuda_release_<family> (cuda-kernel.h);
 * those are weak, since most families need none.
 *
 * HY_OP_CPU ops have no CUDA kernel yet: they are left out here, so
 * hy_cuda_kernel_for returns NULL for them and building a plan that needs
 * one on CUDA fails with the node's name (core/plan.c, core/executor.c).
 */
#include "kernels/cuda/cuda-kernel.h"

#define HY_OP(id, family, name, aliases) \
  extern void hy_cuda_##family (hy_cuda_ctx *, const void *, \
      const hy_tensor *const *, int, hy_tensor *const *, int); \
  extern gboolean hy_cuda_prepare_##family (hy_cuda_ctx *, const void *, \
      const hy_tensor *const *, int, hy_tensor *const *, int, void **, \
      size_t *, GError **) __attribute__ ((weak)); \
  extern void hy_cuda_release_##family (void *) __attribute__ ((weak));
#define HY_OP_KNOWN(id, family, name, aliases)
#define HY_OP_CPU(id, family, name, aliases)
#include "kernels/ops.def"
#undef HY_OP_CPU
#undef HY_OP_KNOWN
#undef HY_OP

static gboolean
valid (hy_op_id op)
{
  return (int) op >= 0 && op < HY_OP_COUNT;
}

hy_cuda_kernel_fn
hy_cuda_kernel_for (hy_op_id op)
{
  switch (valid (op) ? op : HY_OP_COUNT) {
#define HY_OP(id, family, name, aliases) \
    case HY_OP_##id: return hy_cuda_##family;
#define HY_OP_KNOWN(id, family, name, aliases)
#define HY_OP_CPU(id, family, name, aliases)
#include "kernels/ops.def"
#undef HY_OP_CPU
#undef HY_OP_KNOWN
#undef HY_OP
    default:
      return NULL;
  }
}

hy_cuda_prepare_fn
hy_cuda_prepare_for (hy_op_id op)
{
  switch (valid (op) ? op : HY_OP_COUNT) {
#define HY_OP(id, family, name, aliases) \
    case HY_OP_##id: return hy_cuda_prepare_##family;
#define HY_OP_KNOWN(id, family, name, aliases)
#define HY_OP_CPU(id, family, name, aliases)
#include "kernels/ops.def"
#undef HY_OP_CPU
#undef HY_OP_KNOWN
#undef HY_OP
    default:
      return NULL;
  }
}

hy_cuda_release_fn
hy_cuda_release_for (hy_op_id op)
{
  switch (valid (op) ? op : HY_OP_COUNT) {
#define HY_OP(id, family, name, aliases) \
    case HY_OP_##id: return hy_cuda_release_##family;
#define HY_OP_KNOWN(id, family, name, aliases)
#define HY_OP_CPU(id, family, name, aliases)
#include "kernels/ops.def"
#undef HY_OP_CPU
#undef HY_OP_KNOWN
#undef HY_OP
    default:
      return NULL;
  }
}
