/*
 * box-decode.c — CPU kernel of _contrib_box_decode: SSD's regression
 * offsets applied to its anchors, giving corner boxes.
 *
 * The arithmetic follows MXNet's order (offsets scaled by std, then by the
 * anchor size; exp after the optional clip) so that results agree to
 * rounding.  A NaN offset under a clip becomes the clip, as in MXNet,
 * whose `dw < clip ? dw : clip` sends NaN to the second branch.
 */
#include <math.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/detection.h"

void hy_cpu_box_decode (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

typedef struct decode_job {
  const hy_box_decode_params *p;
  const float *x, *anchors;
  float *y;
  int64_t n;                    /* boxes per batch = anchors */
} decode_job;

static void
decode_boxes (void *arg, int64_t begin, int64_t end, int thread)
{
  const decode_job *j = arg;
  const hy_box_decode_params *p = j->p;
  bool clip = p->clip > 0.0f;
  for (int64_t i = begin; i < end; i++) {
    const float *a = j->anchors + (i % j->n) * 4, *x = j->x + i * 4;
    float ax = a[0], ay = a[1], aw = a[2], ah = a[3];
    if (p->format == HY_BOX_CORNER) {
      aw = aw - ax;
      ah = ah - ay;
      ax = ax + aw * 0.5f;
      ay = ay + ah * 0.5f;
    }
    float ox = x[0] * p->std[0] * aw + ax;
    float oy = x[1] * p->std[1] * ah + ay;
    float dw = x[2] * p->std[2];
    float dh = x[3] * p->std[3];
    if (clip) {
      dw = dw < p->clip ? dw : p->clip;
      dh = dh < p->clip ? dh : p->clip;
    }
    float ow = expf (dw) * aw * 0.5f;
    float oh = expf (dh) * ah * 0.5f;
    float *y = j->y + i * 4;
    y[0] = ox - ow;
    y[1] = oy - oh;
    y[2] = ox + ow;
    y[3] = oy + oh;
  }
}

void
hy_cpu_box_decode (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_shape *s = &in[0]->shape;
  decode_job j = { params, in[0]->data, in[1]->data, out[0]->data,
    s->dims[1] };
  int64_t boxes = s->dims[0] * s->dims[1];
  if (boxes == 0)
    return;
  hy_cpu_parallel_for (ctx, boxes, hy_cpu_grain (16), decode_boxes, &j);
}
