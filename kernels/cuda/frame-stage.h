/*
 * frame-stage.h — the GPU frame path of hybridinfer: a mapped video frame
 * goes to the device as bytes (uint8, never float) and is converted there
 * (cuda-preprocess.h) straight into the executor's device input, so that
 * the forward (hy_executor_forward_staged) uploads nothing.
 *
 * Per batch slot the stage owns pinned staging memory and a device copy
 * of the frame; uploads run on a stream of their own, so slot k + 1's
 * upload overlaps slot k's conversion, and the conversions run on the
 * backend's stream, where the forward follows them in order.  Everything
 * is allocated by hy_frame_stage_new; loading a frame allocates nothing.
 *
 * No CUDA type appears here: the element includes this header in every
 * build.  The functions are weak, as hy_cuda_backend_new is: in a build
 * without CUDA they are absent and hy_frame_stage_new is NULL.
 */
#ifndef HY_FRAME_STAGE_H
#define HY_FRAME_STAGE_H

#include <stdint.h>

#include <glib.h>

#include "hybrid.h"
#include "gst-plugin/preprocess.h"

G_BEGIN_DECLS

typedef struct hy_frame_stage hy_frame_stage;

/* A stage for `batch` frames as `pc` describes them (layout, size) into
 * input 0 of `exec`, planned for the model's current input shape (whose
 * C, H, W must be pc's dst_channels, dst_height, dst_width).  NULL + error
 * when the executor is not on a CUDA device in hybrid mode, or when a
 * CUDA call fails. */
hy_frame_stage *hy_frame_stage_new (hy_executor *exec,
    const hy_preprocess_config *pc, int batch, GError **error)
    __attribute__ ((weak));
void hy_frame_stage_free (hy_frame_stage *st) __attribute__ ((weak));

/* Copies the frame into slot `slot`'s pinned memory and enqueues its
 * upload and its conversion into slot `slot` of the executor's device
 * input (hy_executor_device_input), then returns: the work completes in
 * stream order before the next forward.  planes/strides: as
 * hy_preprocess_run takes them (any strides).  FALSE + error (the CUDA
 * call named) on failure. */
gboolean hy_frame_stage_load (hy_frame_stage *st, int slot,
    const uint8_t *const planes[3], const int strides[3], GError **error)
    __attribute__ ((weak));

G_END_DECLS
#endif /* HY_FRAME_STAGE_H */
