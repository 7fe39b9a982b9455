/*
 * cuda-backend.c — the CUDA backend (kernels/backend-impl.h) over the kernels of
 * this directory: one stream, one cuBLAS and one cuDNN handle bound to it,
 * and plans recorded once as CUDA graphs.
 *
 * Running a plan: the first run records every call into a CUDA graph
 * (stream capture) and instantiates it; every run, that one included,
 * launches the graph — one launch per forward, whatever the node count.
 * A plan's tensors never move (arena, weights and input slots are fixed
 * when it is built), so the recording stays valid for the plan's life.
 * Should recording fail (a library call that cannot be captured), the
 * plan runs its calls directly from then on, with one warning.
 * HYBRIDINFER_CUDA_GRAPHS=0 turns recording off, for comparison.
 *
 * Kernels never fail out loud (cuda-kernel.h): the first failed call is
 * recorded in the context, and run() turns it into an error once the
 * stream has finished; so is a kernel's refusal of its input's values,
 * recorded by the device in the context's mapped refusal record
 * (refusal.h), which also names the refusing call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/cuda-memory.h"
#include "kernels/cuda/cuda-object.h"
#include "kernels/cuda/frame-stage.h"

/* cuBLAS's recommended workspace on Hopper; given to it so that no call
 * allocates, which graph capture requires. */
#define CUBLAS_WORKSPACE_BYTES (32u << 20)

/* A plan whose recording failed: it runs its calls directly. */
static char capture_failed;

char *
hy_cuda_unavailable_reason (int index)
{
  int count = 0, driver = 0, runtime = 0;
  cudaError_t err = cudaGetDeviceCount (&count);
  cudaDriverGetVersion (&driver);
  cudaRuntimeGetVersion (&runtime);
  if (err != cudaSuccess && driver == 0)
    return g_strdup ("no NVIDIA driver is installed (libcuda.so.1 not found)");
  if (err == cudaErrorInsufficientDriver || (driver && driver < runtime))
    return g_strdup_printf ("the NVIDIA driver supports CUDA %d.%d, this "
        "build needs %d.%d", driver / 1000, driver % 1000 / 10,
        runtime / 1000, runtime % 1000 / 10);
  if (err != cudaSuccess)
    return g_strdup_printf ("no usable CUDA device (%s)",
        cudaGetErrorString (err));
  if (count == 0)
    return g_strdup ("no CUDA device");
  if (index >= count)
    return g_strdup_printf ("cuda:%d does not exist (%d CUDA device%s)",
        index, count, count == 1 ? "" : "s");
  return NULL;
}

bool
hy_cuda_absent (void)
{
  int count = 0, driver = 0;
  cudaError_t err = cudaGetDeviceCount (&count);
  cudaDriverGetVersion (&driver);
  return (err != cudaSuccess && driver == 0) || err == cudaErrorNoDevice
      || (err == cudaSuccess && count == 0);
}

/* ---- calls ------------------------------------------------------------ */

static hy_kernel_ptr
cuda_kernel_for (hy_op_id op)
{
  return (hy_kernel_ptr) hy_cuda_kernel_for (op);
}

/* The output copies of a plan: device to device, on the stream. */
static void
cuda_copy (hy_cuda_ctx *ctx, const void *params, const hy_tensor *const *in,
    int n_in, hy_tensor *const *out, int n_out)
{
  HY_CUDA_CHECK (ctx, cudaMemcpyAsync (out[0]->data, in[0]->data,
          hy_tensor_nbytes (out[0]), cudaMemcpyDeviceToDevice,
          ctx->stream));
}

static gboolean
cuda_prepare_call (hy_backend *be, hy_call *call, GError **error)
{
  hy_cuda_prepare_fn prepare = call->op < HY_OP_COUNT
      ? hy_cuda_prepare_for (call->op) : NULL;
  if (!prepare)
    return TRUE;
  cuda_backend *cb = cuda_backend_of (be);
  void *state = NULL;
  size_t workspace = 0;
  HY_CUDA_TRY (cudaSetDevice (cb->ctx.device), error);
  if (!prepare (&cb->ctx, call->params, call->in, call->n_in, call->out,
          call->n_out, &state, &workspace, error))
    return FALSE;
  call->params = state;
  return hy_cuda_backend_reserve_workspace (cb, workspace, error);
}

static void
cuda_release_call (hy_backend *be, hy_call *call)
{
  hy_cuda_release_fn release = call->op < HY_OP_COUNT
      && hy_cuda_prepare_for (call->op) ? hy_cuda_release_for (call->op)
      : NULL;
  if (release)
    release ((void *) call->params);
}

