/*
 * cpu-kernel.h — the contract between the core and the CPU kernels.
 *
 * A kernel runs one op on contiguous float32 tensors whose shapes the core
 * has already inferred and validated: kernels never fail and never see a
 * graph, a file or a node name.  Every params struct (kernels/params/)
 * starts with the op id so a family kernel knows which member it runs.
 *
 * Scratch memory comes from the context's workspace, never from malloc on
 * the hot path: a compiled plan sizes the workspace once and every later
 * forward reuses it.
 */
#ifndef HY_CPU_KERNEL_H
#define HY_CPU_KERNEL_H

#include <stddef.h>

#include "hybrid-tensor.h"
#include "hy-ops.h"

typedef struct hy_cpu_ctx {
  void *workspace;
  size_t workspace_size;
  int n_threads;                /* 0 = library default */
} hy_cpu_ctx;

/* Returns at least `size` bytes of 64-byte aligned scratch, valid until the
 * next call.  Grows (allocates) only when a bigger size is asked for. */
void *hy_cpu_workspace (hy_cpu_ctx *ctx, size_t size);
void hy_cpu_ctx_clear (hy_cpu_ctx *ctx);

typedef void (*hy_cpu_kernel_fn) (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

/* The kernel for an op, or NULL when the CPU backend has none. */
hy_cpu_kernel_fn hy_cpu_kernel_for (hy_op_id op);

#endif /* HY_CPU_KERNEL_H */
