/*
 * preprocess-setup.h — what a frame plan derives from its config, shared
 * by the CPU conversion (preprocess.c) and its CUDA twin
 * (kernels/cuda/preprocess.cu): the checks and their messages, where the
 * picture lands in the tensor, the YUV coefficients and the normalisation.
 * One set of expressions, so both compute the same floats to the bit.
 * Plain C, also compiled by nvcc.
 */
#ifndef HY_PREPROCESS_SETUP_H
#define HY_PREPROCESS_SETUP_H

#include <math.h>

#include "hybrid.h"
#include "preprocess.h"

/* Rejects what no frame plan can do, saying which value is wrong. */
static inline gboolean
hy_preprocess_check_config (const hy_preprocess_config *c, GError **error)
{
  if (c->src_width < 1 || c->src_height < 1) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "frame size %dx%d: both sides must be at least 1", c->src_width,
        c->src_height);
    return FALSE;
  }
  if (c->dst_width < 1 || c->dst_height < 1) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "input size %dx%d: both sides must be at least 1", c->dst_width,
        c->dst_height);
    return FALSE;
  }
  if (c->dst_channels != 1 && c->dst_channels != 3) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "the model input has %d channels: only 1 (gray) or 3 (colour) "
        "can be made from video", c->dst_channels);
    return FALSE;
  }
  if ((unsigned) c->layout > HY_PIXEL_I420) {
    g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
        "pixel layout %d is not one hy_preprocess knows", (int) c->layout);
    return FALSE;
  }
  for (int i = 0; i < c->dst_channels; i++) {
    if (!(c->std[i] != 0.0f) || !isfinite (c->std[i])
        || !isfinite (c->mean[i])) {
      g_set_error (error, HY_ERROR, HY_ERROR_INVALID,
          "channel %d: std must be finite and non-zero and mean finite "
          "(got mean %g, std %g)", i, c->mean[i], c->std[i]);
      return FALSE;
    }
  }
  return TRUE;
}

/* The picture's size (rw, rh) and top-left corner (ox, oy) in the tensor:
 * the whole tensor when stretching, centred at the frame's aspect ratio
 * when letterboxing. */
static inline void
hy_preprocess_placement (const hy_preprocess_config *c, int *rw, int *rh,
    int *ox, int *oy)
{
  *rw = c->dst_width;
  *rh = c->dst_height;
  if (c->resize == HY_RESIZE_LETTERBOX) {
    double s = MIN ((double) c->dst_width / c->src_width,
        (double) c->dst_height / c->src_height);
    *rw = CLAMP ((int) lround (c->src_width * s), 1, c->dst_width);
    *rh = CLAMP ((int) lround (c->src_height * s), 1, c->dst_height);
  }
  *ox = (c->dst_width - *rw) / 2;
  *oy = (c->dst_height - *rh) / 2;
}

/* YUV to RGB: y' = y·y_mul + y_add, u' and v' = (u − 128)·c_mul, then
 * r = y' + vr·v', g = y' − ug·u' − vg·v', b = y' + ub·u'. */
typedef struct hy_yuv_coefficients {
  float y_mul, y_add, c_mul, vr, ug, vg, ub;
} hy_yuv_coefficients;

static inline hy_yuv_coefficients
hy_preprocess_yuv_coefficients (const hy_preprocess_config *c)
{
  hy_yuv_coefficients k;
  float kr = c->yuv_kr, kb = c->yuv_kb, kg = 1.0f - kr - kb;
  if (c->yuv_full_range) {
    k.y_mul = 1.0f;
    k.y_add = 0.0f;
    k.c_mul = 1.0f;
  } else {
    k.y_mul = 255.0f / 219.0f;
    k.y_add = -16.0f * 255.0f / 219.0f;
    k.c_mul = 255.0f / 224.0f;
  }
  k.vr = 2.0f * (1.0f - kr);
  k.ub = 2.0f * (1.0f - kb);
  k.vg = 2.0f * kr * (1.0f - kr) / kg;
  k.ug = 2.0f * kb * (1.0f - kb) / kg;
  return k;
}

/* value = pixel·mul[i] + add[i] for channel i: (pixel·scale − mean) / std
 * folded once. */
static inline void
hy_preprocess_normalisation (const hy_preprocess_config *c, float mul[3],
    float add[3])
{
  for (int i = 0; i < c->dst_channels; i++) {
    mul[i] = c->scale / c->std[i];
    add[i] = -c->mean[i] / c->std[i];
  }
}

#endif /* HY_PREPROCESS_SETUP_H */