static void
enqueue (hy_cuda_ctx *ctx, const hy_call *calls, int n_calls)
{
  for (int c = 0; c < n_calls; c++) {
    const hy_call *call = &calls[c];
    ctx->call = c;              /* a refusing kernel's record names it */
    ((hy_cuda_kernel_fn) call->fn) (ctx, call->params, call->in, call->n_in,
        call->out, call->n_out);
  }
}

/* Records the calls as a graph; NULL (and the reason in ctx) on failure. */
static cudaGraphExec_t
record (hy_cuda_ctx *ctx, const hy_call *calls, int n_calls)
{
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  HY_CUDA_CHECK (ctx, cudaStreamBeginCapture (ctx->stream,
          cudaStreamCaptureModeThreadLocal));
  if (ctx->error[0])
    return NULL;
  enqueue (ctx, calls, n_calls);
  /* Ends the capture even after a failed call, which leaves the stream
   * usable again. */
  cudaError_t err = cudaStreamEndCapture (ctx->stream, &graph);
  if (err != cudaSuccess)
    hy_cuda_ctx_fail (ctx, "cudaStreamEndCapture", cudaGetErrorString (err),
        __FILE__, __LINE__);
  if (!ctx->error[0])
    HY_CUDA_CHECK (ctx, cudaGraphInstantiate (&exec, graph, 0));
  if (graph)
    cudaGraphDestroy (graph);
  return ctx->error[0] ? NULL : exec;
}

static gboolean
cuda_run (hy_backend *be, const hy_call *calls, int n_calls, void **capture,
    GError **error)
{
  cuda_backend *cb = cuda_backend_of (be);
  hy_cuda_ctx *ctx = &cb->ctx;
  /* The current device is per thread: a pipeline's streaming thread is
   * not the one that made the backend (matters for cuda:N, N > 0). */
  HY_CUDA_CHECK (ctx, cudaSetDevice (ctx->device));
  if (capture && cb->graphs && !*capture) {
    cudaGraphExec_t exec = record (ctx, calls, n_calls);
    if (exec) {
      *capture = exec;
      be->stats.recordings++;
    } else {
      g_warning ("cuda:%d: cannot record this plan as a CUDA graph (%s); "
          "running its %d calls one by one", ctx->device, ctx->error,
          n_calls);
      ctx->error[0] = '\0';
      cudaGetLastError ();      /* clears a sticky launch error */
      *capture = &capture_failed;
    }
  }
  if (capture && *capture && *capture != &capture_failed) {
    HY_CUDA_CHECK (ctx, cudaGraphLaunch ((cudaGraphExec_t) *capture,
            ctx->stream));
    be->stats.graph_launches++;
  } else {
    enqueue (ctx, calls, n_calls);
    be->stats.direct_calls += n_calls;
  }
  /* Wait here, so that a failure is reported by the forward that caused
   * it; the outputs' download would wait anyway.  A kernel's refusal of
   * its input (refusal.h) is read only then, from host memory. */
  HY_CUDA_CHECK (ctx, cudaStreamSynchronize (ctx->stream));
  if (!hy_cuda_ctx_take_error (ctx, error)) {
    int ignored;
    hy_cuda_ctx_take_refusal (ctx, &ignored, NULL);
    return FALSE;
  }
  return hy_cuda_ctx_take_refusal (ctx, &be->failed_call, error);
}

static void
cuda_release_capture (hy_backend *be, void *capture)
{
  if (capture && capture != &capture_failed)
    cudaGraphExecDestroy ((cudaGraphExec_t) capture);
}

/* ---- the backend ------------------------------------------------------ */

static void
cuda_free (hy_backend *be)
{
  cuda_backend *cb = cuda_backend_of (be);
  hy_cuda_ctx *ctx = &cb->ctx;
  if (ctx->stream)
    cudaStreamSynchronize (ctx->stream);
  if (ctx->cudnn)
    cudnnDestroy (ctx->cudnn);
  if (ctx->cublas)
    cublasDestroy (ctx->cublas);
  cudaFree (cb->cublas_workspace);
  if (ctx->refusal)
    cudaFreeHost (ctx->refusal);
  cudaFree (ctx->workspace);
  for (guint i = 0; cb->old_workspaces && i < cb->old_workspaces->len; i++)
    cudaFree (g_ptr_array_index (cb->old_workspaces, i));
  if (cb->old_workspaces)
    g_ptr_array_unref (cb->old_workspaces);
  if (ctx->stream)
    cudaStreamDestroy (ctx->stream);
  g_free (cb);
}

