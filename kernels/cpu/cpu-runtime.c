/*
 * cpu-runtime.c — what a CPU kernel runs with: its threads (one pool per
 * context, started when the context is set up) and its scratch workspace.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu-kernel.h"

void *
hy_cpu_workspace (hy_cpu_ctx *ctx, size_t size)
{
  if (size <= ctx->workspace_size)
    return ctx->workspace;
  free (ctx->workspace);
  /* Round up so small growth steps do not reallocate every time. */
  size_t rounded = size > SIZE_MAX - 4095 ? 0
      : (size + 4095) & ~(size_t) 4095;
  ctx->workspace = rounded ? aligned_alloc (64, rounded) : NULL;
  if (!ctx->workspace) {
    ctx->workspace_size = 0;
    ctx->denied_bytes = size;
    if (ctx->on_no_memory)
      longjmp (*ctx->on_no_memory, 1);
    abort ();                   /* no one to tell: a kernel test's context */
  }
  ctx->workspace_size = rounded;
  return ctx->workspace;
}

/* Back to the backend's run with ctx->failure set (cpu-kernel.h). */
static void G_GNUC_NORETURN
jump_back (hy_cpu_ctx *ctx)
{
  if (ctx->on_no_memory)
    longjmp (*ctx->on_no_memory, 1);
  g_printerr ("hybridinfer: %s\n", ctx->failure);
  abort ();                     /* no one to tell: a kernel test's context */
}

/* The failure's message, and whether the input is to blame. */
static void G_GNUC_PRINTF (3, 0)
record_failure (hy_cpu_ctx *ctx, bool is_input, const char *format,
    va_list args)
{
  g_vsnprintf (ctx->failure, sizeof ctx->failure, format, args);
  ctx->failure_is_input = is_input;
}

void
hy_cpu_fail (hy_cpu_ctx *ctx, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  record_failure (ctx, false, format, args);
  va_end (args);
  jump_back (ctx);
}

void
hy_cpu_refuse (hy_cpu_ctx *ctx, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  record_failure (ctx, true, format, args);
  va_end (args);
  jump_back (ctx);
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

