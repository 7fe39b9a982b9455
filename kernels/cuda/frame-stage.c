/*
 * frame-stage.c — video frames to the executor's device input
 * (frame-stage.h).
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

#include "cuda-backend.h"
#include "cuda-preprocess.h"
#include "frame-stage.h"

typedef struct stage_slot {
  uint8_t *host;                /* pinned, tight planes */
  uint8_t *device;              /* the same bytes on the device */
  cudaEvent_t copied;           /* upload done: `host` may be rewritten */
  cudaEvent_t converted;        /* conversion done: `device` likewise */
} stage_slot;

struct hy_frame_stage {
  hy_executor *exec;
  hy_cuda_ctx *ctx;             /* the executor's backend's */
  cudaStream_t copy;            /* uploads, beside ctx->stream */
  hy_cuda_preprocess_desc desc;
  int batch;
  int n_planes;
  size_t row_bytes[3];          /* tight stride of each plane */
  int rows[3];
  size_t offset[3];             /* where each plane starts in a slot */
  size_t frame_bytes;
  stage_slot *slots;
};

/* The planes of a frame as hy_preprocess_run reads them (4:2:0 chroma
 * rounds up, as GStreamer's odd sizes do); their count, 0 if unknown. */
static int
plane_geometry (const hy_preprocess_config *pc, size_t row_bytes[3],
    int rows[3])
{
  const size_t w = (size_t) pc->src_width, cw = (w + 1) / 2;
  const int h = pc->src_height, ch = (h + 1) / 2;
  int bpp, r, g, b, a;
  if (hy_pixel_packed (pc->layout, &bpp, &r, &g, &b, &a)) {
    row_bytes[0] = w * (size_t) bpp;
    rows[0] = h;
    return 1;
  }
  row_bytes[0] = w;
  rows[0] = h;
  switch (pc->layout) {
    case HY_PIXEL_GRAY8:
      return 1;
    case HY_PIXEL_NV12:        /* U and V interleaved on one plane */
      row_bytes[1] = 2 * cw;
      rows[1] = ch;
      return 2;
    case HY_PIXEL_I420:
      row_bytes[1] = row_bytes[2] = cw;
      rows[1] = rows[2] = ch;
      return 3;
    default:
      return 0;
  }
}

/* The plan's input must be what the stage writes: (batch, C, H, W). */
static gboolean
input_fits (const hy_frame_stage *st, const hy_tensor *input,
    GError **error)
{
  const hy_shape *s = &input->shape;
  const hy_cuda_preprocess_desc *d = &st->desc;
  if (s->ndim == 4 && s->dims[0] == st->batch
      && s->dims[1] == d->dst_channels && s->dims[2] == d->dst_height
      && s->dims[3] == d->dst_width)
    return TRUE;
  char buf[HY_SHAPE_STRLEN];
  g_set_error (error, HY_ERROR, HY_ERROR_SHAPE,
      "the frame stage writes (%d, %d, %d, %d) but the planned input is %s",
      st->batch, d->dst_channels, d->dst_height, d->dst_width,
      hy_shape_format (s, buf, sizeof buf));
  return FALSE;
}

/* Everything the stage will use, allocated once; FALSE with the failed
 * call named.  What was made before a failure is freed by the caller. */
static gboolean
set_up (hy_frame_stage *st, const hy_preprocess_config *pc, GError **error)
{
  hy_tensor *input;
  if (!hy_cuda_preprocess_desc_init (&st->desc, pc, error)
      || !(input = hy_executor_device_input (st->exec, 0, error))
      || !input_fits (st, input, error))
    return FALSE;
  st->n_planes = plane_geometry (pc, st->row_bytes, st->rows);
  if (st->n_planes == 0) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "pixel layout %d cannot be staged", (int) pc->layout);
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

hy_frame_stage *
hy_frame_stage_new (hy_executor *exec, const hy_preprocess_config *pc,
    int batch, GError **error)
{
  hy_backend *be = hy_executor_backend (exec);
  /* The name tells the CUDA backend from other device backends (the
   * tests' pretend device), whose object is not a cuda_backend. */
  if (be->device.kind != HY_DEVICE_CUDA
      || strcmp (be->iface->name, "cuda") != 0
      || hy_executor_mode (exec) != HY_MODE_HYBRID) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "frames are staged on the GPU only in hybrid mode on a CUDA "
        "device");
    return NULL;
  }
  if (batch < 1) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "batch %d: a frame stage needs at least one slot", batch);
    return NULL;
  }
  hy_frame_stage *st = g_new0 (hy_frame_stage, 1);
  st->exec = exec;
  st->ctx = &cuda_backend_of (be)->ctx;
  st->batch = batch;
  if (!set_up (st, pc, error)) {
    hy_frame_stage_free (st);
    return NULL;
  }
  return st;
}

void
hy_frame_stage_free (hy_frame_stage *st)
{
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
hy_frame_stage_load (hy_frame_stage *st, int slot,
    const uint8_t *const planes[3], const int strides[3], GError **error)
{
  hy_cuda_ctx *ctx = st->ctx;
  if (slot < 0 || slot >= st->batch) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "batch slot %d: the frame stage has %d", slot, st->batch);
    return FALSE;
  }
  for (int p = 0; p < st->n_planes; p++) {
    if (strides[p] < 0 || (size_t) strides[p] < st->row_bytes[p]) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "plane %d: stride %d is shorter than a row (%zu bytes)", p,
          strides[p], st->row_bytes[p]);
      return FALSE;
    }
  }
  /* Asked for every frame: the plan, and so the input slot, changes with
   * the mode and the shape (a cache hit costs a few compares). */
  hy_tensor *input = hy_executor_device_input (st->exec, 0, error);
  if (!input || !input_fits (st, input, error))
    return FALSE;

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

  const int64_t per_slot = hy_shape_numel (&input->shape) / st->batch;
  hy_cuda_preprocess_run (ctx, &st->desc, device_planes, tight,
      input->data + (int64_t) slot * per_slot);
  HY_CUDA_TRY (cudaEventRecord (sl->converted, ctx->stream), error);
  /* A launch that failed is recorded in ctx, not returned. */
  return hy_cuda_ctx_take_error (ctx, error);
}
