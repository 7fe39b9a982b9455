/*
 * preprocess.h — one pass from a mapped video frame to a model's input.
 *
 * Colour conversion, resize and normalisation happen while reading each
 * source pixel the output needs, straight into the float tensor: no
 * intermediate frame is made.  Everything that depends only on the frame
 * and tensor geometry (sampling tables, letterbox placement, normalisation
 * constants) is computed once by hy_preprocess_new; hy_preprocess_run
 * allocates nothing.
 *
 * Conventions (tests/element/check_mxnet.py implements the same in numpy):
 *  - bilinear sampling uses pixel centres: output x samples source
 *    (x + 0.5) * src_w / w - 0.5, clamped to the frame; nearest takes
 *    floor ((x + 0.5) * src_w / w);
 *  - 4:2:0 chroma is taken as centred between its luma samples, and is
 *    sampled on its own plane the same way; YUV is interpolated before it
 *    is converted to RGB (the conversion is affine, so only clamping can
 *    tell the difference);
 *  - letterbox scales by min (w / src_w, h / src_h), centres the picture
 *    and pads with black (pixel value 0, then normalised);
 *  - value = (pixel * scale - mean[c]) / std[c], with c the tensor channel
 *    (R, G, B order unless bgr); one-channel tensors take the BT.601 luma
 *    of RGB frames, and GRAY8 frames fill all three channels of RGB ones.
 *
 * This module knows nothing of GStreamer: the element maps GstVideoFormat
 * to hy_pixel_layout and the frame's planes to plain pointers.
 */
#ifndef HY_PREPROCESS_H
#define HY_PREPROCESS_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "pixel-layout.h"

G_BEGIN_DECLS

typedef enum hy_resize_mode {
  HY_RESIZE_STRETCH,            /* fill the tensor; aspect ratio changes */
  HY_RESIZE_LETTERBOX,          /* keep the aspect ratio, pad the rest */
} hy_resize_mode;

typedef enum hy_interpolation {
  HY_INTERP_BILINEAR,
  HY_INTERP_NEAREST,
} hy_interpolation;

typedef struct hy_preprocess_config {
  hy_pixel_layout layout;
  int src_width, src_height;    /* the frame */
  int dst_width, dst_height;    /* the tensor's W and H */
  int dst_channels;             /* 1 or 3 */
  bool bgr;                     /* tensor channels B, G, R */
  hy_resize_mode resize;
  hy_interpolation interpolation;
  float scale;                  /* 1 (0..255) or 1/255 (0..1) */
  float mean[3], std[3];        /* per tensor channel, after scaling */
  /* YUV frames: the matrix (Kr, Kb; BT.601 is 0.299, 0.114) and whether
   * the values span 0..255 rather than 16..235 / 16..240. */
  float yuv_kr, yuv_kb;
  bool yuv_full_range;
} hy_preprocess_config;

typedef struct hy_preprocess hy_preprocess;

/* NULL + error (HY_ERROR_INVALID, naming the bad field) for sizes below
 * 1, a channel count other than 1 or 3, or a zero std. */
hy_preprocess *hy_preprocess_new (const hy_preprocess_config *config,
    GError **error);
void hy_preprocess_free (hy_preprocess *pp);
const hy_preprocess_config *hy_preprocess_get_config (const hy_preprocess *pp);

/* Writes dst_channels x dst_height x dst_width floats (C, H, W order) into
 * `dst`.  planes/strides: as mapped (packed and GRAY8 use plane 0; NV12
 * planes 0-1; I420 planes 0-2).  Allocates nothing. */
void hy_preprocess_run (const hy_preprocess *pp,
    const uint8_t *const planes[3], const int strides[3], float *dst);

/* Maps a point in tensor pixels back to frame pixels (the inverse of the
 * resize, for detection boxes); not clamped. */
void hy_preprocess_to_frame (const hy_preprocess *pp, float x, float y,
    float *frame_x, float *frame_y);

G_END_DECLS
#endif /* HY_PREPROCESS_H */
