/*
 * ordering.c — CPU kernel of topk, sort and argsort: rows split over the
 * threads, each ordered with MXNet's steps, ties included
 * (kernels/ordering-common.h, which the CUDA kernel shares).
 */
#include "kernels/cpu/cpu-kernel.h"
#include "kernels/ordering-common.h"

void hy_cpu_ordering (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);


typedef struct order_job {
  hy_order_args a;
  const float *x;
  float *y0, *y1;
  char *scratch;                /* per thread: n positions */
  size_t scratch_stride;
} order_job;

static void
order_rows (void *arg, int64_t begin, int64_t end, int thread)
{
  const order_job *j = arg;
  int64_t *pos = (int64_t *) (j->scratch + (size_t) thread * j->scratch_stride);
  for (int64_t r = begin; r < end; r++)
    hy_order_one_row (&j->a, j->x, j->y0, j->y1, pos, r);
}

void
hy_cpu_ordering (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  order_job j = {
    .a = hy_order_plan (params, &in[0]->shape),
    .x = in[0]->data, .y0 = out[0]->data,
    .y1 = n_out > 1 ? out[1]->data : NULL,
  };
  if (j.a.rows == 0 || j.a.n == 0)
    return;
  j.scratch_stride = ((size_t) j.a.n * sizeof (int64_t) + 63) & ~(size_t) 63;
  j.scratch = hy_cpu_workspace (ctx,
      j.scratch_stride * (size_t) hy_cpu_n_threads (ctx));
  hy_cpu_parallel_for (ctx, j.a.rows, hy_cpu_grain (j.a.n * 8), order_rows,
      &j);
}
