/*
 * cpu-backend.c — the CPU as a backend (kernels/backend-impl.h): host memory,
 * the op table of cpu-ops.c, and calls run in order on the context's
 * threads.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/conv/blas.h"
#include "kernels/cpu/conv/conv-few-channels.h"
#include "kernels/cpu/conv/conv-packed.h"
#include "kernels/cpu/conv/conv-pw-dw.h"
#include "kernels/cpu/conv/conv-winograd.h"
#ifdef HY_HAVE_DNNL
#include "kernels/cpu/conv/conv-dnnl.h"
#endif
#include "kernels/backend-impl.h"

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
  /* A workspace that cannot grow, a library call that failed, or a kernel
   * that refuses its input (an index out of range) comes back here
   * (cpu-kernel.h): the forward fails with an error, as an arena that
   * cannot be had does. */
  jmp_buf no_memory;
  volatile int c = 0;
  ctx->failure[0] = '\0';
  if (setjmp (no_memory)) {
    ctx->on_no_memory = NULL;
    be->failed_call = c;
    int code = ctx->failure_is_input ? HY_ERROR_INVALID : HY_ERROR_BACKEND;
    if (ctx->failure[0] && n_calls == 1)
      g_set_error (error, HY_ERROR, code, "%s", ctx->failure);
    else if (ctx->failure[0])
      g_set_error (error, HY_ERROR, code, "call %d of %d: %s", c + 1,
          n_calls, ctx->failure);
    else
      g_set_error (error, HY_ERROR, HY_ERROR_NO_MEMORY,
          "out of memory: call %d of %d needs %.1f MiB of CPU kernel "
          "workspace", c + 1, n_calls,
          (double) ctx->denied_bytes / (1024.0 * 1024));
    return FALSE;
  }
  ctx->on_no_memory = &no_memory;
  for (; c < n_calls; c++) {
    const hy_call *call = &calls[c];
    ((hy_cpu_kernel_fn) call->fn) (ctx, call->params, call->in, call->n_in,
        call->out, call->n_out);
  }
  ctx->on_no_memory = NULL;
  return TRUE;
}

