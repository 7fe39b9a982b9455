/*
 * cpu-backend.c — the CPU as a backend (kernels/backend-impl.h): host memory,
 * the op table of cpu-ops.c, and calls run in order on the context's
 * threads.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/cpu-features.h"
#include "kernels/cpu/conv/blas.h"
#include "kernels/cpu/conv/conv-strategy.h"
#include "kernels/backend-impl.h"
#include "kernels/cpu/quantized/qconv-setup.h"
#ifdef HY_HAVE_DNNL
#include "kernels/cpu/conv/dnnl-segment.h"
#include "kernels/cpu/quantized/conv-dnnl-int8.h"
#include "kernels/cpu/quantized/qelementwise-bytes.h"
#include "kernels/cpu/quantized/qlut-bytes.h"
#include "kernels/cpu/quantized/qpool-bytes.h"
#include "kernels/cpu/quantized/fc-dnnl-int8.h"
#endif

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

/* Convolutions are the calls the CPU backend sets up, fuses and names:
 * which algorithm runs each, and which run as one, is
 * conv/conv-strategy.c's. */
static gboolean
cpu_prepare_call (hy_backend *be, hy_call *call, GError **error)
{
  /* int8 convolutions: weights quantized once, oneDNN's int8 kernels
   * when oneDNN is on (quantized/qconv-setup.h) */
  if (call->op == HY_OP_QUANTIZED_CONV)
    return hy_qconv_prepare_call (hy_cpu_backend_ctx (be), call, error);
#ifdef HY_HAVE_DNNL
  /* the int8 fully connected layer: oneDNN's inner product when oneDNN's
   * int8 is on (quantized/fc-dnnl-int8.h) */
  if (call->op == HY_OP_QUANTIZED_FC)
    return hy_qfc_dnnl_prepare_call (hy_cpu_backend_ctx (be), call, error);
  /* int8 max pooling where its values are held as bytes
   * (quantized/qpool-bytes.h) */
  if (call->op == HY_OP_QUANTIZED_POOLING)
    return hy_qpool_bytes_prepare_call (call, error);
  /* quantize_v2, dequantize and elemwise_mul where their values are held
   * as bytes (quantized/qelementwise-bytes.h) */
  if (call->op == HY_OP_QUANTIZE_V2 || call->op == HY_OP_DEQUANTIZE
      || call->op == HY_OP_QUANTIZED_ELEMWISE_MUL)
    return hy_qelementwise_bytes_prepare_call (call, error);
  /* A bf16 segment's calls (conv/dnnl-segment.h): their layout is
   * already promised to their neighbours, so no other kernel may run
   * them. */
  if (call->private_inputs || call->private_outputs)
    return hy_dnnl_segment_prepare_call (hy_cpu_backend_ctx (be), call,
        error);
#endif
  return call->op != HY_OP_CONVOLUTION
      || hy_conv_prepare_call (hy_cpu_backend_ctx (be), call, error);
}

/* In bf16 too, the same chains: run by oneDNN in bf16 where it takes
 * them (conv/conv-dnnl-chain.h), else as fp32 kernels of ours. */
static gboolean
cpu_fuse_calls (hy_backend *be, const hy_call *first, const hy_call *second,
    hy_call *fused)
{
  return hy_conv_fuse_calls (hy_cpu_backend_ctx (be), first, second, fused);
}

static gboolean
cpu_may_fuse (hy_backend *be, const hy_call_shape *first,
    const hy_call_shape *second)
{
  return hy_conv_may_fuse (first, second);
}

#ifdef HY_HAVE_DNNL
/* An int8 model's float ops between bytes, as one look-up
 * (quantized/qlut-bytes.h). */
static gboolean
cpu_chain_link (hy_backend *be, const hy_call_shape *link)
{
  return hy_qlut_bytes_link (link);
}

static gboolean
cpu_fuse_chain (hy_backend *be, const hy_call *calls, int n,
    const void *const *node_params, hy_call *fused)
{
  return hy_qlut_bytes_fuse (hy_cpu_backend_ctx (be), calls, n, node_params,
      fused);
}

/* In bf16, values held as bf16 nhwc between the calls of a segment
 * (conv/dnnl-segment.h). */
