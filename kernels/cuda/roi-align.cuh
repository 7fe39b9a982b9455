/*
 * roi-align.cuh — _contrib_ROIAlign on the GPU (roi-align.cu), one thread
 * per output element (ROI, channel, bin); shared with
 * tests/cuda/emulate-vision.cu.
 *
 * The thread repeats the CPU kernel's steps for its bin
 * (kernels/cpu/roi-align.c): the ROI's geometry in feature-map
 * coordinates, the bin's grid of samples (sample_ratio, or the bin's size
 * rounded up), each sample's four bilinear taps (nothing beyond one pixel
 * outside the map, clamped to the last row or column inside), summed in
 * the same order and divided by the sample count.  Where the CPU
 * precomputes the taps once per ROI, each thread computes its own with
 * the same float steps, single-rounded so that no FMA changes them.
 */
#ifndef HY_CUDA_ROI_ALIGN_CUH
#define HY_CUDA_ROI_ALIGN_CUH

#include <math.h>

#include "kernels/cuda/launch.cuh"
#include "hybrid-tensor.h"
#include "kernels/params/vision.h"

typedef struct hy_cuda_roi_args {
  int64_t n, c_in, c_out, h, w;
  int64_t ph, pw;
  float spatial_scale;
  int sample_ratio;
  bool position_sensitive, aligned;
} hy_cuda_roi_args;

static inline hy_cuda_roi_args
hy_cuda_roi_plan (const hy_roi_align_params *p, const hy_shape *data,
    const hy_shape *y)
{
  hy_cuda_roi_args a = {};
  a.n = data->dims[0];
  a.c_in = data->dims[1];
  a.h = data->dims[2];
  a.w = data->dims[3];
  a.c_out = y->dims[1];
  a.ph = p->pooled_h;
  a.pw = p->pooled_w;
  a.spatial_scale = p->spatial_scale;
  a.sample_ratio = p->sample_ratio;
  a.position_sensitive = p->position_sensitive;
  a.aligned = p->aligned;
  return a;
}

/* Samples along one axis of a bin: sample_ratio, or the bin's size
 * rounded up (none for a NaN or non-positive size). */
HY_CUDA_HD int64_t
hy_cuda_roi_grid (int sample_ratio, float roi_size, int64_t pooled)
{
  if (sample_ratio > 0)
    return sample_ratio;
  const float g = ceilf (roi_size / (float) pooled);
  return g >= 1.0f && g < 1e9f ? (int64_t) g : 0;
}

/* Sample (yy, xx)'s contribution to a bin: its four taps' weighted sum,
 * in the CPU's order.  A sample beyond one pixel outside has four taps of
 * weight 0 on the plane's first element, as in MXNet: 0 unless that
 * element is NaN or infinite. */
HY_CUDA_HD float
hy_cuda_roi_sample (const hy_cuda_roi_args *a, const float *xc, float yy,
    float xx)
{
  if (yy < -1.0f || yy > (float) a->h || xx < -1.0f || xx > (float) a->w) {
    const float z = hy_mul_rn (0.0f, xc[0]);
    return hy_add_rn (hy_add_rn (hy_add_rn (z, z), z), z);
  }
  if (yy <= 0)
    yy = 0;
  if (xx <= 0)
    xx = 0;
  int64_t ylo = (int64_t) yy, xlo = (int64_t) xx, yhi, xhi;
  if (ylo >= a->h - 1) {
    yhi = ylo = a->h - 1;
    yy = (float) ylo;
  } else {
    yhi = ylo + 1;
  }
  if (xlo >= a->w - 1) {
    xhi = xlo = a->w - 1;
    xx = (float) xlo;
  } else {
    xhi = xlo + 1;
  }
  const float ly = yy - (float) ylo, lx = xx - (float) xlo;
  const float hy = 1.0f - ly, hx = 1.0f - lx;
  const float w0 = hy_mul_rn (hy, hx), w1 = hy_mul_rn (hy, lx);
  const float w2 = hy_mul_rn (ly, hx), w3 = hy_mul_rn (ly, lx);
  float s = hy_mul_rn (w0, xc[ylo * a->w + xlo]);
  s = hy_add_rn (s, hy_mul_rn (w1, xc[ylo * a->w + xhi]));
  s = hy_add_rn (s, hy_mul_rn (w2, xc[yhi * a->w + xlo]));
  return hy_add_rn (s, hy_mul_rn (w3, xc[yhi * a->w + xhi]));
}

/* Output element i of (R, c_out, ph, pw) from data x and rois (R, 5). */
HY_CUDA_HD float
hy_cuda_roi_one (const hy_cuda_roi_args *a, const float *x,
    const float *rois, int64_t i)
{
  const int64_t bins = a->ph * a->pw;
  const int64_t bin = i % bins, c = i / bins % a->c_out;
  const int64_t r = i / (bins * a->c_out);
  const int64_t bi = bin / a->pw, bk = bin % a->pw;
  const float *roi = rois + r * 5;
  /* A batch index outside [0, N) gives zeros: the CPU kernel's test,
   * float first so that NaN or a huge index is never converted. */
  const float b = roi[0];
  if (!(b >= 0.0f && b < 4e18f && (int64_t) b < a->n))
    return 0.0f;
  const int64_t batch = (int64_t) b;

  const float off = a->aligned ? 0.5f : 0.0f, sc = a->spatial_scale;
  const float x0 = hy_sub_rn (hy_mul_rn (roi[1], sc), off);
  const float y0 = hy_sub_rn (hy_mul_rn (roi[2], sc), off);
  float rw = hy_sub_rn (hy_sub_rn (hy_mul_rn (roi[3], sc),
          off), x0);
  float rh = hy_sub_rn (hy_sub_rn (hy_mul_rn (roi[4], sc),
          off), y0);
  if (!a->aligned) {
    rw = fmaxf (rw, 1.0f);
    rh = fmaxf (rh, 1.0f);
  }
  const int64_t gh = hy_cuda_roi_grid (a->sample_ratio, rh, a->ph);
  const int64_t gw = hy_cuda_roi_grid (a->sample_ratio, rw, a->pw);
  const float bh = rh / (float) a->ph, bw = rw / (float) a->pw;
  const int64_t cin = a->position_sensitive ? c * bins + bin : c;
  const float *xc = x + (batch * a->c_in + cin) * a->h * a->w;

  float v = 0.0f;
  for (int64_t iy = 0; iy < gh; iy++) {
    const float yy = hy_add_rn (
        hy_add_rn (y0, hy_mul_rn ((float) bi, bh)),
        hy_mul_rn ((float) iy + 0.5f, bh) / (float) gh);
    for (int64_t ix = 0; ix < gw; ix++) {
      const float xx = hy_add_rn (
          hy_add_rn (x0, hy_mul_rn ((float) bk, bw)),
          hy_mul_rn ((float) ix + 0.5f, bw) / (float) gw);
      v = hy_add_rn (v, hy_cuda_roi_sample (a, xc, yy, xx));
    }
  }
  return v / (float) (gh * gw);
}

#endif /* HY_CUDA_ROI_ALIGN_CUH */
