/*
 * multibox-prior.c — CPU kernel of _contrib_MultiBoxPrior: the anchors of
 * one feature map, the same for every image of the batch.
 *
 * The arithmetic is MXNet 1.9.1's, in float and in its order (the centre
 * as (x + offset)·step, the half width as size·H/W·√ratio/2 left to
 * right), so that anchors agree with MXNet's to the last bit; they feed
 * NMS decisions downstream.
 */
#include <math.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/detection.h"

void hy_cpu_multibox_prior (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

/* One anchor of half sizes (hw, hh) around (cx, cy), as corners. */
static float *
put_anchor (float *y, float cx, float cy, float hw, float hh)
{
  y[0] = cx - hw;
  y[1] = cy - hh;
  y[2] = cx + hw;
  y[3] = cy + hh;
  return y + 4;
}

/* MXNet's clip: NaN stays NaN. */
static float
clip_unit (float v)
{
  return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
}

void
hy_cpu_multibox_prior (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_multibox_prior_params *p = params;
  const int height = (int) in[0]->shape.dims[2];
  const int width = (int) in[0]->shape.dims[3];
  float step_y = p->steps[0], step_x = p->steps[1];
  if (step_y <= 0.0f || step_x <= 0.0f) {
    step_y = 1.0f / height;
    step_x = 1.0f / width;
  }
  float *y = out[0]->data;
  const float first_ratio = sqrtf (p->ratios[0]);
  for (int r = 0; r < height; r++) {
    float cy = (r + p->offsets[0]) * step_y;
    for (int c = 0; c < width; c++) {
      float cx = (c + p->offsets[1]) * step_x;
      for (int i = 0; i < p->n_sizes; i++) {
        float size = p->sizes[i];
        y = put_anchor (y, cx, cy, size * height / width * first_ratio / 2,
            size / first_ratio / 2);
      }
      for (int j = 1; j < p->n_ratios; j++) {
        float ratio = sqrtf (p->ratios[j]), size = p->sizes[0];
        y = put_anchor (y, cx, cy, size * height / width * ratio / 2,
            size / ratio / 2);
      }
    }
  }
  if (p->clip) {
    int64_t n = hy_shape_numel (&out[0]->shape);
    for (int64_t i = 0; i < n; i++)
      out[0]->data[i] = clip_unit (out[0]->data[i]);
  }
}
