/*
 * dense.c — FullyConnected, dot and batch_dot on the CPU: each is one
 * SGEMM (per batch entry for batch_dot) over views of its inputs.
 * FullyConnected's fused epilogue (epilogue.h) adds the bias in the same
 * pass as the BatchNorm, residual and activation, right after the GEMM.
 */
#include "cpu-kernel.h"
#include "blas.h"
#include "epilogue.h"
#include "nn.h"

void hy_cpu_fully_connected (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);
void hy_cpu_dot (hy_cpu_ctx *ctx, const void *params,
    const hy_tensor *const *in, int n_in, hy_tensor *const *out, int n_out);

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
  const float *bias = p->no_bias ? NULL : in[2]->data;
  const bool epilogue = hy_epilogue_is_set (&p->fused);

  if (bias && !epilogue)
    hy_fill_cols (y, bias, rows, hidden);
  hy_sgemm (false, true, rows, hidden, k, in[0]->data, in[1]->data,
      bias && !epilogue ? 1.0f : 0.0f, y);
  if (epilogue) {
    const hy_epilogue_channels ch = {
      bias, p->fused.batch_norm ? in[p->no_bias ? 2 : 3]->data : NULL, hidden,
    };
    hy_epilogue_columns (&p->fused, y,
        p->fused.residual ? in[n_in - 1]->data : NULL, rows, hidden, &ch);
  }
}

/* dot: a is (m, k) — stored (k, m) when transposed — over all its axes but
 * the contracted one; likewise b is (k, n). */
static void
dot_2d (const hy_dot_params *p, const hy_tensor *a, const hy_tensor *b,
    hy_tensor *c)
{
  const hy_shape *as = &a->shape, *bs = &b->shape;
  const int64_t k = as->dims[p->transpose_a ? 0 : as->ndim - 1];
  const int64_t m = k > 0 ? hy_shape_numel (as) / k : 0;
  const int64_t n = k > 0 ? hy_shape_numel (bs) / k : 0;
  if (k == 0) {
    /* An empty contraction still has an output: zeros. */
    hy_sgemm (false, false, 1, hy_shape_numel (&c->shape), 0, NULL, NULL,
        0.0f, c->data);
    return;
  }
  hy_sgemm (p->transpose_a, p->transpose_b, m, n, k, a->data, b->data, 0.0f,
      c->data);
}

static void
batch_dot (const hy_dot_params *p, const hy_tensor *a, const hy_tensor *b,
    hy_tensor *c)
{
  const hy_shape *as = &a->shape, *bs = &b->shape;
  const int nd = as->ndim;
  const int64_t m = as->dims[nd - (p->transpose_a ? 1 : 2)];
  const int64_t k = as->dims[nd - (p->transpose_a ? 2 : 1)];
  const int64_t n = bs->dims[nd - (p->transpose_b ? 2 : 1)];
  int64_t batch = 1;
  for (int i = 0; i < nd - 2; i++)
    batch *= as->dims[i];
  for (int64_t i = 0; i < batch; i++)
    hy_sgemm (p->transpose_a, p->transpose_b, m, n, k, a->data + i * m * k,
        b->data + i * k * n, 0.0f, c->data + i * m * n);
}

void
hy_cpu_dot (hy_cpu_ctx *ctx, const void *params, const hy_tensor *const *in,
    int n_in, hy_tensor *const *out, int n_out)
{
  const hy_dot_params *p = params;
  if (p->op == HY_OP_BATCH_DOT)
    batch_dot (p, in[0], in[1], out[0]);
  else
    dot_2d (p, in[0], in[1], out[0]);
}
