/*
 * cpu-kernel.h — the contract between the core and the CPU kernels.
 *
 * A kernel runs one op on contiguous float32 tensors whose shapes the core
 * has already inferred and validated: kernels never fail on shapes (on
 * values only through hy_cpu_refuse) and never see a graph, a file or a
 * node name.  Every params struct (kernels/params/)
 * starts with the op id so a family kernel knows which member it runs.
 *
 * Scratch memory comes from the context's workspace, never from malloc on
 * the hot path: a compiled plan sizes the workspace once and every later
 * forward reuses it.
 *
 * A context may own a thread pool (threadpool.h), made once when its owner
 * is set up: kernels split their heavy loops over independent outputs with
 * hy_cpu_parallel_for, so results do not depend on the thread count.  A
 * zeroed context has no pool and runs everything on the calling thread.
 */
#ifndef HY_CPU_KERNEL_H
#define HY_CPU_KERNEL_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>

#include <glib.h>

#include "hybrid-tensor.h"
#include "kernels/hy-ops.h"
#include "kernels/cpu/threadpool.h"

typedef struct hy_cpu_ctx {
  void *workspace;
  size_t workspace_size;
  hy_threadpool *pool;          /* NULL: one thread */
  /* Where a workspace that cannot grow returns to (the backend's run sets
   * it around its calls; NULL: abort, for code that calls kernels
   * directly), and how many bytes were asked for. */
  jmp_buf *on_no_memory;
  size_t denied_bytes;
  /* Set by hy_cpu_fail (and hy_cpu_refuse) before it jumps there too:
   * what failed, and whether it was the input's values. */
  char failure[160];
  bool failure_is_input;
  /* Precision bf16 (hy_precision): convolutions prepared from now on
   * compute from bf16 copies through oneDNN (conv-dnnl.h). */
  bool bf16;
} hy_cpu_ctx;

/* Returns at least `size` bytes of 64-byte aligned scratch, valid until the
 * next call.  Grows (allocates) only when a bigger size is asked for.
 * Never from inside a parallel loop: ask before it, for every thread.
 * When it cannot grow, it does not return: it jumps to on_no_memory, so a
 * kernel never sees NULL and never needs an error path (kernels allocate
 * nothing else and hold no lock when they ask, so nothing is left
 * behind). */
void *hy_cpu_workspace (hy_cpu_ctx *ctx, size_t size);

/* A library call that a kernel cannot do without failed (oneDNN's
 * execute): records why and jumps to on_no_memory as a workspace that
 * cannot grow does, and the forward fails with HY_ERROR_BACKEND.  From
 * the thread that called the kernel only, outside its parallel loops. */
void hy_cpu_fail (hy_cpu_ctx *ctx, const char *format, ...)
    G_GNUC_PRINTF (2, 3) G_GNUC_NORETURN;
/* The same for a kernel whose input values it cannot use (MXNet raises on
 * them: an index out of range): the forward fails with HY_ERROR_INVALID
 * and the message, which the caller prefixes with the node and op.  Call
 * it before writing any output, from the thread that called the kernel,
 * outside its parallel loops.  Formats into the context: allocates
 * nothing, so hybrid mode stays allocation-free up to the error itself. */
void hy_cpu_refuse (hy_cpu_ctx *ctx, const char *format, ...)
    G_GNUC_PRINTF (2, 3) G_GNUC_NORETURN;
void hy_cpu_ctx_clear (hy_cpu_ctx *ctx);

/* Gives ctx n_threads threads in all, the caller's included (<= 0: the
 * default, hy_threadpool_default_threads; 1: no pool), replacing its pool.
 * Starts threads: call it when setting up, never per forward. */
void hy_cpu_ctx_set_threads (hy_cpu_ctx *ctx, int n_threads);

/* The threads a loop started now would run on: 1 without a pool, and
 * inside a loop (loops do not nest). */
int hy_cpu_n_threads (const hy_cpu_ctx *ctx);

/* Runs fn over items [0, n) on ctx's threads, in up to four contiguous
 * chunks per thread of at least `grain` items each: each thread its own
 * share of them first (the t-th fraction, threadpool.h), then any another
 * has not begun.  A loop of fewer than 2·grain items runs serially on the
 * caller.  grain is the least work worth handing to a thread (e.g. 16K
 * floats of a cheap elementwise loop). */
void hy_cpu_parallel_for (hy_cpu_ctx *ctx, int64_t n, int64_t grain,
    hy_parallel_fn fn, void *arg);

/* The same with one chunk per item, shared out the same way: for a few
 * heavy items of uneven cost (GEMM blocks). */
void hy_cpu_parallel_each (hy_cpu_ctx *ctx, int64_t n, hy_parallel_fn fn,
    void *arg);

/* The least floats of memory-bound work (a copy, an elementwise pass)
 * worth handing to a thread of its own: about 10 µs, next to the
 * microsecond a spinning worker takes to pick a loop up. */
#define HY_CPU_MIN_THREAD_FLOATS (16 * 1024)

/* The grain for hy_cpu_parallel_for over items of `floats` floats of
 * work each. */
static inline int64_t
hy_cpu_grain (int64_t floats)
{
  return floats >= HY_CPU_MIN_THREAD_FLOATS ? 1 : floats <= 0
      ? HY_CPU_MIN_THREAD_FLOATS
      : (HY_CPU_MIN_THREAD_FLOATS + floats - 1) / floats;
}

/* `size` bytes of scratch for every thread of a loop started now: thread
 * t's slice starts at (char *) base + t·*stride. */
void *hy_cpu_workspace_per_thread (hy_cpu_ctx *ctx, size_t size,
    size_t *stride);

typedef void (*hy_cpu_kernel_fn) (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

/* The kernel for an op, or NULL when the CPU backend has none. */
hy_cpu_kernel_fn hy_cpu_kernel_for (hy_op_id op);

/* The context of a backend made by hy_cpu_backend_new
 * (kernels/backend-impl.h). */
struct hy_backend;
hy_cpu_ctx *hy_cpu_backend_ctx (struct hy_backend *be);

#endif /* HY_CPU_KERNEL_H */
