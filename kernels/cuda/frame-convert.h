/*
 * frame-convert.h — a frame plan's conversion (hybrid-frame.h) on the GPU:
 * a frame already in device memory to the model's normalised float NCHW
 * input, colour conversion, resize, normalisation and letterbox padding
 * in one launch.
 *
 * Each output pixel is computed on its own, from the same sample
 * positions, weights, YUV coefficients and clamping as the CPU's
 * (kernels/cpu/frame-convert.c), step by step in the CPU's order (see
 * hybrid-frame.h for the conventions), so both give the same floats.  The
 * CPU's sampling tables are computed on the fly (a few double operations
 * per pixel) instead of being stored: the kernel takes the plan's derived
 * numbers (kernels/frame/frame-desc.h) by value, with nothing on the
 * device.
 *
 * The C API is for the frame stage (frame-stage.c); the element functions
 * below it (nvcc only) are shared by the kernel and
 * tests/cuda/emulate-preprocess.cu, which runs them on the host against
 * the CPU code.
 */
#ifndef HY_CUDA_FRAME_CONVERT_H
#define HY_CUDA_FRAME_CONVERT_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "kernels/cuda/cuda-kernel.h"
#include "kernels/frame/frame-desc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueues on ctx->stream the writing of dst_channels x dst_height x
 * dst_width floats into `out` (device memory) from the frame whose planes
 * (device pointers) and strides are as hy_frame_plan_convert takes them.
 * Allocates nothing, never synchronises; a failed launch is recorded in
 * ctx. */
void hy_cuda_frame_convert (hy_cuda_ctx *ctx, const hy_frame_desc *d,
    const uint8_t *const planes[3], const int strides[3], float *out);

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
#include "kernels/cuda/launch.cuh"

/* A frame's planes and strides, by value for a launch. */
typedef struct hy_cuda_frame {
  const uint8_t *plane[3];
  int stride[3];
} hy_cuda_frame;

/* table_fill's entry i: output i over `src` samples at `ratio` samples
 * per output samples lo and hi, hi weighted by *w. */
HY_CUDA_HD void
hy_pp_sample (int i, int src, double ratio, bool nearest, int *lo, int *hi,
    float *w)
{
#ifdef __CUDA_ARCH__
  const double centre = __dmul_rn (i + 0.5, ratio);
#else
  const double centre = (i + 0.5) * ratio;
#endif
  if (nearest) {
    const int f = (int) floor (centre);
    *lo = *hi = f < src - 1 ? f : src - 1;
    *w = 0.0f;
    return;
  }
#ifdef __CUDA_ARCH__
  double s = __dsub_rn (centre, 0.5);
#else
  double s = centre - 0.5;
#endif
  const double top = (double) (src - 1);
  s = s > top ? top : s < 0.0 ? 0.0 : s;
  *lo = (int) floor (s);
  *hi = *lo + 1 < src - 1 ? *lo + 1 : src - 1;
  *w = (float) (s - *lo);
}

/* A bilinear sample, as the CPU takes it: rows a and b, offsets lo and
 * hi. */
HY_CUDA_HD float
hy_pp_bilerp (const uint8_t *a, const uint8_t *b, int lo, int hi, float wx,
    float wy)
{
  const float top = hy_add_rn ((float) a[lo],
      hy_mul_rn ((float) (a[hi] - a[lo]), wx));
  const float bottom = hy_add_rn ((float) b[lo],
      hy_mul_rn ((float) (b[hi] - b[lo]), wx));
  return hy_add_rn (top,
      hy_mul_rn (hy_sub_rn (bottom, top), wy));
}

HY_CUDA_HD float
hy_pp_clamp_byte (float v)
{
  return v < 0.0f ? 0.0f : (v > 255.0f ? 255.0f : v);
}

/* Output pixel i (y · dst_width + x) of every tensor channel: out[c ·
 * dst_width · dst_height + i]. */
