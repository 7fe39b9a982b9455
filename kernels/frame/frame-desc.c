/*
 * frame-desc.c — a frame config's derived numbers (frame-desc.h), once,
 * for the CPU conversion and its CUDA twin alike.
 */
#include <math.h>
#include <string.h>

#include "kernels/frame/frame-desc.h"

/* Rejects what no frame plan can do, saying which value is wrong. */
static gboolean
check_config (const hy_frame_config *c, GError **error)
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
        "pixel layout %d is not one hy_frame_plan knows", (int) c->layout);
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
static void
place (hy_frame_desc *d)
{
  const hy_frame_config *c = &d->config;
  d->rw = c->dst_width;
  d->rh = c->dst_height;
  if (c->resize == HY_RESIZE_LETTERBOX) {
    double s = MIN ((double) c->dst_width / c->src_width,
        (double) c->dst_height / c->src_height);
    d->rw = CLAMP ((int) lround (c->src_width * s), 1, c->dst_width);
    d->rh = CLAMP ((int) lround (c->src_height * s), 1, c->dst_height);
  }
  d->ox = (c->dst_width - d->rw) / 2;
  d->oy = (c->dst_height - d->rh) / 2;
  d->rx = (double) c->src_width / d->rw;
  d->ry = (double) c->src_height / d->rh;
}

static hy_yuv_coefficients
yuv_coefficients (const hy_frame_config *c)
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

gboolean
hy_frame_desc_init (hy_frame_desc *d, const hy_frame_config *config,
    GError **error)
{
  if (!check_config (config, error))
    return FALSE;
  memset (d, 0, sizeof *d);
  d->config = *config;
  place (d);
  int alpha;
  d->packed = hy_pixel_packed (config->layout, &d->bpp, &d->off[0],
      &d->off[1], &d->off[2], &alpha);
  if (!d->packed)
    d->bpp = 1;
  if (hy_frame_layout_is_yuv (config->layout))
    d->yuv = yuv_coefficients (config);
  /* value = pixel·mul + add: (pixel·scale − mean) / std folded once. */
  for (int i = 0; i < config->dst_channels; i++) {
    d->mul[i] = config->scale / config->std[i];
    d->add[i] = -config->mean[i] / config->std[i];
  }
  return TRUE;
}

int
hy_frame_planes (const hy_frame_config *c, size_t row_bytes[3], int rows[3])
{
  const size_t w = (size_t) c->src_width, cw = (w + 1) / 2;
  const int h = c->src_height, ch = (h + 1) / 2;
  int bpp, r, g, b, a;
  if (hy_pixel_packed (c->layout, &bpp, &r, &g, &b, &a)) {
    row_bytes[0] = w * (size_t) bpp;
    rows[0] = h;
    return 1;
  }
  row_bytes[0] = w;
  rows[0] = h;
  switch (c->layout) {
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
