/*
 * l2-norm.c — CPU kernel of L2Normalization (SSD's conv4_3 scaling).
 *
 * The input is viewed as (n, c, s): s is everything after axis 1 (1 for a
 * 2-D input).  Each output element is divided by the root of its group's
 * sum of squares plus eps, a group being one sample (instance), one
 * sample's column across channels (channel) or one channel's plane
 * (spatial).  Sums are taken in double: the norms of a 512-channel map
 * then match MXNet's float sums to well within rounding.
 */
#include <math.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/nn.h"

void hy_cpu_l2_normalization (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

typedef struct l2_job {
  const float *x;
  float *y;
  int64_t c, s;
  float eps;
  hy_l2_norm_mode mode;
} l2_job;

/* Sample-wise (instance) and plane-wise (spatial) groups are contiguous
 * runs of `len` floats. */
static void
l2_runs (const float *x, float *y, int64_t len, float eps)
{
  double sum = 0.0;
  for (int64_t i = 0; i < len; i++)
    sum += (double) x[i] * x[i];
  float norm = sqrtf ((float) sum + eps);
  for (int64_t i = 0; i < len; i++)
    y[i] = x[i] / norm;
}

static void
l2_groups (void *arg, int64_t begin, int64_t end, int thread)
{
  const l2_job *j = arg;
  if (j->mode == HY_L2_NORM_CHANNEL) {
    /* Group g is sample g / s, position g % s: c floats s apart. */
    for (int64_t g = begin; g < end; g++) {
      int64_t base = g / j->s * j->c * j->s + g % j->s;
      double sum = 0.0;
      for (int64_t k = 0; k < j->c; k++) {
        float v = j->x[base + k * j->s];
        sum += (double) v * v;
      }
      float norm = sqrtf ((float) sum + j->eps);
      for (int64_t k = 0; k < j->c; k++)
        j->y[base + k * j->s] = j->x[base + k * j->s] / norm;
    }
    return;
  }
  int64_t len = j->mode == HY_L2_NORM_INSTANCE ? j->c * j->s : j->s;
  for (int64_t g = begin; g < end; g++)
    l2_runs (j->x + g * len, j->y + g * len, len, j->eps);
}

void
hy_cpu_l2_normalization (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_l2_normalization_params *p = params;
  const hy_shape *sh = &in[0]->shape;
  if (hy_shape_numel (sh) == 0)
    return;
  int64_t n = sh->dims[0], c = sh->ndim > 1 ? sh->dims[1] : 1, s = 1;
  for (int i = 2; i < sh->ndim; i++)
    s *= sh->dims[i];
  l2_job j = { in[0]->data, out[0]->data, c, s, p->eps, p->mode };
  int64_t groups, per_group;
  switch (p->mode) {
    case HY_L2_NORM_CHANNEL:
      groups = n * s;
      per_group = c;
      break;
    case HY_L2_NORM_SPATIAL:
      groups = n * c;
      per_group = s;
      break;
    default:
      groups = n;
      per_group = c * s;
      break;
  }
  hy_cpu_parallel_for (ctx, groups, hy_cpu_grain (2 * per_group), l2_groups,
      &j);
}