static size_t
cpu_private_output_bytes (hy_backend *be, const hy_call_shape *call,
    gboolean in0_private, gboolean read_as_operand)
{
  if (call->op == HY_OP_QUANTIZED_CONV)
    return hy_qconv_dnnl_private_bytes (call);
  if (call->op == HY_OP_QUANTIZED_POOLING)
    return hy_qpool_bytes_output (call, in0_private);
  if (call->op == HY_OP_QUANTIZE_V2 || call->op == HY_OP_DEQUANTIZE
      || call->op == HY_OP_QUANTIZED_ELEMWISE_MUL)
    return hy_qelementwise_bytes_output (call);
  return hy_dnnl_segment_output_bytes (hy_cpu_backend_ctx (be), call,
      in0_private, read_as_operand);
}

static gboolean
cpu_reads_private (hy_backend *be, const hy_call_shape *call, int input)
{
  if (call->op == HY_OP_QUANTIZED_CONV)
    return hy_qconv_dnnl_reads_private (call, input);
  if (call->op == HY_OP_QUANTIZED_POOLING)
    return hy_qpool_bytes_reads (call, input);
  if (call->op == HY_OP_QUANTIZE_V2 || call->op == HY_OP_DEQUANTIZE
      || call->op == HY_OP_QUANTIZED_ELEMWISE_MUL)
    return hy_qelementwise_bytes_reads (call, input);
  return hy_dnnl_segment_reads (hy_cpu_backend_ctx (be), call, input);
}
#endif

/* fp32, or bf16 where the CPU has AVX512_BF16 and oneDNN is built in.
 * Refused, not emulated, elsewhere: a bf16 emulated in fp32 instructions
 * would be slower than fp32 itself, which is the one reason to ask for
 * bf16 (docs/PRECISION.md). */
static gboolean
cpu_set_precision (hy_backend *be, hy_precision precision, GError **error)
{
  hy_cpu_ctx *ctx = hy_cpu_backend_ctx (be);
  switch (precision) {
    case HY_PRECISION_FP32:
      ctx->bf16 = false;
      return TRUE;
    case HY_PRECISION_BF16:
#ifdef HY_HAVE_DNNL
      if (!hy_cpu_features_get ()->avx512_bf16) {
        g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
            "precision bf16 needs a CPU with AVX512_BF16; this one has none");
        return FALSE;
      }
      ctx->bf16 = true;
      return TRUE;
#else
      g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
          "precision bf16 needs oneDNN, and this build has none");
      return FALSE;
#endif
    default:
      g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
          "precision fp16 needs a CUDA device; the cpu backend computes in "
          "fp32 or bf16");
      return FALSE;
  }
}

static void
cpu_release_call (hy_backend *be, hy_call *call)
{
#ifdef HY_HAVE_DNNL
  if (hy_dnnl_segment_runs (call)) {
    hy_dnnl_segment_release_call (call);
    return;
  }
#endif
  if (call->op == HY_OP_CONVOLUTION)
    hy_conv_release_call (call);
  if (call->op == HY_OP_QUANTIZED_CONV)
    hy_qconv_release_call (call);
#ifdef HY_HAVE_DNNL
  if (call->op == HY_OP_QUANTIZED_FC)
    hy_qfc_dnnl_release_call (call);
  if (call->op == HY_OP_QUANTIZED_POOLING)
    hy_qpool_bytes_release_call (call);
  hy_qelementwise_bytes_release_call (call);
  hy_qlut_bytes_release_call (call);
#endif
}

static const char *
cpu_call_kernel_name (hy_backend *be, const hy_call *call)
{
#ifdef HY_HAVE_DNNL
  if (hy_dnnl_segment_runs (call))
    return hy_dnnl_segment_kernel_name (call);
#endif
  if (call->op == HY_OP_QUANTIZED_CONV)
    return hy_qconv_kernel_name (call);
#ifdef HY_HAVE_DNNL
  if (call->op == HY_OP_QUANTIZED_FC)
    return hy_qfc_dnnl_kernel_name (call);
  if (call->op == HY_OP_QUANTIZED_POOLING)
    return hy_qpool_bytes_kernel_name (call);
  if (hy_qelementwise_bytes_kernel_name (call))
    return hy_qelementwise_bytes_kernel_name (call);
  if (hy_qlut_bytes_kernel_name (call))
    return hy_qlut_bytes_kernel_name (call);
#endif
  return call->op == HY_OP_CONVOLUTION ? hy_conv_kernel_name (call) : NULL;
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
#ifdef HY_HAVE_DNNL
  .private_output_bytes = cpu_private_output_bytes,
  .reads_private = cpu_reads_private,
  .chain_link = cpu_chain_link,
  .fuse_chain = cpu_fuse_chain,
#endif
  .set_precision = cpu_set_precision,
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
