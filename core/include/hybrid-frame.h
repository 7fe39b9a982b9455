/*
 * hybrid-frame.h — video frames to a model's input, as GStreamer's
 * video-converter.c is to videoconvert: pixel layouts, the frame plan
 * (everything that depends only on the frame and tensor geometry, derived
 * once), its conversion on the CPU, and frame stages, which send frames to
 * a device as bytes and convert them there, straight into a hybridized
 * plan's input.  No GStreamer here: an element maps its video formats to
 * hy_pixel_layout and a mapped frame's planes to plain pointers.
 *
 * One pass: colour conversion, resize and normalisation happen while
 * reading each source pixel the output needs, straight into the float
 * tensor; no intermediate frame is made.  hy_frame_plan_convert allocates
 * nothing.
 *
 * Conventions (tests/element/check_mxnet.py implements the same in numpy;
 * the CPU conversion and its device twin compute the same floats):
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
 */
#ifndef HYBRID_FRAME_H
#define HYBRID_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "hybrid.h"

G_BEGIN_DECLS

/* ---- pixel layouts ------------------------------------------------------ */

typedef enum hy_pixel_layout {
  HY_PIXEL_RGB,
  HY_PIXEL_BGR,
  HY_PIXEL_RGBX,
  HY_PIXEL_BGRX,
  HY_PIXEL_XRGB,
  HY_PIXEL_XBGR,
  HY_PIXEL_RGBA,
  HY_PIXEL_BGRA,
  HY_PIXEL_GRAY8,
  HY_PIXEL_NV12,                /* Y plane, then interleaved U, V at 2x2 */
  HY_PIXEL_I420,                /* Y, U, V planes, chroma at 2x2 */
} hy_pixel_layout;

#define HY_PIXEL_N_LAYOUTS (HY_PIXEL_I420 + 1)

/* Packed RGB layouts: bytes per pixel and where R, G, B (and alpha, -1
 * when there is none) sit in a pixel.  FALSE for the others. */
static inline int
hy_pixel_packed (hy_pixel_layout layout, int *bpp, int *r, int *g, int *b,
    int *a)
{
  static const signed char packed[][5] = {
    [HY_PIXEL_RGB] = {3, 0, 1, 2, -1},
    [HY_PIXEL_BGR] = {3, 2, 1, 0, -1},
    [HY_PIXEL_RGBX] = {4, 0, 1, 2, -1},
    [HY_PIXEL_BGRX] = {4, 2, 1, 0, -1},
    [HY_PIXEL_XRGB] = {4, 1, 2, 3, -1},
    [HY_PIXEL_XBGR] = {4, 3, 2, 1, -1},
    [HY_PIXEL_RGBA] = {4, 0, 1, 2, 3},
    [HY_PIXEL_BGRA] = {4, 2, 1, 0, 3},
  };
  if ((unsigned) layout > HY_PIXEL_BGRA)
    return 0;
  *bpp = packed[layout][0];
  *r = packed[layout][1];
  *g = packed[layout][2];
  *b = packed[layout][3];
  *a = packed[layout][4];
  return 1;
}

/* ---- the frame plan ------------------------------------------------------ */

typedef enum hy_resize_mode {
  HY_RESIZE_STRETCH,            /* fill the tensor; aspect ratio changes */
  HY_RESIZE_LETTERBOX,          /* keep the aspect ratio, pad the rest */
} hy_resize_mode;

typedef enum hy_interpolation {
  HY_INTERP_BILINEAR,
  HY_INTERP_NEAREST,
} hy_interpolation;

/* What a frame is and what the tensor wants. */
typedef struct hy_frame_config {
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
} hy_frame_config;

/* A config with everything derived from it once: where the picture lands
 * in the tensor, the sampling tables, the YUV coefficients and the
 * normalisation.  Read-only once made: the CPU conversion and any number
 * of frame stages share it. */
typedef struct hy_frame_plan hy_frame_plan;

/* NULL + error (HY_ERROR_INVALID, naming the bad field) for sizes below
 * 1, a channel count other than 1 or 3, an unknown layout, or a std that
 * is zero or not finite. */
