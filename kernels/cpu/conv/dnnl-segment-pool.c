/*
 * dnnl-segment-pool.c — the pooling of a bf16 segment (dnnl-segment.h):
 * ResNet's 3×3 max pooling after its first layer, and the global average
 * pooling that ends its convolutions, reading nhwc (bf16, or fp32 where
 * the segment holds a residual so: dnnl-segment.c).
 *
 * Our own loops, not oneDNN's pooling: along nhwc's channels they are
 * plain vector loops, and here one call can write either bf16 nhwc (the
 * segment goes on) or fp32 planes (the global pooling, read by the
 * classifier), which oneDNN's pooling does not do in one primitive.
 * Max pooling is exact in bf16 (the largest of bf16 values is one of
 * them); the average sums in fp32.
 */
#include <math.h>
#include <string.h>

#include "hybrid.h"
#include "kernels/cpu/conv/dnnl-segment.h"
#include "kernels/cpu/cpu-features.h"
#include "kernels/params/nn.h"

/* Channels per step: one accumulator row stays in registers / L1. */
#define CHUNK 64

typedef struct segment_pool {
  hy_pool_params p;
  bool out_private;             /* nhwc out, else fp32 planes */
  bool out_wide, in_wide;       /* nhwc in fp32 rather than bf16 */
  int64_t batch, channels, h, w, oh, ow;
} segment_pool;

bool
hy_segment_pool_takes (const hy_call_shape *call)
{
  const hy_pool_params *p = call->params;
  if (call->op != HY_OP_POOLING || !call->in0 || !call->out0
      || call->in0->ndim != 4 || call->out0->ndim != 4
      || hy_shape_numel (call->out0) == 0)
    return false;
  if (p->global_pool)
    return p->pool_type == HY_POOL_MAX || p->pool_type == HY_POOL_AVG;
  return p->pool_type == HY_POOL_MAX && p->n_spatial == 2;
}

void *
hy_segment_pool_new (const hy_call *call, GError **error)
{
  const hy_shape *x = &call->in[0]->shape, *y = &call->out[0]->shape;
  const hy_call_shape s = { call->op, call->params, x, y, FALSE, NULL };
  if (!hy_segment_pool_takes (&s) || !(call->private_inputs & 1u)) {
    g_set_error (error, HY_ERROR, HY_ERROR_UNSUPPORTED,
        "bf16 segment: pooling of this kind reads fp32 planes only");
    return NULL;
  }
  segment_pool *sp = g_new0 (segment_pool, 1);
  sp->p = *(const hy_pool_params *) call->params;
  sp->out_private = call->private_outputs & 1u;
  sp->out_wide = call->private_wide_outputs & 1u;
  sp->in_wide = call->private_wide_inputs & 1u;
  sp->batch = x->dims[0];
  sp->channels = x->dims[1];
  sp->h = x->dims[2];
  sp->w = x->dims[3];
  sp->oh = y->dims[2];
  sp->ow = y->dims[3];
  return sp;
}

void
hy_segment_pool_free (void *pool)
{
  g_free (pool);
}

typedef struct pool_job {
  const segment_pool *sp;
  const void *x;
  void *y;
} pool_job;

/* Output value (image, channel c, position o) of `acc`. */
static inline void
store (const pool_job *j, int64_t image, int64_t c0, int64_t n, int64_t o,
    const float *acc)
{
  const segment_pool *sp = j->sp;
  const int64_t ohw = sp->oh * sp->ow;
  if (sp->out_private && sp->out_wide) {
    memcpy ((float *) j->y + (image * ohw + o) * sp->channels + c0, acc,
        (size_t) n * sizeof (float));
  } else if (sp->out_private) {
    uint16_t *y = (uint16_t *) j->y + (image * ohw + o) * sp->channels + c0;
    for (int64_t c = 0; c < n; c++)
      y[c] = hy_bf16_from_float (acc[c]);
  } else {
    float *y = (float *) j->y + (image * sp->channels + c0) * ohw + o;
    for (int64_t c = 0; c < n; c++)
      y[c * ohw] = acc[c];
  }
}

/* acc = max (acc, v) over n channels of bf16 (or fp32: wide) at v: a
 * plain vector loop (maxps), the AVX-512 build picked where it runs.
 * NaN is not propagated: bf16 runs skip NaN inputs (docs/PRECISION.md). */
