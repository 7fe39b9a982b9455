/*
 * pad.c — CPU kernel of Pad.
 *
 * Row by row of the output (every axis but the last): the row's source
 * row comes from hy_pad_source on each padded axis (none: the row is the
 * constant), and within it each position's source likewise, the middle
 * run copied as it is.  The batch and channel axes are never padded.
 */
#include <string.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/shape.h"

void hy_cpu_pad (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

typedef struct pad_job {
  const hy_pad_params *p;
  const hy_shape *xs, *ys;
  const float *x;
  float *y;
} pad_job;

static void
pad_rows (void *arg, int64_t begin, int64_t end, int thread)
{
  const pad_job *j = arg;
  const hy_pad_params *p = j->p;
  const int nd = j->ys->ndim, last = nd - 1;
  const int64_t ow = j->ys->dims[last], iw = j->xs->dims[last];
  const int64_t before = p->before[last];
  for (int64_t r = begin; r < end; r++) {
    float *y = j->y + r * ow;
    /* The source row: output row r's index on each axis, outermost
     * first, mapped to the input's. */
    int64_t rest = r, src = 0, stride = 1;
    bool constant = false;
    for (int d = last - 1; d >= 0; d--) {
      const int64_t o = rest % j->ys->dims[d];
      rest /= j->ys->dims[d];
      const int64_t i = d < 2 ? o
          : hy_pad_source (p->mode, o, p->before[d], j->xs->dims[d]);
      constant |= i < 0;
      src += i * stride;
      stride *= j->xs->dims[d];
    }
    if (constant) {
      for (int64_t c = 0; c < ow; c++)
        y[c] = p->value;
      continue;
    }
    const float *x = j->x + src * iw;
    /* Positions [lo, hi) read x[c - before] as they are. */
    const int64_t lo = CLAMP (before, 0, ow);
    const int64_t hi = CLAMP (before + iw, lo, ow);
    for (int64_t c = 0; c < lo; c++) {
      const int64_t i = hy_pad_source (p->mode, c, before, iw);
      y[c] = i < 0 ? p->value : x[i];
    }
    if (hi > lo)
      memcpy (y + lo, x + (lo - before), (size_t) (hi - lo) * sizeof *y);
    for (int64_t c = hi; c < ow; c++) {
      const int64_t i = hy_pad_source (p->mode, c, before, iw);
      y[c] = i < 0 ? p->value : x[i];
    }
  }
}

void
hy_cpu_pad (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_shape *ys = &out[0]->shape;
  const int64_t ow = ys->dims[ys->ndim - 1];
  if (hy_shape_numel (ys) == 0)
    return;
  pad_job j = {
    .p = params, .xs = &in[0]->shape, .ys = ys, .x = in[0]->data,
    .y = out[0]->data,
  };
  hy_cpu_parallel_for (ctx, hy_shape_numel (ys) / ow, hy_cpu_grain (ow),
      pad_rows, &j);
}
