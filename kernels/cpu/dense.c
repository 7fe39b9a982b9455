/*
 * dense.c — FullyConnected, dot and batch_dot on the CPU: each is one
 * SGEMM (per batch entry for batch_dot) over views of its inputs, split
 * over the threads by hy_gemm_run (or, for batch_dot, over the batch).
 * FullyConnected's fused epilogue (epilogue.h) adds the bias in the same
 * pass as the BatchNorm, residual and activation, on each block of the
 * output right after the GEMM wrote it.
 */
#include "kernels/cpu/cpu-kernel.h"
#include "kernels/cpu/conv/blas.h"
#include "kernels/cpu/epilogue.h"
#include "kernels/params/nn.h"

void hy_cpu_fully_connected (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_dot (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

/* FullyConnected's epilogue on one block of the output. */
typedef struct fc_epilogue {
  const hy_fused_epilogue *fused;
  float *y;
  const float *res;
  int64_t ld;
  hy_epilogue_channels ch;
} fc_epilogue;

static void
fc_epilogue_block (void *arg, int64_t row0, int64_t rows, int64_t col0,
    int64_t cols)
{
  const fc_epilogue *f = arg;
  const int64_t off = row0 * f->ld + col0;
  const hy_epilogue_channels ch = hy_epilogue_channels_from (&f->ch, col0);
  hy_epilogue_columns (f->fused, f->y + off, f->res ? f->res + off : NULL,
      rows, cols, f->ld, &ch);
}

void
hy_cpu_fully_connected (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out)
{
  const hy_fc_params *p = params;
  const hy_shape *xs = &in[0]->shape;
  const int64_t hidden = p->num_hidden;
  /* Both forms are a (rows, k) matrix times Wᵀ; they differ in k only. */
  int64_t k = 1;
  if (p->flatten)
    for (int i = 1; i < xs->ndim; i++)
      k *= xs->dims[i];
  else
    k = xs->dims[xs->ndim - 1];
  const int64_t numel = hy_shape_numel (xs);
  const int64_t rows = k > 0 ? numel / k
      : hy_shape_numel (&out[0]->shape) / hidden;
  float *y = out[0]->data;
  const hy_epilogue_operands o = hy_epilogue_operands_of (p->no_bias,
      &p->fused, in);
  const float *bias = o.bias;
  const bool epilogue = hy_epilogue_is_set (&p->fused);

  if (bias && !epilogue)
    hy_fill_cols (y, bias, rows, hidden);
  const fc_epilogue f = {
    &p->fused, y, o.res, hidden, { bias, o.bn, hidden },
  };
  const hy_gemm g = {
    .trans_b = true, .m = rows, .n = hidden, .k = k,
    .a = in[0]->data, .b = in[1]->data,
    .beta = bias && !epilogue ? 1.0f : 0.0f, .c = y, .ldc = hidden,
    .then = epilogue ? fc_epilogue_block : NULL, .then_arg = (void *) &f,
  };
  hy_gemm_run (ctx, &g);
}

/* dot: a is (m, k) — stored (k, m) when transposed — over all its axes but
 * the contracted one; likewise b is (k, n). */
static void
dot_2d (hy_cpu_ctx *ctx, const hy_dot_params *p, const hy_tensor *a,
    const hy_tensor *b, hy_tensor *c)
{
  const hy_shape *as = &a->shape, *bs = &b->shape;
  const int64_t k = as->dims[p->transpose_a ? 0 : as->ndim - 1];
  const int64_t m = k > 0 ? hy_shape_numel (as) / k : 0;
  const int64_t n = k > 0 ? hy_shape_numel (bs) / k : 0;
  if (k == 0) {
    /* An empty contraction still has an output: zeros. */
    hy_sgemm (ctx, false, false, 1, hy_shape_numel (&c->shape), 0, NULL,
        NULL, 0.0f, c->data);
    return;
  }
  hy_sgemm (ctx, p->transpose_a, p->transpose_b, m, n, k, a->data, b->data,
      0.0f, c->data);
}

typedef struct batch_dot_job {
  const hy_dot_params *p;
  const float *a, *b;
  float *c;
  int64_t m, n, k;
  hy_cpu_ctx *ctx;
} batch_dot_job;

static void
batch_dot_entries (void *arg, int64_t begin, int64_t end, int thread)
{
  const batch_dot_job *j = arg;
  const int64_t m = j->m, n = j->n, k = j->k;
  for (int64_t i = begin; i < end; i++)
    hy_sgemm (j->ctx, j->p->transpose_a, j->p->transpose_b, m, n, k,
        j->a + i * m * k, j->b + i * k * n, 0.0f, j->c + i * m * n);
}

/* Many small products go to the threads whole; a few large ones are each
 * split by hy_gemm_run. */
static void
batch_dot (hy_cpu_ctx *ctx, const hy_dot_params *p, const hy_tensor *a,
    const hy_tensor *b, hy_tensor *c)
{
  const hy_shape *as = &a->shape, *bs = &b->shape;
  const int nd = as->ndim;
  const int64_t m = as->dims[nd - (p->transpose_a ? 1 : 2)];
  const int64_t k = as->dims[nd - (p->transpose_a ? 2 : 1)];
  const int64_t n = bs->dims[nd - (p->transpose_b ? 2 : 1)];
  int64_t batch = 1;
  for (int i = 0; i < nd - 2; i++)
    batch *= as->dims[i];
  const batch_dot_job j = { p, a->data, b->data, c->data, m, n, k, ctx };
  const int64_t macs = m * n * k;
  if (batch >= 2 * hy_cpu_n_threads (ctx) || macs < HY_GEMM_SPLIT_MIN_MACS)
    hy_cpu_parallel_for (ctx, batch, macs > 0
        ? (HY_PARALLEL_MIN_MACS + macs - 1) / macs : batch,
        batch_dot_entries, (void *) &j);
  else
    batch_dot_entries ((void *) &j, 0, batch, 0);
}

void
hy_cpu_dot (hy_cpu_ctx *ctx, const void *params, const hy_tensor *const *in,
    int n_in, hy_tensor *const *out, int n_out)
{
  const hy_dot_params *p = params;
  if (p->op == HY_OP_BATCH_DOT)
    batch_dot (ctx, p, in[0], in[1], out[0]);
  else
    dot_2d (ctx, p, in[0], in[1], out[0]);
}