static gboolean
cuda_set_precision (hy_backend *be, hy_precision precision, GError **error)
{
  cuda_backend_of (be)->ctx.fp16 = precision == HY_PRECISION_FP16;
  return TRUE;
}

static const hy_backend_iface cuda_iface = {
  .name = "cuda",
  .host_memory = FALSE,
  .free = cuda_free,
  .kernel_for = cuda_kernel_for,
  .copy_kernel = (hy_kernel_ptr) cuda_copy,
  .prepare_call = cuda_prepare_call,
  .release_call = cuda_release_call,
  .run = cuda_run,
  .release_capture = cuda_release_capture,
  .alloc = hy_cuda_backend_alloc,
  .dealloc = hy_cuda_backend_dealloc,
  .upload = hy_cuda_backend_upload,
  .download = hy_cuda_backend_download,
  .set_precision = cuda_set_precision,
  .frame_stage_new = hy_cuda_frame_stage_new,
  .frame_stage_load = hy_cuda_frame_stage_load,
  .frame_stage_free = hy_cuda_frame_stage_free,
};

/* Handles, stream and pool; FALSE with the failed call named. */
static gboolean
set_up (cuda_backend *cb, int index, GError **error)
{
  hy_cuda_ctx *ctx = &cb->ctx;
  ctx->device = index;
  HY_CUDA_TRY (cudaSetDevice (index), error);
  HY_CUDA_TRY (cudaDeviceGetAttribute (&ctx->sm_count,
          cudaDevAttrMultiProcessorCount, index), error);
  HY_CUDA_TRY (cudaStreamCreateWithFlags (&ctx->stream,
          cudaStreamNonBlocking), error);

  /* Memory freed to the pool stays there for the next allocation instead
   * of going back to the driver at every synchronisation. */
  cudaMemPool_t pool;
  uint64_t keep = UINT64_MAX;
  HY_CUDA_TRY (cudaDeviceGetDefaultMemPool (&pool, index), error);
  HY_CUDA_TRY (cudaMemPoolSetAttribute (pool,
          cudaMemPoolAttrReleaseThreshold, &keep), error);

  HY_CUBLAS_TRY (cublasCreate (&ctx->cublas), error);
  HY_CUBLAS_TRY (cublasSetStream (ctx->cublas, ctx->stream), error);
  /* Plain fp32 arithmetic (no TF32): results within the conformance
   * tolerance of the CPU backend and of MXNet. */
  HY_CUBLAS_TRY (cublasSetMathMode (ctx->cublas, CUBLAS_DEFAULT_MATH),
      error);
  HY_CUDA_TRY (cudaMalloc (&cb->cublas_workspace, CUBLAS_WORKSPACE_BYTES),
      error);
  HY_CUBLAS_TRY (cublasSetWorkspace (ctx->cublas, cb->cublas_workspace,
          CUBLAS_WORKSPACE_BYTES), error);

  HY_CUDNN_TRY (cudnnCreate (&ctx->cudnn), error);
  HY_CUDNN_TRY (cudnnSetStream (ctx->cudnn, ctx->stream), error);

  /* The refusal record (refusal.h): host memory the device writes in
   * place, so that reading it needs no copy and no synchronisation beyond
   * the run's own. */
  HY_CUDA_TRY (cudaHostAlloc ((void **) &ctx->refusal,
          sizeof *ctx->refusal, cudaHostAllocMapped), error);
  memset (ctx->refusal, 0, sizeof *ctx->refusal);
  HY_CUDA_TRY (cudaHostGetDevicePointer ((void **) &ctx->refusal_device,
          ctx->refusal, 0), error);
  return TRUE;
}

hy_backend *
hy_cuda_backend_new (int index, GError **error)
{
  char *why = hy_cuda_unavailable_reason (index);
  if (why) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED, "device cuda:%d: %s",
        index, why);
    g_free (why);
    return NULL;
  }
  cuda_backend *cb = g_new0 (cuda_backend, 1);
  cb->base.iface = &cuda_iface;
  cb->base.device = (hy_device) { HY_DEVICE_CUDA, index };
  cb->old_workspaces = g_ptr_array_new ();
  const char *graphs = g_getenv ("HYBRIDINFER_CUDA_GRAPHS");
  cb->graphs = !graphs || strcmp (graphs, "0") != 0;
  if (!set_up (cb, index, error)) {
    g_prefix_error (error, "device cuda:%d: ", index);
    cuda_free (&cb->base);
    return NULL;
  }
  return &cb->base;
}
