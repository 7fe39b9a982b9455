/*
 * frame-stage.h — the CUDA backend's frame stages (hybrid-frame.h; the
 * frame_stage_* hooks of kernels/backend-impl.h): a mapped video frame goes
 * to the device as bytes (uint8, never float) and is converted there
 * (frame-convert.h) straight into a plan's device input, so that the
 * forward uploads nothing.
 *
 * Per batch slot the stage owns pinned staging memory and a device copy
 * of the frame; uploads run on a stream of their own, so slot k + 1's
 * upload overlaps slot k's conversion, and the conversions run on the
 * backend's stream, where the forward follows them in order.  Everything
 * is allocated by hy_cuda_frame_stage_new; loading a frame allocates
 * nothing.
 */
#ifndef HY_CUDA_FRAME_STAGE_H
#define HY_CUDA_FRAME_STAGE_H

#include "kernels/cuda/cuda-object.h"

void *hy_cuda_frame_stage_new (hy_backend *be, const hy_frame_plan *plan,
    hy_tensor *input, int batch, GError **error);
gboolean hy_cuda_frame_stage_load (hy_backend *be, void *stage, int slot,
    const uint8_t *const planes[3], const int strides[3], GError **error);
void hy_cuda_frame_stage_free (hy_backend *be, void *stage);

#endif /* HY_CUDA_FRAME_STAGE_H */
