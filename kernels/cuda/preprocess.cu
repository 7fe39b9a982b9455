/*
 * preprocess.cu — a frame in device memory to the model's input tensor in
 * one launch (cuda-preprocess.h), one thread per output pixel.
 *
 * hy_cuda_preprocess_desc_init derives the placement, the YUV
 * coefficients and the normalisation with the CPU's own functions
 * (gst-plugin/preprocess-setup.h), so they are the CPU's to the bit; the
 * per-pixel work is hy_cuda_preprocess_pixel.
 */
#include <math.h>
#include <string.h>

#include "hybrid.h"
#include "cuda-preprocess.h"

gboolean
hy_cuda_preprocess_desc_init (hy_cuda_preprocess_desc *d,
    const hy_preprocess_config *c, GError **error)
{
  if (!hy_preprocess_check_config (c, error))
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

  hy_preprocess_placement (c, &d->rw, &d->rh, &d->ox, &d->oy);
  d->rx = (double) c->src_width / d->rw;
  d->ry = (double) c->src_height / d->rh;

  int alpha;
  if (!hy_pixel_packed (c->layout, &d->bpp, &d->off[0], &d->off[1],
          &d->off[2], &alpha))
    d->bpp = 1;

  if (c->layout == HY_PIXEL_NV12 || c->layout == HY_PIXEL_I420) {
    d->yuv = hy_preprocess_yuv_coefficients (c);
  }

  hy_preprocess_normalisation (c, d->mul, d->add);
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
