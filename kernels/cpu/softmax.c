/*
 * softmax.c — CPU kernel of softmax, log_softmax, SoftmaxActivation and
 * SoftmaxOutput (see core/ops/softmax.c for which span each normalises).
 *
 * The input is read as (outer, n, inner) with the softmax running over n.
 * Rows (inner = 1: the last axis, SoftmaxOutput's flattened default) are
 * done one at a time; an inner axis (axis 1 of NCHW) is done a whole
 * (n, inner) block at a time, with per-position maxima and sums in the
 * workspace, so that every loop walks contiguous memory.  Rows, or
 * columns of the blocks, are split over the context's threads.
 *
 * Stable form, as MXNet: e = exp((x - max) / temperature), out = e / Σe;
 * log_softmax = (x - max) / temperature - log Σe.  Every pass reads an
 * element before writing the same index, so out may be the input.
 */
#include <math.h>

#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/cpu-features.h"
#include "kernels/params/elementwise.h"

void hy_cpu_softmax (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

HY_CPU_VECTOR_CLONES static void
softmax_row (const float *x, float *o, int64_t n, float t, bool log)
{
  float m = x[0];
  for (int64_t i = 1; i < n; i++)
    m = x[i] > m ? x[i] : m;

  float sum = 0.0f;
  if (!log) {
    for (int64_t i = 0; i < n; i++) {
      const float e = expf ((x[i] - m) / t);
      o[i] = e;
      sum += e;
    }
    for (int64_t i = 0; i < n; i++)
      o[i] /= sum;
  } else {
    for (int64_t i = 0; i < n; i++)
      sum += expf ((x[i] - m) / t);
    const float log_sum = logf (sum);
    for (int64_t i = 0; i < n; i++)
      o[i] = (x[i] - m) / t - log_sum;
  }
}

/* `inner` columns of an (n, ·) block whose rows are ld floats apart; m
 * and sum hold `inner` floats each. */
HY_CPU_VECTOR_CLONES static void
softmax_block (const float *x, float *o, int64_t n, int64_t inner,
    int64_t ld, float t, bool log, float *m, float *sum)
{
  for (int64_t j = 0; j < inner; j++) {
    m[j] = x[j];
    sum[j] = 0.0f;
  }
  for (int64_t r = 1; r < n; r++) {
    const float *xrow = x + r * ld;
    for (int64_t j = 0; j < inner; j++)
      m[j] = xrow[j] > m[j] ? xrow[j] : m[j];
  }

  if (!log) {
    for (int64_t r = 0; r < n; r++) {
      const float *xrow = x + r * ld;
      float *orow = o + r * ld;
      for (int64_t j = 0; j < inner; j++) {
        const float e = expf ((xrow[j] - m[j]) / t);
        orow[j] = e;
        sum[j] += e;
      }
    }
    for (int64_t r = 0; r < n; r++) {
      float *orow = o + r * ld;
      for (int64_t j = 0; j < inner; j++)
        orow[j] /= sum[j];
    }
  } else {
    for (int64_t r = 0; r < n; r++) {
      const float *xrow = x + r * ld;
      for (int64_t j = 0; j < inner; j++)
        sum[j] += expf ((xrow[j] - m[j]) / t);
    }
    for (int64_t j = 0; j < inner; j++)
      sum[j] = logf (sum[j]);
    for (int64_t r = 0; r < n; r++) {
      const float *xrow = x + r * ld;
      float *orow = o + r * ld;
      for (int64_t j = 0; j < inner; j++)
        orow[j] = (xrow[j] - m[j]) / t - sum[j];
    }
  }
}

/* A softmax over n along (outer, n, inner). */
typedef struct softmax_job {
  const float *x;
  float *o;
  int64_t n, inner;
  float t;
  bool log;
  float *m;                     /* per thread: inner maxima, inner sums */
  size_t m_stride;              /* bytes between threads' */
} softmax_job;

/* Rows [begin, end) (inner = 1). */
static void
softmax_rows (void *arg, int64_t begin, int64_t end, int thread)
{
  const softmax_job *j = arg;
  for (int64_t b = begin; b < end; b++)
    softmax_row (j->x + b * j->n, j->o + b * j->n, j->n, j->t, j->log);
}

/* Columns [begin, end) of (outer · inner): runs within one block each. */
static void
softmax_columns (void *arg, int64_t begin, int64_t end, int thread)
{
  const softmax_job *j = arg;
  float *m = (float *) ((char *) j->m + (size_t) thread * j->m_stride);
  const int64_t block = j->n * j->inner;
  for (int64_t c = begin; c < end;) {
    const int64_t b = c / j->inner, first = c % j->inner;
    const int64_t len = end - c < j->inner - first ? end - c
        : j->inner - first;
    const int64_t off = b * block + first;
    softmax_block (j->x + off, j->o + off, j->n, len, j->inner, j->t,
        j->log, m, m + j->inner);
    c += len;
  }
}

void
hy_cpu_softmax (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_softmax_params *p = params;
  const hy_shape *s = &in[0]->shape;
  const float *x = in[0]->data;
  float *o = out[0]->data;
  const int64_t total = hy_shape_numel (s);
  if (total == 0)
    return;

  int64_t outer = 1, n, inner = 1;
  if (p->flat) {
    outer = s->dims[0];
    n = total / outer;
  } else {
    const int axis = p->axis < 0 ? p->axis + s->ndim : p->axis;
    for (int i = 0; i < axis; i++)
      outer *= s->dims[i];
    n = s->dims[axis];
    for (int i = axis + 1; i < s->ndim; i++)
      inner *= s->dims[i];
  }

  softmax_job j = {
    x, o, n, inner, p->temperature, p->log, NULL, 0,
  };
  if (inner == 1) {
    hy_cpu_parallel_for (ctx, outer, hy_cpu_grain (n), softmax_rows, &j);
    return;
  }
  j.m = hy_cpu_workspace_per_thread (ctx,
      2 * (size_t) inner * sizeof (float), &j.m_stride);
  hy_cpu_parallel_for (ctx, outer * inner, hy_cpu_grain (n),
      softmax_columns, &j);
}
