/*
 * deconv.c — CPU kernel of Deconvolution (1-D and 2-D).
 *
 * Per sample and group, one GEMM gives every (filter, ky, kx) tap's
 * contribution at every input position: col = Wᵍᵀ · xᵍ, with Wᵍ the
 * group's (C/g, F/g·kh·kw) weights and xᵍ its (C/g, H·W) input.  Each
 * output pixel then gathers the taps that land on it, as MXNet's
 * col2patch does: along an axis, padded position Y takes input rows py
 * from py_min to min(Y / s + 1, H) in steps of the dilation d, each with
 * tap (Y − py·s) / d, where py_min is Y mod d while Y is within the
 * dilated kernel's extent and ceil((Y − extent + 1) / s) after.  Without
 * dilation that is exactly the transposed convolution; with it, it is
 * what MXNet 1.9.1 computes (taps whose offset d does not divide are
 * rounded down, others skipped), which is the reference here.  Sums run
 * in MXNet's order (rows, then columns), then the bias is added.  A 1-D
 * deconvolution is the 2-D one with a height of 1.
 */
#include <string.h>

#include "kernels/cpu/conv/blas.h"
#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/nn.h"

void hy_cpu_deconvolution (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

/* One axis: for output position o (padded position o + pad), input
 * positions [lo, hi) in steps of dil, the tap of each computed on the
 * fly. */
typedef struct axis_range {
  int64_t lo, hi;
} axis_range;

typedef struct axis {
  int64_t in, out, k, s, d, pad;
  const axis_range *r;
} axis;

static void
make_ranges (axis_range *r, const axis *a)
{
  const int64_t extent = a->d * (a->k - 1) + 1;
  for (int64_t o = 0; o < a->out; o++) {
    const int64_t y = o + a->pad;
    int64_t lo = y < extent ? y % a->d : (y - extent + a->s) / a->s;
    int64_t hi = (y + a->s) / a->s;
    if (hi > a->in)
      hi = a->in;
    r[o] = (axis_range) { lo, hi };
  }
}

typedef struct col2im_job {
  const float *col;             /* (fg, kh, kw, ih, iw) */
  float *y;                     /* the group's first output plane */
  const float *bias;            /* the group's first bias, or NULL */
  axis h, w;
} col2im_job;

static void
col2im_planes (void *arg, int64_t begin, int64_t end, int thread)
{
  const col2im_job *j = arg;
  const axis *h = &j->h, *w = &j->w;
  const int64_t in_plane = h->in * w->in;
  for (int64_t f = begin; f < end; f++) {
    const float *col = j->col + f * h->k * w->k * in_plane;
    float *y = j->y + f * h->out * w->out;
    const float b = j->bias ? j->bias[f] : 0.0f;
    for (int64_t oy = 0; oy < h->out; oy++) {
      const axis_range ry = h->r[oy];
      const int64_t py_pos = oy + h->pad;
      for (int64_t ox = 0; ox < w->out; ox++) {
        const axis_range rx = w->r[ox];
        const int64_t px_pos = ox + w->pad;
        float sum = 0.0f;
        for (int64_t py = ry.lo; py < ry.hi; py += h->d) {
          const int64_t ky = (py_pos - py * h->s) / h->d;
          const float *row = col + (ky * w->k) * in_plane + py * w->in;
          for (int64_t px = rx.lo; px < rx.hi; px += w->d) {
            const int64_t kx = (px_pos - px * w->s) / w->d;
            sum += row[kx * in_plane + px];
          }
        }
        y[oy * w->out + ox] = j->bias ? sum + b : sum;
      }
    }
  }
}

void
hy_cpu_deconvolution (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_deconv_params *p = params;
  const hy_shape *xs = &in[0]->shape, *ys = &out[0]->shape;
  const int two_d = p->n_spatial == 2;
  const int ax = two_d ? 1 : 0;     /* the kernel index of the x axis */
  int64_t adj;
  axis h = { .in = 1, .out = 1, .k = 1, .s = 1, .d = 1 };
  axis w = {
    .in = xs->dims[2 + ax], .out = ys->dims[2 + ax], .k = p->kernel[ax],
    .s = p->stride[ax], .d = p->dilate[ax],
  };
  hy_deconv_pads (p, ax, w.in, &w.pad, &adj);
  if (two_d) {
    h = (axis) {
      .in = xs->dims[2], .out = ys->dims[2], .k = p->kernel[0],
      .s = p->stride[0], .d = p->dilate[0],
    };
    hy_deconv_pads (p, 0, h.in, &h.pad, &adj);
  }

  const int64_t batch = xs->dims[0], channels = xs->dims[1];
  const int64_t groups = p->num_group, cg = channels / groups;
  const int64_t fg = p->num_filter / groups, taps = h.k * w.k;
  const int64_t in_plane = h.in * w.in, out_plane = h.out * w.out;
  if (hy_shape_numel (ys) == 0)
    return;
  /* One request for everything: the ranges, then the 64-byte aligned
   * columns. */
  size_t range_bytes = (size_t) (h.out + w.out) * sizeof (axis_range);
  range_bytes = (range_bytes + 63) & ~(size_t) 63;
  char *ws = hy_cpu_workspace (ctx,
      range_bytes + (size_t) (fg * taps * in_plane) * sizeof (float));
  axis_range *ranges = (axis_range *) ws;
  float *col = (float *) (ws + range_bytes);
  make_ranges (ranges, &h);
  make_ranges (ranges + h.out, &w);
  h.r = ranges;
  w.r = ranges + h.out;

  const float *x = in[0]->data, *wt = in[1]->data;
  const float *bias = p->no_bias ? NULL : in[2]->data;
  float *y = out[0]->data;
  for (int64_t n = 0; n < batch; n++) {
    for (int64_t gi = 0; gi < groups; gi++) {
      /* Wᵍ is stored (cg, fg·taps): transposed, it is the (m, k) A. */
      hy_sgemm (ctx, true, false, fg * taps, in_plane, cg,
          wt + gi * cg * fg * taps, x + (n * channels + gi * cg) * in_plane,
          0.0f, col);
      col2im_job j = {
        .col = col,
        .y = y + (n * p->num_filter + gi * fg) * out_plane,
        .bias = bias ? bias + gi * fg : NULL,
        .h = h, .w = w,
      };
      hy_cpu_parallel_for (ctx, fg, hy_cpu_grain (taps * in_plane),
          col2im_planes, &j);
    }
  }
}
