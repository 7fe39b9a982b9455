/*
 * frame-stage.c — video frames to a plan's device input (frame-stage.h).
 *
 * A frame costs one host copy, into pinned memory: GStreamer's buffers are
 * pageable, which the GPU cannot read asynchronously (the driver would
 * bounce them through its own pinned buffer and block the caller), and
 * the element unmaps the frame as soon as hy_frame_stage_load returns.
 * That copy goes row by row into a tight layout (row = width × bytes per
 * pixel), since a GstVideoFrame's strides may carry padding: the pinned
 * and device buffers then have a size known when the stage is made, and
 * the kernel is given the tight strides.
 *
 * Per slot, in this order:
 *   host:         wait for the slot's previous upload (it reads the pinned
 *                 buffer about to be overwritten), copy the planes in;
 *   copy stream:  wait for the slot's previous conversion (it reads the
 *                 device bytes about to be overwritten), upload, record
 *                 `copied`;
 *   ctx->stream:  wait for `copied`, convert into the slot of the device
 *                 input, record `converted`.
 * The waits between streams happen on the GPU; the host only waits for a
 * slot's own upload of the batch before, long finished in steady state.
 * The forward runs on ctx->stream, after every conversion.
 */
#include <string.h>

#include "kernels/cuda/frame-convert.h"
#include "kernels/cuda/frame-stage.h"

typedef struct stage_slot {
  uint8_t *host;                /* pinned, tight planes */
  uint8_t *device;              /* the same bytes on the device */
  cudaEvent_t copied;           /* upload done: `host` may be rewritten */
  cudaEvent_t converted;        /* conversion done: `device` likewise */
} stage_slot;

typedef struct cuda_frame_stage {
  hy_cuda_ctx *ctx;             /* the backend's */
  cudaStream_t copy;            /* uploads, beside ctx->stream */
  hy_frame_desc desc;           /* the plan's, copied */
  float *input;                 /* the plan's device input, (batch, C, H, W) */
  int64_t per_slot;             /* floats per slot of it */
  int batch;
  int n_planes;
  size_t row_bytes[3];          /* tight stride of each plane */
  int rows[3];
  size_t offset[3];             /* where each plane starts in a slot */
  size_t frame_bytes;
  stage_slot *slots;
} cuda_frame_stage;

/* Everything the stage will use, allocated once; FALSE with the failed
 * call named.  What was made before a failure is freed by the caller. */
static gboolean
set_up (cuda_frame_stage *st, GError **error)
{
  st->n_planes = hy_frame_planes (&st->desc.config, st->row_bytes,
      st->rows);
  if (st->n_planes == 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "pixel layout %d cannot be staged", (int) st->desc.config.layout);
    return FALSE;
  }
  for (int p = 0; p < st->n_planes; p++) {
    st->offset[p] = st->frame_bytes;
    st->frame_bytes += st->row_bytes[p] * (size_t) st->rows[p];
  }

  HY_CUDA_TRY (cudaSetDevice (st->ctx->device), error);
  HY_CUDA_TRY (cudaStreamCreateWithFlags (&st->copy, cudaStreamNonBlocking),
      error);
  st->slots = g_new0 (stage_slot, st->batch);
  for (int i = 0; i < st->batch; i++) {
    stage_slot *sl = &st->slots[i];
    /* Portable: pinned for every context, whichever device is current
     * in the thread that uploads. */
    HY_CUDA_TRY (cudaHostAlloc ((void **) &sl->host, st->frame_bytes,
            cudaHostAllocPortable), error);
    HY_CUDA_TRY (cudaMalloc ((void **) &sl->device, st->frame_bytes),
        error);
    HY_CUDA_TRY (cudaEventCreateWithFlags (&sl->copied,
            cudaEventDisableTiming), error);
    HY_CUDA_TRY (cudaEventCreateWithFlags (&sl->converted,
            cudaEventDisableTiming), error);
  }
  return TRUE;
}