HY_CPU_VECTOR_CLONES static void
max_into (float *restrict acc, const void *restrict v, int64_t n, bool wide)
{
  if (wide) {
    const float *f = v;
    for (int64_t c = 0; c < n; c++)
      acc[c] = f[c] > acc[c] ? f[c] : acc[c];
    return;
  }
  const uint16_t *h = v;
  for (int64_t c = 0; c < n; c++) {
    const uint32_t u = (uint32_t) h[c] << 16;
    float f;
    memcpy (&f, &u, sizeof f);
    acc[c] = f > acc[c] ? f : acc[c];
  }
}

/* acc += v over n channels, as max_into. */
HY_CPU_VECTOR_CLONES static void
add_into (float *restrict acc, const void *restrict v, int64_t n, bool wide)
{
  if (wide) {
    const float *f = v;
    for (int64_t c = 0; c < n; c++)
      acc[c] += f[c];
    return;
  }
  const uint16_t *h = v;
  for (int64_t c = 0; c < n; c++) {
    const uint32_t u = (uint32_t) h[c] << 16;
    float f;
    memcpy (&f, &u, sizeof f);
    acc[c] += f;
  }
}

/* Input element i (nhwc, the whole batch) as a pointer. */
static inline const void *
at (const pool_job *j, int64_t i)
{
  return j->sp->in_wide ? (const void *) ((const float *) j->x + i)
      : (const void *) ((const uint16_t *) j->x + i);
}

/* Rows [begin, end) of (image, output row). */
static void
max_rows (void *arg, int64_t begin, int64_t end, int thread)
{
  const pool_job *j = arg;
  const segment_pool *sp = j->sp;
  const hy_pool_params *p = &sp->p;
  const int64_t kh = p->global_pool ? sp->h : p->kernel[0];
  const int64_t kw = p->global_pool ? sp->w : p->kernel[1];
  const int64_t sh = p->global_pool ? 1 : p->stride[0];
  const int64_t sw = p->global_pool ? 1 : p->stride[1];
  const int64_t ph = p->global_pool ? 0 : p->pad[0];
  const int64_t pw = p->global_pool ? 0 : p->pad[1];
  float acc[CHUNK];
  for (int64_t r = begin; r < end; r++) {
    const int64_t image = r / sp->oh, oy = r % sp->oh;
    const int64_t y0 = MAX (oy * sh - ph, 0);
    const int64_t y1 = MIN (oy * sh - ph + kh, sp->h);
    const int64_t x = image * sp->h * sp->w * sp->channels;
    for (int64_t ox = 0; ox < sp->ow; ox++) {
      const int64_t x0 = MAX (ox * sw - pw, 0);
      const int64_t x1 = MIN (ox * sw - pw + kw, sp->w);
      for (int64_t c0 = 0; c0 < sp->channels; c0 += CHUNK) {
        const int64_t n = MIN (CHUNK, sp->channels - c0);
        for (int64_t c = 0; c < n; c++)
          acc[c] = -INFINITY;
        for (int64_t yy = y0; yy < y1; yy++)
          for (int64_t xx = x0; xx < x1; xx++)
            max_into (acc, at (j, x + (yy * sp->w + xx) * sp->channels + c0),
                n, sp->in_wide);
        store (j, image, c0, n, oy * sp->ow + ox, acc);
      }
    }
  }
}

/* Images [begin, end): the mean of each channel over the map. */
static void
global_average (void *arg, int64_t begin, int64_t end, int thread)
{
  const pool_job *j = arg;
  const segment_pool *sp = j->sp;
  const int64_t hw = sp->h * sp->w;
  float acc[CHUNK];
  for (int64_t image = begin; image < end; image++) {
    const int64_t x = image * hw * sp->channels;
    for (int64_t c0 = 0; c0 < sp->channels; c0 += CHUNK) {
      const int64_t n = MIN (CHUNK, sp->channels - c0);
      for (int64_t c = 0; c < n; c++)
        acc[c] = 0.0f;
      for (int64_t i = 0; i < hw; i++)
        add_into (acc, at (j, x + i * sp->channels + c0), n, sp->in_wide);
      for (int64_t c = 0; c < n; c++)
        acc[c] /= (float) hw;
      store (j, image, c0, n, 0, acc);
    }
  }
}

void
hy_cpu_segment_pool (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const segment_pool *sp = params;
  pool_job j = { sp, in[0]->data, out[0]->data };
  if (sp->p.global_pool && sp->p.pool_type == HY_POOL_AVG)
    hy_cpu_parallel_for (ctx, sp->batch, hy_cpu_grain (sp->h * sp->w
            * sp->channels), global_average, &j);
  else
    hy_cpu_parallel_for (ctx, sp->batch * sp->oh, hy_cpu_grain (sp->ow
            * sp->channels * 4), max_rows, &j);
}
