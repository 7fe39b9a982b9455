/*
 * frame-desc.h — what a frame plan (hybrid-frame.h) derives from its
 * config, as one plain struct that the CPU conversion
 * (kernels/cpu/frame-convert.c) and its CUDA twin
 * (kernels/cuda/frame-convert.cu) both read: the checks and their
 * messages, where the picture lands in the tensor, the sampling ratios,
 * the packed pixels' byte offsets, the YUV coefficients and the
 * normalisation.  Derived once, by one function, so both sides compute
 * the same floats to the bit.  Plain C, also read by nvcc; no device
 * pointers, so a kernel takes it by value.
 */
#ifndef HY_FRAME_DESC_H
#define HY_FRAME_DESC_H

#include <stdbool.h>
#include <stddef.h>

#include "hybrid-frame.h"

#ifdef __cplusplus
extern "C" {
#endif

/* YUV to RGB: y' = y·y_mul + y_add, u' and v' = (u − 128)·c_mul, then
 * r = y' + vr·v', g = y' − ug·u' − vg·v', b = y' + ub·u'. */
typedef struct hy_yuv_coefficients {
  float y_mul, y_add, c_mul, vr, ug, vg, ub;
} hy_yuv_coefficients;

typedef struct hy_frame_desc {
  hy_frame_config config;
  int ox, oy, rw, rh;           /* where the picture lands in the tensor */
  double rx, ry;                /* frame pixels per tensor pixel */
  bool packed;                  /* packed RGB: bpp and off[] are set */
  int bpp;                      /* bytes per pixel of plane 0 */
  int off[3];                   /* packed: byte offset of R, G, B */
  float mul[3], add[3];         /* value = pixel * mul + add, per channel */
  hy_yuv_coefficients yuv;      /* NV12 and I420 */
} hy_frame_desc;

/* Fills *d from `config`; FALSE + error (HY_ERROR_INVALID, naming the
 * value) for what no frame plan can do. */
gboolean hy_frame_desc_init (hy_frame_desc *d, const hy_frame_config *config,
    GError **error);

/* The plan's derived numbers (kernels/cpu/frame-plan.c). */
const hy_frame_desc *hy_frame_plan_desc (const hy_frame_plan *plan);

static inline bool
hy_frame_layout_is_yuv (hy_pixel_layout layout)
{
  return layout == HY_PIXEL_NV12 || layout == HY_PIXEL_I420;
}

/* The planes a frame of `config` has, as the conversions read them
 * (4:2:0 chroma rounds up, as GStreamer's odd sizes do): each one's
 * bytes per row (without padding) and rows; returns their count. */
int hy_frame_planes (const hy_frame_config *config, size_t row_bytes[3],
    int rows[3]);

#ifdef __cplusplus
}
#endif
#endif /* HY_FRAME_DESC_H */