void *
hy_cuda_frame_stage_new (hy_backend *be, const hy_frame_plan *plan,
    hy_tensor *input, int batch, GError **error)
{
  cuda_frame_stage *st = g_new0 (cuda_frame_stage, 1);
  st->ctx = &cuda_backend_of (be)->ctx;
  st->desc = *hy_frame_plan_desc (plan);
  st->input = input->data;
  st->per_slot = hy_shape_numel (&input->shape) / batch;
  st->batch = batch;
  if (!set_up (st, error)) {
    hy_cuda_frame_stage_free (be, st);
    return NULL;
  }
  return st;
}

void
hy_cuda_frame_stage_free (hy_backend *be, void *stage)
{
  cuda_frame_stage *st = stage;
  if (!st)
    return;
  for (int i = 0; st->slots && i < st->batch; i++) {
    stage_slot *sl = &st->slots[i];
    /* Queued work may still read the buffers (an event never recorded
     * is complete). */
    if (sl->copied) {
      cudaEventSynchronize (sl->copied);
      cudaEventDestroy (sl->copied);
    }
    if (sl->converted) {
      cudaEventSynchronize (sl->converted);
      cudaEventDestroy (sl->converted);
    }
    cudaFree (sl->device);
    cudaFreeHost (sl->host);
  }
  if (st->copy)
    cudaStreamDestroy (st->copy);
  g_free (st->slots);
  g_free (st);
}

/* rows × row_bytes from `src` (rows `stride` apart) to tight `dst`. */
static void
copy_plane (uint8_t *dst, const uint8_t *src, int stride, size_t row_bytes,
    int rows)
{
  if ((size_t) stride == row_bytes) {
    memcpy (dst, src, row_bytes * (size_t) rows);
    return;
  }
  for (int y = 0; y < rows; y++)
    memcpy (dst + (size_t) y * row_bytes, src + (size_t) y * stride,
        row_bytes);
}

gboolean
hy_cuda_frame_stage_load (hy_backend *be, void *stage, int slot,
    const uint8_t *const planes[3], const int strides[3], GError **error)
{
  cuda_frame_stage *st = stage;
  hy_cuda_ctx *ctx = st->ctx;
  for (int p = 0; p < st->n_planes; p++) {
    if (strides[p] < 0 || (size_t) strides[p] < st->row_bytes[p]) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "plane %d: stride %d is shorter than a row (%zu bytes)", p,
          strides[p], st->row_bytes[p]);
      return FALSE;
    }
  }

  stage_slot *sl = &st->slots[slot];
  const uint8_t *device_planes[3] = { NULL };
  int tight[3] = { 0 };
  /* The current device is per thread, and the streaming thread is not
   * the one that opened it. */
  HY_CUDA_TRY (cudaSetDevice (ctx->device), error);
  HY_CUDA_TRY (cudaEventSynchronize (sl->copied), error);
  for (int p = 0; p < st->n_planes; p++) {
    copy_plane (sl->host + st->offset[p], planes[p], strides[p],
        st->row_bytes[p], st->rows[p]);
    device_planes[p] = sl->device + st->offset[p];
    tight[p] = (int) st->row_bytes[p];
  }
  HY_CUDA_TRY (cudaStreamWaitEvent (st->copy, sl->converted, 0), error);
  HY_CUDA_TRY (cudaMemcpyAsync (sl->device, sl->host, st->frame_bytes,
          cudaMemcpyHostToDevice, st->copy), error);
  HY_CUDA_TRY (cudaEventRecord (sl->copied, st->copy), error);
  HY_CUDA_TRY (cudaStreamWaitEvent (ctx->stream, sl->copied, 0), error);

  hy_cuda_frame_convert (ctx, &st->desc, device_planes, tight,
      st->input + (int64_t) slot * st->per_slot);
  HY_CUDA_TRY (cudaEventRecord (sl->converted, ctx->stream), error);
  /* A launch that failed is recorded in ctx, not returned. */
  return hy_cuda_ctx_take_error (ctx, error);
}
