/*
 * multibox-prior.cuh — _contrib_MultiBoxPrior on the GPU
 * (multibox-prior.cu), one thread per output coordinate; shared with
 * tests/cuda/emulate-multibox.cu.
 *
 * Each coordinate is worked out as the CPU kernel works out its anchor
 * (kernels/cpu/multibox-prior.c), in float and in its order, so anchors
 * are MXNet's to the last bit: the centre (x + offset)·step, the half
 * width size·H/W·√ratio/2 and the half height size/√ratio/2, the corner
 * as centre ∓ half size (single-rounded: no FMA folds the half size's
 * last step into it), clipped into [0, 1] with NaN kept.  The automatic
 * steps and the square roots are the host's, computed once per call.
 */
#ifndef HY_CUDA_MULTIBOX_PRIOR_CUH
#define HY_CUDA_MULTIBOX_PRIOR_CUH

#include <math.h>

#include "kernels/cuda/launch.cuh"
#include "hybrid-tensor.h"
#include "kernels/params/detection.h"

typedef struct hy_cuda_prior_args {
  int height, width;            /* of the feature map */
  int n_sizes;
  int64_t per_position;         /* anchors: n_sizes + n_ratios - 1 */
  float step_y, step_x, offset_y, offset_x;
  float sizes[HY_MULTIBOX_MAX_LIST];
  float root_ratios[HY_MULTIBOX_MAX_LIST];     /* √ratio */
  bool clip;
} hy_cuda_prior_args;

static inline hy_cuda_prior_args
hy_cuda_prior_plan (const hy_multibox_prior_params *p, const hy_shape *x)
{
  hy_cuda_prior_args a = {};
  a.height = (int) x->dims[2];
  a.width = (int) x->dims[3];
  a.n_sizes = p->n_sizes;
  a.per_position = p->n_sizes + p->n_ratios - 1;
  a.step_y = p->steps[0];
  a.step_x = p->steps[1];
  if (a.step_y <= 0.0f || a.step_x <= 0.0f) {
    a.step_y = 1.0f / a.height;
    a.step_x = 1.0f / a.width;
  }
  a.offset_y = p->offsets[0];
  a.offset_x = p->offsets[1];
  for (int i = 0; i < p->n_sizes; i++)
    a.sizes[i] = p->sizes[i];
  for (int j = 0; j < p->n_ratios; j++)
    a.root_ratios[j] = sqrtf (p->ratios[j]);
  a.clip = p->clip;
  return a;
}

/* Output element i of (1, H·W·per_position, 4). */
HY_CUDA_HD float
hy_cuda_prior_one (const hy_cuda_prior_args *a, int64_t i)
{
  const int coord = (int) (i % 4);
  const int64_t k = i / 4 % a->per_position;
  const int64_t position = i / (4 * a->per_position);
  const int r = (int) (position / a->width), c = (int) (position % a->width);
  /* Every size at the first ratio, then the first size at the others. */
  float size, root;
  if (k < a->n_sizes) {
    size = a->sizes[k];
    root = a->root_ratios[0];
  } else {
    size = a->sizes[0];
    root = a->root_ratios[k - a->n_sizes + 1];
  }
  float v;
  if (coord % 2 == 0) {
    const float cx = (c + a->offset_x) * a->step_x;
    const float hw = size * a->height / a->width * root / 2;
    v = coord == 0 ? hy_sub_rn (cx, hw) : hy_add_rn (cx, hw);
  } else {
    const float cy = (r + a->offset_y) * a->step_y;
    const float hh = size / root / 2;
    v = coord == 1 ? hy_sub_rn (cy, hh) : hy_add_rn (cy, hh);
  }
  if (a->clip)
    v = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
  return v;
}

#endif /* HY_CUDA_MULTIBOX_PRIOR_CUH */