hy_frame_plan *hy_frame_plan_new (const hy_frame_config *config,
    GError **error);
void hy_frame_plan_free (hy_frame_plan *plan);
const hy_frame_config *hy_frame_plan_config (const hy_frame_plan *plan);

/* Writes dst_channels x dst_height x dst_width floats (C, H, W order) into
 * `dst`, on the CPU.  planes/strides: as mapped (packed and GRAY8 use
 * plane 0; NV12 planes 0-1; I420 planes 0-2).  Allocates nothing; one
 * plan converts on one thread at a time (it keeps its sampled rows). */
void hy_frame_plan_convert (const hy_frame_plan *plan,
    const uint8_t *const planes[3], const int strides[3], float *dst);

/* hy_frame_plan_convert, each value then quantized as `q` says
 * (hy_input_quantize: the rounding of the model's quantize node), as
 * dst_height x dst_width x dst_channels bytes (H, W, C order: the bytes
 * hy_executor_input_quantization points at, one image of them) into
 * `dst`.  One pass: a row's floats are rounded while they are in cache,
 * no float tensor is made; the bytes are those of hy_frame_plan_convert
 * followed by the quantize node.  Allocates nothing. */
void hy_frame_plan_convert_quantized (const hy_frame_plan *plan,
    const uint8_t *const planes[3], const int strides[3],
    const hy_input_quantization *q, void *dst);

/* Maps a point in tensor pixels back to frame pixels (the inverse of the
 * resize, for detection boxes); not clamped. */
void hy_frame_plan_to_frame (const hy_frame_plan *plan, float x, float y,
    float *frame_x, float *frame_y);

/* ---- frame stages: frames converted on the executor's device ------------ */

/* Per batch slot, a stage owns staging memory on both sides; loading a
 * frame copies its bytes (uint8, never float) into the slot, sends them up
 * and converts them on the device into that slot of the executor's input
 * 0, in stream order before the next forward: hy_executor_forward_staged
 * then uploads nothing.  Everything is made by hy_executor_frame_stage_new,
 * which finds the plan's device input once; a load allocates nothing. */
typedef struct hy_frame_stage hy_frame_stage;

/* A stage for `batch` frames as `plan` describes them into input 0 of
 * `exec`, planned for the executor's current input shapes, which must be
 * (batch, C, H, W) with C, H, W the plan's dst_channels, dst_height,
 * dst_width.  The stage copies what it needs of `plan` (which may go
 * first) and is valid while the executor keeps its mode, precision and
 * input shapes: after a change, free it and make another.  Free it before
 * the executor.  NULL + error (HY_ERROR_UNSUPPORTED) when the executor's
 * backend cannot stage frames (the CPU, which reads frames where they
 * are) or is not in hybrid mode; HY_ERROR_SHAPE when the input does not
 * fit; HY_ERROR_BACKEND naming the device call that failed. */
hy_frame_stage *hy_executor_frame_stage_new (hy_executor *exec,
    const hy_frame_plan *plan, int batch, GError **error);
void hy_frame_stage_free (hy_frame_stage *stage);

/* Enqueues the frame into batch slot `slot` and returns: copies its bytes
 * into the slot's staging memory, then the upload and the conversion run
 * on the device.  planes/strides: as hy_frame_plan_convert takes them (any
 * strides).  FALSE + error for a bad slot or stride, a device call that
 * failed (named), or an executor that re-planned since the stage was
 * made. */
gboolean hy_frame_stage_load (hy_frame_stage *stage, int slot,
    const uint8_t *const planes[3], const int strides[3], GError **error);

/* Copies slot `slot` of the device input, as the stage converted it, to
 * `dst` on the host (C x H x W floats), waiting for its conversion: for a
 * caller that must run a staged batch another way (a mode switch). */
gboolean hy_frame_stage_download (hy_frame_stage *stage, int slot,
    float *dst, GError **error);

/* Runs one forward on the device input as staged, uploading nothing (the
 * executor's current input shapes, hybrid mode on a device). */
gboolean hy_executor_forward_staged (hy_executor *exec, GError **error);

G_END_DECLS
#endif /* HYBRID_FRAME_H */
