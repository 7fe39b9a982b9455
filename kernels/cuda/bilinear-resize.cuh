/*
 * bilinear-resize.cuh — _contrib_BilinearResize2D on the GPU
 * (bilinear-resize.cu), one thread per output pixel; shared with
 * tests/cuda/emulate-vision.cu.
 *
 * Each thread works out its row's and column's source taps itself, with
 * the CPU kernel's arithmetic (kernels/cpu/bilinear-resize.c): the scale
 * in float, the half-pixel position in double then rounded to float, the
 * blend in the same order with single-rounded steps, so that the weights
 * and the result are the CPU's bit for bit.  Equal sizes are a copy
 * (bilinear-resize.cu).
 */
#ifndef HY_CUDA_BILINEAR_RESIZE_CUH
#define HY_CUDA_BILINEAR_RESIZE_CUH

#include "kernels/cuda/launch.cuh"
#include "hybrid-tensor.h"
#include "kernels/params/vision.h"

typedef struct hy_cuda_resize_args {
  int64_t ih, iw, oh, ow;
  float scale_h, scale_w;
  bool align_corners;
} hy_cuda_resize_args;

static inline float
hy_cuda_resize_scale (int64_t in, int64_t out, bool align_corners)
{
  if (out <= 1)
    return 0.0f;
  return align_corners ? (float) (in - 1) / (float) (out - 1)
      : (float) in / (float) out;
}

static inline hy_cuda_resize_args
hy_cuda_resize_plan (const hy_bilinear_resize_params *p, const hy_shape *x,
    const hy_shape *y)
{
  hy_cuda_resize_args a = {};
  a.ih = x->dims[2];
  a.iw = x->dims[3];
  a.oh = y->dims[2];
  a.ow = y->dims[3];
  a.align_corners = p->align_corners;
  a.scale_h = hy_cuda_resize_scale (a.ih, a.oh, a.align_corners);
  a.scale_w = hy_cuda_resize_scale (a.iw, a.ow, a.align_corners);
  return a;
}

/* One axis's tap of output index i: first source index, its step (0 on
 * the last index) and the two weights. */
typedef struct hy_cuda_resize_tap {
  int64_t i0, step;
  float l0, l1;
} hy_cuda_resize_tap;

HY_CUDA_HD hy_cuda_resize_tap
hy_cuda_resize_tap_of (float scale, int64_t i, int64_t in,
    bool align_corners)
{
  float r;
  if (align_corners) {
    r = hy_mul_rn (scale, (float) i);
  } else {
#ifdef __CUDA_ARCH__
    r = (float) __dsub_rn (__dmul_rn ((double) scale, (double) i + 0.5),
        0.5);
#else
    r = (float) ((double) scale * ((double) i + 0.5) - 0.5);
#endif
    if (r < 0)
      r = 0;
  }
  hy_cuda_resize_tap t;
  t.i0 = (int64_t) r;
  t.step = t.i0 < in - 1 ? 1 : 0;
  t.l1 = r - (float) t.i0;
  t.l0 = 1.0f - t.l1;
  return t;
}

/* Output element i of planes of oh·ow pixels. */
HY_CUDA_HD float
hy_cuda_resize_one (const hy_cuda_resize_args *a, const float *x, int64_t i)
{
  const int64_t ow = i % a->ow, oh = i / a->ow % a->oh;
  const int64_t plane = i / (a->ow * a->oh);
  const hy_cuda_resize_tap th = hy_cuda_resize_tap_of (a->scale_h, oh,
      a->ih, a->align_corners);
  const hy_cuda_resize_tap tw = hy_cuda_resize_tap_of (a->scale_w, ow,
      a->iw, a->align_corners);
  const float *r0 = x + plane * a->ih * a->iw + th.i0 * a->iw;
  const float *r1 = r0 + th.step * a->iw;
  const int64_t c0 = tw.i0, c1 = tw.i0 + tw.step;
  const float top = hy_add_rn (hy_mul_rn (tw.l0, r0[c0]),
      hy_mul_rn (tw.l1, r0[c1]));
  const float bottom = hy_add_rn (hy_mul_rn (tw.l0, r1[c0]),
      hy_mul_rn (tw.l1, r1[c1]));
  return hy_add_rn (hy_mul_rn (th.l0, top),
      hy_mul_rn (th.l1, bottom));
}

#endif /* HY_CUDA_BILINEAR_RESIZE_CUH */
