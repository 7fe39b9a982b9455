/*
 * box-decode.cuh — _contrib_box_decode on the GPU (box-decode.cu), one
 * thread per box; shared with tests/cuda/emulate-vision.cu.
 *
 * SSD's offsets applied to their anchors in the CPU kernel's order
 * (kernels/cpu/box-decode.c): scaled by std, then by the anchor's size;
 * exp after the optional clip (a NaN offset under a clip becomes the
 * clip, as in MXNet).  Single-rounded steps, so no FMA moves a corner by
 * a rounding; expf may still differ from the host's by an ulp.
 */
#ifndef HY_CUDA_BOX_DECODE_CUH
#define HY_CUDA_BOX_DECODE_CUH

#include <math.h>

#include "kernels/cuda/launch.cuh"
#include "hybrid-tensor.h"
#include "kernels/params/detection.h"

typedef struct hy_cuda_decode_args {
  float std[4];
  float clip;                   /* <= 0: none */
  bool corner_anchors;
  int64_t n;                    /* anchors, boxes per batch */
} hy_cuda_decode_args;

static inline hy_cuda_decode_args
hy_cuda_decode_plan (const hy_box_decode_params *p, const hy_shape *x)
{
  hy_cuda_decode_args a = {};
  for (int k = 0; k < 4; k++)
    a.std[k] = p->std[k];
  a.clip = p->clip;
  a.corner_anchors = p->format == HY_BOX_CORNER;
  a.n = x->dims[1];
  return a;
}

/* Box i (batch i / n, anchor i % n) into y[0..4). */
HY_CUDA_HD void
hy_cuda_decode_box (const hy_cuda_decode_args *a, const float *x,
    const float *anchors, int64_t i, float *y)
{
  const float *an = anchors + (i % a->n) * 4, *d = x + i * 4;
  float ax = an[0], ay = an[1], aw = an[2], ah = an[3];
  if (a->corner_anchors) {
    aw = hy_sub_rn (aw, ax);
    ah = hy_sub_rn (ah, ay);
    ax = hy_add_rn (ax, hy_mul_rn (aw, 0.5f));
    ay = hy_add_rn (ay, hy_mul_rn (ah, 0.5f));
  }
  const float ox = hy_add_rn (hy_mul_rn (hy_mul_rn (d[0],
              a->std[0]), aw), ax);
  const float oy = hy_add_rn (hy_mul_rn (hy_mul_rn (d[1],
              a->std[1]), ah), ay);
  float dw = hy_mul_rn (d[2], a->std[2]);
  float dh = hy_mul_rn (d[3], a->std[3]);
  if (a->clip > 0.0f) {
    dw = dw < a->clip ? dw : a->clip;
    dh = dh < a->clip ? dh : a->clip;
  }
  const float ow = hy_mul_rn (hy_mul_rn (expf (dw), aw), 0.5f);
  const float oh = hy_mul_rn (hy_mul_rn (expf (dh), ah), 0.5f);
  y[0] = hy_sub_rn (ox, ow);
  y[1] = hy_sub_rn (oy, oh);
  y[2] = hy_add_rn (ox, ow);
  y[3] = hy_add_rn (oy, oh);
}

#endif /* HY_CUDA_BOX_DECODE_CUH */