static void *
cpu_alloc (hy_backend *be, size_t bytes, GError **error)
{
  size_t rounded = (MAX (bytes, (size_t) 1) + 255) & ~(size_t) 255;
  void *p = aligned_alloc (256, rounded);
  be->stats.allocations++;
  if (!p)
    g_set_error (error, HY_ERROR, HY_ERROR_NO_MEMORY,
        "out of memory allocating %.1f MiB", bytes / (1024.0 * 1024));
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

/* Convolutions oneDNN takes (when it is on) get their primitive and
 * reordered weights here, once per plan call (conv-dnnl.h); of the rest,
 * the 3×3 ones Winograd's algorithm pays on get their transformed weights
 * (conv-winograd.h), first layers of a few input channels go to a
 * direct kernel with their weights laid out for it (conv-few-channels.h),
 * and those the packed GEMM takes get their weights packed
 * (conv-packed.h); everything else keeps its kernel. */
static gboolean
cpu_prepare_call (hy_backend *be, hy_call *call, GError **error)
{
  if (call->op != HY_OP_CONVOLUTION)
    return TRUE;
#ifdef HY_HAVE_DNNL
  if (hy_conv_dnnl_enabled ()) {
    GError *local = NULL;
    hy_conv_dnnl *conv = hy_conv_dnnl_new (hy_cpu_backend_ctx (be),
        call->params, call->in, call->n_in, call->out[0],
        call->const_inputs, &local);
    if (local) {
      g_propagate_error (error, local);
      return FALSE;
    }
    if (conv) {
      call->fn = (hy_kernel_ptr) hy_cpu_convolution_dnnl;
      call->params = conv;
      return TRUE;
    }
  }
#endif
  hy_conv_winograd *winograd = hy_conv_winograd_new (call->params, call->in,
      call->n_in, call->out[0], call->const_inputs);
  if (winograd) {
    call->fn = (hy_kernel_ptr) hy_cpu_convolution_winograd;
    call->params = winograd;
    return TRUE;
  }
  hy_conv_few_channels *few = hy_conv_few_channels_new (call->params,
      call->in, call->n_in, call->out[0], call->const_inputs);
  if (few) {
    call->fn = (hy_kernel_ptr) hy_cpu_convolution_few_channels;
    call->params = few;
    return TRUE;
  }
  hy_conv_packed *packed = hy_conv_packed_new (call->params, call->in,
      call->n_in, call->out[0], call->const_inputs);
  if (packed) {
    call->fn = (hy_kernel_ptr) hy_cpu_convolution_packed;
    call->params = packed;
  }
  return TRUE;
}

/* A pointwise convolution and the depthwise one that reads it, or a
 * depthwise convolution and the pointwise one that reads it, band by band
 * in a thread's cache (conv-pw-dw.h); oneDNN, when it is on, takes each
 * alone. */
static gboolean
cpu_fuse_calls (hy_backend *be, const hy_call *first, const hy_call *second,
    hy_call *fused)
{
#ifdef HY_HAVE_DNNL
  if (hy_conv_dnnl_enabled ())
    return FALSE;
#endif
  if (first->fn == (hy_kernel_ptr) hy_cpu_convolution_pw_dw) {
    /* The call is fused already: it may take the projection in too. */
    hy_conv_pw_dw *pair = (hy_conv_pw_dw *) first->params;
    if (!hy_conv_pw_dw_take_projection (pair, first, second))
      return FALSE;
    fused->fn = first->fn;
    fused->params = pair;
    return TRUE;
  }
  hy_conv_pw_dw *conv = hy_conv_pw_dw_new (first, second);
  if (!conv)
    return FALSE;
  fused->fn = (hy_kernel_ptr) hy_cpu_convolution_pw_dw;
  fused->params = conv;
  return TRUE;
}

static gboolean
cpu_may_fuse (hy_backend *be, const hy_call_shape *first,
    const hy_call_shape *second)
{
#ifdef HY_HAVE_DNNL
  if (hy_conv_dnnl_enabled ())
    return FALSE;
#endif
  if (first->op != HY_OP_CONVOLUTION || second->op != HY_OP_CONVOLUTION)
    return FALSE;
  /* A call already in a chain can only take the next call in: a pair's
   * depthwise layer its projection. */
  if (first->fused_with_previous)
    return hy_conv_pw_dw_may_take (first->params, first->in0, first->out0,
        second->params);
  const hy_call_shape *next = second->next;
  return hy_conv_pw_dw_may_fuse (first->params, first->in0, first->out0,
      second->params, second->out0, next && next->op == HY_OP_CONVOLUTION
      ? next->params : NULL);
}

static void
cpu_release_call (hy_backend *be, hy_call *call)
{
#ifdef HY_HAVE_DNNL
  if (call->fn == (hy_kernel_ptr) hy_cpu_convolution_dnnl)
    hy_conv_dnnl_free ((hy_conv_dnnl *) call->params);
#endif
  if (call->fn == (hy_kernel_ptr) hy_cpu_convolution_packed)
    hy_conv_packed_free ((hy_conv_packed *) call->params);
  if (call->fn == (hy_kernel_ptr) hy_cpu_convolution_winograd)
    hy_conv_winograd_free ((hy_conv_winograd *) call->params);
  if (call->fn == (hy_kernel_ptr) hy_cpu_convolution_few_channels)
    hy_conv_few_channels_free ((hy_conv_few_channels *) call->params);
  if (call->fn == (hy_kernel_ptr) hy_cpu_convolution_pw_dw)
    hy_conv_pw_dw_free ((hy_conv_pw_dw *) call->params);
}

static const char *
cpu_call_kernel_name (hy_backend *be, const hy_call *call)
{
  if (call->op != HY_OP_CONVOLUTION)
    return NULL;
#ifdef HY_HAVE_DNNL
  if (call->fn == (hy_kernel_ptr) hy_cpu_convolution_dnnl)
    return "onednn";
#endif
  if (call->fn == (hy_kernel_ptr) hy_cpu_convolution_winograd)
    return hy_conv_winograd_kernel_name ((const hy_conv_winograd *)
        call->params);
  if (call->fn == (hy_kernel_ptr) hy_cpu_convolution_few_channels)
    return "few-channels";
  if (call->fn == (hy_kernel_ptr) hy_cpu_convolution_pw_dw)
    return hy_conv_pw_dw_kernel_name (call->params);
  if (call->fn == (hy_kernel_ptr) hy_cpu_convolution_packed)
    return hy_conv_packed_kernel_name ((const hy_conv_packed *)
        call->params);
  /* conv.c's own: OpenBLAS products, or its depthwise loop. */
  return hy_cpu_convolution_is_depthwise (call->params, call->in[0],
      call->out[0]) ? "depthwise" : "openblas";
}

static const hy_backend_iface cpu_iface = {
  .name = "cpu",
  .host_memory = TRUE,
  .free = cpu_free,
  .kernel_for = cpu_kernel_for,
  .copy_kernel = (hy_kernel_ptr) cpu_copy,
  .prepare_call = cpu_prepare_call,
  .fuse_calls = cpu_fuse_calls,
  .may_fuse = cpu_may_fuse,
  .release_call = cpu_release_call,
  .call_kernel_name = cpu_call_kernel_name,
  .run = cpu_run,
  .alloc = cpu_alloc,
  .dealloc = cpu_dealloc,
  .upload = cpu_copy_bytes,
  .download = cpu_copy_bytes,
};

hy_backend *
hy_cpu_backend_new (int n_threads, GError **error)
{
  cpu_backend *cpu = g_new0 (cpu_backend, 1);
  cpu->base.iface = &cpu_iface;
  cpu->base.device = (hy_device) { HY_DEVICE_CPU, 0 };
  /* OpenBLAS runs inside our threads: its own would spin beside them. */
  hy_blas_use_one_thread ();
  /* The kernels' threads start here, once, never per forward (n_threads
   * <= 0: HYBRIDINFER_THREADS, else the CPU count). */
  hy_cpu_ctx_set_threads (&cpu->ctx, n_threads);
  return &cpu->base;
}

hy_cpu_ctx *
hy_cpu_backend_ctx (hy_backend *be)
{
  return &((cpu_backend *) be)->ctx;
}