HY_CUDA_HD void
hy_cuda_frame_pixel (const hy_frame_desc *d, const hy_cuda_frame *f,
    int64_t i, float *out)
{
  const hy_frame_config *fc = &d->config;
  const bool nearest = fc->interpolation == HY_INTERP_NEAREST;
  const int64_t plane = (int64_t) fc->dst_width * fc->dst_height;
  const int x = (int) (i % fc->dst_width) - d->ox;
  const int y = (int) (i / fc->dst_width) - d->oy;
  if (x < 0 || x >= d->rw || y < 0 || y >= d->rh) {
    /* Letterbox bands: black, normalised. */
    for (int c = 0; c < fc->dst_channels; c++)
      out[c * plane + i] = d->add[c];
    return;
  }

  int rlo, rhi, clo, chi;
  float wy, wx;
  hy_pp_sample (y, fc->src_height, d->ry, nearest, &rlo, &rhi, &wy);
  hy_pp_sample (x, fc->src_width, d->rx, nearest, &clo, &chi, &wx);
  const uint8_t *a = f->plane[0] + (int64_t) rlo * f->stride[0];
  const uint8_t *b = f->plane[0] + (int64_t) rhi * f->stride[0];
  float rgb[3];
  if (fc->layout == HY_PIXEL_GRAY8) {
    rgb[0] = rgb[1] = rgb[2] = hy_pp_bilerp (a, b, clo, chi, wx, wy);
  } else if (fc->layout == HY_PIXEL_NV12 || fc->layout == HY_PIXEL_I420) {
    /* Chroma on its own half-size plane; NV12's U and V interleaved. */
    const bool nv12 = fc->layout == HY_PIXEL_NV12;
    int crlo, crhi, cclo, cchi;
    float cwy, cwx;
    hy_pp_sample (y, (fc->src_height + 1) / 2, d->ry / 2, nearest, &crlo,
        &crhi, &cwy);
    hy_pp_sample (x, (fc->src_width + 1) / 2, d->rx / 2, nearest, &cclo,
        &cchi, &cwx);
    if (nv12) {
      cclo *= 2;
      cchi *= 2;
    }
    const uint8_t *u0 = f->plane[1] + (int64_t) crlo * f->stride[1];
    const uint8_t *u1 = f->plane[1] + (int64_t) crhi * f->stride[1];
    const uint8_t *v0 = nv12 ? u0 + 1
        : f->plane[2] + (int64_t) crlo * f->stride[2];
    const uint8_t *v1 = nv12 ? u1 + 1
        : f->plane[2] + (int64_t) crhi * f->stride[2];
    float lum = hy_pp_bilerp (a, b, clo, chi, wx, wy);
    float u = hy_pp_bilerp (u0, u1, cclo, cchi, cwx, cwy);
    float v = hy_pp_bilerp (v0, v1, cclo, cchi, cwx, cwy);
    const hy_yuv_coefficients *k = &d->yuv;
    lum = hy_add_rn (hy_mul_rn (lum, k->y_mul), k->y_add);
    u = hy_mul_rn (hy_sub_rn (u, 128.0f), k->c_mul);
    v = hy_mul_rn (hy_sub_rn (v, 128.0f), k->c_mul);
    rgb[0] = hy_pp_clamp_byte (hy_add_rn (lum,
            hy_mul_rn (k->vr, v)));
    rgb[1] = hy_pp_clamp_byte (hy_sub_rn (hy_sub_rn (lum,
                hy_mul_rn (k->ug, u)), hy_mul_rn (k->vg, v)));
    rgb[2] = hy_pp_clamp_byte (hy_add_rn (lum,
            hy_mul_rn (k->ub, u)));
  } else {
    clo *= d->bpp;
    chi *= d->bpp;
    for (int c = 0; c < 3; c++)
      rgb[c] = hy_pp_bilerp (a + d->off[c], b + d->off[c], clo, chi, wx, wy);
  }

  if (fc->dst_channels == 1) {
    const float luma = hy_add_rn (hy_add_rn (
            hy_mul_rn (0.299f, rgb[0]), hy_mul_rn (0.587f, rgb[1])),
        hy_mul_rn (0.114f, rgb[2]));
    out[i] = hy_add_rn (hy_mul_rn (luma, d->mul[0]), d->add[0]);
    return;
  }
  for (int c = 0; c < 3; c++)
    out[c * plane + i] = hy_add_rn (
        hy_mul_rn (rgb[fc->bgr ? 2 - c : c], d->mul[c]), d->add[c]);
}
#endif /* __CUDACC__ */

#endif /* HY_CUDA_FRAME_CONVERT_H */
