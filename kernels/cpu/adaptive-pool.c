/*
 * adaptive-pool.c — CPU kernel of _contrib_AdaptiveAvgPooling2D.
 *
 * Output cell (i, j) of an (oh, ow) map averages the input window rows
 * [floor(i·H / oh), ceil((i + 1)·H / oh)) by the matching columns, the
 * bounds computed in float and the sum taken in float in row order, then
 * divided by the width and the height, as MXNet does.  Windows of
 * neighbouring cells overlap when the sizes do not divide.
 */
#include <math.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/vision.h"

void hy_cpu_adaptive_avg_pool (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

static int64_t
window_start (int64_t i, int64_t out, int64_t in)
{
  return (int64_t) floorf ((float) (i * in) / (float) out);
}

static int64_t
window_end (int64_t i, int64_t out, int64_t in)
{
  return (int64_t) ceilf ((float) ((i + 1) * in) / (float) out);
}

typedef struct apool_job {
  const float *x;
  float *y;
  int64_t ih, iw, oh, ow;
} apool_job;

static void
apool_planes (void *arg, int64_t begin, int64_t end, int thread)
{
  const apool_job *j = arg;
  for (int64_t c = begin; c < end; c++) {
    const float *x = j->x + c * j->ih * j->iw;
    float *y = j->y + c * j->oh * j->ow;
    for (int64_t oh = 0; oh < j->oh; oh++) {
      int64_t h0 = window_start (oh, j->oh, j->ih);
      int64_t kh = window_end (oh, j->oh, j->ih) - h0;
      for (int64_t ow = 0; ow < j->ow; ow++) {
        int64_t w0 = window_start (ow, j->ow, j->iw);
        int64_t kw = window_end (ow, j->ow, j->iw) - w0;
        float sum = 0.0f;
        for (int64_t h = 0; h < kh; h++)
          for (int64_t w = 0; w < kw; w++)
            sum += x[(h0 + h) * j->iw + w0 + w];
        y[oh * j->ow + ow] = sum / (float) kw / (float) kh;
      }
    }
  }
}

void
hy_cpu_adaptive_avg_pool (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_shape *is = &in[0]->shape, *os = &out[0]->shape;
  apool_job j = {
    .x = in[0]->data, .y = out[0]->data,
    .ih = is->dims[2], .iw = is->dims[3],
    .oh = os->dims[2], .ow = os->dims[3],
  };
  if (hy_shape_numel (os) == 0)
    return;
  hy_cpu_parallel_for (ctx, is->dims[0] * is->dims[1],
      hy_cpu_grain (j.ih * j.iw + j.oh * j.ow), apool_planes, &j);
}
