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
#include "blas.h"
#include "backend.h"

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
  hy_threadpool_free (ctx->pool);
  free (ctx->workspace);
  memset (ctx, 0, sizeof *ctx);
}

void
hy_cpu_ctx_set_threads (hy_cpu_ctx *ctx, int n_threads)
{
  hy_blas_use_one_thread ();
  hy_threadpool_free (ctx->pool);
  ctx->pool = hy_threadpool_new (n_threads > 0 ? n_threads
      : hy_threadpool_default_threads ());
}

int
hy_cpu_n_threads (const hy_cpu_ctx *ctx)
{
  return hy_threadpool_in_loop () ? 1 : hy_threadpool_n_threads (ctx->pool);
}

#define CHUNKS_PER_THREAD 4

void
hy_cpu_parallel_for (hy_cpu_ctx *ctx, int64_t n, int64_t grain,
    hy_parallel_fn fn, void *arg)
{
  /* A few chunks per thread: whoever is free takes the next, so a thread
   * that starts late, or is preempted on a busy machine, holds up only a
   * small part of the loop. */
  const int threads = hy_cpu_n_threads (ctx);
  int64_t chunks = n / (grain > 1 ? grain : 1);
  if (chunks > CHUNKS_PER_THREAD * threads)
    chunks = CHUNKS_PER_THREAD * threads;
  if (chunks < 2 || threads < 2)
    chunks = 1;
  /* One chunk runs on the caller, with its own thread index. */
  hy_threadpool_run (ctx->pool, n, (n + chunks - 1) / chunks, fn, arg);
}

void
hy_cpu_parallel_each (hy_cpu_ctx *ctx, int64_t n, hy_parallel_fn fn,
    void *arg)
{
  hy_threadpool_run (ctx->pool, n, 1, fn, arg);
}

void *
hy_cpu_workspace_per_thread (hy_cpu_ctx *ctx, size_t size, size_t *stride)
{
  *stride = (size + 63) & ~(size_t) 63;
  return hy_cpu_workspace (ctx, *stride * (size_t) hy_cpu_n_threads (ctx));
}

/* ---- the backend interface (core/backend.h) ---------------------------- */

typedef struct cpu_backend {
  hy_backend base;
  hy_cpu_ctx ctx;
} cpu_backend;

static void
cpu_free (hy_backend *be)
{
  cpu_backend *cpu = (cpu_backend *) be;
  hy_cpu_ctx_clear (&cpu->ctx);
  g_free (cpu);
}

static hy_kernel_ptr
cpu_kernel_for (hy_op_id op)
{
  return (hy_kernel_ptr) hy_cpu_kernel_for (op);
}

static void
cpu_copy (hy_cpu_ctx *ctx, const void *params, const hy_tensor *const *in,
    int n_in, hy_tensor *const *out, int n_out)
{
  memcpy (out[0]->data, in[0]->data, hy_tensor_nbytes (out[0]));
}

static gboolean
cpu_run (hy_backend *be, const hy_call *calls, int n_calls, void **capture,
    GError **error)
{
  hy_cpu_ctx *ctx = &((cpu_backend *) be)->ctx;
  be->stats.direct_calls += n_calls;
  for (int c = 0; c < n_calls; c++) {
    const hy_call *call = &calls[c];
    ((hy_cpu_kernel_fn) call->fn) (ctx, call->params, call->in, call->n_in,
        call->out, call->n_out);
  }
  return TRUE;
}

static void *
cpu_alloc (hy_backend *be, size_t bytes, GError **error)
{
  size_t rounded = (MAX (bytes, (size_t) 1) + 255) & ~(size_t) 255;
  void *p = aligned_alloc (256, rounded);
  be->stats.allocations++;
  if (!p)
    g_set_error (error, HY_ERROR, HY_ERROR_BACKEND,
        "out of memory allocating %zu bytes", bytes);
  return p;
}

static void
cpu_dealloc (hy_backend *be, void *ptr)
{
  free (ptr);
}

static gboolean
cpu_copy_bytes (hy_backend *be, void *dst, const void *src, size_t bytes,
    GError **error)
{
  memcpy (dst, src, bytes);
  return TRUE;
}

static const hy_backend_iface cpu_iface = {
  .name = "cpu",
  .host_memory = TRUE,
  .free = cpu_free,
  .kernel_for = cpu_kernel_for,
  .copy_kernel = (hy_kernel_ptr) cpu_copy,
  .run = cpu_run,
  .alloc = cpu_alloc,
  .dealloc = cpu_dealloc,
  .upload = cpu_copy_bytes,
  .download = cpu_copy_bytes,
};

hy_backend *
hy_cpu_backend_new (GError **error)
{
  cpu_backend *cpu = g_new0 (cpu_backend, 1);
  cpu->base.iface = &cpu_iface;
  cpu->base.device = (hy_device) { HY_DEVICE_CPU, 0 };
  /* The kernels' threads start here, once, never per forward
   * (HYBRIDINFER_THREADS overrides the CPU count). */
  hy_cpu_ctx_set_threads (&cpu->ctx, 0);
  return &cpu->base;
}

hy_cpu_ctx *
hy_cpu_backend_ctx (hy_backend *be)
{
  return &((cpu_backend *) be)->ctx;
}
