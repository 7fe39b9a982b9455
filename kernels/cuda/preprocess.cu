/*
 * preprocess.cu — a frame in device memory to the model's input tensor in
 * one launch (cuda-preprocess.h), one thread per output pixel.
 *
 * hy_cuda_preprocess_desc_init repeats hy_preprocess_new's set-up
 * (gst-plugin/preprocess.c) with the same expressions, so that the
 * letterbox placement, the ratios and the constants are the CPU's to the
 * bit; the per-pixel work is hy_cuda_preprocess_pixel.
 */
#include <math.h>
#include <string.h>

#include "hybrid.h"
#include "cuda-preprocess.h"

/* check_config of preprocess.c, the same messages. */
static gboolean
check_config (const hy_preprocess_config *c, GError **error)
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

gboolean
hy_cuda_preprocess_desc_init (hy_cuda_preprocess_desc *d,
    const hy_preprocess_config *c, GError **error)
{
  if (!check_config (c, error))
    return FALSE;
  memset (d, 0, sizeof *d);
  d->layout = c->layout;
  d->src_width = c->src_width;
  d->src_height = c->src_height;
  d->dst_width = c->dst_width;
  d->dst_height = c->dst_height;
  d->dst_channels = c->dst_channels;
  d->bgr = c->bgr;
  d->nearest = c->interpolation == HY_INTERP_NEAREST;

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

  int alpha;
  if (!hy_pixel_packed (c->layout, &d->bpp, &d->off[0], &d->off[1],
          &d->off[2], &alpha))
    d->bpp = 1;

  if (c->layout == HY_PIXEL_NV12 || c->layout == HY_PIXEL_I420) {
    /* setup_yuv */
    float kr = c->yuv_kr, kb = c->yuv_kb, kg = 1.0f - kr - kb;
    if (c->yuv_full_range) {
      d->y_mul = 1.0f;
      d->y_add = 0.0f;
      d->c_mul = 1.0f;
    } else {
      d->y_mul = 255.0f / 219.0f;
      d->y_add = -16.0f * 255.0f / 219.0f;
      d->c_mul = 255.0f / 224.0f;
    }
    d->vr = 2.0f * (1.0f - kr);
    d->ub = 2.0f * (1.0f - kb);
    d->vg = 2.0f * kr * (1.0f - kr) / kg;
    d->ug = 2.0f * kb * (1.0f - kb) / kg;
  }

  for (int i = 0; i < c->dst_channels; i++) {
    d->mul[i] = c->scale / c->std[i];
    d->add[i] = -c->mean[i] / c->std[i];
  }
  return TRUE;
}

__global__ static void
preprocess_kernel (hy_cuda_preprocess_desc d, hy_cuda_frame f, float *out,
    int64_t n)
{
  HY_CUDA_GRID_LOOP (i, n)
    hy_cuda_preprocess_pixel (&d, &f, i, out);
}

void
hy_cuda_preprocess_run (hy_cuda_ctx *ctx, const hy_cuda_preprocess_desc *d,
    const uint8_t *const planes[3], const int strides[3], float *out)
{
  hy_cuda_frame f;
  for (int i = 0; i < 3; i++) {
    f.plane[i] = planes[i];
    f.stride[i] = strides[i];
  }
  const int64_t n = (int64_t) d->dst_width * d->dst_height;
  preprocess_kernel<<<hy_cuda_blocks (ctx, n), HY_CUDA_THREADS, 0,
      ctx->stream>>> (*d, f, out, n);
  HY_CUDA_CHECK_LAUNCH (ctx);
}
