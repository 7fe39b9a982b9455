/*
 * tile.c — CPU kernels of tile, repeat and _arange.
 */
#include <string.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/params/shape.h"

/* Referenced weakly by cpu-backend.c through ops.def; declared here so the
 * definitions have prototypes. */
void hy_cpu_tile (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_repeat (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_arange (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

static void
fill (float *restrict dst, float v, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    dst[i] = v;
}

/* ---- tile --------------------------------------------------------------- */

/* The input promoted to the output's rank: dims[k] repeated reps[k] times;
 * out_block[k] is the size of the tiled sub-tensor from axis k inward. */
typedef struct tile_plan {
  int nd;
  int64_t dims[HY_MAX_DIMS];
  int64_t reps[HY_MAX_DIMS];
  int64_t in_stride[HY_MAX_DIMS];
  int64_t out_block[HY_MAX_DIMS + 1];
} tile_plan;

/* Tiles axis k and everything inside it: first each input slice into its
 * place, then the finished block copied reps-1 more times, so every copy
 * is a memcpy of a contiguous run. */
static void
tile_axis (const tile_plan *t, int k, const float *src, float *dst)
{
  int64_t n = t->dims[k], reps = t->reps[k];
  if (k == t->nd - 1) {
    if (n == 1) {
      fill (dst, src[0], reps);
      return;
    }
    for (int64_t r = 0; r < reps; r++)
      memcpy (dst + r * n, src, (size_t) n * sizeof (float));
    return;
  }
  int64_t sub = t->out_block[k + 1];
  for (int64_t i = 0; i < n; i++)
    tile_axis (t, k + 1, src + i * t->in_stride[k], dst + i * sub);
  int64_t once = n * sub;
  for (int64_t r = 1; r < reps; r++)
    memcpy (dst + r * once, dst, (size_t) once * sizeof (float));
}

void
hy_cpu_tile (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_tile_params *p = params;
  const hy_shape *s = &in[0]->shape;
  int64_t numel = hy_shape_numel (&out[0]->shape);
  if (numel == 0)
    return;
  tile_plan t = { .nd = out[0]->shape.ndim };
  if (t.nd == 0) {
    out[0]->data[0] = in[0]->data[0];
    return;
  }
  for (int i = 0; i < t.nd; i++) {
    int si = s->ndim - t.nd + i, ri = p->n_reps - t.nd + i;
    t.dims[i] = si >= 0 ? s->dims[si] : 1;
    t.reps[i] = ri >= 0 ? p->reps[ri] : 1;
  }
  t.out_block[t.nd] = 1;
  int64_t st = 1;
  for (int i = t.nd - 1; i >= 0; i--) {
    t.in_stride[i] = st;
    st *= t.dims[i];
    t.out_block[i] = t.out_block[i + 1] * t.dims[i] * t.reps[i];
  }
  tile_axis (&t, 0, in[0]->data, out[0]->data);
}

/* ---- repeat ------------------------------------------------------------- */

void
hy_cpu_repeat (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_repeat_params *p = params;
  const hy_shape *s = &in[0]->shape;
  if (hy_shape_numel (&out[0]->shape) == 0)
    return;
  /* Without an axis, repeat acts on the flattened input. */
  int64_t outer = 1, len = hy_shape_numel (s), inner = 1;
  if (!p->axis_none) {
    int axis = p->axis < 0 ? p->axis + s->ndim : p->axis;
    len = s->dims[axis];
    for (int i = 0; i < axis; i++)
      outer *= s->dims[i];
    for (int i = axis + 1; i < s->ndim; i++)
      inner *= s->dims[i];
  }
  const float *src = in[0]->data;
  float *dst = out[0]->data;
  int64_t reps = p->repeats, rows = outer * len;
  if (inner == 1) {
    for (int64_t i = 0; i < rows; i++, dst += reps)
      fill (dst, src[i], reps);
    return;
  }
  for (int64_t i = 0; i < rows; i++, src += inner)
    for (int64_t r = 0; r < reps; r++, dst += inner)
      memcpy (dst, src, (size_t) inner * sizeof (float));
}

/* ---- _arange ------------------------------------------------------------ */

void
hy_cpu_arange (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_arange_params *p = params;
  float *dst = out[0]->data;
  int64_t n = hy_shape_numel (&out[0]->shape), rep = p->repeat;
  /* MXNet computes start + (i / repeat) * step in the output dtype. */
  if (p->integral) {
    int64_t start = (int64_t) p->start, step = (int64_t) p->step;
    for (int64_t i = 0; i < n; i++)
      dst[i] = (float) (start + (i / rep) * step);
  } else if (p->dtype == HY_DTYPE_FLOAT64) {
    for (int64_t i = 0; i < n; i++)
      dst[i] = (float) (p->start + (double) (i / rep) * p->step);
  } else {
    float start = (float) p->start, step = (float) p->step;
    for (int64_t i = 0; i < n; i++)
      dst[i] = start + (float) (i / rep) * step;
  }
}
