/*
 * bilinear-resize.c — CPU kernel of _contrib_BilinearResize2D.
 *
 * Each output pixel blends the 2×2 input pixels around its source
 * position, computed as MXNet computes it (in float, the half-pixel form
 * in double then rounded) so that weights match it bit for bit; the
 * right and bottom neighbours fall back to the pixel itself on the last
 * row and column.  The source taps and weights of a row or column are
 * the same for every plane: they are worked out once per call.
 */
#include <string.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/vision.h"

void hy_cpu_bilinear_resize (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

typedef struct tap {
  int64_t i0;                   /* first source index */
  int64_t step;                 /* 1, or 0 at the last index */
  float l0, l1;                 /* weights of i0 and i0 + step */
} tap;

static float
source_scale (int64_t in, int64_t out, bool align_corners)
{
  if (out <= 1)
    return 0.0f;
  return align_corners ? (float) (in - 1) / (float) (out - 1)
      : (float) in / (float) out;
}

static void
make_taps (tap *t, int64_t in, int64_t out, bool align_corners)
{
  const float scale = source_scale (in, out, align_corners);
  for (int64_t i = 0; i < out; i++) {
    float r;
    if (align_corners)
      r = scale * (float) i;
    else {
      r = (float) ((double) scale * ((double) i + 0.5) - 0.5);
      if (r < 0)
        r = 0;
    }
    int64_t i0 = (int64_t) r;
    t[i].i0 = i0;
    t[i].step = i0 < in - 1 ? 1 : 0;
    t[i].l1 = r - (float) i0;
    t[i].l0 = 1.0f - t[i].l1;
  }
}

typedef struct resize_job {
  const float *x;
  float *y;
  int64_t ih, iw, oh, ow;
  const tap *th, *tw;
} resize_job;

static void
resize_planes (void *arg, int64_t begin, int64_t end, int thread)
{
  const resize_job *j = arg;
  for (int64_t c = begin; c < end; c++) {
    const float *x = j->x + c * j->ih * j->iw;
    float *y = j->y + c * j->oh * j->ow;
    for (int64_t h = 0; h < j->oh; h++) {
      const tap *th = &j->th[h];
      const float *r0 = x + th->i0 * j->iw;
      const float *r1 = r0 + th->step * j->iw;
      for (int64_t w = 0; w < j->ow; w++) {
        const tap *tw = &j->tw[w];
        const int64_t a = tw->i0, b = tw->i0 + tw->step;
        y[h * j->ow + w] = th->l0 * (tw->l0 * r0[a] + tw->l1 * r0[b])
            + th->l1 * (tw->l0 * r1[a] + tw->l1 * r1[b]);
      }
    }
  }
}

void
hy_cpu_bilinear_resize (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_bilinear_resize_params *p = params;
  const hy_shape *is = &in[0]->shape, *os = &out[0]->shape;
  const int64_t planes = is->dims[0] * is->dims[1];
  resize_job j = {
    .x = in[0]->data, .y = out[0]->data,
    .ih = is->dims[2], .iw = is->dims[3],
    .oh = os->dims[2], .ow = os->dims[3],
  };
  if (hy_shape_numel (os) == 0)
    return;
  if (j.ih == j.oh && j.iw == j.ow) {
    if (j.y != j.x)
      memcpy (j.y, j.x, (size_t) hy_shape_numel (os) * sizeof (float));
    return;
  }
  if (hy_shape_numel (is) == 0)
    return;
  tap *taps = hy_cpu_workspace (ctx, (size_t) (j.oh + j.ow) * sizeof (tap));
  make_taps (taps, j.ih, j.oh, p->align_corners);
  make_taps (taps + j.oh, j.iw, j.ow, p->align_corners);
  j.th = taps;
  j.tw = taps + j.oh;
  hy_cpu_parallel_for (ctx, planes, hy_cpu_grain (8 * j.oh * j.ow),
      resize_planes, &j);
}
